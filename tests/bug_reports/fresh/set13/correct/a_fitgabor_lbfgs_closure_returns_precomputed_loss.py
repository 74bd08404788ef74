"""fitgabor (finding the Gabor patch that maximally drives a model neuron): the training loop
generates the Gabor image, scales it to a fixed contrast, computes `loss = -model_neuron(...)` and
calls `loss.backward()`, then, to support optimizers that need a closure, calls
`optimizer.step(closure)` with `def closure(): return loss`. With L-BFGS the closure is meant to
re-evaluate the objective at each trial point; this one returns the loss computed before the step and
leaves the gradients as they were, so L-BFGS sees an unchanged loss and a stale gradient, stops after
its first inner iteration, and the Gabor parameters follow a different path than L-BFGS would take.
Nothing raises.
Source: https://github.com/mohammadbashiri/fitgabor/pull/1 ("Changeable optimizer": `def closure():
return loss`; review: "Shouldn't the whole thing be inside the `closure` function? ... the BFGS
optimizer needs to evaluate the whole thing multiple times - so what the closure returns is ideally
different every time that it is called by the optimizer").
expect: silent"""
import math

import torch
import torch.nn as nn
from torch import optim

torch.manual_seed(0)

SIZE, FIXED_STD = 12, 0.1


class GaborGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.theta = nn.Parameter(torch.tensor(0.3))
        self.sigma = nn.Parameter(torch.tensor(2.0))
        self.Lambda = nn.Parameter(torch.tensor(5.0))
        self.psi = nn.Parameter(torch.tensor(0.1))
        self.center = nn.Parameter(torch.zeros(2))
        coords = torch.linspace(-SIZE / 2, SIZE / 2, SIZE)
        self.register_buffer("y", coords.view(-1, 1).expand(SIZE, SIZE))
        self.register_buffer("x", coords.view(1, -1).expand(SIZE, SIZE))

    def forward(self):
        x, y = self.x - self.center[0], self.y - self.center[1]
        x_theta = x * torch.cos(self.theta) + y * torch.sin(self.theta)
        y_theta = -x * torch.sin(self.theta) + y * torch.cos(self.theta)
        envelope = torch.exp(-(x_theta ** 2 + y_theta ** 2) / (2 * self.sigma ** 2))
        return (envelope * torch.cos(2 * math.pi * x_theta / self.Lambda + self.psi)).view(1, 1, SIZE, SIZE)


model_neuron = nn.Sequential(nn.Conv2d(1, 4, 5), nn.ELU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 1))
model_neuron.requires_grad_(False)

gabor_generator = GaborGenerator()
optimizer = optim.LBFGS(gabor_generator.parameters(), lr=0.1, max_iter=5)
losses = []
for epoch in range(4):
    def closure():
        optimizer.zero_grad()
        gabor = gabor_generator()
        gabor_std_constrained = FIXED_STD * gabor / gabor.std()
        loss = -model_neuron(gabor_std_constrained).squeeze()
        loss.backward()
        return loss

    loss = optimizer.step(closure)
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in gabor_generator.parameters()]}
