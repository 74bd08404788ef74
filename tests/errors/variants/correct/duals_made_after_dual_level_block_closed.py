# message: Trying to create a dual Tensor for forward AD but no level exists, make sure to
#   enter_dual_level() first.
# code: AD238 (catalogue: make_dual_without_level)
# set: 16
# trigger: a Lipschitz probe class enters `with fwAD.dual_level():` around its set-up only (the
#   directions are drawn inside the block); the loop that makes the dual inputs and unpacks the
#   tangents is written after the block, where the level no longer exists
# source: none found; the pattern as users write it (a with block closed one indentation too early)
# results: slopes
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn


class LipschitzProbe:
    def __init__(self, model, n_directions):
        self.model = model
        self.n_directions = n_directions

    def slopes(self, x):
        with fwAD.dual_level():
            directions = [torch.randn_like(x) for _ in range(self.n_directions)]
            result = []
            for v in directions:
                dual = fwAD.make_dual(x, v / v.norm())  # PRIMARY
                tangent = fwAD.unpack_dual(self.model(dual)).tangent
                result.append(tangent.norm())
        return torch.stack(result)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Softplus(), nn.Linear(8, 2))
probe = LipschitzProbe(model, 4)
slopes = probe.slopes(torch.randn(5, 3))
