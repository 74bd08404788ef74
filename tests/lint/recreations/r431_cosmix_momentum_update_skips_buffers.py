"""CoSMix's mean teacher is updated by a `MomentumUpdater` that averages the
student's parameters into the teacher's, and nothing else: the teacher's
batch-norm running statistics are never updated from the student.  The
teacher runs in eval mode with the statistics it had at initialisation,
"increasingly misaligned with the other weights with every step".  Nothing
raises.  The fix averages the floating-point buffers too.
Buggy line: `update` of `MomentumUpdater`, which loops over parameters only.
Source: https://github.com/saltoricristiano/cosmix-uda/issues/21"""
import copy

import torch
import torch.nn as nn


class MomentumUpdater:
    def __init__(self, base_tau=0.99):
        self.cur_tau = base_tau

    @torch.no_grad()
    def update(self, online_net, momentum_net):
        for op, mp in zip(online_net.parameters(), momentum_net.parameters()):  # missed: ADL030 finds it, opt-in (--select ADL030)
            mp.data.mul_(self.cur_tau)
            mp.data.add_(op.data * (1 - self.cur_tau))


def make_net():
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def adapt(student, teacher, batches):
    updater = MomentumUpdater()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    teacher.eval()
    for x in batches:
        with torch.no_grad():
            pseudo = teacher(x).argmax(1)
        loss = nn.functional.cross_entropy(student(x), pseudo)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        updater.update(student, teacher)


def bug_shows():
    """The student's running mean moved; the teacher's is still zero."""
    torch.manual_seed(0)
    student = make_net()
    teacher = copy.deepcopy(student)
    adapt(student, teacher, [torch.randn(16, 4) + 3.0 for _ in range(3)])
    return student[1].running_mean.abs().sum() > 0 and teacher[1].running_mean.abs().sum() == 0
