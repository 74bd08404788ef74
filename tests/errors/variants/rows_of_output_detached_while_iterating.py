# message: Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this, please call detach() instead of detach_().
# code: AD108 (catalogue: detach_view_inplace)
# set: 9
# trigger: a retrieval model keeps a memory of the last embeddings: iterating over the batch of
#   embeddings gives one row (a view) per example, and each row is detached in place before it is
#   stored
# source: none found; the pattern as users write it (iterating a tensor yields views)
# results: losses, encoder, memory.rows
import torch
from torch import nn


class Memory:
    def __init__(self):
        self.rows = []

    def store(self, embeddings):
        for row in embeddings:
            self.rows.append(row.detach_())  # PRIMARY


torch.manual_seed(0)
encoder = nn.Linear(3, 4)
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
memory = Memory()
x = torch.randn(4, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    embeddings = encoder(x)
    memory.store(embeddings)
    loss = embeddings.pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
