"""Knowledge-graph scores against all entities, then a max_norm lookup that renormalizes the weight in place.
Source: https://github.com/pytorch/pytorch/issues/26596 (clone the weight before the matmul, as the nn.Embedding docs say)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
n_entities, dim, n_relations = 6, 5, 7
embedding = nn.Embedding(n_entities, dim, max_norm=True)
W = torch.randn((n_relations, dim), requires_grad=True)
optimizer = torch.optim.Adam(list(embedding.parameters()) + [W], lr=1e-2)

batches = [torch.tensor([1, 2]), torch.tensor([0, 4]), torch.tensor([3, 5])]
losses = []
for idx in batches:
    optimizer.zero_grad()
    a = embedding.weight.clone() @ W.t()
    b = embedding(idx) @ W.t()
    out = a.unsqueeze(0) + b.unsqueeze(1)
    loss = out.sigmoid().mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "weight": embedding.weight.detach().clone(), "W": W.detach().clone()}
