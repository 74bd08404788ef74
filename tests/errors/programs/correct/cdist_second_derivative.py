import torch

torch.manual_seed(0)
sources = torch.randn(3, 2) * 4.0
weights = torch.randn(3, requires_grad=True)
points = torch.randn(5, 2, requires_grad=True)
distances = torch.cdist(points, sources, compute_mode="use_mm_for_euclid_dist")
potential = (distances * weights).sum()
(field,) = torch.autograd.grad(potential, points, create_graph=True)
field.pow(2).sum().backward()
gw = weights.grad
