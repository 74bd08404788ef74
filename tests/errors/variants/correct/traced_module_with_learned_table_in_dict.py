# message: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter or
#   input, or detaching the gradient
# code: AD143 (catalogue: trace_constant_requires_grad)
# set: 15
# trigger: a module keeps its learned positional table in a plain dict attribute (self.tables =
#   {"pos": torch.zeros(..., requires_grad=True)}) next to its layers; the module is traced with
#   torch.jit.trace to be trained as a TorchScript module
# source: none found; the pattern as users write it (a dict of learned tensors, not nn.ParameterDict)
# results: losses, encoder.proj.weight
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 3)
        self.pos = nn.Parameter(torch.zeros(4, 3))  # PRIMARY
        self.tables = {"pos": self.pos}

    def forward(self, x):
        return self.proj(x + self.tables["pos"])


torch.manual_seed(0)
encoder = Encoder()
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
x = torch.randn(2, 4, 3)
traced = torch.jit.trace(encoder, (x,))
losses = []
for step in range(2):
    loss = traced(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
