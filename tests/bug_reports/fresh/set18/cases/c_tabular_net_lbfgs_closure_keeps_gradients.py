"""A sklearn-style wrapper fits a Weibull-type regression on tabular features with L-BFGS. To make
gradient accumulation possible, the wrapper's `train_step` clears the gradients once per batch
and then calls `optimizer.step(closure)`; the closure computes the loss and calls backward()
but no longer clears them. L-BFGS evaluates the closure several times per step (line search,
inner iterations), so each evaluation adds its gradient to the previous ones: the optimizer sees
sums of stale gradients, the fit diverges from what it should be, and nothing fails.
Source: https://github.com/skorch-dev/skorch/issues/636 ("Issue with LBGFS optimizer:
`optimizer_.zero_grad` no longer called inside of `train_step_single`": nets that trained under
skorch 0.6 quickly hit nan loss; fixed in #639, "Call zero grad on each train step", which
clears the gradients inside the closure again).
expect: silent"""
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
        self.optimizer.zero_grad()

        def closure():
            return self.train_step_single(features, target)

        return self.optimizer.step(closure)


features = torch.randn(64, 5)
target = features @ torch.tensor([0.5, -1.0, 0.3, 0.0, 2.0]) + 0.1 * torch.randn(64)
net = TabularRegressor(nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)))

losses = []
for epoch in range(3):
    losses.append(net.train_step(features, target).detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in net.module.parameters()]}
