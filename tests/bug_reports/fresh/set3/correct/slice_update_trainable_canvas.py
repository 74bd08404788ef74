"""A backend's `slice_update(inputs, start, updates)` writes the update into `inputs` in place; when
`inputs` is a trainable tensor (a leaf that requires grad) the write is refused.
Source: https://github.com/keras-team/keras-core/pull/405 (fix: copy the tensor before the update).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def slice_update(inputs, start_indices, updates):
    index = tuple(slice(start, start + size) for start, size in zip(start_indices, updates.shape))
    inputs = inputs.clone()
    inputs[index] = updates
    return inputs


canvas = nn.Parameter(torch.zeros(6, 6))
painter = nn.Linear(4, 9)
strokes = torch.randn(4)
target = torch.randn(6, 6)
optimizer = torch.optim.SGD([canvas, *painter.parameters()], lr=0.1)

patch = torch.tanh(painter(strokes)).view(3, 3)
painted = slice_update(canvas, (2, 1), patch)
loss = (painted - target).pow(2).mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
result = {"loss": loss.detach(), "params": [canvas.detach(), *[p.detach() for p in painter.parameters()]]}
