"""DN-DETR's `engine.py::train_one_epoch` (adapted from DETR's) computes the
criterion's loss dictionary, the weighted sum `losses`, backpropagates it,
clips the gradient norm and steps, but the call to `optimizer.zero_grad()`
before `losses.backward()` is missing: each step applies, and clips, the sum
of every gradient since the start of training.  Nothing raises.  The fix
restores `optimizer.zero_grad()`.
Buggy line: `losses.backward()` in `train_one_epoch` without a clear before it.
Source: https://github.com/IDEA-Research/DN-DETR/issues/19"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SetCriterion(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_dict = {"loss_ce": 1.0, "loss_bbox": 5.0, "tgt_loss_ce": 1.0}

    def forward(self, outputs, targets, mask_dict=None):
        losses = {
            "loss_ce": F.cross_entropy(outputs["pred_logits"], targets["labels"]),
            "loss_bbox": F.l1_loss(outputs["pred_boxes"], targets["boxes"]),
        }
        if mask_dict is not None:
            losses["tgt_loss_ce"] = F.cross_entropy(mask_dict["output_known_logits"], targets["labels"])
        return losses


class TinyDETR(nn.Module):
    def __init__(self, d=6, n_cls=3):
        super().__init__()
        self.backbone = nn.Linear(d, 8)
        self.class_embed = nn.Linear(8, n_cls)
        self.bbox_embed = nn.Linear(8, 4)

    def forward(self, samples, dn_args=None):
        h = torch.relu(self.backbone(samples))
        out = {"pred_logits": self.class_embed(h), "pred_boxes": self.bbox_embed(h).sigmoid()}
        mask_dict = {"output_known_logits": self.class_embed(h + 0.1)} if dn_args is not None else None
        return out, mask_dict


def train_one_epoch(model, criterion, data_loader, optimizer, epoch, max_norm=0.1, args=None, record=None):
    model.train()
    criterion.train()
    for samples, targets in data_loader:
        outputs, mask_dict = model(samples, dn_args=(targets, args))
        loss_dict = criterion(outputs, targets, mask_dict)
        weight_dict = criterion.weight_dict
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        loss_value = losses.item()
        if not math.isfinite(loss_value):
            raise RuntimeError("Loss is {}, stopping training".format(loss_value))
        losses.backward()
        if record is not None:
            record.append(model.class_embed.weight.grad.clone())
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()  # expect: ADL018


def bug_shows():
    """The second batch's gradient carries the first batch's."""
    torch.manual_seed(0)
    model, criterion = TinyDETR(), SetCriterion()
    batches = [(torch.randn(4, 6), {"labels": torch.tensor([0, 1, 2, 0]), "boxes": torch.rand(4, 4)}) for _ in range(2)]
    record = []
    train_one_epoch(model, criterion, batches, torch.optim.SGD(model.parameters(), lr=0.0), 0, max_norm=0, record=record)
    model.zero_grad()
    samples, targets = batches[1]
    outputs, mask_dict = model(samples, dn_args=(targets, None))
    loss_dict = criterion(outputs, targets, mask_dict)
    sum(loss_dict[k] * criterion.weight_dict[k] for k in loss_dict).backward()
    return not torch.allclose(record[1], model.class_embed.weight.grad)
