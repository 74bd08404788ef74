# message: the derivative for '_cdist_backward' is not implemented.
# code: AD184 (catalogue: cdist_second_derivative)
# set: 26
# trigger: a machine-learned force field (float64) scores each configuration's atoms by Gaussian features
#   of their torch.cdist distances to learned centres; the forces are minus the energy's gradient taken
#   per configuration with torch.func.vmap(torch.func.grad(...)), and the force-matching loss is
#   backpropagated to the model's parameters through that gradient
# source: none found; the pattern as users write it (force matching through a gradient computed with
#   torch.func inside the training step)
# results: model, losses
import torch
from torch import nn


class CentreEnergy(nn.Module):
    def __init__(self, centres=5):
        super().__init__()
        self.centres = nn.Parameter(torch.randn(centres, 3, dtype=torch.float64))
        self.readout = nn.Linear(centres, 1, dtype=torch.float64)

    def forward(self, positions):
        distances = (positions[:, None, :] - self.centres[None, :, :]).pow(2).sum(-1).sqrt()  # PRIMARY
        return self.readout(torch.exp(-distances.pow(2))).sum()


torch.manual_seed(0)
model = CentreEnergy()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
forces_of = torch.func.vmap(torch.func.grad(lambda positions: -model(positions)))
losses = []
for _ in range(3):
    positions = torch.randn(4, 6, 3, dtype=torch.float64)
    target_forces = torch.randn(4, 6, 3, dtype=torch.float64) * 0.1
    loss = (forces_of(positions) - target_forces).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
