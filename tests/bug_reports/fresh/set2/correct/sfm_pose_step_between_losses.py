"""SfM pose network with an additional loss: the optimizer steps after the first loss's backward,
and the second loss, computed from the same forward pass, then backpropagates through weights the
step changed in place.
Source: https://github.com/JiawangBian/SC-SfMLearner-Release/issues/57 (fix: sum the losses and
step once).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
pose_net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 6))
optimizer = torch.optim.SGD(pose_net.parameters(), lr=0.1)
frames = torch.randn(4, 6)
target_pose = torch.randn(4, 6)

pose = pose_net(frames)
photometric_loss = (pose - target_pose).abs().mean()
smooth_loss = pose.diff(dim=0).pow(2).mean()
optimizer.zero_grad()
(photometric_loss + smooth_loss).backward()
optimizer.step()
result = {"params": [p.detach() for p in pose_net.parameters()]}
