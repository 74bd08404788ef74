# message: If your Function modifies inplace an input that is a view of another Tensor, your
#   Function cannot return more than one Tensor.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 5
# trigger: a memory-saving ReLU Function rectifies in place (ctx.mark_dirty) and also returns the
#   mask of active units; a module's forward gives it the flattened activations (.view(-1))
# source: none found; the pattern as users write it
# results: losses, model, active
import torch
from torch import nn
import torch.nn.functional as F


class ReluWithMask(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mask = x > 0
        x.mul_(mask)
        ctx.mark_dirty(x)
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return x, mask

    @staticmethod
    def backward(ctx, grad_output, grad_mask):
        mask, = ctx.saved_tensors
        return grad_output * mask


class SparseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.fc2 = nn.Linear(4, 1)

    def forward(self, x):
        h = self.fc1(x)
        flat, mask = ReluWithMask.apply(h.view(-1))  # PRIMARY
        return self.fc2(flat.view_as(h)), mask.float().mean()


torch.manual_seed(0)
model = SparseNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(5, 3), torch.randn(5, 1)
losses, active = [], []
for _ in range(2):
    optimizer.zero_grad()
    out, fraction = model(x)
    loss = F.mse_loss(out, y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    active.append(fraction.item())
