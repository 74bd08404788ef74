"""Knowledge-graph embedding scores: every entity is scored against the relations with
`embedding.weight @ W.t()`, then the batch's entities are looked up with `embedding(idx)`. The
embedding has `max_norm`, so the lookup renormalizes the looked-up rows of `embedding.weight`
in place; the matmul saved that weight for the gradient of `W`, and backward fails with "one of
the variables needed for gradient computation has been modified by an inplace operation".
Source: https://github.com/pytorch/pytorch/issues/26596 ("nn.Embedding with max_norm shows
unstable behavior and causes sometimes runtime error"; resolution: the documented note on
`nn.Embedding` -- with `max_norm` the forward modifies `weight` in place, so clone the weight
before a differentiable operation on it: `embedding.weight.clone() @ W.t()`).
expect: raises"""
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
    a = embedding.weight @ W.t()
    b = embedding(idx) @ W.t()
    out = a.unsqueeze(0) + b.unsqueeze(1)
    loss = out.sigmoid().mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "weight": embedding.weight.detach().clone(), "W": W.detach().clone()}
