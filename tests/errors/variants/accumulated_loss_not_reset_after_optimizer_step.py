# message: Trying to backward through the graph a second time (or directly access saved tensors after they
#   have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph
#   a second time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 14
# trigger: gradient accumulation written as a running sum of the scaled micro-batch losses; the sum
#   starts at 0 before the loop and is never reset after the optimizer step, so the second window's
#   backward() goes through the first window's freed graph again
# source: none found; the pattern as users write it (loss = loss + ... across accumulation steps)
# results: model, losses
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]
accumulation = 2
losses = []
loss = 0
for i, (x, y) in enumerate(batches):
    loss = loss + nn.functional.mse_loss(model(x), y) / accumulation
    if (i + 1) % accumulation == 0:
        loss.backward()  # PRIMARY
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
