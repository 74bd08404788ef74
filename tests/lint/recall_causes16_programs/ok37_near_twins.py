"""Correct near twins: the closure inside `enable_grad()` under a `no_grad`
step; an undecorated step; a non-optimizer class whose `no_grad` step calls
a closure that only reads a value.  `grads()` gives the gradient of the
first steps, compared in the test with the hand-written ones."""
import torch
import torch.nn as nn
from torch.optim import Optimizer


class SGDEnabled(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])
        return loss


class SGDPlain(Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        with torch.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad, alpha=-group["lr"])
        return loss


class Decay:
    def __init__(self, model):
        self.model, self.shadow = model, [p.detach().clone() for p in model.parameters()]

    @torch.no_grad()
    def step(self, closure=None):
        rate = closure() if closure is not None else 0.99
        for s, p in zip(self.shadow, self.model.parameters()):
            s.mul_(rate).add_(p, alpha=1 - rate)


def grads(cls):
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    opt = cls(net.parameters())
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    ema = Decay(net)

    def closure():
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        return loss

    opt.step(closure)
    ema.step(lambda: 0.9)
    return net, x, y
