"""A training script sums its batch losses into `running_loss` (`running_loss
+= loss`, without `.item()`), backpropagates and steps on every batch, and
then calls `running_loss.backward()` once more at the end of the epoch to
"use the whole epoch".  Each batch's backward has freed that batch's graph,
so the last backward fails ("Trying to backward through the graph a second
time"); with `retain_graph=True` it would instead go through parameters the
steps changed.  The fix keeps `running_loss` as a number
(`loss.item()`) and drops the last backward.
Buggy line: `running_loss.backward()` in `train_epoch`.
Expected finding: ADL019 (a backward through graphs earlier backwards
freed).
Source: https://github.com/pytorch/pytorch/issues/17568"""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 5)
        self.out = nn.Linear(5, 1)

    def forward(self, x):
        return self.out(torch.sigmoid(self.hidden(x)))


def train_epoch(model, optimizer, batches):
    criterion = nn.MSELoss()
    running_loss = 0
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_loss += loss
    optimizer.zero_grad()
    running_loss.backward()  # expect: ADL019
    optimizer.step()
    return running_loss


def run():
    torch.manual_seed(0)
    model = Regressor()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    train_epoch(model, optimizer, batches)
