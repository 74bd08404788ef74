"""Fusing a HarDNet block for testing: the fused kernel is copied into a new
convolution with `cconv.weight[:,:,:,:] = W[:,:,:,:]` outside `no_grad()` ("a
view of a leaf Variable that requires grad is being used in an in-place
operation").
Source: https://github.com/PingoLH/FCHarDNet/issues/61"""
import torch
import torch.nn as nn


class ConvLayer(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel=3, stride=1):
        super().__init__()
        self.add_module("conv", nn.Conv2d(in_channels, out_channels, kernel, stride, kernel // 2, bias=False))
        self.add_module("norm", nn.BatchNorm2d(out_channels))
        self.add_module("relu", nn.ReLU(inplace=True))


class HarDBlock(nn.Module):
    def __init__(self, in_channels, growth_rate=4, n_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(
            [ConvLayer(in_channels + i * growth_rate, growth_rate) for i in range(n_layers)]
        )

    def forward(self, x):
        for layer in self.layers:
            x = torch.cat([x, layer(x)], 1)
        return x


def fuse_conv_bn(layer):
    conv, bn = layer.conv, layer.norm
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    W = conv.weight * scale.view(-1, 1, 1, 1)
    cconv = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding, bias=True)
    cconv.weight[:, :, :, :] = W[:, :, :, :]  # expect: ADL014
    cconv.bias[:] = bn.bias - bn.running_mean * scale  # expect: ADL014
    return cconv


def run():
    torch.manual_seed(0)
    block = HarDBlock(3)
    block.eval()
    fused = [fuse_conv_bn(layer) for layer in block.layers]
    return fused
