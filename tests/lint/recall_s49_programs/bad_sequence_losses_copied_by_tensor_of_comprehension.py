"""Cause 4, a second shape: per-time-step losses of a recurrent model's outputs, gathered
by a list comprehension over `outputs.unbind(1)` and copied by `torch.tensor`, then summed
and backpropagated: the model gets no gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Tagger(nn.Module):
    def __init__(self, size=5, hidden=6, tags=3):
        super().__init__()
        self.rnn = nn.GRU(size, hidden, batch_first=True)
        self.out = nn.Linear(hidden, tags)

    def forward(self, x):
        states, _ = self.rnn(x)
        return self.out(states)


def train(model, batches, optimizer):
    for x, tags in batches:
        optimizer.zero_grad()
        logits = model(x)
        step_losses = torch.tensor([F.cross_entropy(step, tags[:, t]) for t, step in enumerate(logits.unbind(1))])
        loss = step_losses.sum()
        loss.requires_grad_()
        loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = Tagger()
    before = [p.detach().clone() for p in model.parameters()]
    batches = [(torch.randn(2, 4, 5), torch.randint(0, 3, (2, 4))) for _ in range(2)]
    train(model, batches, torch.optim.SGD(model.parameters(), lr=0.1))
    return before, list(model.parameters())


def bug_shows():
    before, after = run()
    return all(torch.equal(b, a) for b, a in zip(before, after))
