import torch


class Power(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x, exponent)  # PRIMARY
        return x ** exponent

    @staticmethod
    def backward(ctx, grad):
        x, exponent = ctx.saved_tensors
        return grad * exponent * x ** (exponent - 1), None


x = torch.randn(3, requires_grad=True)
Power.apply(x, 3).sum().backward()
