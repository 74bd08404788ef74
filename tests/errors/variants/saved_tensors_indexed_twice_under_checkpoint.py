# message: torch.utils.checkpoint: Unpack is being triggered for a tensor that was already unpacked once.
# code: AD136 (catalogue: checkpoint_saved_tensors_twice)
# set: 4
# trigger: a custom Function's backward reads ctx.saved_tensors[0] and ctx.saved_tensors[1]
#   separately; the block that calls it is checkpointed (use_reentrant=False)
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        out = torch.tanh(x * scale)
        ctx.save_for_backward(out, scale)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        out = ctx.saved_tensors[0]
        scale = ctx.saved_tensors[1]  # PRIMARY
        return grad_output * (1 - out * out) * scale, None


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("scale", torch.tensor(0.5))

    def forward(self, x):
        return ScaledTanh.apply(self.lin(x), self.scale)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block, self.head = Block(), nn.Linear(4, 1)

    def forward(self, x):
        return self.head(checkpoint(self.block, x, use_reentrant=False))


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 4), torch.randn(5, 1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
