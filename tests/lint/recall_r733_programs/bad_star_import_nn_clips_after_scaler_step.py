"""A semi-supervised trainer whose `nn` comes from the project's helpers by a star import
(`from utils.utils import *`, as RefTeacher's train_semi.py has it): the AMP branch clips
after `scalar.step(optimizer)`, so the clip never bounds an update."""
import sys
import types

import torch

# the project's helper module, which re-exports torch's `nn` (made here so the file runs alone)
_helpers = types.ModuleType("r733_train_helpers")
exec("from torch import nn", _helpers.__dict__)
sys.modules.setdefault("r733_train_helpers", _helpers)

from r733_train_helpers import *  # noqa: E402,F403


def train_one_epoch(student, optimizer, batches, scalar, grad_norm_clip):
    for image, target in batches:
        loss = ((student(image) - target) ** 2).mean() * 100.0
        optimizer.zero_grad()
        scalar.scale(loss).backward()
        scalar.step(optimizer)
        if grad_norm_clip > 0:
            nn.utils.clip_grad_norm_(student.parameters(), grad_norm_clip)
        scalar.update()
    return student


def run(grad_norm_clip=0.01):
    torch.manual_seed(0)
    student = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.5)
    scalar = torch.amp.GradScaler("cpu", init_scale=256.0)
    batches = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]
    return train_one_epoch(student, optimizer, batches, scalar, grad_norm_clip)


def bug_shows():
    # the clip changes nothing: the weights are those of an unclipped run
    return torch.allclose(run(0.01).weight, run(float("inf")).weight)
