# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 12
# trigger: a retrieval model's embed() method carries @torch.inference_mode() (written for indexing a
#   corpus); training computes its loss through the same method
# source: none found; the pattern as users write it (inference_mode decorators on shared methods)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Retriever(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)

    @torch.inference_mode()  # PRIMARY
    def embed(self, x):
        return F.normalize(self.encoder(x), dim=1)

    def forward(self, queries, documents):
        return self.embed(queries) @ self.embed(documents).t()


torch.manual_seed(0)
model = Retriever()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
queries, documents = torch.randn(4, 3), torch.randn(4, 3)
labels = torch.arange(4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(queries, documents), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
