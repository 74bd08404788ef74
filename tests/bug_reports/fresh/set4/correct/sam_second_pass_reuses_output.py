"""Sharpness-aware minimization (SAM): the second forward-backward pass reuses `output` from the
first pass, whose graph the first backward() already freed.
Source: https://github.com/davda54/sam/issues/45 (answer, as the repository's README says: make a
full forward pass for the second step, `criterion(model(images), targets).backward()`).
expect: raises"""
import torch
import torch.nn as nn


class SharpnessAware(torch.optim.Optimizer):
    """Climb to the worst nearby weights (first_step), take the gradient there, go back and let
    the base optimizer step with it (second_step)."""

    def __init__(self, params, rho=0.05, lr=0.1):
        super().__init__(params, dict(rho=rho, lr=lr))
        self.base_optimizer = torch.optim.SGD(self.param_groups, lr=lr)

    @torch.no_grad()
    def first_step(self):
        grads = [p.grad for group in self.param_groups for p in group["params"] if p.grad is not None]
        scale = self.param_groups[0]["rho"] / (torch.stack([g.norm() for g in grads]).norm() + 1e-12)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self.state[p]["climb"] = p.grad * scale
                    p.add_(self.state[p]["climb"])
        self.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.sub_(self.state[p]["climb"])
        self.base_optimizer.step()
        self.zero_grad()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
criterion = nn.CrossEntropyLoss()
optimizer = SharpnessAware(model.parameters())
batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]

losses = []
for images, targets in batches:
    output = model(images)
    loss = criterion(output, targets)
    loss.backward()
    optimizer.first_step()

    criterion(model(images), targets).backward()
    optimizer.second_step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in model.parameters()]}
