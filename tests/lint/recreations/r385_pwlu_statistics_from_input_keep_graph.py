"""pwlu-pytorch's piecewise linear unit aligns its breakpoints to the input's
statistics during the first training phase: it computes `mean = x.mean(...)`
and `var = x.var(...)` from the input with its graph, places its breakpoints
from them and blends them into its running statistics buffers (used at
evaluation).  The buffers then carry the graph of the batch
that produced them, and each blend links it to the next step's: memory use
grows over training.  Nothing raises.  The fix computes the statistics from
`x.detach()`.
Buggy line: `self.running_mean = ...` in `PWLU.forward`.
Source: https://github.com/MrGoriay/pwlu-pytorch/issues/1"""
import torch
import torch.nn as nn


class PWLU(nn.Module):
    def __init__(self, n_regions=6, bound=2.5, momentum=0.9):
        super().__init__()
        self.n_regions = n_regions
        self.momentum = momentum
        self.points = nn.Parameter(torch.linspace(-bound, bound, n_regions + 1).clamp(min=0))
        self.left_slope = nn.Parameter(torch.tensor(0.0))
        self.right_slope = nn.Parameter(torch.tensor(1.0))
        self.register_buffer("running_mean", torch.zeros(()))
        self.register_buffer("running_var", torch.ones(()))
        self.aligning = True

    def forward(self, x):
        if self.training and self.aligning:
            mean = x.mean()
            var = x.var()
            self.running_mean = self.momentum * self.running_mean + (1 - self.momentum) * mean  # expect: ADL017
            self.running_var = self.momentum * self.running_var + (1 - self.momentum) * var  # expect: ADL017
        else:
            mean, var = self.running_mean, self.running_var
        std = var.detach().sqrt() + 1e-5
        left = mean.detach() - 3 * std
        width = 6 * std / self.n_regions
        position = ((x - left) / width).clamp(0, self.n_regions - 1e-4)
        index = position.floor().long()
        frac = position - index
        y = self.points[index] * (1 - frac) + self.points[index + 1] * frac
        y = torch.where(x < left, self.points[0] + (x - left) * self.left_slope, y)
        return torch.where(x > left + 6 * std, self.points[-1] + (x - left - 6 * std) * self.right_slope, y)


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = PWLU()
        self.fc2 = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def bug_shows():
    """After two training steps the running statistics are graph tensors."""
    torch.manual_seed(0)
    model = SmallNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.randn(5, 4)).pow(2).mean().backward()
        optimizer.step()
    return model.act.running_mean.grad_fn is not None
