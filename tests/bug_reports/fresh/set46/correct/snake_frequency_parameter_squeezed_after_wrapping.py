"""The Snake activation, x + sin^2(a x) / a, made for extrapolating periodic series: its frequency
`a` is meant to be trained with the network. With no initial value given, `a` is drawn from an
exponential distribution and set as `self.a = Parameter(m.rsample(self.in_features)).squeeze()`:
the squeeze is applied after the wrapping, so `self.a` is the output of an operation on an
unnamed Parameter, not a Parameter itself. The module does not register it, `model.parameters()`
never yields it, and the optimizer never updates the frequencies; the network trains around them
and nothing fails. The change (the merged fix): squeeze inside, `Parameter((m.rsample(...)).squeeze())`.
Source: https://github.com/EdwardDixon/snake/pull/2
expect: silent"""
import math

import torch
from torch import nn, pow, sin
from torch.distributions.exponential import Exponential
from torch.nn import Parameter

torch.manual_seed(0)


class Snake(nn.Module):
    def __init__(self, in_features, a=None, trainable=True):
        super(Snake, self).__init__()
        self.in_features = in_features if isinstance(in_features, list) else [in_features]

        if a is not None:
            self.a = Parameter(torch.ones(self.in_features) * a)
        else:
            m = Exponential(torch.tensor([0.1]))
            self.a = Parameter((m.rsample(self.in_features)).squeeze())  # random init = mix of frequencies

        self.a.requiresGrad = trainable

    def forward(self, x):
        return x + (1.0 / self.a) * pow(sin(x * self.a), 2)


class SeriesModel(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.inp = nn.Linear(1, hidden)
        self.act = Snake(hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, t):
        return self.out(self.act(self.inp(t)))


# A daily-temperature-like series: a yearly cycle plus a slow trend.
t = torch.linspace(0, 4, 120).unsqueeze(1)
series = torch.sin(2 * math.pi * t) + 0.3 * t

model = SeriesModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(60):
    optimizer.zero_grad()
    loss = ((model(t) - series) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())

result = {"a": model.act.a.detach().clone(), "out_weight": model.out.weight.detach().clone(),
          "losses": torch.tensor(losses)}
