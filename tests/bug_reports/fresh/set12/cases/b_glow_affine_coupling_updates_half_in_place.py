"""glow-pytorch (chaiyujin), Glow's affine coupling in `FlowStep.normal_flow`: the permuted
activations are split into halves with `z1, z2 = thops.split_feature(z, "split")`, which returns
two slices (views) of z, and the coupling is applied with `z2 += shift; z2 *= scale`. The coupling
network's first convolution saved z1, a view of the same tensor, so the in-place update of the
other half bumps the version that convolution checks and `loss.backward()` raises "one of the
variables needed for gradient computation has been modified by an inplace operation". The fix
merged after the issue replaced the in-place operations ("Fixed un-computable gradients").
Source: https://github.com/chaiyujin/glow-pytorch/issues/2
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def thops_sum(tensor, dim=None, keepdim=False):
    if dim is None:
        return torch.sum(tensor)
    dim = sorted([dim] if isinstance(dim, int) else dim)
    for d in dim:
        tensor = tensor.sum(dim=d, keepdim=True)
    if not keepdim:
        for i, d in enumerate(dim):
            tensor.squeeze_(d - i)
    return tensor


def split_feature(tensor, type="split"):
    C = tensor.size(1)
    if type == "split":
        return tensor[:, :C // 2, ...], tensor[:, C // 2:, ...]
    return tensor[:, 0::2, ...], tensor[:, 1::2, ...]


def cat_feature(tensor_a, tensor_b):
    return torch.cat((tensor_a, tensor_b), dim=1)


class ActNorm2d(nn.Module):
    def __init__(self, num_features, scale=1.0):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1, num_features, 1, 1))
        self.logs = nn.Parameter(torch.zeros(1, num_features, 1, 1))
        self.scale = scale
        self.inited = False

    def initialize_parameters(self, input):
        with torch.no_grad():
            bias = -input.mean(dim=[0, 2, 3], keepdim=True)
            vars = ((input + bias) ** 2).mean(dim=[0, 2, 3], keepdim=True)
            logs = torch.log(self.scale / (torch.sqrt(vars) + 1e-6))
            self.bias.data.copy_(bias.data)
            self.logs.data.copy_(logs.data)
            self.inited = True

    def forward(self, input, logdet=None):
        if not self.inited:
            self.initialize_parameters(input)
        input = (input + self.bias) * torch.exp(self.logs)
        pixels = input.size(2) * input.size(3)
        return input, logdet + thops_sum(self.logs) * pixels


class InvertibleConv1x1(nn.Module):
    def __init__(self, num_channels):
        super().__init__()
        w_init = torch.linalg.qr(torch.randn(num_channels, num_channels))[0]
        self.weight = nn.Parameter(w_init)

    def forward(self, input, logdet):
        pixels = input.size(2) * input.size(3)
        dlogdet = torch.slogdet(self.weight)[1] * pixels
        weight = self.weight.view(*self.weight.shape, 1, 1)
        return F.conv2d(input, weight), logdet + dlogdet


class Conv2dZeros(nn.Conv2d):
    def __init__(self, in_channels, out_channels):
        super().__init__(in_channels, out_channels, kernel_size=3, padding=1)
        self.weight.data.zero_()
        self.bias.data.zero_()


def f(in_channels, out_channels, hidden_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, hidden_channels, kernel_size=3, padding=1), nn.ReLU(inplace=False),
        nn.Conv2d(hidden_channels, hidden_channels, kernel_size=1), nn.ReLU(inplace=False),
        Conv2dZeros(hidden_channels, out_channels))


class FlowStep(nn.Module):
    def __init__(self, in_channels, hidden_channels):
        super().__init__()
        self.actnorm = ActNorm2d(in_channels)
        self.invconv = InvertibleConv1x1(in_channels)
        self.f = f(in_channels // 2, in_channels, hidden_channels)

    def forward(self, input, logdet):
        z, logdet = self.actnorm(input, logdet=logdet)
        z, logdet = self.invconv(z, logdet)
        z1, z2 = split_feature(z, "split")
        h = self.f(z1)
        shift, scale = split_feature(h, "cross")
        scale = torch.sigmoid(scale + 2.)
        z2 += shift
        z2 *= scale
        logdet = thops_sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = cat_feature(z1, z2)
        return z, logdet


def squeeze2d(x, factor=2):
    B, C, H, W = x.size()
    x = x.view(B, C, H // factor, factor, W // factor, factor).permute(0, 1, 3, 5, 2, 4).contiguous()
    return x.view(B, C * factor * factor, H // factor, W // factor)


class Glow(nn.Module):
    def __init__(self, K=2, hidden_channels=16):
        super().__init__()
        self.steps = nn.ModuleList([FlowStep(4, hidden_channels) for _ in range(K)])

    def forward(self, x):
        pixels = x.size(2) * x.size(3)
        z = x + torch.rand_like(x) / 256.0
        logdet = torch.zeros(x.size(0)) - math.log(256.0) * pixels
        z = squeeze2d(z)
        for step in self.steps:
            z, logdet = step(z, logdet)
        log_p = -0.5 * (math.log(2 * math.pi) + z ** 2)
        objective = thops_sum(log_p, dim=[1, 2, 3]) + logdet
        return -objective / (math.log(2.0) * pixels)


images = (torch.rand(16, 1, 8, 8) > 0.5).float() * 0.5 + torch.rand(16, 1, 8, 8) * 0.25
model = Glow()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = model(images).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
