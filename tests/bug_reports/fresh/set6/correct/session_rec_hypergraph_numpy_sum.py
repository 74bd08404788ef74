"""Session-based recommendation with hypergraph convolution (DHCN): the item embeddings of every
layer are collected in a list and averaged with `np.sum(final, 0)`, which converts tensors that
require grad to numpy.
Source: https://github.com/xiaxin1998/DHCN/issues/8 ("Can't call numpy() on Tensor that requires
grad" at `item_embeddings = np.sum(final, 0)`; the maintainer changed that line. His first
suggestion, `np.sum(final.detach().numpy(), 0)`, would stop the embeddings from training; the
correct version sums the layers with torch).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_ITEMS, DIM = 25, 16


class HyperConv(nn.Module):
    def __init__(self, layers=2):
        super().__init__()
        self.layers = layers

    def forward(self, adjacency, embedding):
        item_embeddings = embedding
        final = [item_embeddings]
        for _ in range(self.layers):
            item_embeddings = adjacency @ item_embeddings
            final.append(item_embeddings)
        item_embeddings = torch.sum(torch.stack(final), 0) / (self.layers + 1)
        return item_embeddings


class DHCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(N_ITEMS, DIM)
        self.hyper_conv = HyperConv()

    def forward(self, adjacency, sessions):
        items = self.hyper_conv(adjacency, self.embedding.weight)
        session_emb = items[sessions].mean(1)
        return session_emb @ items.t()


adjacency = torch.rand(N_ITEMS, N_ITEMS)
adjacency = adjacency / adjacency.sum(1, keepdim=True)
model = DHCN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(3):
    sessions, targets = torch.randint(0, N_ITEMS, (8, 4)), torch.randint(0, N_ITEMS, (8,))
    loss = F.cross_entropy(model(adjacency, sessions), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "embedding": model.embedding.weight.detach().clone()}
