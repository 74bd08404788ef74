"""A PyTorch issue: "I need to pass input through one nn.Module, then argmax
the output, and then pass that output to a second nn.Module.  I want to
backprop through the argmax back to the weights of the first module."  The
first module's gradients are `None` after `backward()` (argmax has no
derivative).  Re-created as a two-stage pipeline: a `Selector` whose scores
are turned into indices by `torch.max(..., 1)[1]`, a `Predictor` that embeds
the chosen index, one optimizer over both, and a training loop.  Nothing
raises; the selector never receives a gradient and never changes.
Buggy line: `choice = torch.max(scores, 1)[1]` (the indices carry no graph
to the first module).
Source: https://github.com/pytorch/pytorch/issues/1339"""
import torch
import torch.nn as nn


class Selector(nn.Module):
    def __init__(self, n_in=6, n_choices=5):
        super().__init__()
        self.fc = nn.Linear(n_in, n_choices)

    def forward(self, x):
        return self.fc(x)


class Predictor(nn.Module):
    def __init__(self, n_choices=5):
        super().__init__()
        self.embed = nn.Embedding(n_choices, 8)
        self.out = nn.Linear(8, 1)

    def forward(self, idx):
        return self.out(self.embed(idx))


def forward_pipeline(first_model, second_model, x):
    scores = first_model(x)
    choice = torch.max(scores, 1)[1]  # missed: no rule (argmax cuts the graph to a module whose optimizer expects gradients)
    return second_model(choice)


def train(first_model, second_model, steps=3):
    params = list(first_model.parameters()) + list(second_model.parameters())
    optimizer = torch.optim.SGD(params, lr=0.1)
    for _ in range(steps):
        x, y = torch.randn(4, 6), torch.randn(4, 1)
        optimizer.zero_grad()
        loss = ((forward_pipeline(first_model, second_model, x) - y) ** 2).mean()
        loss.backward()
        optimizer.step()


def bug_shows():
    """The first module gets no gradient and its weights never move."""
    torch.manual_seed(0)
    first, second = Selector(), Predictor()
    before = first.fc.weight.detach().clone()
    train(first, second)
    return first.fc.weight.grad is None and torch.equal(before, first.fc.weight.detach())
