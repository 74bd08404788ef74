"""Loop's (facebookarchive/loop) `evaluate` runs the speech model over the
validation set after each epoch with `model.eval()`, relying on the
`volatile` flag that PyTorch 0.4 made a no-op: the forward passes run with
gradients on and every batch builds a graph and keeps its activations, and
validation runs out of GPU memory where training did not ("out of memory"
in the first validation batches).  The fix runs `evaluate` under
`torch.no_grad()`.
Buggy line: `output, _ = model(input, speaker, start=True)` in `evaluate`.
Source: https://github.com/facebookarchive/loop/issues/57"""
import torch
import torch.nn as nn


class Loop(nn.Module):
    def __init__(self, n_speakers=2, feat=6):
        super().__init__()
        self.embed = nn.Embedding(n_speakers, feat)
        self.rnn = nn.GRU(feat, feat, batch_first=True)
        self.out = nn.Linear(feat, feat)

    def forward(self, input, speaker, start=True):
        h, state = self.rnn(input + self.embed(speaker).unsqueeze(1))
        return self.out(h), state


def evaluate(model, criterion, valid_loader):
    model.eval()
    total = 0.0
    last = None
    for input, target, speaker in valid_loader:
        output, _ = model(input, speaker, start=True)  # expect: ADL031
        loss = criterion(output, target)
        total += loss.item()
        last = output
    return total / len(valid_loader), last


def bug_shows():
    """The outputs of evaluation carry a graph."""
    torch.manual_seed(0)
    loader = [(torch.randn(2, 5, 6), torch.randn(2, 5, 6), torch.randint(0, 2, (2,))) for _ in range(2)]
    _, output = evaluate(Loop(), nn.MSELoss(), loader)
    return output.grad_fn is not None
