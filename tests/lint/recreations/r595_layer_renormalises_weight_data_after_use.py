"""A Chinese notes page on `detach()` / `.data` / `clone()` / `copy_()`
explains that a write through `.data` is invisible to autograd: the version
counter does not move, so a saved tensor changed this way gives a wrong
gradient with no error.  Re-created as a layer that keeps its weight rows at
unit norm by renormalising `self.weight.data` in `forward`, right after the
matmul that saved the weight for the input's gradient, inside a small
encoder trained with a reconstruction loss.  Nothing raises; the gradient
reaching the input (and the layers before) is computed with the
renormalised weight, not the one used in the forward pass.
Buggy line: `self.weight.data.div_(...)` (a `.data` write to a tensor the
matmul saved).
Source: https://geekdaxue.co/read/lart@ugkv9f/kOwCnQGWuWDhRnJD"""
import torch
import torch.nn as nn


class UnitNormLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(d_out, d_in) * 2)

    def forward(self, x):
        out = x @ self.weight.t()
        self.weight.data.div_(self.weight.data.norm(dim=1, keepdim=True))  # missed: ADL001
        return out


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(4, 6)
        self.proj = UnitNormLinear(6, 3)

    def forward(self, x):
        return self.proj(torch.tanh(self.inp(x)))


def bug_shows():
    """The first layer's gradient differs from the one of the forward actually run."""
    torch.manual_seed(0)
    model = Encoder()
    x = torch.randn(5, 4)
    w_used = model.proj.weight.detach().clone()
    loss = model(x).pow(2).sum()
    loss.backward()
    ref_inp = model.inp.weight.detach().clone().requires_grad_()
    h_ref = torch.tanh(x @ ref_inp.t() + model.inp.bias.detach())
    (h_ref @ w_used.t()).pow(2).sum().backward()
    return not torch.allclose(model.inp.weight.grad, ref_inp.grad)
