"""A model-interpolation experiment sets the weights of a third network C to
a convex combination of two trained networks A and B,
`c_param.data = weight * a_param + (1 - weight) * b_param`, then trains
with a loss on C's output and expects gradients in A and B.  Assigning to
`.data` copies the values and drops the graph: C's parameters stay leaves,
`y.backward()` fills C's gradients only, and A's and B's `.grad` stay
`None`, so their optimizer never moves them.  Nothing raises.  The fix
computes C's forward functionally from the combined tensors
(`torch.func.functional_call`).
Buggy line: `c_param.data = weight * a_param + (1 - weight) * b_param` in `interpolate`.
Expected finding: ADL004 there (opt-in; silent by default).
Source: https://github.com/pytorch/pytorch/issues/12756"""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear_layers = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))

    def forward(self, x):
        return self.linear_layers(x)


def interpolate(a, b, c, weight):
    for a_param, b_param, c_param in zip(a.parameters(), b.parameters(), c.parameters()):
        c_param.data = weight * a_param + (1 - weight) * b_param  # missed: ADL004


def train_mixture(a, b, c, x, weight=0.3, steps=1):
    optimiser = torch.optim.SGD(list(a.parameters()) + list(b.parameters()), lr=0.1)
    for _ in range(steps):
        interpolate(a, b, c, weight)
        y = c(x).sum()
        optimiser.zero_grad()
        y.backward()
        optimiser.step()


def bug_shows():
    """A and B receive no gradient: their weights never change."""
    torch.manual_seed(0)
    a, b, c = MLP(), MLP(), MLP()
    before = a.linear_layers[0].weight.detach().clone()
    train_mixture(a, b, c, torch.randn(5, 3))
    return a.linear_layers[0].weight.grad is None and torch.equal(before, a.linear_layers[0].weight.detach())


def run():
    torch.manual_seed(0)
    train_mixture(MLP(), MLP(), MLP(), torch.randn(5, 3))
