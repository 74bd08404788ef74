# message: Function 'PowBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# set: 27
# trigger: a pose-forecasting Trainer runs every step under `with torch.autograd.detect_anomaly():`; a
#   smoothness loss module in another file takes the speed of each joint between frames as
#   steps.pow(2).sum(-1).pow(0.5); clips shorter than the window are padded by repeating their last
#   frame, so those steps are 0, where pow(0.5)'s derivative is infinite, and the square's backward
#   makes 0 * inf = NaN
# source: none found; the pattern as users write it (a norm spelled with pow(0.5), padding by repetition)
# helpers: lib_motion27.py
# results: losses, trainer.model
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_motion27 import SpeedPenalty  # noqa: E402


class PoseForecaster(nn.Module):
    def __init__(self, joints=4, frames=6):
        super().__init__()
        self.joints, self.frames = joints, frames
        self.decoder = nn.Linear(joints * 2, frames * joints * 2)

    def forward(self, last_pose):
        return self.decoder(last_pose.flatten(1)).view(-1, self.frames, self.joints, 2)


class Trainer:
    def __init__(self, model, smoothness_weight=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        self.smoothness = SpeedPenalty()
        self.smoothness_weight = smoothness_weight

    def training_step(self, last_pose, future, length):
        with torch.autograd.detect_anomaly():
            predicted = self.model(last_pose)[:, :length]
            padding = predicted[:, -1:].expand(-1, self.model.frames - length, -1, -1)
            predicted = torch.cat([predicted, padding], 1)  # the window's frames, the last one repeated
            loss = (predicted - future).pow(2).mean() + self.smoothness_weight * self.smoothness(predicted)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return loss.item()


def padded_clips(length, batch=3, frames=6, joints=4):
    future = torch.randn(batch, frames, joints, 2)
    future[:, length:] = future[:, length - 1:length]  # clips of `length` frames, padded by repetition
    return torch.randn(batch, joints, 2), future, length


torch.manual_seed(0)
trainer = Trainer(PoseForecaster())
losses = [trainer.training_step(*padded_clips(length)) for length in (4, 5)]
