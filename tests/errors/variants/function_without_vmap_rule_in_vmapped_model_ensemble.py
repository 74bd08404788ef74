# message: You tried to vmap over SmoothReLU, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True.
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 15
# trigger: an ensemble of small models evaluated at once, as in the model-ensembling tutorial
#   (torch.func.stack_module_state, then vmap over functional_call); each model uses a smooth-ReLU
#   Function written with forward and setup_context apart, without a vmap rule
# source: none found; the pattern as users write it (the ensembling recipe with a custom activation)
# results: predictions, [p.grad for p in params.values()]
import copy

import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap


class SmoothReLU(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(x):
        return torch.nn.functional.softplus(x, beta=4.0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * torch.sigmoid(4.0 * x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(3, 5)
        self.out = nn.Linear(5, 2)

    def forward(self, x):
        return self.out(SmoothReLU.apply(self.inp(x)))


torch.manual_seed(0)
models = [Net() for _ in range(3)]
params, buffers = stack_module_state(models)
base = copy.deepcopy(models[0]).to("meta")


def run_one(params, buffers, x):
    return functional_call(base, (params, buffers), (x,))


x = torch.randn(4, 3)
predictions = vmap(run_one, in_dims=(0, 0, None))(params, buffers, x)
predictions.pow(2).sum().backward()
