# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 14
# trigger: a quantised decoder rounds its code with a straight-through autograd.Function
#   (setup_context, generate_vmap_rule = True, backward only); its input-output Jacobian is taken
#   with torch.func.jacfwd, which needs the Function's jvp
# source: none found; the pattern as users write it (straight-through estimators in VQ/quantised models)
# results: jacobian
import torch
from torch import nn
from torch.func import jacfwd


class RoundSTE(torch.autograd.Function):  # PRIMARY
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.round(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, x_tangent):
        return x_tangent


class QuantisedDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encode = nn.Linear(3, 4)
        self.decode = nn.Linear(4, 2)

    def forward(self, x):
        return self.decode(RoundSTE.apply(4 * self.encode(x)))


torch.manual_seed(0)
decoder = QuantisedDecoder()
x = torch.randn(3)
jacobian = jacfwd(decoder)(x)
