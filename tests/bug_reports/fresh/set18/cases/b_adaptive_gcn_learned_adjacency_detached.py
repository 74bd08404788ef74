"""A graph convolutional network that learns its own adjacency: two projections (`phi`, `theta`)
of the node features give pairwise affinities, a row softmax turns them into a dense adjacency,
and two graph convolutions propagate over it. The adjacency is built with `.detach()` at the
end, so the classification loss never reaches `phi` and `theta`: the optimizer holds them, their
`.grad` stays None and they keep their initial weights while the rest trains. Nothing is raised.
Source: https://github.com/queenie88/A-GCN/issues/4 ("Question about gradient flow": if `adj` is
detached from the computation graph, the two weight matrices W_phi and W_theta that compute it
cannot be updated; the authors confirmed, "the .detach() should be removed", and updated the
code).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NODES, FEATURES, EMBED, HIDDEN, CLASSES = 20, 12, 8, 16, 3


class AdaptiveGCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Linear(FEATURES, EMBED)
        self.theta = nn.Linear(FEATURES, EMBED)
        self.gc1 = nn.Linear(FEATURES, HIDDEN)
        self.gc2 = nn.Linear(HIDDEN, CLASSES)

    def adjacency(self, x):
        affinity = self.phi(x) @ self.theta(x).t()
        return torch.softmax(affinity, dim=-1).detach()

    def forward(self, x):
        adj = self.adjacency(x)
        h = F.relu(adj @ self.gc1(x))
        return adj @ self.gc2(h)


features = torch.randn(NODES, FEATURES)
labels = torch.randint(0, CLASSES, (NODES,))
model = AdaptiveGCN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(25):
    loss = F.cross_entropy(model(features), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
