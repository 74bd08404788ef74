# message: Trying to backward through the graph a second time (or directly access saved tensors after they
#   have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the
#   graph a second time or if you need to access saved tensors after calling .backward() or
#   autograd.grad().
# code: AD302 (catalogue: backward_twice)
# set: 16
# trigger: a Transformer-XL-style segment loop keeps the previous segment's hidden states as memory
#   for nn.MultiheadAttention's keys and values (self.memory = h); the memory is carried into the next
#   segment without detach, so the next backward() goes back into the freed graph
# source: none found; the pattern as users write it (segment-level recurrence without stop-gradient)
# results: model, losses
import torch
from torch import nn


class MemoryAttention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attention = nn.MultiheadAttention(dim, 2, batch_first=True)
        self.proj = nn.Linear(dim, dim)
        self.memory = None

    def forward(self, x):
        context = x if self.memory is None else torch.cat([self.memory, x], 1)
        h, _ = self.attention(x, context, context)
        h = torch.tanh(self.proj(h))
        self.memory = h.detach()  # PRIMARY
        return h


torch.manual_seed(0)
model = MemoryAttention(4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
segments = torch.randn(3, 2, 5, 4)
losses = []
for segment in segments:
    optimizer.zero_grad()
    loss = model(segment).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
