# message: In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev,
#   ...), it must override the setup_context staticmethod. For more details, please see
#   https://pytorch.org/docs/main/notes/extending.func.html
# code: AD231 (catalogue: function_without_setup_context)
# set: 15
# trigger: a Newton step on an energy that calls a classic forward(ctx, x) Function (a smooth
#   absolute value) computes the Hessian with torch.func.jacrev(torch.func.grad(energy))
# source: none found; the pattern as users write it (older Functions under torch.func)
# results: x
import torch
from torch.func import grad, jacrev


class SmoothAbs(torch.autograd.Function):
    @staticmethod
    def forward(x):  # PRIMARY
        return torch.sqrt(x * x + 0.01)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x / torch.sqrt(x * x + 0.01)


def energy(x):
    return SmoothAbs.apply(x - 1.0).sum() + 0.5 * (x * x).sum()


x = torch.tensor([0.3, -0.2, 2.0])
for _ in range(2):
    step = torch.linalg.solve(jacrev(grad(energy))(x), grad(energy)(x))
    x = x - step
