"""nflows (normalising flows): the `BatchNorm` transform updates its running
statistics in place from the batch statistics without detaching them,
`self.running_mean.mul_(1 - self.momentum).add_(mean * self.momentum)`.
`mean` carries the graph of the inputs, so after the first training step the
buffers become non-leaf tensors that chain every batch's graph to the next:
memory grows at each step until the process is killed; nothing raises.  The
pull request adds `.detach()`.
Source: https://github.com/bayesiains/nflows/pull/11 (issue #10)"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BatchNorm(nn.Module):
    def __init__(self, features, eps=1e-5, momentum=0.1, affine=True):
        super().__init__()
        self.momentum = momentum
        self.eps = eps
        constant = np.log(np.exp(1 - eps) - 1)
        self.unconstrained_weight = nn.Parameter(constant * torch.ones(features))
        self.bias = nn.Parameter(torch.zeros(features))
        self.register_buffer("running_mean", torch.zeros(features))
        self.register_buffer("running_var", torch.zeros(features))

    @property
    def weight(self):
        return F.softplus(self.unconstrained_weight) + self.eps

    def forward(self, inputs, context=None):
        if self.training:
            mean, var = inputs.mean(0), inputs.var(0)
            self.running_mean.mul_(1 - self.momentum).add_(mean * self.momentum)  # expect: ADL017
            self.running_var.mul_(1 - self.momentum).add_(var * self.momentum)  # expect: ADL017
        else:
            mean, var = self.running_mean, self.running_var
        outputs = self.weight * ((inputs - mean) / torch.sqrt((var + self.eps))) + self.bias
        logabsdet_ = torch.log(self.weight) - 0.5 * torch.log(var + self.eps)
        logabsdet = torch.sum(logabsdet_) * inputs.new_ones(inputs.shape[0])
        return outputs, logabsdet


class Flow(nn.Module):
    def __init__(self, features=2):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.norm = BatchNorm(features)

    def log_prob(self, x):
        z, logabsdet = self.norm(self.linear(x))
        base = -0.5 * (z ** 2).sum(-1) - z.shape[-1] * 0.5 * np.log(2 * np.pi)
        return base + logabsdet


def train(flow, batches):
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
    for x in batches:
        optimizer.zero_grad()
        loss = -flow.log_prob(x).mean()
        loss.backward()
        optimizer.step()


def bug_shows():
    torch.manual_seed(0)
    flow = Flow()
    train(flow, [torch.randn(8, 2) for _ in range(3)])
    # the buffer is no longer a plain statistic: it holds the graph of every batch seen so far
    return flow.norm.running_mean.grad_fn is not None
