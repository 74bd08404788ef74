"""A Lion optimizer written from the paper, `@torch.no_grad` used bare, and an
L-BFGS-style loop that hands it a closure (forward, loss, backward).  Raises
"element 0 of tensors does not require grad"."""
import torch
import torch.nn as nn
from torch.optim.optimizer import Optimizer


class Lion(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad
    def step(self, closure=None):
        loss = closure() if closure is not None else None  # bug
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                m = self.state[p].setdefault("m", torch.zeros_like(p))
                p.add_(torch.sign(m * b1 + p.grad * (1 - b1)), alpha=-group["lr"])
                m.mul_(b2).add_(p.grad, alpha=1 - b2)
        return loss


def run():
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    opt = Lion(net.parameters())
    x, y = torch.randn(8, 3), torch.randn(8, 1)

    def closure():
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(2):
        opt.step(closure)
