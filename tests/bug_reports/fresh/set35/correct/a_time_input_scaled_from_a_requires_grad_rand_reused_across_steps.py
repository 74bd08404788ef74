"""PyTorch issue "loss.backwards() cannot handle addition?": the input `t` of a network that takes
`torch.cat([t, x], axis=1)` (a PINN-style model of x and t) is built once, before training, as
`t = 1 + 3 * torch.rand(20, 1, requires_grad=True)` followed by `t.requires_grad_()`. `t` is then
not a leaf but the output of a small graph, and that graph is freed by the first
`loss.backward()`; the second step, which runs the network again on the same `t`, fails with
"Trying to backward through the graph a second time". With `t = torch.rand(20, 1,
requires_grad=True)` it works. The answer (qqaatw): "this computation `1 + 3 * torch.rand(...` is
not rerun ... due to lack of intermediate values in `t` ... the error will then occur"; `t` must be
a leaf. The correct version builds `t` without `requires_grad=True` inside the expression, so the
existing `t.requires_grad_()` makes it a leaf.
Source: https://github.com/pytorch/pytorch/issues/90158
expect: raises"""
import torch
from torch import nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()

        self.stack = nn.Sequential(
            nn.Linear(2, 10),
            nn.Linear(10, 10),
            nn.Linear(10, 1)
        )

    def forward(self, x, t):
        X = torch.cat([t, x], axis=1)
        for layer in self.stack:
            X = layer(X)
        return X


net = Net()
x = torch.FloatTensor(20, 1).uniform_(-1, 1)
x.requires_grad_()
t = 1 + 3 * torch.rand(20, 1)
t.requires_grad_()

opt = torch.optim.Adam(net.parameters(), lr=0.01)

losses = []
for step in range(3):
    loss = torch.mean(torch.square(net(x, t)))
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.parameters()]}
