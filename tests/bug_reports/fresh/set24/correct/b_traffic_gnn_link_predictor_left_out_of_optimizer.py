"""Traffic4cast's example GNN for road-segment congestion: a message-passing network makes an
embedding for each road node, and a separate LinkPredictor MLP classifies each road segment
(edge) into congestion classes from the embeddings of its two end nodes. The optimizer is given
`model.parameters()` only, so the link predictor keeps its random initial weights for the whole
training: the GNN learns to feed a fixed random head. Nothing raises; the loss goes down, slower
and to a worse value.
Source: https://github.com/iarai/NeurIPS2022-traffic4cast/pull/12 ("... add LinkPredictor to
optimizer")
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_NODES, NUM_EDGES, NODE_FEATS, HIDDEN, NUM_CLASSES = 20, 40, 4, 16, 3


class CongestioNN(nn.Module):
    def __init__(self, in_channels, hidden_channels, num_layers=2):
        super().__init__()
        self.node_embedding = nn.Linear(in_channels, hidden_channels)
        self.layers = nn.ModuleList(nn.Linear(2 * hidden_channels, hidden_channels) for _ in range(num_layers))

    def forward(self, x, edge_index):
        h = F.relu(self.node_embedding(x))
        src, dst = edge_index
        for layer in self.layers:
            messages = torch.zeros_like(h).index_add(0, dst, h[src])
            degree = torch.zeros(h.shape[0]).index_add(0, dst, torch.ones(dst.shape[0])).clamp(min=1)
            h = F.relu(layer(torch.cat([h, messages / degree.unsqueeze(-1)], dim=-1)))
        return h


class LinkPredictor(nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels):
        super().__init__()
        self.lin1 = nn.Linear(in_channels, hidden_channels)
        self.lin2 = nn.Linear(hidden_channels, out_channels)

    def forward(self, x_i, x_j):
        x = x_i * x_j
        return self.lin2(F.relu(self.lin1(x)))


node_features = torch.randn(NUM_NODES, NODE_FEATS)
edge_index = torch.randint(0, NUM_NODES, (2, NUM_EDGES))
congestion = torch.randint(0, NUM_CLASSES, (NUM_EDGES,))

model = CongestioNN(NODE_FEATS, HIDDEN)
predictor = LinkPredictor(HIDDEN, HIDDEN, NUM_CLASSES)
optimizer = torch.optim.AdamW([*model.parameters(), *predictor.parameters()], lr=5e-3)

losses = []
for epoch in range(40):
    model.train()
    predictor.train()
    h = model(node_features, edge_index)
    y_hat = predictor(h[edge_index[0]], h[edge_index[1]])
    loss = F.cross_entropy(y_hat, congestion)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {
    "losses": torch.stack(losses),
    "model": [p.detach().clone() for p in model.parameters()],
    "predictor": [p.detach().clone() for p in predictor.parameters()],
}
