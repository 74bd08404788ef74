# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 13
# trigger: a module's forward uses a smooth-step Function written the classic way (forward(ctx, x),
#   backward); a sensitivity analysis pushes a tangent through the module with
#   torch.autograd.forward_ad's dual_level / make_dual
# source: none found; the pattern as users write it (hand-written activations, then forward-mode AD)
# results: out, directional
import torch
import torch.autograd.forward_ad as fwAD
from torch import nn


class SmoothStep(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sigmoid(4 * x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        s = torch.sigmoid(4 * x)
        return grad_output * 4 * s * (1 - s)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        return SmoothStep.apply(self.linear(x))


torch.manual_seed(0)
model = Gate()
batch, direction = torch.randn(4, 3), torch.randn(4, 3)
with fwAD.dual_level():
    out, directional = fwAD.unpack_dual(model(fwAD.make_dual(batch, direction)))
