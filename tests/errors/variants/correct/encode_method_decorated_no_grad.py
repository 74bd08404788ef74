# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 3
# trigger: a dual-encoder's encode() method carries @torch.no_grad() (written for building a
#   search index); training calls the same method through forward(), and the loss is
#   backpropagated with torch.autograd.backward(loss)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class DualEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 3)

    def encode(self, x):
        return F.normalize(self.proj(x), dim=-1)

    def forward(self, queries, documents):
        return self.encode(queries) @ self.encode(documents).T


torch.manual_seed(0)
model = DualEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
queries, documents = torch.randn(4, 4), torch.randn(4, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(queries, documents) / 0.1, torch.arange(4))
    torch.autograd.backward(loss)
    optimizer.step()
    losses.append(loss.item())
