"""YOLO's `ModelTrainer.train_one_epoch` sums the per-term losses of each batch
into `total_loss = defaultdict(lambda: torch.tensor(0.0))`.  The terms come
from `train_one_batch`, which backpropagates the summed loss and steps, and
returns the loss function's dictionary of terms (`{"BoxLoss": ..., ...}`),
tensors with their graphs.  `total_loss[loss_name] += loss_val * batch_size`
keeps every batch's graph until the epoch ends: memory grows with the number
of batches, nothing raises.  The fix sums `loss_val.item() * batch_size` into
a `defaultdict(float)`.
Buggy line: `total_loss[loss_name] += loss_val * batch_size` in `train_one_epoch`.
Source: https://github.com/MultimediaTechLab/YOLO/pull/83"""
from collections import defaultdict

import torch
import torch.nn as nn


class DualLoss:
    def __call__(self, predicts, targets):
        loss_dict = {
            "BoxLoss": (predicts[:, :4] - targets[:, :4]).abs().mean(),
            "ClsLoss": (predicts[:, 4:] - targets[:, 4:]).pow(2).mean(),
        }
        loss_sum = sum(list(loss_dict.values())) / len(loss_dict)
        return loss_sum, loss_dict


class ModelTrainer:
    def __init__(self):
        self.model = nn.Linear(6, 6)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.loss_fn = DualLoss()
        self.device = "cpu"

    def train_one_batch(self, images, targets):
        self.optimizer.zero_grad()
        predicts = self.model(images)
        loss, loss_item = self.loss_fn(predicts, targets)
        loss.backward()
        self.optimizer.step()
        return loss_item

    def train_one_epoch(self, dataloader):
        self.model.train()
        total_loss = defaultdict(lambda: torch.tensor(0.0, device=self.device))
        total_samples = 0
        for batch_size, images, targets in dataloader:
            loss_each = self.train_one_batch(images, targets)
            for loss_name, loss_val in loss_each.items():
                total_loss[loss_name] += loss_val * batch_size  # expect: ADL028
            total_samples += batch_size
        for loss_val in total_loss.values():
            loss_val /= total_samples
        return total_loss


def bug_shows():
    """The epoch's loss sums carry the graphs of the batches."""
    torch.manual_seed(0)
    trainer = ModelTrainer()
    loader = [(4, torch.randn(4, 6), torch.randn(4, 6)) for _ in range(3)]
    totals = trainer.train_one_epoch(loader)
    return all(v.grad_fn is not None for v in totals.values())
