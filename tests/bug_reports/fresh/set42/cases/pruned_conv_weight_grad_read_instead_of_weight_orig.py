"""A convolution pruned with `torch.nn.utils.prune.random_unstructured(model.conv1, name="weight")`
before a backward pass: `model.conv1.weight.grad` prints None while `conv2.weight.grad` has values,
and the report asks why the pruned weights get no gradient. After pruning, `conv1.weight` is
recomputed before each forward as `weight_orig * weight_mask`: a tensor computed from the leaf, not
the leaf, and PyTorch keeps the gradient on the parameter `conv1.weight_orig`. Nothing fails; the
gradient read is simply not there. The change: read `model.conv1.weight_orig.grad` (its pruned
entries are zero).
Source: https://github.com/pytorch/pytorch/issues/102245
expect: silent"""
import torch
from torch import nn
import torch.nn.utils.prune as prune

torch.manual_seed(0)


class LeNet(nn.Module):
    def __init__(self):
        super(LeNet, self).__init__()
        self.conv1 = nn.Conv2d(1, 2, 3)
        self.conv2 = nn.Conv2d(2, 1, 3)

    def forward(self, x):
        x = self.conv1(x)
        x = self.conv2(x)
        return x


model = LeNet()
prune.random_unstructured(model.conv1, name="weight", amount=0.3)

lossfn = nn.L1Loss()

x = torch.ones(1, 24, 24, requires_grad=True)
z = torch.ones(1, 20, 20)
y = model(x)
loss = lossfn(z, y)
loss.backward()

conv1_grad = model.conv1.weight.grad
print(conv1_grad)
conv2_grad = model.conv2.weight.grad
print(conv2_grad)

result = {"conv1_grad": conv1_grad, "conv2_grad": conv2_grad}
