# message: `inputs` argument to `grad()` cannot be empty.
# code: AD135 (catalogue: grad_empty_inputs)
# set: 8
# trigger: the trainable parameters of an encoder and a head are joined with itertools.chain, given
#   to the optimizer (which reads them all), then to torch.autograd.grad for a clipped manual step
# source: none found; the pattern as users write it
# results: losses, encoder, head
import itertools

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder, head = nn.Linear(3, 4), nn.Linear(4, 1)
trainable = list(itertools.chain(encoder.parameters(), head.parameters()))  # PRIMARY
optimizer = torch.optim.SGD(trainable, lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses = []
for _ in range(2):
    loss = F.mse_loss(head(torch.relu(encoder(x))), y)
    grads = torch.autograd.grad(loss, trainable)
    for p, g in zip(trainable, grads):
        p.grad = g.clamp(-0.5, 0.5)
    optimizer.step()
    losses.append(loss.item())
