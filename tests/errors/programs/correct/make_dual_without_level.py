"""The correct version of make_dual_without_level: the dual tensor made, used and unpacked inside
one `with fwAD.dual_level():` block."""
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
batch = torch.randn(4, 3)
direction = torch.randn(4, 3)

with fwAD.dual_level():
    dual = fwAD.make_dual(batch, direction)
    out, directional = fwAD.unpack_dual(model(dual))
