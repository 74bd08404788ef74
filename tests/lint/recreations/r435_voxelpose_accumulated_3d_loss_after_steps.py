"""VoxelPose's `train_3d` steps the optimizer on `loss_2d + loss_cord` on every
batch, and accumulates the 3D loss over `accumulation_steps = 4` batches,
`accu_loss_3d += loss_3d / accumulation_steps`, backpropagating the sum every
fourth batch.  The sum holds the graphs of earlier batches, which the
per-batch backward of `loss_2d + loss_cord` has already freed where the two
losses share the network, and whose saved weights the per-batch steps have
since changed in place: the fourth batch's `accu_loss_3d.backward()` fails
("evident from the runtime errors in torch>1.4.0").  The fix backpropagates
each batch's 3D loss right away and steps every fourth batch.
Buggy line: `accu_loss_3d.backward()` in `train_3d`.
Source: https://github.com/microsoft/voxelpose-pytorch/issues/47"""
import torch
import torch.nn as nn


class MultiPersonPoseNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.root_net = nn.Linear(6, 6)
        self.pose_net = nn.Linear(6, 3)

    def forward(self, views, targets_2d, targets_3d):
        heat = torch.relu(self.root_net(views))
        pred = self.pose_net(heat)
        loss_2d = (heat - targets_2d).pow(2).mean()
        loss_3d = (pred - targets_3d).pow(2).mean()
        loss_cord = (pred - targets_3d).abs().mean()
        return pred, loss_2d, loss_3d, loss_cord


def train_3d(model, optimizer, loader):
    model.train()
    accumulation_steps = 4
    accu_loss_3d = 0
    for i, (inputs, targets_2d, targets_3d) in enumerate(loader):
        pred, loss_2d, loss_3d, loss_cord = model(inputs, targets_2d, targets_3d)
        loss_2d = loss_2d.mean()
        loss_3d = loss_3d.mean()
        loss_cord = loss_cord.mean()

        if loss_cord > 0:
            optimizer.zero_grad()
            (loss_2d + loss_cord).backward()
            optimizer.step()

        if accu_loss_3d > 0 and (i + 1) % accumulation_steps == 0:
            optimizer.zero_grad()
            accu_loss_3d.backward()  # expect: ADL019
            optimizer.step()
            accu_loss_3d = 0.0
        else:
            accu_loss_3d += loss_3d / accumulation_steps


def run():
    torch.manual_seed(0)
    model = MultiPersonPoseNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = [(torch.randn(2, 6), torch.randn(2, 6), torch.randn(2, 3)) for _ in range(4)]
    train_3d(model, optimizer, loader)
