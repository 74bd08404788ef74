"""The closure clears the gradients before each evaluation (skorch #639), so every L-BFGS
evaluation sees the gradient of the loss it computed.
Source: https://github.com/skorch-dev/skorch/issues/636."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TabularRegressor:
    def __init__(self, module):
        self.module = module
        self.optimizer = torch.optim.LBFGS(module.parameters(), lr=0.5, max_iter=5)

    def train_step_single(self, features, target):
        prediction = self.module(features).squeeze(-1)
        loss = (prediction - target).pow(2).mean()
        loss.backward()
        return loss

    def train_step(self, features, target):
        def closure():
            self.optimizer.zero_grad()
            return self.train_step_single(features, target)

        return self.optimizer.step(closure)


features = torch.randn(64, 5)
target = features @ torch.tensor([0.5, -1.0, 0.3, 0.0, 2.0]) + 0.1 * torch.randn(64)
net = TabularRegressor(nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)))

losses = []
for epoch in range(3):
    losses.append(net.train_step(features, target).detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.module.parameters()]}
