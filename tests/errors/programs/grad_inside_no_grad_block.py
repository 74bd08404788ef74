import torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
x = torch.randn(4, 3)


def slope(points):
    points = points.clone().requires_grad_(True)
    energy = (points * w).tanh().sum()
    return torch.autograd.grad(energy, points, create_graph=True)[0]


with torch.no_grad():  # PRIMARY
    penalty = slope(x).pow(2).mean()
