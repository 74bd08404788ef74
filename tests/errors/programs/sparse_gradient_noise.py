import torch
import torch.nn as nn

torch.manual_seed(0)
embedding = nn.Embedding(6, 2, sparse=True)
optimizer = torch.optim.SGD(embedding.parameters(), lr=0.1)
noise = torch.full((6, 2), 0.01)
for ids in (torch.tensor([1, 2]), torch.tensor([2, 5])):
    optimizer.zero_grad()
    embedding(ids).pow(2).sum().backward()
    for p in embedding.parameters():
        p.grad = p.grad + noise  # PRIMARY
    optimizer.step()
