"""A visualization callback turns gradients off with `torch.set_grad_enabled(False)` and never
turns them back on; the next training step's loss has no grad_fn.
Source: https://github.com/3dlg-hcvc/omages/issues/11 (the error appears right after the
visualization callback; fix: scope the switch with `with torch.no_grad():`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [torch.randn(4, 3) for _ in range(3)]


def visualize(model, batch):
    with torch.no_grad():
        preview = model(batch)
    return preview.mean().item()


for step, batch in enumerate(batches):
    loss = model(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step == 0:
        visualize(model, batch)
result = {"params": [p.detach() for p in model.parameters()]}
