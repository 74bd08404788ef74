"""Activation checkpointing with offloading: the helper that moves saved activations between
devices copies the `requires_grad` flag onto the moved tensor (`ret.requires_grad =
obj.requires_grad`); when the move is a no-op (same device) or the activation is itself computed,
the result is not a leaf and its flag cannot be set.
Source: https://github.com/hpcaitech/ColossalAI/pull/711 ("fixed bugs of assigning grad states to
non leaf nodes": `ret = obj.to(device)` then `ret.requires_grad = obj.requires_grad`, guarded in
the fix so that only leaves get the flag; "to() or cpu() or gpu() would change a leaf tensor to a
non leaf one").
expect: raises"""
import torch
import torch.nn as nn


def copy_to_device(obj, device):
    if torch.is_tensor(obj):
        ret = obj.to(device)
        ret.requires_grad = obj.requires_grad
        return ret
    if isinstance(obj, (list, tuple)):
        return type(obj)(copy_to_device(o, device) for o in obj)
    return obj


class OffloadedBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))

    def forward(self, hidden):
        hidden = copy_to_device(hidden, "cpu")
        return hidden + self.inner(hidden)


torch.manual_seed(0)
stem = nn.Linear(4, 8)
blocks = nn.Sequential(OffloadedBlock(), OffloadedBlock())
head = nn.Linear(8, 1)
params = [*stem.parameters(), *blocks.parameters(), *head.parameters()]
optimizer = torch.optim.SGD(params, lr=0.05)
x, y = torch.randn(6, 4), torch.randn(6, 1)
losses = []
for step in range(3):
    loss = ((head(blocks(stem(x))) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in params]}
