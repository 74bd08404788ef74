"""SoftPool (alexandrosstergiou/SoftPool), issue 47 "pytorch inplace operation issue": a network
using `soft_pool2d` fails at backward with "one of the variables needed for gradient computation
has been modified by an inplace operation: [torch.cuda.FloatTensor [1, 256, 40, 40]], which is
output 0 of ReluBackward0, is at version 1; expected version 0", in SoftPool's backward
(`grad_input = torch.zeros_like(ctx.saved_tensors[0])`). The CUDA `autograd.Function` saves its
input, here a ReLU output, and the maintainer: the error "relates to an operation that happens
after SoftPool. I would suggest to check that you are not using Relu with `inplace=True`".
Re-created (CPU) with a SoftPool `autograd.Function` that saves its input (the exponential
weighting computed in Python), a detector neck block that pools a ReLU feature map and then
passes the same map through its shared `nn.ReLU(inplace=True)` after adding the pooled context,
and a training loop.
Buggy line: `out = self.act(feat)` (the in-place ReLU on the map SoftPool saved).
Source: https://github.com/alexandrosstergiou/SoftPool/issues/47"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CUDA_SOFTPOOL2d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, kernel=2, stride=None):
        stride = stride or kernel
        e_x = torch.exp(input)
        pooled = F.avg_pool2d(e_x * input, kernel, stride) / F.avg_pool2d(e_x, kernel, stride).clamp_min(1e-12)
        ctx.kernel, ctx.stride = kernel, stride
        ctx.save_for_backward(input)
        return pooled

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        with torch.enable_grad():
            x = input.detach().requires_grad_()
            e_x = torch.exp(x)
            out = F.avg_pool2d(e_x * x, ctx.kernel, ctx.stride) / F.avg_pool2d(e_x, ctx.kernel, ctx.stride).clamp_min(1e-12)
            (grad_input,) = torch.autograd.grad(out, x, grad_output)
        return grad_input, None, None


def soft_pool2d(x, kernel_size=2, stride=None):
    return CUDA_SOFTPOOL2d.apply(x, kernel_size, stride)


class ContextBlock(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv = nn.Conv2d(ch, ch, 3, padding=1)
        self.context = nn.Conv2d(ch, ch, 1)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        feat = self.act(self.conv(x))
        pooled = soft_pool2d(feat, 2)
        context = F.interpolate(self.context(pooled), size=feat.shape[-2:])
        out = self.act(feat)  # expect: ADL001 (the shared in-place ReLU writes `feat`, which SoftPool saved)
        return out + context


class Neck(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.stem = nn.Conv2d(3, ch, 3, padding=1)
        self.block = ContextBlock(ch)
        self.head = nn.Conv2d(ch, 1, 1)

    def forward(self, x):
        return self.head(self.block(self.stem(x)))


def train(steps=2):
    torch.manual_seed(0)
    model = Neck()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)
    for _ in range(steps):
        images, target = torch.randn(2, 3, 8, 8), torch.rand(2, 1, 8, 8)
        loss = F.binary_cross_entropy_with_logits(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


run = train


if __name__ == "__main__":
    train()
