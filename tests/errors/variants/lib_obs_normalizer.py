"""A running mean/std observation normalizer (library module of a set 22 variant)."""
import torch


class RunningNorm:
    def __init__(self, obs, momentum=0.1):
        self.momentum = momentum
        self.mean = obs.mean(0)
        self.std = obs.std(0)

    @torch.no_grad()
    def update(self, obs):
        self.mean.mul_(1 - self.momentum).add_(self.momentum * obs.mean(0))
        self.std.mul_(1 - self.momentum).add_(self.momentum * obs.std(0))

    def __call__(self, obs):
        return (obs - self.mean) / self.std
