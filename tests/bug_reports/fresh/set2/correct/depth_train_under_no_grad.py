"""Self-supervised depth: the training step reuses the validation helper, whose forward runs under
`torch.no_grad()`, so the loss has no grad_fn.
Source: https://github.com/nianticlabs/monodepth2/issues/24 (answer: no_grad is for validation;
the training forward must not run under it).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
depth_net = nn.Sequential(nn.Conv2d(3, 1, 3, padding=1), nn.Sigmoid())
optimizer = torch.optim.Adam(depth_net.parameters(), lr=1e-3)
images = torch.randn(2, 3, 6, 6)
target = torch.rand(2, 1, 6, 6)


def process_batch(images):
    return depth_net(images)


disp = process_batch(images)
loss = (disp - target).abs().mean()
optimizer.zero_grad()
loss.backward()
optimizer.step()
result = {"loss": loss.detach(), "params": [p.detach() for p in depth_net.parameters()]}
