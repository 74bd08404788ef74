"""Time-series classifier with a sequence self-attention layer that keeps its attention weights on
`self` for inspection; early stopping keeps the best model with `copy.deepcopy`, which fails on
those stored tensors because they are still part of the graph.
Source: https://github.com/sktime/sktime/issues/10928 ("Only Tensors created explicitly by the user
(graph leaves) support the deepcopy protocol" after a forward pass; the report's fix: the
inspection-only tensors are detached where they are stored).
expect: raises"""
import copy

import torch
import torch.nn as nn


class SeqSelfAttention(nn.Module):
    def __init__(self, input_dim, units):
        super().__init__()
        self.query = nn.Linear(input_dim, units)
        self.key = nn.Linear(input_dim, units)
        self.intensity = None
        self.attention = None

    def forward(self, x):
        intensity = torch.tanh(self.query(x)) @ torch.tanh(self.key(x)).transpose(1, 2)
        attention = torch.softmax(intensity, dim=-1)
        self.intensity = intensity
        self.attention = attention
        return attention @ x


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = SeqSelfAttention(4, 6)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        return self.head(self.attention(x).mean(1))


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
series, labels = torch.randn(8, 7, 4), torch.randint(0, 3, (8,))
best_loss, best_model, losses = float("inf"), None, []
for epoch in range(3):
    loss = nn.functional.cross_entropy(model(series), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if loss.item() < best_loss:
        best_loss, best_model = loss.item(), copy.deepcopy(model)
result = {"losses": losses, "best": [p.detach() for p in best_model.parameters()]}
