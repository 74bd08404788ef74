import os
import sys

import torch
from torch import nn
from torch.func import functional_call, grad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_memory_ckpt27 import apply_activation_checkpointing  # noqa: E402


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.mix = nn.Linear(width, width)

    def forward(self, x):
        return x + torch.tanh(self.mix(x))


class MemoryModel(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.memory = Block(width)
        self.encoder = Block(width)
        self.lr = 0.1

    def memorise(self, keys, values):
        """One test-time gradient step of the memory's weights on the (key, value) pairs."""
        params = dict(self.memory.named_parameters())

        def reconstruction(p):
            return (functional_call(self.memory, p, (keys,)) - values).pow(2).mean()

        step = grad(reconstruction)({name: p.detach() for name, p in params.items()})
        with torch.no_grad():
            for name, p in params.items():
                p.sub_(self.lr * step[name])

    def forward(self, tokens):
        keys = self.encoder(tokens)
        self.memorise(keys.detach(), tokens)
        return self.memory(keys)


torch.manual_seed(0)
model = MemoryModel()
apply_activation_checkpointing(model.encoder, Block)  # the memory, differentiated by torch.func.grad, stays plain
optimizer = torch.optim.SGD(model.encoder.parameters(), lr=0.05)
outputs = []
for _ in range(2):
    tokens = torch.randn(5, 6)
    recalled = model(tokens)
    loss = (recalled - tokens).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    outputs.append(recalled.detach())
