# message: Only Tensors of floating point and complex dtype can require gradients
# code: AD114 (catalogue: requires_grad_integer_factory)
# set: 9
# trigger: learning-to-reweight: a per-example weight vector is made with
#   torch.ones_like(targets, dtype=torch.float32, requires_grad=True), copying the integer dtype of the class targets
# source: none found; the pattern as users write it (meta-reweighting of examples)
# results: weight_gradients, model
import torch
from torch import nn
import torch.nn.functional as F


def example_weight_gradients(model, x, targets):
    weights = torch.ones_like(targets, dtype=torch.float32, requires_grad=True)  # PRIMARY
    losses = F.cross_entropy(model(x), targets, reduction="none")
    (gradient,) = torch.autograd.grad((weights * losses).mean(), weights)
    return gradient


torch.manual_seed(0)
model = nn.Linear(3, 2)
x, targets = torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1])
weight_gradients = example_weight_gradients(model, x, targets)
