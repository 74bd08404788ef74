# message: unsupported operation: more than one element of the written-to tensor refers to a single
#   memory location. Please clone() the tensor before performing the operation.
# code: AD124 (catalogue: expand_inplace)
# set: 7
# trigger: a transformer's fixed sinusoidal encoding (a buffer) is broadcast to the batch
#   with .expand(batch, -1, -1), and the token embeddings are added into it with +=
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(5, 3)
        position = torch.arange(4.0).unsqueeze(1)
        self.register_buffer("positions", torch.sin(position / 10 ** torch.arange(3.0)).unsqueeze(0))
        self.head = nn.Linear(3, 1)

    def forward(self, ids):
        h = self.positions.expand(ids.shape[0], -1, -1)  # PRIMARY
        h += self.tokens(ids)
        return self.head(h).mean(1)


torch.manual_seed(0)
model = Encoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ids, y = torch.tensor([[0, 1, 2, 3], [4, 3, 2, 1]]), torch.randn(2, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(ids), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
