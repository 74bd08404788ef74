"""Quantization-aware training: the quantizer's range initialization replaces its `scale` with a new
`nn.Parameter` after the optimizer was built, so the optimizer keeps updating the old, unused tensor
and the scale never trains (no error).
Source: https://github.com/openvinotoolkit/nncf/pull/327 (fix: do not replace the parameter during
range init; write the value into the existing one).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class FakeQuantize(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(1))

    def init_range(self, samples):
        self.scale = nn.Parameter(samples.abs().max().reshape(1) / 7)

    def forward(self, x):
        q = torch.clamp(x / self.scale, -8, 7)
        q = q + (torch.round(q) - q).detach()
        return q * self.scale


model = nn.Sequential(nn.Linear(4, 6), FakeQuantize(), nn.Linear(6, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
inputs, targets = torch.randn(8, 4), torch.randn(8, 2)
with torch.no_grad():
    model[1].init_range(model[0](inputs))
for _ in range(3):
    loss = (model(inputs) - targets).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = {"loss": loss.detach(), "params": [p.detach() for p in model.parameters()]}
