"""onsets-and-frames' `train.py` backpropagates the transcriber's loss, steps
the optimizer and the learning-rate scheduler, and only then clips the
gradient norm: `loss.backward(); optimizer.step(); scheduler.step();
clip_grad_norm_(model.parameters(), clip_gradient_norm)`.  The step has
already used the unclipped gradients and the next iteration clears them, so
clipping has no effect (the author: "Yeah it definitely should [be between
backward and step]").  Nothing raises.
Buggy line: `clip_grad_norm_(...)` after `optimizer.step()` in `train`.
Expected finding: ADL022 there (a clip after the step it should bound).
Source: https://github.com/jongwook/onsets-and-frames/issues/24"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_
from torch.optim.lr_scheduler import StepLR


class OnsetsAndFrames(nn.Module):
    def __init__(self):
        super().__init__()
        self.onset_stack = nn.Linear(6, 4)
        self.frame_stack = nn.Linear(6, 4)

    def run_on_batch(self, batch):
        audio, onset_label, frame_label = batch
        onset_pred = torch.sigmoid(self.onset_stack(audio))
        frame_pred = torch.sigmoid(self.frame_stack(audio) + onset_pred.detach())
        losses = {
            "loss/onset": F.binary_cross_entropy(onset_pred, onset_label),
            "loss/frame": F.binary_cross_entropy(frame_pred, frame_label),
        }
        return frame_pred, losses


def train(model, loader, learning_rate=1.0, clip_gradient_norm=None):
    optimizer = torch.optim.Adam(model.parameters(), learning_rate)
    scheduler = StepLR(optimizer, step_size=10, gamma=0.98)
    for batch in loader:
        predictions, losses = model.run_on_batch(batch)
        loss = sum(losses.values())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        if clip_gradient_norm:
            clip_grad_norm_(model.parameters(), clip_gradient_norm)  # expect: ADL022


def bug_shows():
    """The optimizer steps with a gradient whose norm is far above the
    clipping norm."""
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    norms_at_step = []

    def record_norm(optimizer, args, kwargs):
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        norms_at_step.append(float(torch.norm(torch.stack([g.norm() for g in grads]))))

    torch.manual_seed(0)
    model = OnsetsAndFrames()
    batch = (torch.randn(3, 6) * 5, torch.rand(3, 4).round(), torch.rand(3, 4).round())
    handle = register_optimizer_step_pre_hook(record_norm)
    try:
        train(model, [batch], learning_rate=0.1, clip_gradient_norm=1e-3)
    finally:
        handle.remove()
    return norms_at_step[0] > 1e-2
