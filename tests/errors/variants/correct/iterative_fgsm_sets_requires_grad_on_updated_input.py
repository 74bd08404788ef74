# message: you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 9
# trigger: an iterative FGSM attack sets x_adv.requires_grad = True at the top of every step; the
#   step's update x_adv = x_adv + alpha * grad.sign() keeps x_adv in the graph, so from the second
#   step on it is no longer a leaf
# source: none found; the pattern as users write it (iterative FGSM / BIM loops)
# results: x_adv, model
import torch
from torch import nn
import torch.nn.functional as F


def iterative_fgsm(model, x, y, alpha, steps):
    x_adv = x.clone()
    for _ in range(steps):
        x_adv.requires_grad = True
        loss = F.cross_entropy(model(x_adv), y)
        (grad,) = torch.autograd.grad(loss, x_adv)
        x_adv = (x_adv + alpha * grad.sign()).detach()  # PRIMARY
    return x_adv


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 1, 0])
x_adv = iterative_fgsm(model, x, y, alpha=0.01, steps=3)
