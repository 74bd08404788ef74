"""A custom autograd Function (forward splatting with softmax weights) saves its inputs with
`ctx.save_for_backward(ten_in, ten_metric)`; the caller then rescales the feature tensor in place
and backward finds a saved input modified.
Source: https://github.com/sniklaus/softmax-splatting/issues/50 (fix: save clones,
`ctx.save_for_backward(ten_in.clone(), ten_metric.clone())`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class SoftSplat(torch.autograd.Function):
    @staticmethod
    def forward(ctx, ten_in, ten_metric):
        ctx.save_for_backward(ten_in.clone(), ten_metric.clone())
        weight = ten_metric.exp()
        return torch.roll(ten_in * weight, shifts=1, dims=-1)

    @staticmethod
    def backward(ctx, grad_out):
        ten_in, ten_metric = ctx.saved_tensors
        grad = torch.roll(grad_out, shifts=-1, dims=-1)
        weight = ten_metric.exp()
        return grad * weight, (grad * ten_in * weight).sum(1, keepdim=True)


encoder = nn.Conv2d(3, 4, 3, padding=1)
metric_net = nn.Conv2d(3, 1, 3, padding=1)
frame, target = torch.randn(2, 3, 6, 6), torch.randn(2, 4, 6, 6)
features = encoder(frame)
splatted = SoftSplat.apply(features, metric_net(frame))
features *= 0.5
loss = (splatted - target).pow(2).mean() + features.mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for m in (encoder, metric_net) for p in m.parameters()]}
