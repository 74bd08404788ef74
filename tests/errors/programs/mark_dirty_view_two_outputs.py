import torch


class ScaleAndTotal(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x.mul_(2)
        ctx.mark_dirty(x)
        return x, x.sum()

    @staticmethod
    def backward(ctx, grad_x, grad_total):
        return 2 * (grad_x + grad_total)


w = torch.randn(2, 3, requires_grad=True)
hidden = w.exp()
row = hidden[0]  # PRIMARY
scaled, total = ScaleAndTotal.apply(row)
(scaled.sum() + total).backward()
