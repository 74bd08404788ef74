# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD141 (catalogue: func_autograd_grad_inside)
# set: 11
# trigger: a per-example gradient penalty is batched with torch.func.vmap: the per-example function
#   calls the module itself and asks torch.autograd.grad for the gradient with respect to the
#   module's own weight (create_graph=True); under vmap the output is not connected to the weight
#   for plain autograd
# source: none found; the pattern as users write it (per-example gradient norms vectorised with vmap)
# results: losses, model
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(5, 3), torch.randn(5, 1)


def example_penalty(example):
    score = model(example).sum()
    (gradient,) = torch.autograd.grad(score, model.weight, create_graph=True)  # PRIMARY
    return gradient.pow(2).sum()


losses = []
for _ in range(2):
    optimizer.zero_grad()
    penalties = torch.func.vmap(example_penalty)(x)
    loss = (model(x) - y).pow(2).mean() + 0.1 * penalties.mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
