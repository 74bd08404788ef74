"""An optical-flow model upsamples its coarse flow and rescales the two
components to the new resolution: `u, v = flow.chunk(2, dim=1)`, then
`u *= u_scale` and `v *= v_scale`.  `chunk` returns views of one tensor that
may not be written in place ("Output 0 of SplitBackward0 is a view and is
being modified inplace.  This view is the output of a function that returns
multiple views").  The fix is `u = u * u_scale` and `v = v * v_scale`.
Buggy line: `u *= u_scale` in `FlowRefiner.rescale_flow`.
Expected finding: ADL015 there.
Source: https://github.com/pytorch/pytorch/issues/46820"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FlowRefiner(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(6, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 3, padding=1))

    def rescale_flow(self, flow, size):
        u_scale = size[1] / flow.shape[-1]
        v_scale = size[0] / flow.shape[-2]
        flow = F.interpolate(flow, size=size, mode="bilinear", align_corners=False)
        u, v = flow.chunk(2, dim=1)
        u *= u_scale  # missed: ADL015
        v *= v_scale
        return torch.cat([u, v], dim=1)

    def forward(self, frame1, frame2):
        coarse = F.avg_pool2d(torch.cat([frame1, frame2], dim=1), 2)
        flow = self.encoder(coarse)
        return self.rescale_flow(flow, frame1.shape[-2:])


def run():
    torch.manual_seed(0)
    model = FlowRefiner()
    frame1, frame2, target = torch.randn(1, 3, 8, 8), torch.randn(1, 3, 8, 8), torch.randn(1, 2, 8, 8)
    loss = (model(frame1, frame2) - target).abs().mean()
    loss.backward()
