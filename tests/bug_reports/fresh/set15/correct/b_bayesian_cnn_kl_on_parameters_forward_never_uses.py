"""PyTorch-BayesianCNN's Bayes-by-Backprop layers with the KL divergence taken of the posterior the
forward pass samples from: mean `qw_mean`, log variance `log_alpha + log(qw_mean**2)`.
Source: https://github.com/kumar-shridhar/PyTorch-BayesianCNN/issues/7."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN, HIDDEN, CLASSES = 10, 24, 4


class BBBLinear(nn.Module):
    def __init__(self, inputs, outputs):
        super().__init__()
        stdv = 1.0 / math.sqrt(inputs)
        self.qw_mean = nn.Parameter(torch.empty(outputs, inputs).uniform_(-stdv, stdv))
        self.log_alpha = nn.Parameter(torch.full((outputs, inputs), -4.0))
        self.fc_qw_mean = nn.Parameter(torch.empty(outputs, inputs).uniform_(-stdv, stdv))
        self.fc_qw_logvar = nn.Parameter(torch.full((outputs, inputs), -6.0))

    def forward(self, x):
        mean = F.linear(x, self.qw_mean)
        std = torch.sqrt(1e-8 + F.linear(x ** 2, torch.exp(self.log_alpha) * self.qw_mean ** 2))
        out = mean + std * torch.randn_like(std)
        qw_logvar = self.log_alpha + torch.log(1e-8 + self.qw_mean ** 2)
        kl = 0.5 * (qw_logvar.exp() + self.qw_mean ** 2 - 1.0 - qw_logvar).sum()
        return out, kl


class BBBClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = BBBLinear(IN, HIDDEN)
        self.fc2 = BBBLinear(HIDDEN, CLASSES)

    def forward(self, x):
        h, kl1 = self.fc1(x)
        logits, kl2 = self.fc2(F.softplus(h))
        return logits, kl1 + kl2


data = torch.randn(48, IN)
labels = torch.randint(0, CLASSES, (48,))
model = BBBClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for step in range(5):
    optimizer.zero_grad()
    logits, kl = model(data)
    loss = F.cross_entropy(logits, labels) + kl / len(data)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "qw_mean": [model.fc1.qw_mean.detach().clone(), model.fc2.qw_mean.detach().clone()],
          "log_alpha": [model.fc1.log_alpha.detach().clone(), model.fc2.log_alpha.detach().clone()]}
