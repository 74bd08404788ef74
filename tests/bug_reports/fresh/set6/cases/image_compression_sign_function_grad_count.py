"""Learned image compression with a binarizing bottleneck: a custom `Sign` Function takes the
encoder's output and an `is_training` flag, but its `backward` returns one gradient for two
inputs.
Source: https://github.com/1zb/pytorch-image-comp-rnn/issues/4 ("function SignBackward returned an
incorrect number of gradients (expected 2, got 1)"; maintainer: `return grad_output, None`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function

torch.manual_seed(0)


class Sign(Function):
    @staticmethod
    def forward(ctx, input, is_training=True):
        if is_training:
            prob = torch.rand_like(input)
            x = input.clone()
            x[(1 - input) / 2 <= prob] = 1
            x[(1 - input) / 2 > prob] = -1
            return x
        return input.sign()

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class Binarizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 8, 1, bias=False)

    def forward(self, x):
        return Sign.apply(torch.tanh(self.conv(x)), self.training)


encoder = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU())
binarizer = Binarizer()
decoder = nn.Sequential(nn.ConvTranspose2d(8, 16, 4, stride=2, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))
params = list(encoder.parameters()) + list(binarizer.parameters()) + list(decoder.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)
losses = []
for step in range(3):
    image = torch.rand(4, 3, 16, 16)
    codes = binarizer(encoder(image))
    loss = F.l1_loss(decoder(codes), image)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in params]}
