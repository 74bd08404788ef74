# message: If your Function modifies inplace an input that is a view of another Tensor, your Function
#   cannot return more than one Tensor. This is not supported by the current autograd engine. You
#   should either make sure the input is not a view (using .clone() for example) or make your
#   function only return one Tensor (potentially splitting it into two Functions: one doing the
#   inplace that returns a single Tensor and a second one that does the other operations). You can
#   ask on the forum https://discuss.pytorch.org/ if you need help to do so.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 16
# trigger: an audio encoder's nn.Conv1d output (batch, channels, time) is permuted to (batch, time,
#   channels) and given to a memory-saving RMS normalisation Function that divides in place
#   (ctx.mark_dirty) and also returns the RMS it divided by
# source: none found; the pattern as users write it (channels-last normalisation after a Conv1d)
# results: model, rms_mean
import torch
from torch import nn


class RMSNormInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        rms = x.pow(2).mean(-1, keepdim=True).add(1e-5).sqrt()
        x.div_(rms)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, rms)
        return x, rms

    @staticmethod
    def backward(ctx, grad_y, grad_rms):
        y, rms = ctx.saved_tensors
        grad_x = (grad_y - y * (grad_y * y).mean(-1, keepdim=True)) / rms
        return grad_x


class AudioEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 3, padding=1)
        self.head = nn.Linear(4, 2)

    def forward(self, wave):
        h = self.conv(wave).permute(0, 2, 1).clone()  # PRIMARY
        y, rms = RMSNormInPlace.apply(h)
        return self.head(y), rms


torch.manual_seed(0)
model = AudioEncoder()
out, rms = model(torch.randn(2, 1, 8))
out.pow(2).mean().backward()
rms_mean = rms.mean()
