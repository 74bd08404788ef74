"""A multipole graph kernel network whose upward pass builds a new node-feature tensor from the
levels (`torch.cat` of the rows before, the level's kernel integration, and the rows after)
instead of writing the level into the ReLU's output in place.
Source: https://github.com/neuraloperator/graph-pde/issues/6."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

WIDTH, EDGE_FEATURES = 8, 6
LEVEL_SIZES = [12, 6, 3]
STARTS = [0, 12, 18, 21]


class KernelConv(nn.Module):
    """Mean over incoming edges of W(edge features) @ x[source], plus an optional root term."""

    def __init__(self, root):
        super().__init__()
        self.kernel = nn.Sequential(nn.Linear(EDGE_FEATURES, 16), nn.ReLU(), nn.Linear(16, WIDTH * WIDTH))
        self.root = nn.Linear(WIDTH, WIDTH, bias=False) if root else None

    def forward(self, x, edge_index, edge_attr):
        source, target = edge_index
        weights = self.kernel(edge_attr).view(-1, WIDTH, WIDTH)
        messages = torch.bmm(x[source].unsqueeze(1), weights).squeeze(1)
        summed = torch.zeros_like(x).index_add(0, target, messages)
        count = torch.zeros(x.shape[0]).index_add(0, target, torch.ones(len(target))).clamp(min=1)
        out = summed / count[:, None]
        if self.root is not None:
            out = out + self.root(x)
        return out


def ball_edges(positions, sources, targets, radius):
    pairs = [(s, t) for s in sources for t in targets
             if s != t and (positions[s] - positions[t]).norm() < radius]
    return torch.tensor(pairs, dtype=torch.long).t()


class MultipoleKernelNetwork(nn.Module):
    def __init__(self, depth=2):
        super().__init__()
        self.depth = depth
        self.fc_in = nn.Linear(3, WIDTH)
        self.conv_down = nn.ModuleList([KernelConv(root=False) for _ in range(2)])
        self.conv_mid = nn.ModuleList([KernelConv(root=True) for _ in range(3)])
        self.conv_up = nn.ModuleList([KernelConv(root=False) for _ in range(2)])
        self.fc_out = nn.Linear(WIDTH, 1)

    def forward(self, node_features, edges):
        x = self.fc_in(node_features)
        for _ in range(self.depth):
            for level in range(2):
                x = x + self.conv_down[level](x, *edges["down"][level])
                x = F.relu(x)
            for level in reversed(range(3)):
                start, end = STARTS[level], STARTS[level + 1]
                edge_index, edge_attr = edges["mid"][level]
                level_out = self.conv_mid[level](x[start:end], edge_index - start, edge_attr)
                x = torch.cat([x[:start], level_out, x[end:]])
                if level > 0:
                    x = x + self.conv_up[level - 1](x, *edges["up"][level - 1])
                    x = F.relu(x)
        return self.fc_out(x[:STARTS[1]]).squeeze(-1)


positions = torch.rand(STARTS[-1], 2)
coefficient = torch.where(positions[:, 0] > 0.5, 3.0, 12.0)
node_features = torch.cat([positions, coefficient[:, None]], dim=1)
levels = [list(range(STARTS[i], STARTS[i + 1])) for i in range(3)]


def with_attributes(edge_index):
    source, target = edge_index
    attr = torch.cat([positions[source], positions[target], coefficient[source, None], coefficient[target, None]], 1)
    return edge_index, attr


edges = {
    "mid": [with_attributes(ball_edges(positions, levels[i], levels[i], 0.5 + 0.25 * i)) for i in range(3)],
    "down": [with_attributes(ball_edges(positions, levels[i], levels[i + 1], 0.6)) for i in range(2)],
    "up": [with_attributes(ball_edges(positions, levels[i + 1], levels[i], 0.6)) for i in range(2)],
}
solution = torch.sin(3.0 * positions[:STARTS[1], 0]) * positions[:STARTS[1], 1] + 1.0 / coefficient[:STARTS[1]]

model = MultipoleKernelNetwork()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(4):
    predicted = model(node_features, edges)
    loss = (predicted - solution).norm() / solution.norm()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
