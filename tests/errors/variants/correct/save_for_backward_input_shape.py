# message: save_for_backward can only save variables, but argument 1 is of type torch.Size
# code: AD122 (catalogue: save_for_backward_non_tensor)
# trigger: a custom Function saves the input's shape (a torch.Size) with save_for_backward to
#   reshape the gradient in backward
# source: none found; the pattern as users write it
# results: loss, x.grad
import torch


class FlattenSquare(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)  # PRIMARY
        ctx.shape = x.shape
        return (x * x).reshape(-1)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        shape = ctx.shape
        return 2 * x * grad.reshape(shape)


torch.manual_seed(0)
x = torch.randn(2, 3, requires_grad=True)
loss = FlattenSquare.apply(x).sum()
loss.backward()
