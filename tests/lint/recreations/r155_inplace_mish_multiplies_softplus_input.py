"""gen-efficientnet-pytorch (EfficientNet/MobileNet blocks with selectable
activations): the first Mish implementation saved memory by multiplying in
place when the block asked for an in-place activation,
`inner = F.softplus(x).tanh(); return x.mul_(inner)`.  `softplus` keeps its
input `x` for backward, so training a network built with
`Mish(inplace=True)` fails at `loss.backward()` ("modified by an inplace
operation"); the author's note: "it triggered an inplace gradient error
(during training)", and the in-place branch was dropped.
Source: https://github.com/rwightman/gen-efficientnet-pytorch/issues/16"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def mish(x, inplace: bool = False):
    """Mish: A Self Regularized Non-Monotonic Neural Activation Function - https://arxiv.org/abs/1908.08681"""
    inner = F.softplus(x).tanh()
    return x.mul_(inner) if inplace else x.mul(inner)  # expect: ADL001


class Mish(nn.Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return mish(x, self.inplace)


class ConvBnAct(nn.Module):
    def __init__(self, in_chs, out_chs, kernel_size=3, act_layer=Mish):
        super().__init__()
        self.conv = nn.Conv2d(in_chs, out_chs, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn1 = nn.BatchNorm2d(out_chs)
        self.act1 = act_layer(inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.bn1(x)
        x = self.act1(x)
        return x


class TinyEfficientNet(nn.Module):
    def __init__(self, num_classes=3, act_layer=Mish):
        super().__init__()
        self.conv_stem = ConvBnAct(3, 4, act_layer=act_layer)
        self.block = ConvBnAct(4, 8, act_layer=act_layer)
        self.classifier = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.block(self.conv_stem(x))
        return self.classifier(F.adaptive_avg_pool2d(x, 1).flatten(1))


def run():
    torch.manual_seed(0)
    model = TinyEfficientNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = F.cross_entropy(model(torch.randn(2, 3, 8, 8)), torch.tensor([0, 2]))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
