"""Linear regression fitted with L-BFGS: the prediction `pred = model(x)` is computed once, before
`optimizer.step(closure)`, and the closure only computes the loss from it and calls `backward()`.
L-BFGS evaluates the closure several times in one step, so its second call backpropagates through
the graph of `pred` that the first call freed.
Source: https://github.com/pytorch/pytorch/issues/111369 ("torch.optim.LBFGS error": `pred =
model(x)` outside the closure; the reporter solved it by computing the prediction inside the
closure, which L-BFGS needs in order to re-evaluate the model at each trial point).
expect: raises"""
import torch
import torch.nn as nn
from torch import optim

torch.manual_seed(0)
x = torch.rand(size=(100, 10))
y = torch.rand(size=(100, 1))


class LinearRegression(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p
        self.lin = nn.Linear(p, 1)

    def forward(self, x):
        return self.lin(x)


model = LinearRegression(x.size(1))
optimizer = optim.LBFGS(model.parameters())
criterion = nn.MSELoss()

pred = model(x)


def closure():
    optimizer.zero_grad()
    loss = criterion(pred, y.view(pred.shape))
    loss.backward()
    return loss


losses = []
for _ in range(2):
    losses.append(optimizer.step(closure).detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
