"""Langevin sampling from the density of a normalizing flow: a masked affine coupling flow gives
log p(x), and each sampler step moves the samples along the score, the gradient of log p(x) with
respect to x, plus noise. The samples are plain tensors that do not require grad, so
`log_prob(x).sum().backward()` only reaches the flow's weights, `x.grad` stays None and the
update `x + step * x.grad` raises a TypeError.
Source: https://github.com/bayesiains/nflows/issues/31 ("Gradients of log probabilities with
respect to the inputs?": after `flow.log_prob(x).backward()` the input's gradient is None; the
answer: the input tensor has to be created with requires_grad=True).
expect: raises"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

SAMPLES, STEPS, STEP_SIZE = 64, 15, 0.05


class AffineCoupling(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 4))

    def forward(self, x):
        log_scale, shift = self.net(x * self.mask).chunk(2, dim=-1)
        log_scale = torch.tanh(log_scale) * (1 - self.mask)
        z = x * self.mask + (1 - self.mask) * (x * torch.exp(log_scale) + shift)
        return z, log_scale.sum(-1)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([AffineCoupling(torch.tensor([1.0, 0.0])), AffineCoupling(torch.tensor([0.0, 1.0]))])

    def log_prob(self, x):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, layer_log_det = layer(x)
            log_det = log_det + layer_log_det
        return -0.5 * (x**2).sum(-1) - math.log(2 * math.pi) + log_det


flow = Flow()
x = torch.randn(SAMPLES, 2)
for step in range(STEPS):
    flow.log_prob(x).sum().backward()
    x = x.detach() + STEP_SIZE * x.grad + math.sqrt(2 * STEP_SIZE) * torch.randn_like(x)

result = {"samples": x.detach()}
