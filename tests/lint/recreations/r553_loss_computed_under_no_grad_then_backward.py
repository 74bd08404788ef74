"""A page on the error "variable needed for gradient computation is None /
element 0 of tensors does not require grad and does not have a grad_fn":
"mixing no_grad with requires_grad=True tensors is a common mistake -
gradients for tensors created inside torch.no_grad() will be None even if the
input required gradients" -- `with torch.no_grad(): y = x * 2`, `loss =
y.sum()`, `loss.backward()` raises.  Re-created as a regression step whose
forward helper wraps the model call in `no_grad` (to save memory) and whose
caller backpropagates the loss.  Raises.
Buggy line: `loss.backward()` (its loss was computed under `no_grad`).
Source: https://theneuralbase.com/pytorch/errors/runtimeerror-variable-needed-for-gradient-is-none/"""
import torch
import torch.nn as nn


def forward_pass(model, x):
    with torch.no_grad():
        y = model(x) * 2
    return y


def train_step(model, optimizer, x, target):
    optimizer.zero_grad()
    y = forward_pass(model, x)
    loss = ((y - target) ** 2).sum()
    loss.backward()  # missed: no rule (loss built under no_grad in a helper)
    optimizer.step()
    return loss.item()


def run():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_step(model, optimizer, torch.randn(4, 3), torch.randn(4, 1))
