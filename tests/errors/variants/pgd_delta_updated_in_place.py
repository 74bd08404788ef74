# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace)
# set: 5
# trigger: a projected gradient descent attack: the perturbation is a leaf made with
#   requires_grad=True, its gradient is taken with torch.autograd.grad, and the ascent step and
#   the projection are written in place on it without torch.no_grad()
# source: none found; the pattern as users write it (PGD attacks)
# results: delta, adversarial_loss
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
epsilon, alpha = 0.3, 0.1
delta = torch.zeros_like(x, requires_grad=True)
for _ in range(3):
    loss = F.cross_entropy(model(x + delta), y)
    grad, = torch.autograd.grad(loss, delta)
    delta += alpha * grad.sign()  # PRIMARY
    delta.clamp_(-epsilon, epsilon)
adversarial_loss = F.cross_entropy(model(x + delta), y).item()
