"""A project's optimizer base class derives from `optim.Optimizer`; a
momentum optimizer derived from it calls the closure under
`@torch.inference_mode()`, keyword-only.  Raises at the closure's backward."""
import torch
import torch.nn as nn
import torch.optim as optim


class ProjectOptimizer(optim.Optimizer):
    def grads(self):
        return [p.grad for g in self.param_groups for p in g["params"]]


class HeavyBall(ProjectOptimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.inference_mode()
    def step(self, *, closure=None):
        loss = None
        if closure:
            loss = closure()  # bug
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.sub_(group["lr"] * p.grad)
        return loss


def run():
    torch.manual_seed(0)
    net = nn.Linear(2, 1)
    opt = HeavyBall(net.parameters())
    x = torch.randn(4, 2)

    def closure():
        opt.zero_grad()
        loss = net(x).pow(2).mean()
        loss.backward()
        return loss

    opt.step(closure=closure)
