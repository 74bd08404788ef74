"""unet (a configurable 2D/3D U-Net package): with `residual=True` each
decoding block adds its 1x1 residual connection in place after its two
convolutional blocks, `x = self.conv2(x); x += connection`.  A
convolutional block ends in its activation (`nn.ReLU`), which keeps its
result for backward, so training a residual U-Net fails at `backward()`
("modified by an inplace operation"); the pull request writes
`x = x + connection`.
Source: https://github.com/fepegar/unet/pull/37"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvolutionalBlock(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, normalization='batch', activation='ReLU'):
        super().__init__()
        block = nn.ModuleList()
        block.append(nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2))
        if normalization is not None:
            block.append(nn.BatchNorm2d(out_channels))
        if activation is not None:
            block.append(getattr(nn, activation)())
        self.block = nn.Sequential(*block)

    def forward(self, x):
        return self.block(x)


class DecodingBlock(nn.Module):
    def __init__(self, in_channels_skip_connection, residual=False):
        super().__init__()
        self.residual = residual
        self.upsample = nn.Upsample(scale_factor=2, mode='bilinear')
        in_channels_first = in_channels_skip_connection * (1 + 2)
        out_channels = in_channels_skip_connection
        self.conv1 = ConvolutionalBlock(in_channels_first, out_channels)
        self.conv2 = ConvolutionalBlock(out_channels, out_channels)
        if residual:
            self.conv_residual = ConvolutionalBlock(
                in_channels_first, out_channels, kernel_size=1, normalization=None, activation=None)

    def forward(self, skip_connection, x):
        x = self.upsample(x)
        x = torch.cat((skip_connection, x), dim=1)
        if self.residual:
            connection = self.conv_residual(x)
            x = self.conv1(x)
            x = self.conv2(x)
            x += connection  # missed: ADL001
        else:
            x = self.conv1(x)
            x = self.conv2(x)
        return x


class UNet(nn.Module):
    def __init__(self, channels=2, residual=True):
        super().__init__()
        self.first = ConvolutionalBlock(1, channels)
        self.down = ConvolutionalBlock(channels, 2 * channels)
        self.decoding = DecodingBlock(channels, residual=residual)
        self.classifier = nn.Conv2d(channels, 2, kernel_size=1)

    def forward(self, x):
        skip = self.first(x)
        x = self.down(F.max_pool2d(skip, 2))
        x = self.decoding(skip, x)
        return self.classifier(x)


def run():
    torch.manual_seed(0)
    model = UNet(residual=True)
    optimizer = torch.optim.Adam(model.parameters())
    image, label = torch.randn(2, 1, 8, 8), torch.randint(0, 2, (2, 8, 8))
    loss = F.cross_entropy(model(image), label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
