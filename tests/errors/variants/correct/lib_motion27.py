"""A motion-smoothness loss for trajectory_speed_penalty_pow_half_of_repeated_padded_frames."""
import torch
from torch import nn


class SpeedPenalty(nn.Module):
    """Mean frame-to-frame speed of predicted keypoint trajectories [batch, frames, joints, 2]."""

    def forward(self, trajectories):
        steps = trajectories[:, 1:] - trajectories[:, :-1]
        speeds = steps.pow(2).sum(-1).clamp_min(1e-12).pow(0.5)  # PRIMARY
        return speeds.mean()
