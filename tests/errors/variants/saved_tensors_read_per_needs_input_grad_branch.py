# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once.
#   If you are calling ctx.saved_tensors in backward, make sure to do so only once. Otherwise please
#   open an issue with details on your use case.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 16
# trigger: a hand-written bilinear Function reads ctx.saved_tensors in each `if ctx.needs_input_grad[i]:`
#   branch of its backward, as the extending-autograd examples guard each gradient; the layer is
#   used inside a block checkpointed with use_reentrant=False
# source: none found; the pattern as users write it (one saved_tensors read per gradient branch)
# results: model, loss
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Bilinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x, weight)
        return x @ weight.T

    @staticmethod
    def backward(ctx, grad_output):
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            _, weight = ctx.saved_tensors
            grad_x = grad_output @ weight
        if ctx.needs_input_grad[1]:
            x, _ = ctx.saved_tensors  # PRIMARY
            grad_w = grad_output.T @ x
        return grad_x, grad_w


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 4) * 0.5)

    def forward(self, x):
        return torch.tanh(Bilinear.apply(x, self.weight))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 4)
        self.block = Block()

    def forward(self, x):
        return checkpoint(self.block, self.embed(x), use_reentrant=False).sum(-1)


torch.manual_seed(0)
model = Model()
loss = model(torch.randn(5, 3)).pow(2).mean()
loss.backward()
