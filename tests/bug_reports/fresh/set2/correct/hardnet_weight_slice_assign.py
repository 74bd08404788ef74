"""Segmentation network conversion: fused weights are copied in with
`cconv.weight[:, :, :, :] = W[:, :, :, :]`, a write into a view of a parameter outside no_grad.
Source: https://github.com/PingoLH/FCHarDNet/issues/61 (fix: copy under `torch.no_grad()`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
bn = nn.BatchNorm2d(4).eval()
cconv = nn.Conv2d(3, 4, 3, padding=1)

scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
W = conv.weight * scale[:, None, None, None]
with torch.no_grad():
    cconv.weight[:, :, :, :] = W[:, :, :, :]
x = torch.randn(1, 3, 5, 5)
loss = cconv(x).pow(2).mean()
loss.backward()
result = {"loss": loss.detach(), "w": cconv.weight.grad}
