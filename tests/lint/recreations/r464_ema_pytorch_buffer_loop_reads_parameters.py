"""ema-pytorch's `EMA.update_moving_average` copies the online model's
buffers into the EMA model in a second loop, but that loop iterates
`named_parameters()` where `named_buffers()` was meant: the batch-norm
running statistics of the EMA model are never copied (and the parameters
are overwritten with the online ones, undoing the average).  Nothing
raises.  The fix iterates `named_buffers()`.
Buggy line: `for name, buffer in current_model.named_parameters():` in
`EMA.copy_buffers`.
Source: https://github.com/lucidrains/ema-pytorch/issues/8"""
import copy

import torch
import torch.nn as nn


class EMA(nn.Module):
    def __init__(self, model, beta=0.9, fixed=False):
        super().__init__()
        self.online_model = [model]
        self.ema_model = copy.deepcopy(model)
        self.beta = beta
        self.fixed = fixed

    @torch.no_grad()
    def copy_buffers(self, ma_model, current_model):
        ma_buffers = dict(ma_model.named_buffers())
        ma_params = dict(ma_model.named_parameters())
        source = current_model.named_buffers() if self.fixed else current_model.named_parameters()
        for name, buffer in source:  # missed: no rule
            target = ma_buffers[name] if self.fixed else ma_params[name]
            target.copy_(buffer)

    @torch.no_grad()
    def update_moving_average(self):
        current_model = self.online_model[0]
        for ma_p, p in zip(self.ema_model.parameters(), current_model.parameters()):
            ma_p.lerp_(p, 1 - self.beta)
        self.copy_buffers(self.ema_model, current_model)


def train(fixed):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 1))
    ema = EMA(model, fixed=fixed)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(4):
        x = torch.randn(8, 4) + 1
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update_moving_average()
    return ema.ema_model[1].running_mean.clone()


def bug_shows():
    """The EMA model's batch-norm statistics never leave their initial zeros."""
    return torch.equal(train(False), torch.zeros(6)) and not torch.equal(train(True), torch.zeros(6))
