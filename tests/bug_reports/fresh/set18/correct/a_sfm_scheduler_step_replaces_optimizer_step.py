"""Unsupervised depth and ego-motion learning (ClementPinard/SfmLearner-Pytorch): a learning-rate
scheduler was added to the training loop as an alternative to the optimizer's step,
`if scheduler: scheduler.step() else: optimizer.step()`. With a scheduler the optimizer never
steps: the loss does not come down, the learning rate decays on schedule, and nothing is raised.
Source: https://github.com/ClementPinard/SfmLearner-Pytorch/issues/5 ("the loss doesn't come down
if I use the scheduler"; the maintainer's answer: scheduler.step() only changes the learning rate,
call optimizer.step() regardless of the scheduler).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

depth_net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1), nn.Softplus())
optimizer = torch.optim.Adam(depth_net.parameters(), lr=2e-3)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)

frames = torch.rand(4, 2, 3, 8, 8)
target_depth = torch.rand(4, 2, 1, 8, 8) + 0.5

losses = []
for step in range(4):
    optimizer.zero_grad()
    depth = depth_net(frames[step])
    loss = F.l1_loss(depth, target_depth[step]) + 0.1 * (depth[..., 1:] - depth[..., :-1]).abs().mean()
    loss.backward()
    optimizer.step()
    if scheduler:
        scheduler.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "lr": torch.tensor(optimizer.param_groups[0]["lr"]),
          "params": [p.detach().clone() for p in depth_net.parameters()]}
