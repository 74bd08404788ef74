# message: You must implement the jvp function for custom autograd.Function to use it with forward mode AD.
# code: AD237 (catalogue: function_without_jvp)
# set: 16
# trigger: a Gauss-Newton solver linearises a model once with torch.func.linearize and reuses the
#   linear map for several tangents; the model clips its hidden units with a custom Function written
#   with setup_context (usable by grad and vmap) that has no jvp
# source: none found; the pattern as users write it (torch.func.linearize over a custom op)
# results: out, tangents_out
import torch
from torch import nn
from torch.func import functional_call, linearize


class SoftClamp(torch.autograd.Function):  # PRIMARY
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x / (1 + x.abs())

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.save_for_forward(inputs[0])

    @staticmethod
    def jvp(ctx, x_t):
        (x,) = ctx.saved_tensors
        return x_t / (1 + x.abs()).pow(2)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output / (1 + x.abs()).pow(2)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(2, 5), nn.Linear(5, 1)

    def forward(self, x):
        return self.fc2(SoftClamp.apply(self.fc1(x)))


torch.manual_seed(0)
model = Model()
params = {name: p.detach() for name, p in model.named_parameters()}
x = torch.randn(7, 2)
out, jvp_fn = linearize(lambda p: functional_call(model, p, (x,)), params)
tangents_out = [jvp_fn({name: torch.randn_like(p) for name, p in params.items()}) for _ in range(2)]
