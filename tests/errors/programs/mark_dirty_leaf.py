import torch


class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = Double.apply(w)  # PRIMARY
(y * y).sum().backward()
