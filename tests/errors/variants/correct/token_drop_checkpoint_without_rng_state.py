import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class TokenDropBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ff = nn.Linear(4, 4)

    def forward(self, tokens):
        keep = torch.rand(tokens.shape[0]) > 0.5
        return torch.tanh(self.ff(tokens[keep]))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = TokenDropBlock()
        self.head = nn.Linear(4, 1)

    def forward(self, tokens):
        h = checkpoint(self.block, tokens, use_reentrant=False)  # PRIMARY
        return self.head(h).mean()


torch.manual_seed(0)
model = Encoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
tokens = torch.randn(16, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = model(tokens) ** 2
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
