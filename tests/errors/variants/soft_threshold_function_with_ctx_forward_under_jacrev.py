# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...),
#   it must override the setup_context staticmethod.
# code: AD231 (catalogue: function_without_setup_context)
# set: 13
# trigger: a sparse coder's forward applies a soft-threshold Function written the classic way,
#   forward(ctx, x, tau) with ctx.save_for_backward and ctx.tau; a sensitivity check takes the
#   coder's Jacobian with torch.func.jacrev
# source: none found; the pattern as users write it (Functions from before torch.func, then jacrev)
# results: jacobian, sensitivity
import torch
from torch import nn
from torch.func import jacrev


class SoftThreshold(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, tau):  # PRIMARY
        ctx.save_for_backward(x)
        ctx.tau = tau
        return torch.sign(x) * torch.clamp(x.abs() - tau, min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x.abs() > ctx.tau).to(grad_output.dtype), None


class SparseCoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 3)
        self.tau = 0.1

    def forward(self, x):
        return SoftThreshold.apply(self.encoder(x), self.tau)


torch.manual_seed(0)
model = SparseCoder()
x = torch.randn(4)
jacobian = jacrev(model)(x)
sensitivity = jacobian.norm().item()
