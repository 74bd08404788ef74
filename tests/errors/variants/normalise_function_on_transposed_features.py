# message: If your Function modifies inplace an input that is a view of another Tensor, your
#   Function cannot return more than one Tensor. This is not supported.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 7
# trigger: a memory-saving layer-norm Function centres its input in place (ctx.mark_dirty) and
#   also returns the means; a module gives it the channels-last view h.transpose(1, 2)
# source: none found; the pattern as users write it
# results: losses, model, means_seen
import torch
from torch import nn
import torch.nn.functional as F


class CentreInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        mean = x.mean(-1, keepdim=True)
        x.sub_(mean)
        ctx.mark_dirty(x)
        return x, mean

    @staticmethod
    def backward(ctx, grad_out, grad_mean):
        return grad_out - grad_out.mean(-1, keepdim=True)


class ChannelMixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(3, 4, 1)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        h = self.conv(x)
        centred, mean = CentreInPlace.apply(h.transpose(1, 2))  # PRIMARY
        means_seen.append(mean.detach().sum().item())
        return self.head(centred).mean(1)


torch.manual_seed(0)
model = ChannelMixer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x, y = torch.randn(2, 3, 5), torch.randn(2, 1)
losses, means_seen = [], []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
