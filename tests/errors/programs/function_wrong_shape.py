import torch


class RowSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.sum(1)

    @staticmethod
    def backward(ctx, grad):
        return grad  # PRIMARY


x = torch.randn(2, 3, requires_grad=True)
RowSum.apply(x).sum().backward()
