"""LIC-HPCM (learned image compression), issue 4: training on a 24 GB card crashes deep into an
epoch (step 14400 of 20718) with "Unable to find a valid cuDNN algorithm": a slow memory leak.
`train_one_epoch` creates its `AverageMeter`s once, before the loop, and updates them with the
criterion's outputs as tensors -- `loss.update(out_criterion["loss"])` -- and `AverageMeter.
update` does `self.sum += val * n`, so the meter's sum is a tensor attached to every step's
graph for the whole epoch.  The fix: update the meters with `.item()` values (the issue was
closed by the maintainer).
Re-created in my own words with the CompressAI-style loop (main and auxiliary optimizers, a
rate-distortion criterion returning a dict, gradient clipping), a small model, and the
`AverageMeter` class.
Nothing raises: `bug_shows()` shows the meter's sum still attached to a graph after the epoch.
Buggy line: `loss.update(out_criterion["loss"])`.
Source: https://github.com/lyq133/LIC-HPCM/issues/4"""
import torch
import torch.nn as nn


class AverageMeter:
    """Compute running average."""

    def __init__(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class RateDistortionLoss(nn.Module):
    def __init__(self, lmbda=0.01):
        super().__init__()
        self.mse = nn.MSELoss()
        self.lmbda = lmbda

    def forward(self, output, target):
        out = {}
        out["bpp_loss"] = output["likelihoods"].log().sum() / (-target.numel())
        out["mse_loss"] = self.mse(output["x_hat"], target)
        out["loss"] = self.lmbda * 255 ** 2 * out["mse_loss"] + out["bpp_loss"]
        return out


class TinyCodec(nn.Module):
    def __init__(self):
        super().__init__()
        self.g_a = nn.Conv2d(3, 4, 3, padding=1)
        self.g_s = nn.Conv2d(4, 3, 3, padding=1)
        self.quantiles = nn.Parameter(torch.zeros(4))

    def forward(self, x):
        y = self.g_a(x)
        return {"x_hat": self.g_s(y), "likelihoods": torch.sigmoid(y).clamp_min(1e-6)}

    def aux_loss(self):
        return self.quantiles.abs().sum()


def train_one_epoch(model, criterion, train_dataloader, optimizer, aux_optimizer, clip_max_norm=1.0):
    model.train()
    loss = AverageMeter()
    bpp_loss = AverageMeter()
    mse_loss = AverageMeter()
    for i, d in enumerate(train_dataloader):
        optimizer.zero_grad()
        aux_optimizer.zero_grad()
        out_net = model(d)
        out_criterion = criterion(out_net, d)
        out_criterion["loss"].backward()
        if clip_max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_max_norm)
        optimizer.step()
        aux_loss = model.aux_loss()
        aux_loss.backward()
        aux_optimizer.step()
        loss.update(out_criterion["loss"])  # expect: ADL023
        bpp_loss.update(out_criterion["bpp_loss"].item())
        mse_loss.update(out_criterion["mse_loss"].item())
    return loss


def run():
    torch.manual_seed(0)
    model = TinyCodec()
    parameters = [p for n, p in model.named_parameters() if n != "quantiles"]
    optimizer = torch.optim.Adam(parameters, lr=1e-4)
    aux_optimizer = torch.optim.Adam([model.quantiles], lr=1e-3)
    data = [torch.rand(2, 3, 8, 8) for _ in range(3)]
    return train_one_epoch(model, RateDistortionLoss(), data, optimizer, aux_optimizer)


def bug_shows():
    meter = run()
    return meter.sum.grad_fn is not None
