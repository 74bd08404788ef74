"""A Lightning classifier logs the accuracy of each training batch next to
its loss: `loss = F.cross_entropy(y_hat, y)`, then `acc = accuracy(y_hat,
y)`.  The functional metric of that release normalised its `target`
argument in place; cross-entropy keeps the target for backward, so the
loss's backward failed ("[torch.LongTensor [32]] is at version 2; expected
version 1").  Passing `y.clone()` made it go away.  The fix is a metric that
writes no argument.
Buggy line: `target[target == ignore_index] = 0` in `accuracy`, reached from
`training_step` after the loss kept `y`.
Expected finding: ADL001 (a write to a tensor the loss saved), at the call
of `accuracy` that hands it the saved target.
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/2862"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def accuracy(pred, target, ignore_index=-100):
    labels = pred.argmax(dim=1)
    valid = target != ignore_index
    target[target == ignore_index] = 0
    return ((labels == target) & valid).float().sum() / valid.float().sum().clamp(min=1)


class LitClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(6, 3)
        self.logged = {}

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self(x)
        loss = F.cross_entropy(y_hat, y)
        acc = accuracy(y_hat, y)  # expect: ADL001
        self.logged = {"train_loss": loss.detach(), "train_acc": acc}
        return loss


def run():
    torch.manual_seed(0)
    model = LitClassifier()
    batch = (torch.randn(4, 6), torch.tensor([0, 2, -100, 1]))
    loss = model.training_step(batch, 0)
    loss.backward()
