"""A directional derivative with torch.autograd.forward_ad written without the
`with fwAD.dual_level():` block: make_dual needs a level to attach the tangent to. The pattern as
users write it (the forward-mode AD tutorial's steps, the block left out)."""
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
batch = torch.randn(4, 3)
direction = torch.randn(4, 3)

dual = fwAD.make_dual(batch, direction)  # PRIMARY
out, directional = fwAD.unpack_dual(model(dual))
