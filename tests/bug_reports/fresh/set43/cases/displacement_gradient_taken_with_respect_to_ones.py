"""A network that outputs the displacement of points of a bar made of a Saint-Venant-Kirchhoff
material (here in one dimension): the strain energy needs the deformation gradient F = 1 + du/dX,
the derivative of the displacement with respect to the reference positions X. The user writes
`torch.autograd.grad(displacement, ones)`, the gradient with respect to the tensor of ones meant as
`grad_outputs`, and the positions were made without `requires_grad`; the displacement has one
value per point and no `grad_outputs` is given: "grad can be implicitly created only for scalar
outputs". The change (the forum answer): make the positions X a leaf that
requires grad before the network reads them, and differentiate the displacement with respect to
X, with the ones as `grad_outputs` (and `create_graph=True`, since the energy is trained on).
Source: https://huggingface.co/datasets/nvidia/Nemotron-CC-Math-v1 (mirror of the PyTorch Forums thread "Gradient Computation for Physics Equations", 2020-05-12)
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class DisplacementNet(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))

    def forward(self, X):
        # clamped at X = 0: the displacement is X times the network's output
        return X * self.net(X)


def svk_energy(F, young=1.0):
    green_strain = 0.5 * (F ** 2 - 1.0)
    return 0.5 * young * green_strain ** 2


model = DisplacementNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
positions = torch.linspace(0.0, 1.0, 64).reshape(-1, 1)
traction = 0.05

energies = []
for step in range(20):
    optimizer.zero_grad()
    displacement = model(positions)
    ones = torch.ones_like(displacement)
    du_dX = torch.autograd.grad(displacement, ones)[0]
    F = 1.0 + du_dX
    energy = svk_energy(F).mean() - traction * displacement[-1].sum()
    energy.backward()
    optimizer.step()
    energies.append(energy.item())

result = {"energies": torch.tensor(energies), "params": [p.detach().clone() for p in model.parameters()]}
