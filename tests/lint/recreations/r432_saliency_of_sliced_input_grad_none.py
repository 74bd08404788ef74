"""A saliency helper wants the gradient of a network's output with respect to
part of a batch.  It makes the whole batch require grad, takes the rows it
wants with a slice moved to the device (`superVariable[1:3].cuda()` in the
report), runs the network on that slice and reads `.grad` of the slice.  The
slice is not a leaf, so its `.grad` is None (autograd fills leaves only) and
the normalisation raises a TypeError.  The fix reads the batch's `.grad` (or
calls `retain_grad()` on the slice).
Buggy line: `grad = sub_batch.grad` in `SaliencyMap.compute`.
Source: https://github.com/pytorch/pytorch/issues/4649"""
import torch
import torch.nn as nn


class SaliencyMap:
    def __init__(self, network, device="cpu"):
        self.network = network
        self.device = device

    def compute(self, batch, rows):
        batch = batch.clone().requires_grad_(True)
        sub_batch = batch[rows[0]:rows[1]].to(self.device)
        self.network(sub_batch).sum().backward()
        grad = sub_batch.grad  # expect: ADL020
        return torch.abs(grad) / torch.abs(grad).max()


def run():
    torch.manual_seed(0)
    network = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    SaliencyMap(network).compute(torch.ones(4, 4), (1, 3))
