"""Traffic flow forecasting with a spatial-temporal synchronous graph network whose layers each get
their own copy of the input, so adding the position embeddings in place no longer changes the
tensor the previous ReLU saved.
Source: https://github.com/LibCity/Bigscity-LibCity/issues/303."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, STEPS, NODES, FEATURES, HIDDEN = 4, 6, 10, 2, 16


class SynchronousGraphLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.temporal_embedding = nn.Parameter(torch.randn(1, STEPS, 1, HIDDEN) * 0.1)
        self.spatial_embedding = nn.Parameter(torch.randn(1, 1, NODES, HIDDEN) * 0.1)
        self.weight = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, data, adjacency):
        data += self.temporal_embedding
        data += self.spatial_embedding
        return torch.relu(self.weight(adjacency @ data))


class TrafficForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.first_layer = nn.Linear(FEATURES, HIDDEN)
        self.layers = nn.ModuleList(SynchronousGraphLayer() for _ in range(2))
        self.head = nn.Linear(HIDDEN, 1)

    def forward(self, x, adjacency):
        data = torch.relu(self.first_layer(x))
        for layer in self.layers:
            data = layer(data.clone(), adjacency)
        return self.head(data).squeeze(-1)


adjacency = torch.softmax(torch.randn(NODES, NODES), dim=-1)
model = TrafficForecaster()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(5):
    x = torch.randn(BATCH, STEPS, NODES, FEATURES)
    target = torch.randn(BATCH, STEPS, NODES)
    loss = F.l1_loss(model(x, adjacency), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
