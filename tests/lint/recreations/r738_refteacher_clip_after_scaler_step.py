"""RefTeacher (semi-supervised referring expression comprehension), `train_semi_refteacher.py`
(issue 3 asks about this block): with mixed precision on, `train_one_epoch` scales and
backpropagates the loss, lets the scaler step the optimizer, and only then clips the student's
gradients (`scalar.step(optimizer)` followed by `nn.utils.clip_grad_norm_(student.parameters(),
__C.GRAD_NORM_CLIP)`).  The step has already used the unclipped gradients; the clip changes
gradients nobody reads, so `GRAD_NORM_CLIP` never bounds an update.
Re-created in my own words with the script's structure: a config namespace, a student/teacher
grounding net that returns its losses when given labels, the EMA `_update_teacher_model`, the
burn-up and semi-supervised branches of `train_one_epoch`, `AverageMeter`s, and a CPU gradient
scaler standing in for the CUDA one.
Nothing raises: `bug_shows()` shows the student's parameters after the step equal to the
unclipped update, not to the clipped one.
Buggy line: the `clip_grad_norm_` after `scalar.step(optimizer)`.
Source: https://github.com/Disguiser15/RefTeacher/blob/d0a8bd1c94b06dbbf8727d6d0c35e31caf6ea7c0/train_semi_refteacher.py"""
import copy
from argparse import Namespace
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self, name, fmt=':f'):
        self.name, self.fmt = name, fmt
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(self.count, 1)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.visual = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.lang = nn.EmbeddingBag(20, 8)
        self.box_head = nn.Linear(16, 4)
        self.seg_head = nn.Linear(16, 16)

    def forward(self, x, y, det_label=None, seg_label=None, semi=False, att_target=None):
        feats = torch.cat([self.visual(x), self.lang(y)], dim=1)
        box, mask = torch.sigmoid(self.box_head(feats)), self.seg_head(feats)
        if det_label is None:
            return box, mask.sigmoid(), feats
        loss_det = F.l1_loss(box, det_label) * 50.0
        loss_seg = F.binary_cross_entropy_with_logits(mask, seg_label)
        loss = loss_det + loss_seg
        if semi:
            loss_att = F.mse_loss(feats, att_target)
            return loss, loss_det, loss_seg, loss_att, loss_det, loss_seg
        return loss, loss_det, loss_seg


@torch.no_grad()
def _update_teacher_model(student, teacher, keep_rate=0.9996):
    student_model_dict = student.state_dict()
    new_teacher_dict = OrderedDict()
    for key, value in teacher.state_dict().items():
        new_teacher_dict[key] = student_model_dict[key] * (1 - keep_rate) + value * keep_rate
    teacher.load_state_dict(new_teacher_dict)


def train_one_epoch(__C, teacher, student, optimizer, scheduler, loader_label, loader_unlabel, scalar, epoch):
    student.train()
    nb = len(loader_label)
    losses_sup = AverageMeter('LossS', ':.2f')
    losses_semi = AverageMeter('LossU', ':.2f')
    for ith_batch, data in enumerate(zip(loader_label, loader_unlabel)):
        ni = ith_batch + epoch * nb
        (ref_iter, image_iter, mask_iter, box_iter), (ref_iter_unlabel, image_iter_unlabel) = data
        loss_semi = torch.zeros(1)

        student.train()
        if ni < __C.BURN_UP:
            if scalar is not None:
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
                    loss_sup, loss_det_sup, loss_seg_sup = student(image_iter, ref_iter, det_label=box_iter, seg_label=mask_iter)
            else:
                loss_sup, loss_det_sup, loss_seg_sup = student(image_iter, ref_iter, det_label=box_iter, seg_label=mask_iter)
            loss = loss_sup
        else:
            if ni == __C.BURN_UP:
                _update_teacher_model(student, teacher, keep_rate=0.)
            teacher.eval()
            with torch.no_grad():
                pseudo_box, pseudo_mask, att = teacher(image_iter_unlabel, ref_iter_unlabel)
            image_iter = torch.cat([image_iter, image_iter_unlabel], 0)
            ref_iter = torch.cat([ref_iter, ref_iter_unlabel], 0)
            box_iter = torch.cat([box_iter, pseudo_box], 0)
            mask_iter = torch.cat([mask_iter, (pseudo_mask > 0.5).float()], 0)
            loss_sup, _, _, loss_semi, _, _ = student(image_iter, ref_iter, det_label=box_iter, seg_label=mask_iter,
                                                      semi=True, att_target=torch.cat([att, att], 0)[:len(image_iter)])
            loss = loss_sup + loss_semi * __C.SEMI_LOSS_WEIGHT

        optimizer.zero_grad()
        if scalar is not None:
            scalar.scale(loss).backward()
            scalar.step(optimizer)
            if __C.GRAD_NORM_CLIP > 0:
                nn.utils.clip_grad_norm_(  # expect: ADL022
                    student.parameters(),
                    __C.GRAD_NORM_CLIP
                )
            scalar.update()
        else:
            loss.backward(retain_graph=True)
            if __C.GRAD_NORM_CLIP > 0:
                nn.utils.clip_grad_norm_(student.parameters(), __C.GRAD_NORM_CLIP)
            optimizer.step()
        scheduler.step()
        if ni >= __C.BURN_UP:
            _update_teacher_model(student, teacher, keep_rate=__C.SEMI_EMA)

        losses_sup.update(loss_sup.item(), image_iter.size(0))
        losses_semi.update(loss_semi.item(), image_iter.size(0))


def make_data():
    torch.manual_seed(1)
    labelled = [(torch.randint(0, 20, (2, 5)), torch.rand(2, 3, 8, 8), (torch.rand(2, 16) > 0.5).float(), torch.rand(2, 4))]
    unlabelled = [(torch.randint(0, 20, (2, 5)), torch.rand(2, 3, 8, 8))]
    return labelled, unlabelled


def run(clip_first=False):
    torch.manual_seed(0)
    __C = Namespace(BURN_UP=10, SEMI_LOSS_WEIGHT=1.0, SEMI_EMA=0.99, GRAD_NORM_CLIP=0.05)
    student = Net()
    teacher = copy.deepcopy(student)
    optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=100)
    scalar = torch.amp.GradScaler("cpu", init_scale=1024.0)
    loader_label, loader_unlabel = make_data()
    if not clip_first:
        train_one_epoch(__C, teacher, student, optimizer, scheduler, loader_label, loader_unlabel, scalar, 0)
        return student
    # the intended order: unscale, clip, then step
    (ref_iter, image_iter, mask_iter, box_iter) = loader_label[0]
    loss, _, _ = student(image_iter, ref_iter, det_label=box_iter, seg_label=mask_iter)
    optimizer.zero_grad()
    scalar.scale(loss).backward()
    scalar.unscale_(optimizer)
    nn.utils.clip_grad_norm_(student.parameters(), __C.GRAD_NORM_CLIP)
    scalar.step(optimizer)
    scalar.update()
    return student


def bug_shows():
    as_written = run()
    clipped = run(clip_first=True)
    return any(not torch.allclose(a, b) for a, b in zip(as_written.parameters(), clipped.parameters()))
