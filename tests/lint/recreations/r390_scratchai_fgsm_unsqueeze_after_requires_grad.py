"""scratchai's FGSM attack turned gradients on for the input image and then
added the batch dimension, `x.requires_grad_(True)` followed by
`x = x.unsqueeze(0)`: the name now refers to a non-leaf view, whose `.grad`
stays None after `loss.backward()`, and the attack's `torch.sign(x.grad)`
fails (TypeError on None).  The fix unsqueezes before turning gradients on.
Buggy line: `torch.sign(x.grad)` in `fgsm` (the gradient read of the
unsqueezed, non-leaf `x`).
Source: https://github.com/iArunava/scratchai/pull/39"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def fgsm(x, net, y=None, eps=0.3):
    x = x.clone().detach()
    x.requires_grad_(True)
    if x.dim() == 3:
        x = x.unsqueeze(0)
    logits = net(x)
    if y is None:
        y = logits.argmax(dim=1)
    loss = F.cross_entropy(logits, y)
    net.zero_grad()
    loss.backward()
    x_adv = x + eps * torch.sign(x.grad)  # expect: ADL020
    return x_adv.clamp(0, 1).detach()


def run():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    fgsm(torch.rand(3, 8, 8), net)
