# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked
#   once. If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise
#   please open an issue with details on your use case.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 15
# trigger: a gated product Function's backward computes each input's gradient in a list
#   comprehension that reads ctx.saved_tensors once per input; the gated block runs under
#   checkpoint(use_reentrant=False) in a module's forward
# source: none found; the pattern as users write it
# results: model.a.weight.grad, model.b.weight.grad, out
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class GatedProduct(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * torch.sigmoid(b)

    @staticmethod
    def backward(ctx, grad_output):
        return tuple(
            grad_output * torch.sigmoid(ctx.saved_tensors[1]) if i == 0  # PRIMARY
            else grad_output * ctx.saved_tensors[0] * torch.sigmoid(ctx.saved_tensors[1])
            * (1 - torch.sigmoid(ctx.saved_tensors[1]))
            for i in range(2))


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 3)
        self.b = nn.Linear(4, 3)

    def block(self, x):
        return GatedProduct.apply(self.a(x), self.b(x))

    def forward(self, x):
        return checkpoint(self.block, x, use_reentrant=False)


torch.manual_seed(0)
model = Gated()
out = model(torch.randn(5, 4))
out.sum().backward()
