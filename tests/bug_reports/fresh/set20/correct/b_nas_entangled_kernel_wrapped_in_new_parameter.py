"""One-shot architecture search with weight entanglement where the entangled kernel is applied with
`F.conv1d(x, merged, padding=2)`, so the loss's gradient reaches the shared 5-wide kernel and every
architecture logit.
Source: https://github.com/automl/ConfigurableOptimizer/pull/82."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CHANNELS, LENGTH, BATCH = 4, 16, 8


class EntangledMixedOp(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(CHANNELS, CHANNELS, kernel_size=5, padding=2, bias=False)
        self.pool = nn.AvgPool1d(3, stride=1, padding=1, count_include_pad=False)
        self.arch_logits = nn.Parameter(torch.zeros(3))

    def forward(self, x):
        weights = torch.softmax(self.arch_logits, dim=0)
        kernel = self.conv.weight
        centre = F.pad(kernel[:, :, 1:4], (1, 1))
        merged = weights[1] * kernel + weights[2] * centre
        conv_out = F.conv1d(x, merged, padding=2)
        return weights[0] * self.pool(x) + conv_out


class SearchNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv1d(1, CHANNELS, kernel_size=3, padding=1)
        self.cell = EntangledMixedOp()
        self.head = nn.Linear(CHANNELS, 1)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        h = self.cell(h)
        return self.head(h.mean(dim=-1)).squeeze(-1)


model = SearchNetwork()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for step in range(10):
    x = torch.randn(BATCH, 1, LENGTH)
    target = x.abs().mean(dim=(1, 2))
    loss = F.mse_loss(model(x), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
