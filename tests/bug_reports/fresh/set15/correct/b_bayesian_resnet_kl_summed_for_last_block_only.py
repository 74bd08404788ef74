"""Bayesian-Torch's variational ResNet with every block's KL divergence added to the complexity
cost, as the merged fix does.
Source: https://github.com/IntelLabs/bayesian-torch/pull/2."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN, WIDTH, CLASSES, BLOCKS = 8, 16, 3, 3


class LinearReparameterization(nn.Module):
    def __init__(self, inputs, outputs):
        super().__init__()
        self.mu = nn.Parameter(0.1 * torch.randn(outputs, inputs))
        self.rho = nn.Parameter(torch.full((outputs, inputs), -3.0))

    def forward(self, x):
        sigma = F.softplus(self.rho)
        weight = self.mu + sigma * torch.randn_like(sigma)
        kl = (0.5 * (sigma ** 2 + self.mu ** 2 - 1.0) - torch.log(sigma)).sum()
        return F.linear(x, weight), kl


class BasicBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = LinearReparameterization(WIDTH, WIDTH)
        self.fc2 = LinearReparameterization(WIDTH, WIDTH)

    def forward(self, x):
        out, kl1 = self.fc1(x)
        out, kl2 = self.fc2(torch.relu(out))
        return torch.relu(out + x), kl1 + kl2


class BayesianResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = LinearReparameterization(IN, WIDTH)
        self.layer1 = nn.Sequential(*[BasicBlock() for _ in range(BLOCKS)])
        self.head = LinearReparameterization(WIDTH, CLASSES)

    def forward(self, x):
        kl_sum = 0
        x, kl = self.stem(x)
        kl_sum += kl
        for block in self.layer1:
            x, kl = block(x)
            kl_sum += kl
        logits, kl = self.head(x)
        kl_sum += kl
        return logits, kl_sum


data = torch.randn(64, IN)
labels = torch.randint(0, CLASSES, (64,))
model = BayesianResNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(5):
    optimizer.zero_grad()
    logits, kl = model(data)
    loss = F.cross_entropy(logits, labels) + kl / len(data)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
