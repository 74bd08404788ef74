# message: If your Function modifies inplace an input that is a view of another Tensor, your Function
#   cannot return more than one Tensor. This is not supported by the current autograd engine. You
#   should either make sure the input is not a view (using .clone() for example) or make your Function
#   only return one Tensor (potentially splitting it into two Functions: one doing the inplace that
#   returns a single Tensor and a second one that does the other operations). You can ask on the
#   forum https://discuss.pytorch.org/ if you need help to do this change.
# code: AD147 (catalogue: mark_dirty_view_two_outputs)
# set: 15
# trigger: a sequence classifier gives the last time step of nn.LSTM's output (out[:, -1], a view)
#   to a memory-saving in-place normalisation Function that also returns the norms it divided by
# source: none found; the pattern as users write it
# results: logits, model.lstm.weight_ih_l0.grad, model.head.weight.grad
import torch
from torch import nn


class NormaliseInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        norms = x.norm(dim=-1, keepdim=True)
        x.div_(norms)
        ctx.mark_dirty(x)
        ctx.save_for_backward(x, norms)
        return x, norms

    @staticmethod
    def backward(ctx, grad_out, grad_norms):
        y, norms = ctx.saved_tensors
        grad = (grad_out - y * (grad_out * y).sum(-1, keepdim=True)) / norms
        return grad + grad_norms * y


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 6, batch_first=True)
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        last, norms = NormaliseInPlace.apply(out[:, -1].clone())  # PRIMARY
        return self.head(last)


torch.manual_seed(0)
model = Classifier()
logits = model(torch.randn(4, 5, 3))
logits.sum().backward()
