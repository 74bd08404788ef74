"""YOLOv6's `Trainer.train_in_steps` backpropagates `total_loss` and keeps
the loss's parts, `loss_items`, which `ComputeLoss.__call__` returned as a
concatenation of the weighted terms without `.detach()`; the trainer then
folds them into the epoch's running mean held on the trainer,
`self.mean_loss = (self.mean_loss * step + self.loss_items) / (step + 1)`.
The mean is part of every batch's graph from the first step on and keeps all
of them alive: GPU memory grows during the epoch.  The pull request detaches
the items where the loss returns them.
Buggy line: `return loss, torch.cat(...)` of the terms without `.detach()`,
summed by `self.mean_loss = ...` in `Trainer.train_in_steps`.
Source: https://github.com/meituan/YOLOv6/pull/503"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ComputeLoss:
    def __init__(self, iou_weight=2.5, cls_weight=1.0, dfl_weight=0.5):
        self.loss_weight = {"iou": iou_weight, "class": cls_weight, "dfl": dfl_weight}

    def __call__(self, outputs, targets, epoch_num, step_num):
        pred_cls, pred_box = outputs
        loss_cls = F.binary_cross_entropy_with_logits(pred_cls, targets["cls"])
        loss_iou = F.l1_loss(pred_box, targets["box"])
        loss_dfl = pred_box.pow(2).mean() * 0.01
        loss = self.loss_weight["class"] * loss_cls + self.loss_weight["iou"] * loss_iou + self.loss_weight["dfl"] * loss_dfl
        return loss, torch.cat(((self.loss_weight["iou"] * loss_iou).unsqueeze(0),
                                (self.loss_weight["dfl"] * loss_dfl).unsqueeze(0),
                                (self.loss_weight["class"] * loss_cls).unsqueeze(0)))


class Detector(nn.Module):
    def __init__(self, d=6, n_cls=2):
        super().__init__()
        self.neck = nn.Linear(d, 8)
        self.cls_head = nn.Linear(8, n_cls)
        self.reg_head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.neck(x))
        return self.cls_head(h), self.reg_head(h)


class Trainer:
    def __init__(self, model, loader):
        self.model = model
        self.train_loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        self.compute_loss = ComputeLoss()
        self.mean_loss = torch.zeros(3)

    def train_in_steps(self, epoch_num, step_num, images, targets):
        preds = self.model(images)
        total_loss, loss_items = self.compute_loss(preds, targets, epoch_num, step_num)
        total_loss.backward()
        self.loss_items = loss_items
        self.update_optimizer()

    def update_optimizer(self):
        self.optimizer.step()
        self.optimizer.zero_grad()

    def train_one_epoch(self, epoch_num):
        self.mean_loss = torch.zeros(3)
        for step, (images, targets) in enumerate(self.train_loader):
            self.train_in_steps(epoch_num, step, images, targets)
            self.mean_loss = (self.mean_loss * step + self.loss_items) / (step + 1)  # missed: ADL023
        return self.mean_loss


def bug_shows():
    """The epoch's mean loss items hold the batches' graphs."""
    torch.manual_seed(0)
    loader = [(torch.randn(4, 6), {"cls": torch.randint(0, 2, (4, 2)).float(), "box": torch.rand(4, 4)}) for _ in range(3)]
    mean = Trainer(Detector(), loader).train_one_epoch(0)
    return mean.grad_fn is not None
