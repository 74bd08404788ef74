import torch


class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x * w

    @staticmethod
    def backward(ctx, grad):
        x, w, out = ctx.saved_tensors  # PRIMARY
        return grad * w, grad * x


x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
w = torch.tensor([3.0, 4.0, 5.0], requires_grad=True)
Scale.apply(x, w).sum().backward()
