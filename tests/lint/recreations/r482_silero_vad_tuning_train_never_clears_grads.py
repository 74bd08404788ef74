"""silero-vad's fine-tuning helper `tuning/utils.py::train` runs the model
over each batch's audio in 512-sample chunks (carrying the recurrent state),
computes the masked BCE loss, calls `loss.backward()` and `optimizer.step()`
and never `optimizer.zero_grad()`: every step applies the sum of all the
gradients since the start of the epoch.  Nothing raises; tuning diverges.
The pull request adds `optimizer.zero_grad()` before `loss.backward()`.
Buggy line: the loop of `train` (no `optimizer.zero_grad()` before `loss.backward()`).
Source: https://github.com/snakers4/silero-vad/pull/699"""
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


class TinyVAD(nn.Module):
    def __init__(self, chunk=8, hidden=6):
        super().__init__()
        self.inp = nn.Linear(chunk, hidden)
        self.cell = nn.GRUCell(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x, state):
        state = self.cell(torch.relu(self.inp(x)), state)
        return torch.sigmoid(self.out(state)).squeeze(1), state


def train(config, loader, model, criterion, optimizer, device="cpu"):
    losses = AverageMeter()
    model.train()
    for _, (x, targets, masks) in enumerate(loader):
        x, targets, masks = x.to(device), targets.to(device), masks.to(device)
        state = torch.zeros(x.size(0), config["hidden"])
        outs = []
        for i in range(0, x.size(1), config["chunk"]):
            out, state = model(x[:, i:i + config["chunk"]], state)
            outs.append(out)
        stacked = torch.stack(outs, dim=1)
        loss = criterion(stacked, targets)
        loss = (loss * masks).mean()
        loss.backward()
        optimizer.step()  # expect: ADL018
        losses.update(loss.item(), masks.numel())
    return losses.avg


def bug_shows():
    """The second step's gradient includes the first batch's."""
    torch.manual_seed(0)
    config = {"chunk": 8, "hidden": 6}
    model = TinyVAD()
    batches = [(torch.randn(2, 16), torch.randint(0, 2, (2, 2)).float(), torch.ones(2, 2)) for _ in range(2)]
    grads = []

    class Recorder(torch.optim.SGD):
        def step(self, closure=None):
            grads.append(model.out.weight.grad.clone())
            return super().step(closure)

    opt = Recorder(model.parameters(), lr=0.0)  # lr 0: the weights stay, only the gradients are compared
    train(config, batches, model, nn.BCELoss(reduction="none"), opt)
    model.zero_grad()
    x, t, m = batches[1]
    state = torch.zeros(2, 6)
    outs = []
    for i in range(0, 16, 8):
        out, state = model(x[:, i:i + 8], state)
        outs.append(out)
    (nn.BCELoss(reduction="none")(torch.stack(outs, 1), t) * m).mean().backward()
    return not torch.allclose(grads[1], model.out.weight.grad)
