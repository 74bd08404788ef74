"""The example of `torch.enable_grad`'s documentation, run as it stood: `x = torch.tensor([1],
requires_grad=True)`, then `y = x * 2` computed with gradients enabled inside `no_grad`, and a
decorated `doubler`. The first line raises "Only Tensors of floating point and complex dtype can
require gradients": `[1]` makes an integer tensor. The change, from the answer: `torch.tensor([1.],
requires_grad=True)` (notice the dot).
Source: https://github.com/pytorch/pytorch/issues/53466
expect: raises"""
import torch

x = torch.tensor([1], requires_grad=True)
with torch.no_grad():
    with torch.enable_grad():
        y = x * 2
print(y.requires_grad)
y.backward()
print(x.grad)


@torch.enable_grad()
def doubler(x):
    return x * 2


with torch.no_grad():
    z = doubler(x)
print(z.requires_grad)

result = {"y": y.detach(), "x_grad": x.grad, "z": z.detach(), "z_requires_grad": z.requires_grad}
