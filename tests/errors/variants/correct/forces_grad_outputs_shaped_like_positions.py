# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([4, 5, 3]) and output[0] has a shape of torch.Size([4]).
# code: AD123 (catalogue: grad_outputs_shape)
# set: 4
# trigger: a force field: forces are minus the gradient of each molecule's energy with respect to
#   the atom positions; grad_outputs is made like the positions instead of like the energies
# source: https://github.com/pytorch/pytorch/issues/17893 (grad_outputs of the wrong shape)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class EnergyModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.atom_energy = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, positions):
        return self.atom_energy(positions).squeeze(-1).sum(dim=1)


def predicted_forces(model, positions):
    energy = model(positions)
    gradient, = torch.autograd.grad(energy, positions, grad_outputs=torch.ones_like(energy), create_graph=True)  # PRIMARY
    return -gradient


torch.manual_seed(0)
model = EnergyModel()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
positions = torch.randn(4, 5, 3, requires_grad=True)
target_forces = torch.randn(4, 5, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(predicted_forces(model, positions), target_forces)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
