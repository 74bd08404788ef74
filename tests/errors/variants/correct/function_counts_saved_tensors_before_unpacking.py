# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked
#   once. If you are calling ctx.saved_tensors in backward, make sure to do so only once.
#   Otherwise please open an issue with details on your use case.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 7
# trigger: a custom Function's backward checks len(ctx.saved_tensors) to know whether a bias was
#   saved, then unpacks ctx.saved_tensors; the block runs under non-reentrant checkpoint
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class ScaledLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight, bias)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_out):
        saved = ctx.saved_tensors
        has_bias = len(saved) == 3  # PRIMARY
        x, weight, bias = saved
        grad_bias = grad_out.sum(0) if has_bias else None
        return grad_out @ weight, grad_out.T @ x, grad_bias


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(2, 3) * 0.5)
        self.bias = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        return checkpoint(lambda h: ScaledLinear.apply(h, self.weight, self.bias).tanh(), x, use_reentrant=False)


torch.manual_seed(0)
model = Block()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(4, 3, requires_grad=True), torch.randn(4, 2)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
