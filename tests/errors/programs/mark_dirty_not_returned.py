import torch


class AddOne(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x * 1  # PRIMARY

    @staticmethod
    def backward(ctx, grad):
        return grad


x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
AddOne.apply(x * 1).sum().backward()
