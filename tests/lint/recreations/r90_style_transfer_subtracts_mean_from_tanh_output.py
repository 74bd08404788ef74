"""Fast neural style: the transformer network ends in `nn.Tanh()` (a user's
change, as the report describes), and the training loop hands its output to a helper that
subtracts the ImageNet mean in place (`batch -= mean`) before the VGG loss
network sees it.  `tanh` keeps its result for backward, so
`total_loss.backward()` fails ("modified by an inplace operation").  Subtracting
out of place and returning the result avoids it.
Source: https://github.com/abhiskk/fast-neural-style/issues/12"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super().__init__()
        self.reflection_pad = nn.ReflectionPad2d(kernel_size // 2)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        return self.conv2d(self.reflection_pad(x))


class TransformerNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=3, stride=1)
        self.in1 = nn.InstanceNorm2d(8, affine=True)
        self.conv2 = ConvLayer(8, 3, kernel_size=3, stride=1)
        self.relu = nn.ReLU()
        self.tanh = nn.Tanh()

    def forward(self, X):
        y = self.relu(self.in1(self.conv1(X)))
        y = self.conv2(y)
        return self.tanh(y)


class Vgg16Slice(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1_1 = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.conv1_2 = nn.Conv2d(4, 4, kernel_size=3, padding=1)

    def forward(self, X):
        h = F.relu(self.conv1_1(X))
        relu1_2 = F.relu(self.conv1_2(h))
        return [relu1_2]


def subtract_imagenet_mean_batch(batch):
    """Subtract ImageNet mean pixel-wise from a BGR image."""
    mean = torch.zeros_like(batch.detach())
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch -= mean


def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    return features.bmm(features.transpose(1, 2)) / (ch * h * w)


def train(batches, content_weight=1.0, style_weight=5.0):
    transformer = TransformerNet()
    optimizer = Adam(transformer.parameters(), 1e-3)
    mse_loss = nn.MSELoss()
    vgg = Vgg16Slice()
    gram_style = [gram_matrix(f).detach() for f in vgg(torch.rand(1, 3, 8, 8) * 255)]
    for x in batches:
        optimizer.zero_grad()
        y = transformer(x)
        xc = x.clone()
        subtract_imagenet_mean_batch(y)  # expect: ADL001
        subtract_imagenet_mean_batch(xc)
        features_y = vgg(y)
        features_xc = vgg(xc)
        content_loss = content_weight * mse_loss(features_y[0], features_xc[0].detach())
        style_loss = 0.
        for m in range(len(features_y)):
            style_loss += style_weight * mse_loss(gram_matrix(features_y[m]), gram_style[m].expand(len(x), -1, -1))
        total_loss = content_loss + style_loss
        total_loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    train([torch.rand(2, 3, 8, 8) * 255 for _ in range(2)])
