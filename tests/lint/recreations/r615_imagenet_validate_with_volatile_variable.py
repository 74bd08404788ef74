"""A PyTorch issue, "Model.eval() get more and more gpu memory": the ImageNet
example's `validate()` wrapped its inputs in `Variable(input, volatile=True)`
to switch autograd off; after `volatile` was removed (replaced by
`torch.no_grad()`), the flag does nothing and validation records a graph for
every batch.  Re-created with the example's shape: `AverageMeter`,
`accuracy`, `validate(val_loader, model, criterion)` with volatile
Variables, and a small CNN.  Nothing raises (a warning says `volatile` has
no effect); every validation output carries a graph.
Buggy line: `input_var = torch.autograd.Variable(input, volatile=True)` (no
longer turns autograd off; the forward needs `torch.no_grad()`).
Source: https://github.com/pytorch/pytorch/issues/4932"""
import warnings

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


def accuracy(output, target):
    return (output.argmax(dim=1) == target).float().mean().item() * 100


def validate(val_loader, model, criterion, graphs=None):
    losses, top1 = AverageMeter(), AverageMeter()
    model.eval()
    for input, target in val_loader:
        input_var = torch.autograd.Variable(input, volatile=True)  # missed: ADL031
        target_var = torch.autograd.Variable(target, volatile=True)
        output = model(input_var)
        loss = criterion(output, target_var)
        if graphs is not None:
            graphs.append(output.grad_fn is not None)
        losses.update(loss.item(), input.size(0))
        top1.update(accuracy(output, target), input.size(0))
    return top1.avg


def bug_shows():
    """The validation outputs were recorded for backward."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 10))
    data = [(torch.randn(2, 3, 8, 8), torch.randint(0, 10, (2,))) for _ in range(2)]
    graphs = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        validate(data, model, nn.CrossEntropyLoss(), graphs)
    return all(graphs)
