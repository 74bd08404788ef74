# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 26
# trigger: a force field trained on forces (minus the energy's gradient with respect to the atoms'
#   positions, create_graph=True): the training step asks for gradients by calling the model on an
#   inline copy, model(positions.clone().requires_grad_()), then asks torch.autograd.grad for the
#   gradient with respect to positions itself, which does not require grad
# source: none found; the pattern as users write it (requires_grad_ set on a copy made inside the call)
# results: model, losses
import torch
from torch import nn


class PairEnergy(nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, positions):
        squared = (positions[:, :, None, :] - positions[:, None, :, :]).pow(2).sum(-1, keepdim=True)
        return self.pair(squared).sum(dim=(1, 2, 3))


torch.manual_seed(0)
model = PairEnergy()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for _ in range(3):
    positions = torch.randn(4, 5, 3)
    target_forces = torch.randn(4, 5, 3) * 0.1
    positions.requires_grad_()
    energy = model(positions)  # PRIMARY
    forces = -torch.autograd.grad(energy.sum(), positions, create_graph=True)[0]
    loss = (forces - target_forces).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
