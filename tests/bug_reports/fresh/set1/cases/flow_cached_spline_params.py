"""Spline flow for density estimation: the transform caches its parameters (computed by a small
network) on itself across steps, so the second step backpropagates through the first step's freed
graph.
Source: https://github.com/pyro-ppl/pyro/issues/2545 (fix: compute the parameters every step).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SplineLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.param_net = nn.Linear(1, 2)
        self._params = None

    def log_prob(self, x):
        if self._params is None:
            self._params = self.param_net(torch.ones(1))
        scale, shift = self._params[0].exp(), self._params[1]
        z = (x - shift) / scale
        return -0.5 * z.pow(2) - scale.log()


flow = SplineLike()
optimizer = torch.optim.Adam(flow.parameters(), lr=1e-2)
data = torch.randn(16) * 2 + 1
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = -flow.log_prob(data).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in flow.parameters()]}
