"""pytorch-quantization-demo's quantisation-aware `QConvBNReLU` folds batch
norm into the convolution: in training it runs the convolution once to get
the batch statistics, `mean = y.mean(1)`, `var = y.var(1)`, and updates the
running statistics with `self.bn_module.running_mean = (1 - momentum) *
running_mean + momentum * mean`.  Without `.detach()` the running buffers
carry the graph of every batch since training began: each step's running
mean links to the last, memory grows with the step count, and the saved
statistics are graph tensors.  Nothing raises during training.  The fix
(present in later versions) is `mean = y.mean(1).detach()`.
Buggy line: `self.bn_module.running_mean = ...` in `QConvBNReLU.forward`.
Expected finding: ADL017 there (and at the same update of `running_var`).
Source: https://github.com/Jermmy/pytorch-quantization-demo/issues/17"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QConvBNReLU(nn.Module):
    def __init__(self, conv_module, bn_module):
        super().__init__()
        self.conv_module = conv_module
        self.bn_module = bn_module

    def fold_bn(self, mean, std):
        gamma_ = self.bn_module.weight / std
        weight = self.conv_module.weight * gamma_.view(-1, 1, 1, 1)
        bias = self.bn_module.bias - gamma_ * mean
        return weight, bias

    def forward(self, x):
        if self.training:
            y = F.conv2d(x, self.conv_module.weight, padding=self.conv_module.padding)
            y = y.permute(1, 0, 2, 3).contiguous().view(self.conv_module.out_channels, -1)
            mean = y.mean(1)
            var = y.var(1)
            self.bn_module.running_mean = (1 - self.bn_module.momentum) * self.bn_module.running_mean + self.bn_module.momentum * mean  # expect: ADL017
            self.bn_module.running_var = (1 - self.bn_module.momentum) * self.bn_module.running_var + self.bn_module.momentum * var  # expect: ADL017
        else:
            mean = self.bn_module.running_mean
            var = self.bn_module.running_var
        std = torch.sqrt(var + self.bn_module.eps)
        weight, bias = self.fold_bn(mean, std)
        return F.relu(F.conv2d(x, weight, bias, padding=self.conv_module.padding))


def train(layer, optimizer, batches):
    for x, y in batches:
        loss = (layer(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def bug_shows():
    """After training, the running mean is a graph tensor chained to every step."""
    torch.manual_seed(0)
    layer = QConvBNReLU(nn.Conv2d(2, 3, 3, padding=1, bias=False), nn.BatchNorm2d(3))
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
    batches = [(torch.randn(2, 2, 4, 4), torch.randn(2, 3, 4, 4)) for _ in range(3)]
    train(layer, optimizer, batches)
    return layer.bn_module.running_mean.grad_fn is not None


def run():
    bug_shows()
