"""The ML2021 homework 7 example (extractive QA with Accelerate) sums the
model output's loss, `train_loss += output.loss`, for the logged average,
while `accelerator.backward(output.loss)` runs the backward.  `train_loss`
holds every step's graph: host memory grows until 64 GB are gone.  The fix
sums `output.loss.item()` (or `.detach()`).
Buggy line: `train_loss += output.loss` in `train`.
Source: https://github.com/pai4451/ML2021/issues/2"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from accelerate import Accelerator


class QAModel(nn.Module):
    def __init__(self, vocab=20, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.qa_outputs = nn.Linear(hidden, 2)

    def forward(self, input_ids, start_positions, end_positions):
        logits = self.qa_outputs(self.embed(input_ids))
        start_logits, end_logits = logits[..., 0], logits[..., 1]
        loss = (F.cross_entropy(start_logits, start_positions) + F.cross_entropy(end_logits, end_positions)) / 2
        return SimpleNamespace(loss=loss, start_logits=start_logits, end_logits=end_logits)


def train(model, optimizer, train_loader, accelerator, logging_step=2):
    model.train()
    step = 1
    train_loss = 0
    for data in train_loader:
        output = model(input_ids=data[0], start_positions=data[1], end_positions=data[2])
        train_loss += output.loss  # missed: ADL023
        accelerator.backward(output.loss)
        step += 1
        optimizer.step()
        optimizer.zero_grad()
        if step % logging_step == 0:
            train_loss = 0
    return train_loss


def bug_shows():
    """The running loss between two reports is a graph tensor."""
    torch.manual_seed(0)
    accelerator = Accelerator(cpu=True)
    model = QAModel()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, optimizer = accelerator.prepare(model, optimizer)
    loader = [(torch.randint(0, 20, (2, 6)), torch.tensor([1, 2]), torch.tensor([3, 4])) for _ in range(3)]
    return train(model, optimizer, loader, accelerator, logging_step=10).grad_fn is not None
