# message: attempting to assign a gradient of size '[3, 2]' to a tensor of size '[2, 3]'. Please
#   ensure that the gradient and the tensor are the same size
# code: AD131 (catalogue: grad_assigned_wrong_size)
# set: 7
# trigger: a from-scratch training step computes a linear layer's weight gradient by hand as
#   x.T @ grad_out (in x out) and assigns it to nn.Linear's weight, stored out x in
# source: https://discuss.pytorch.org/t/how-the-gradient-in-linear-layer-be-computed-using-transpose/72480
# results: losses, layer
import torch
from torch import nn


def manual_step(layer, x, y, lr):
    out = layer(x)
    loss = ((out - y) ** 2).mean()
    grad_out = 2 * (out - y) / out.numel()
    with torch.no_grad():
        layer.weight.grad = x.T @ grad_out  # PRIMARY
        layer.bias.grad = grad_out.sum(0)
        for p in layer.parameters():
            p -= lr * p.grad
    return loss.item()


torch.manual_seed(0)
layer = nn.Linear(3, 2)
x, y = torch.randn(5, 3), torch.randn(5, 2)
losses = [manual_step(layer, x, y, 0.1) for _ in range(2)]
