import torch


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)  # RETURN

    @staticmethod
    def backward(ctx, grad):
        return grad


x = torch.randn(3, requires_grad=True)
y = Identity.apply(x * 1)
y.mul_(2)  # PRIMARY
y.sum().backward()
