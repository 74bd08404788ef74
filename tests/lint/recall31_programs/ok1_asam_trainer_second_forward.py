"""Correct near twin of b1: the second loss comes from a second forward at the
perturbed weights (as SAM needs)."""
import torch
import torch.nn as nn
from torch.optim import Optimizer


class ASAM(Optimizer):
    def __init__(self, params, base_optimizer, rho=0.5, eta=0.01, **kwargs):
        super().__init__(params, dict(rho=rho, eta=eta, **kwargs))
        self.base = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def ascent_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                t_w = p.abs() + group["eta"]
                e_w = t_w * t_w * p.grad * group["rho"]
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        self.zero_grad()

    @torch.no_grad()
    def descent_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base.step()
        self.zero_grad()


class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
        self.minimizer = ASAM(self.net.parameters(), torch.optim.SGD, lr=0.1)
        self.criterion = nn.CrossEntropyLoss()

    def train_step(self, x, y):
        logits = self.net(x)
        self.criterion(logits, y).backward()
        self.minimizer.ascent_step()
        self.criterion(self.net(x), y).backward()
        self.minimizer.descent_step()
        return logits


def run():
    trainer = Trainer()
    for _ in range(2):
        trainer.train_step(torch.randn(5, 6), torch.randint(0, 3, (5,)))
