"""Decoupled annealing posterior sampling (DAPS) in an inverse-problem benchmark: at each noise
level a frozen denoiser proposes a clean signal `x0hat`, then a few Langevin steps pull it
towards the measurements. The Langevin step computes its gradient by hand (the measurement
operator's data-fit gradient plus the anchor term `(x - x0hat) / sigma**2`), assigns it to
`x.grad` and lets `torch.optim.SGD` take the step. Because `x` requires grad, the anchor term
carries a graph, and the hand-made gradient assigned to `x.grad` keeps that graph (and `x`'s
autograd history) alive after every call: the samples are right, but each Langevin call leaves a
graph-bearing `.grad` behind (a CUDA memory leak in the benchmark's long runs).
Source: https://github.com/devzhk/InverseBench/pull/22 ("Fix DAPS Langevin gradient memory leak":
"The anchor term `(x - x0hat) / sigma**2` was computed from the leaf tensor `x` with
`requires_grad=True`, making the manually assigned gradient carry a `grad_fn` ... This change
detaches the anchor term input and the assigned gradient, then clears `x.grad` before returning";
merged)
expect: silent"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

LENGTH = 64


class BlurOperator:
    """Forward model of the inverse problem: a fixed 1-D Gaussian blur."""

    def __init__(self, width=2.0, size=9):
        t = torch.arange(size, dtype=torch.float32) - size // 2
        kernel = torch.exp(-0.5 * (t / width) ** 2)
        self.kernel = (kernel / kernel.sum()).view(1, 1, -1)

    def __call__(self, x):
        return F.conv1d(x.unsqueeze(1), self.kernel, padding=self.kernel.shape[-1] // 2).squeeze(1)

    def gradient(self, x, measurement):
        with torch.enable_grad():
            x = x.detach().requires_grad_(True)
            loss = (self(x) - measurement).pow(2).sum()
            return torch.autograd.grad(loss, x)[0]


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LENGTH + 1, 128), nn.SiLU(), nn.Linear(128, LENGTH))

    def forward(self, x, sigma):
        s = torch.full((x.shape[0], 1), math.log(sigma))
        return x + 0.1 * self.net(torch.cat([x, s], 1))


class LangevinDynamics:
    def __init__(self, num_steps, lr, tau=0.05, lr_min_ratio=0.1):
        self.num_steps, self.lr, self.tau, self.lr_min_ratio = num_steps, lr, tau, lr_min_ratio

    def sample(self, x0hat, operator, measurement, sigma, ratio):
        lr = self.lr * (1 + ratio * (self.lr_min_ratio - 1))
        x0hat = x0hat.detach()
        x = x0hat.clone().requires_grad_(True)
        optimizer = torch.optim.SGD([x], lr)
        for _ in range(self.num_steps):
            optimizer.zero_grad()
            gradient = operator.gradient(x, measurement) / (2 * self.tau ** 2)
            gradient += (x.detach() - x0hat) / sigma ** 2
            x.grad = gradient.detach()
            optimizer.step()
            with torch.no_grad():
                x.data = x.data + math.sqrt(2 * lr) * torch.randn_like(x)
        x.grad = None
        return x.detach()


class DAPS:
    def __init__(self, net, operator, sigmas, langevin):
        self.net = net.eval().requires_grad_(False)
        self.operator, self.sigmas, self.lgvd = operator, sigmas, langevin

    def inference(self, measurement):
        xt = torch.randn(measurement.shape) * self.sigmas[0]
        for step in range(len(self.sigmas) - 1):
            sigma = self.sigmas[step]
            with torch.no_grad():
                x0hat = self.net(xt, sigma)
            x0y = self.lgvd.sample(x0hat, self.operator, measurement, sigma, step / (len(self.sigmas) - 1))
            xt = x0y + torch.randn_like(x0y) * self.sigmas[step + 1]
        return xt


grid = torch.linspace(0, 1, LENGTH)
truth = torch.stack([torch.sin(2 * math.pi * grid), (grid > 0.5).float() - 0.5])
operator = BlurOperator()
measurement = operator(truth) + 0.01 * torch.randn_like(truth)

sigmas = torch.logspace(math.log10(2.0), math.log10(0.02), 8).tolist()
sampler = DAPS(Denoiser(), operator, sigmas, LangevinDynamics(num_steps=10, lr=2e-4))
reconstruction = sampler.inference(measurement)
result = {"reconstruction": reconstruction,
          "data_misfit": (operator(reconstruction) - measurement).pow(2).mean()}
