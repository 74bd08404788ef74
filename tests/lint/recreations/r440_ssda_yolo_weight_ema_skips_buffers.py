"""SSDA-YOLO's mean teacher is updated by `WeightEMA`, an optimizer-like
object built on `teacher.parameters()` and `student.parameters()` whose
`step()` averages each student parameter into its teacher parameter.  The
teacher's batch-norm statistics (buffers, not parameters) are never updated,
"breaks statistics ... teacher model after about 5th epoch begins making
invalid predictions".  Nothing raises.  The fix averages the state dict's
floating-point entries, buffers included (YOLOv5's `ModelEMA`).
Buggy line: `WeightEMA.step`, which loops over parameters only.
Source: https://github.com/hnuzhy/SSDA-YOLO/issues/21"""
import copy

import torch
import torch.nn as nn


class WeightEMA:
    """Exponential moving average weight optimizer for the mean teacher."""

    def __init__(self, params, src_params, alpha=0.99):
        self.params = list(params)
        self.src_params = list(src_params)
        self.alpha = alpha
        for p, src_p in zip(self.params, self.src_params):
            p.data[:] = src_p.data[:]

    def step(self):
        one_minus_alpha = 1.0 - self.alpha
        for p, src_p in zip(self.params, self.src_params):  # missed: ADL030, opt-in (--select ADL030); selected, also silent: nothing here puts the teacher in eval mode
            p.data.mul_(self.alpha)
            p.data.add_(src_p.data * one_minus_alpha)


def make_detector():
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.SiLU(), nn.Conv2d(4, 2, 1))


def train(student, teacher, batches):
    optimizer = torch.optim.SGD(student.parameters(), lr=0.01)
    teacher_optimizer = WeightEMA(teacher.parameters(), student.parameters())
    for imgs, target in batches:
        loss = (student(imgs) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        teacher_optimizer.step()


def bug_shows():
    """The student's running variance moved; the teacher's is still one."""
    torch.manual_seed(0)
    student = make_detector()
    teacher = copy.deepcopy(student)
    train(student, teacher, [(torch.randn(2, 3, 5, 5) * 4, torch.randn(2, 2, 5, 5)) for _ in range(3)])
    return (not torch.allclose(student[1].running_var, torch.ones(4))
            and torch.equal(teacher[1].running_var, torch.ones(4)))
