"""Video frame interpolation: a custom flow-projection Function saves the input flow and the count
of contributions with `save_for_backward`, but its backward unpacks three saved tensors (an
`output` that was never saved).
Source: https://github.com/baowenbo/DAIN/issues/141 (ValueError in the FlowProjectionLayer's
backward; answer: `input1, count = ctx.saved_tensors`).
expect: raises"""
import torch
import torch.nn as nn


class FlowProjection(torch.autograd.Function):
    """Project the flow of each pixel onto its neighbour in the flow direction and average the
    contributions; pixels with no contribution keep zero."""

    @staticmethod
    def forward(ctx, input1):
        n, _, h, w = input1.shape
        shift = input1.detach().round().clamp(-1, 1).long()
        rows = (torch.arange(h).view(1, h, 1) + shift[:, 1]).clamp(0, h - 1)
        cols = (torch.arange(w).view(1, 1, w) + shift[:, 0]).clamp(0, w - 1)
        target = (rows * w + cols).view(n, 1, -1).expand(-1, 2, -1)
        count = torch.zeros(n, 1, h * w).scatter_add_(2, target[:, :1], torch.ones(n, 1, h * w))
        total = torch.zeros(n, 2, h * w).scatter_add_(2, target, -input1.reshape(n, 2, -1))
        count = count.clamp(min=1).view(n, 1, h, w)
        ctx.target = target
        ctx.save_for_backward(input1, count)
        return total.view(n, 2, h, w) / count

    @staticmethod
    def backward(ctx, gradoutput):
        input1, count, output = ctx.saved_tensors
        n = input1.shape[0]
        per_target = (gradoutput / count).reshape(n, 2, -1)
        gradinput = -per_target.gather(2, ctx.target)
        return gradinput.view_as(input1)


torch.manual_seed(0)
flow_net = nn.Conv2d(6, 2, 3, padding=1)
frames = torch.rand(1, 6, 5, 5)
middle = torch.rand(1, 2, 5, 5)
flow = 2 * flow_net(frames)
projected = FlowProjection.apply(flow)
loss = (projected - middle).abs().mean()
loss.backward()
result = {"loss": loss.detach(), "grads": [flow_net.weight.grad, flow_net.bias.grad]}
