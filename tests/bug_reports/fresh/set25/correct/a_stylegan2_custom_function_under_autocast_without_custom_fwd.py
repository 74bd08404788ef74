"""StyleGAN2 (rosinality's stylegan2-pytorch) trained with automatic mixed precision: the
mapping network's equalized linear layers with fused leaky ReLU are a custom
`torch.autograd.Function` whose forward and hand-written backward call a fused kernel. Under
autocast the layer before hands the function a half-precision activation while its weight and
bias stay float32; the forward's matmul runs under autocast, but the backward runs outside it, so
the kernel gets a low-precision gradient and a float32 weight and raises "expected scalar type
Half but found Float" at backward(). The PyTorch maintainer's answer: a custom autograd function
that calls such kernels needs `@custom_fwd(cast_inputs=...)` (with `@custom_bwd` on its backward)
so that it runs in the dtype the kernel expects.
Re-created on CPU with bfloat16 autocast; the compiled kernel is replaced by `torch.addmm` /
`torch.mm`, which refuse mixed dtypes the same way.
Source: https://github.com/pytorch/pytorch/issues/38487
expect: raises"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DEVICE = "cpu"
STYLE_DIM, N_MLP = 16, 3


class FusedLinearLeakyReLUFunction(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type=DEVICE, cast_inputs=torch.float32)
    def forward(ctx, input, weight, bias, negative_slope, scale):
        pre = torch.addmm(bias, input, weight.t())
        out = F.leaky_relu(pre, negative_slope) * scale
        ctx.save_for_backward(input, weight, pre)
        ctx.negative_slope = negative_slope
        ctx.scale = scale
        return out

    @staticmethod
    @torch.amp.custom_bwd(device_type=DEVICE)
    def backward(ctx, grad_output):
        input, weight, pre = ctx.saved_tensors
        slope = torch.where(pre >= 0, torch.ones_like(pre), torch.full_like(pre, ctx.negative_slope))
        grad_pre = grad_output * slope * ctx.scale
        grad_input = torch.mm(grad_pre, weight)
        grad_weight = torch.mm(grad_pre.t(), input)
        grad_bias = grad_pre.sum(dim=0)
        return grad_input, grad_weight, grad_bias, None, None


class EqualLinear(nn.Module):
    def __init__(self, in_dim, out_dim, lr_mul=0.01, activation=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_dim, in_dim) / lr_mul)
        self.bias = nn.Parameter(torch.zeros(out_dim))
        self.scale = (1 / math.sqrt(in_dim)) * lr_mul
        self.lr_mul = lr_mul
        self.activation = activation

    def forward(self, input):
        if self.activation:
            return FusedLinearLeakyReLUFunction.apply(
                input, self.weight * self.scale, self.bias * self.lr_mul, 0.2, 2 ** 0.5)
        return F.linear(input, self.weight * self.scale, bias=self.bias * self.lr_mul)


class PixelNorm(nn.Module):
    def forward(self, input):
        return input * torch.rsqrt(torch.mean(input ** 2, dim=1, keepdim=True) + 1e-8)


class MappingNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [PixelNorm(), nn.Linear(STYLE_DIM, STYLE_DIM)]
        layers += [EqualLinear(STYLE_DIM, STYLE_DIM) for _ in range(N_MLP)]
        self.style = nn.Sequential(*layers)
        self.to_rgb = nn.Linear(STYLE_DIM, 12)

    def forward(self, z):
        return self.to_rgb(self.style(z))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(12, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


generator = MappingNetwork()
discriminator = Discriminator()
g_optim = torch.optim.Adam(generator.parameters(), lr=0.002, betas=(0.0, 0.99))
d_optim = torch.optim.Adam(discriminator.parameters(), lr=0.002, betas=(0.0, 0.99))
real_batches = [torch.randn(8, 12) * 0.5 + 1.0 for _ in range(3)]

g_losses, d_losses = [], []
for real in real_batches:
    noise = torch.randn(8, STYLE_DIM)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        fake = generator(noise)
        d_loss = F.softplus(discriminator(fake.detach())).mean() + F.softplus(-discriminator(real)).mean()
    d_optim.zero_grad()
    d_loss.float().backward()
    d_optim.step()

    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        fake = generator(noise)
        g_loss = F.softplus(-discriminator(fake)).mean()
    g_optim.zero_grad()
    g_loss.float().backward()
    g_optim.step()
    g_losses.append(g_loss.item())
    d_losses.append(d_loss.item())

result = {
    "g_losses": torch.tensor(g_losses),
    "d_losses": torch.tensor(d_losses),
    "generator": [p.detach().clone() for p in generator.parameters()],
}
