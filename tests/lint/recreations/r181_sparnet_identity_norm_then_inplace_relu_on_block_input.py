"""Face-SPARNet builds its layers from `norm_type` / `relu_type` strings.
With `--Gnorm none` the normalisation layer is the identity, `self.norm =
lambda x: x`, so a residual block's pre-activation `nn.Sequential(NormLayer,
ReluLayer)` applies its in-place LeakyReLU directly to the block's input:
the output of the previous layer's in-place LeakyReLU, which that LeakyReLU
saved for backward.  Training fails at `loss.backward()` ("modified by an
inplace operation"); the author's fix: `self.norm = lambda x: x * 1.0`.
Buggy line: `self.norm = lambda x: x` (the pre-activation then writes the
previous LeakyReLU's output, `out = self.preact_func(x)`).
Expected finding: ADL001 at `out = self.preact_func(x)`.
Source: https://github.com/chaofengc/Face-SPARNet/issues/12"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class NormLayer(nn.Module):
    def __init__(self, channels, norm_type='bn'):
        super(NormLayer, self).__init__()
        norm_type = norm_type.lower()
        if norm_type == 'bn':
            self.norm = nn.BatchNorm2d(channels)
        elif norm_type == 'in':
            self.norm = nn.InstanceNorm2d(channels, affine=True)
        elif norm_type == 'none':
            self.norm = lambda x: x
        else:
            assert 1 == 0, 'Norm type {} not support.'.format(norm_type)

    def forward(self, x):
        return self.norm(x)


class ReluLayer(nn.Module):
    def __init__(self, channels, relu_type='relu'):
        super(ReluLayer, self).__init__()
        relu_type = relu_type.lower()
        if relu_type == 'relu':
            self.func = nn.ReLU(True)
        elif relu_type == 'leakyrelu':
            self.func = nn.LeakyReLU(0.2, inplace=True)
        elif relu_type == 'prelu':
            self.func = nn.PReLU(channels)
        elif relu_type == 'none':
            self.func = lambda x: x
        else:
            assert 1 == 0, 'Relu type {} not support.'.format(relu_type)

    def forward(self, x):
        return self.func(x)


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, norm_type='none', relu_type='none'):
        super(ConvLayer, self).__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, 1)
        self.relu = ReluLayer(out_channels, relu_type)
        self.norm = NormLayer(out_channels, norm_type=norm_type)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        out = self.norm(out)
        out = self.relu(out)
        return out


class ResidualBlock(nn.Module):
    def __init__(self, c_in, c_out, relu_type='prelu', norm_type='bn'):
        super(ResidualBlock, self).__init__()
        kwargs = {'norm_type': norm_type, 'relu_type': relu_type}
        self.shortcut_func = lambda x: x
        self.preact_func = nn.Sequential(
            NormLayer(c_in, norm_type=norm_type),
            ReluLayer(c_in, relu_type),
        )
        self.conv1 = ConvLayer(c_in, c_out, 3, **kwargs)
        self.conv2 = ConvLayer(c_out, c_out, 3, norm_type=norm_type, relu_type='none')

    def forward(self, x):
        identity = self.shortcut_func(x)
        out = self.preact_func(x)  # missed: ADL001
        out = self.conv1(out)
        out = self.conv2(out)
        return identity + out


class SPARNet(nn.Module):
    def __init__(self, norm_type='none', relu_type='leakyrelu'):
        super(SPARNet, self).__init__()
        self.head = ConvLayer(3, 8, 3, norm_type=norm_type, relu_type=relu_type)
        self.body = ResidualBlock(8, 8, relu_type=relu_type, norm_type=norm_type)
        self.tail = ConvLayer(8, 3, 3)

    def forward(self, x):
        return self.tail(self.body(self.head(x)))


def run():
    torch.manual_seed(0)
    model = SPARNet(norm_type='none', relu_type='leakyrelu')
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    lr_img, hr_img = torch.randn(2, 3, 8, 8), torch.randn(2, 3, 8, 8)
    loss = F.l1_loss(model(lr_img), hr_img)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
