# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [1, 5] while the given forward gradient is of size [5].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 17
# trigger: the sensitivity of a regression model's predictions to a perturbation of its weight is taken in
#   forward mode: the weight of nn.Linear(5, 1) is made dual through torch.func.functional_call, with the
#   direction written as a vector of the input size ([5]) while the weight is [1, 5]
# source: none found; the pattern as users write it (a weight thought of as a vector of input size)
# results: predictions, sensitivity
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn
from torch.func import functional_call


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(5, 1)

    def forward(self, x):
        return self.linear(x).squeeze(-1)


def weight_sensitivity(model, x, direction):
    params = {name: p.detach() for name, p in model.named_parameters()}
    with fwAD.dual_level():
        params["linear.weight"] = fwAD.make_dual(params["linear.weight"], direction)  # PRIMARY
        out = functional_call(model, params, (x,))
        primal, tangent = fwAD.unpack_dual(out)
    return primal, tangent


torch.manual_seed(0)
model = Regressor()
x = torch.randn(6, 5)
direction = torch.randn(5)
predictions, sensitivity = weight_sensitivity(model, x, direction)
