import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor  # PRIMARY


x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
Scale.apply(x, 2.0).sum().backward()
