"""An article on "element 0 of tensors does not require grad" shows the
cause `z = y.item()` before the backward: `.item()` leaves the graph.  The
form readers then reach for, seen in the article's own remedy of
re-wrapping a value with `requires_grad_(True)`, silences the error and
trains nothing: the loss is a fresh leaf, the model's gradients stay `None`
and the weights never move.  Re-created as a training loop whose custom
loss goes through `.item()` and is rewrapped as
`torch.tensor(value, requires_grad=True)`.  Nothing raises; the weights after
training equal the initial ones.
Buggy line: `loss = torch.tensor(loss_fn(out, yb).item(), requires_grad=True)`
(a leaf made from a number: no path to the model).
Source: https://deepinout.com/pytorch/pytorch-questions/75_pytorch_runtime_error_element_0_of_tensors_does_not_require_grad_and_does_not_have_a_grad_fn.html"""
import copy

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(5, 10)
        self.fc2 = nn.Linear(10, 1)

    def forward(self, x):
        return self.fc2(torch.sin(self.fc1(x)))


def train(model, loader, epochs=2):
    loss_fn = nn.SmoothL1Loss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            out = model(xb)
            loss = torch.tensor(loss_fn(out, yb).item(), requires_grad=True)  # expect: ADL034
            loss.backward()
            optimizer.step()
    return model


def bug_shows():
    """Training leaves every weight where it started."""
    torch.manual_seed(0)
    model = Net()
    before = copy.deepcopy(model.state_dict())
    loader = [(torch.randn(8, 5), torch.randn(8, 1)) for _ in range(3)]
    train(model, loader)
    return all(torch.equal(before[k], v) for k, v in model.state_dict().items())
