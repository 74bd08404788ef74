"""Amphion's VALL-E v2 `BaseTrainer._train_epoch` sums what `_train_step`
returns into `epoch_sum_loss += loss`; `_train_step` clears, runs
`self.accelerator.backward(loss)`, steps, and returns the loss tensor itself.
Each batch's loss enters the running sum with its graph, which the sum keeps
until the epoch ends: CPU memory grows every epoch until training is
restarted.  The maintainers' fix is `epoch_sum_loss += loss.item()`.
Buggy line: `epoch_sum_loss += loss` in `_train_epoch`.
Source: https://github.com/open-mmlab/Amphion/issues/263"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Accelerator:
    def backward(self, loss):
        loss.backward()


class BaseTrainer:
    def __init__(self, model, train_dataloader, lr=1e-3):
        self.model = model
        self.train_dataloader = train_dataloader
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
        self.accelerator = Accelerator()
        self.step = 0

    def _train_step(self, batch):
        x, y = batch
        self.optimizer.zero_grad()
        logits = self.model(x)
        loss = F.cross_entropy(logits, y)
        self.accelerator.backward(loss)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        return loss

    def _train_epoch(self):
        self.model.train()
        epoch_sum_loss = 0.0
        ema_loss = None
        for batch in self.train_dataloader:
            loss = self._train_step(batch)
            self.step += 1
            ema_loss = 0.99 * ema_loss + 0.01 * loss.item() if ema_loss is not None else loss.item()
            epoch_sum_loss += loss  # expect: ADL028
        return epoch_sum_loss / len(self.train_dataloader)


def bug_shows():
    """The epoch's mean loss holds the batches' graphs."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(10, 8), nn.Flatten(), nn.Linear(16, 10))
    batches = [(torch.randint(0, 10, (4, 2)), torch.randint(0, 10, (4,))) for _ in range(3)]
    mean_loss = BaseTrainer(model, batches)._train_epoch()
    return mean_loss.grad_fn is not None
