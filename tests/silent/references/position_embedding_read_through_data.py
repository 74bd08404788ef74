"""A learned position embedding that the forward pass reads through `.data`: its values are
added to the tokens, but `.data` is outside the graph, so the embedding never gets a gradient and
keeps its initial values while the optimizer holds it (no error, no warning)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyEncoder(nn.Module):
    def __init__(self, length=16, width=8):
        super().__init__()
        self.position = nn.Parameter(torch.randn(1, length, width) * 0.1)
        self.project = nn.Linear(width, width)

    def forward(self, tokens):
        position = self.position[:, : tokens.shape[1]]
        return self.project(tokens + position)


model = TinyEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(4):
    tokens, target = torch.randn(4, 10, 8), torch.randn(4, 10, 8)
    loss = F.mse_loss(model(tokens), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
