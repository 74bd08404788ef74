# message: Output 1 of Split is a view and is being modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.
# code: AD104 (catalogue: multi_output_view_inplace)
# set: 8
# trigger: a Gaussian regression head splits its output into a dict of named parts
#   (dict(zip(names, out.split(1, dim=-1)))) and turns the log-scale into a scale in place with
#   parts["scale"].exp_() inside the module's forward
# source: none found; the pattern as users write it
# results: losses, model
import math

import torch
from torch import nn


class GaussianHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(3, 4)
        self.out = nn.Linear(4, 2)

    def forward(self, x):
        out = self.out(torch.relu(self.body(x)))
        parts = dict(zip(("mean", "scale"), out.split(1, dim=-1)))
        parts["scale"] = parts["scale"].exp()  # PRIMARY
        return parts


def negative_log_likelihood(parts, y):
    z = (y - parts["mean"]) / parts["scale"]
    return (0.5 * z.pow(2) + parts["scale"].log() + 0.5 * math.log(2 * math.pi)).mean()


torch.manual_seed(0)
model = GaussianHead()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = negative_log_likelihood(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
