# message: Trying to backward through the graph a second time (or directly access saved tensors after they
#   have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the
#   graph a second time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 11
# trigger: gradient accumulation over a model compiled with torch.compile (backend "aot_eager", which
#   runs on CPU without a compiler): the micro-batch losses are summed into `accumulated`, which is
#   backpropagated every second micro-batch and never reset, so the next window's backward() goes
#   through the first window's freed graph
# source: none found; the pattern as users write it (an accumulated loss kept across windows)
# results: window_losses, model
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
compiled = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
micro_batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
accumulation = 2
accumulated = 0.0
window_losses = []
for step, (x, y) in enumerate(micro_batches):
    loss = (compiled(x) - y).pow(2).mean() / accumulation
    accumulated = accumulated + loss  # PRIMARY
    if (step + 1) % accumulation == 0:
        accumulated.backward()
        optimizer.step()
        optimizer.zero_grad()
        window_losses.append(accumulated.item())
        accumulated = 0.0
