"""Regression on a table whose targets have missing values (NaN): the user computes the
elementwise loss with `MSELoss(reduction="none")` on all the entries and keeps the observed ones
with a boolean mask afterwards, `loss = L(x, y)[mask].sum()`. The loss is finite, but the
backward of the unmasked loss multiplies the mask's zero by a NaN derivative at every missing
target: the gradient is NaN there, and one optimizer step makes every weight NaN. Nothing raises.
The report: the same loss masked before it is computed, `L(x[mask], y[mask]).sum()`, gives the
expected (finite) gradient; the change is to select the observed entries first.
Source: https://github.com/pytorch/pytorch/issues/121416
expect: silent"""
import torch
from torch import nn

torch.manual_seed(0)

L = nn.MSELoss(reduction="none")  # Same result with SmoothL1Loss or HuberLoss

features = torch.randn(64, 5)
true_weights = torch.tensor([[1.0], [-2.0], [0.5], [0.0], [3.0]])
y = features @ true_weights + 0.1 * torch.randn(64, 1)
y[torch.rand(64, 1) < 0.2] = torch.nan  # missing targets
mask = torch.logical_not(torch.isnan(y))

model = nn.Linear(5, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

losses = []
for step in range(50):
    x = model(features)
    loss = L(x[mask], y[mask]).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"weight": model.weight.detach().clone(), "bias": model.bias.detach().clone(),
          "losses": torch.tensor(losses)}
