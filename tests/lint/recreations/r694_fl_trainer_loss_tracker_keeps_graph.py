"""plato (federated learning framework): the base trainer's
`perform_forward_and_backward_passes` hands the batch's loss, with its graph,
to `self._loss_tracker.update(loss, labels.size(0))` before `loss.backward()`,
and `LossTracker.update` adds `loss_batch_value * batch_size` into
`self.total_loss`; the tracker is reset only once per epoch (in `train_model`'s
epoch loop), so its total is a tensor chained through every batch of the epoch
(its `average` property even detaches it when it is read).  Every client
trainer built on it, and the Ditto example's personalisation loop, do the same.
Re-created in my own shapes: a small tracker class, a trainer whose per-batch
method updates it and backpropagates, and the epoch loop in another method.
Nothing raises; the tracker's total keeps the graph of each batch of the epoch.
Buggy line: `self.tracker.update(loss, labels.size(0))` (the loss handed on with
its graph, not `loss.item()`).
Source: https://github.com/TL-System/plato (plato/trainers/basic.py,
plato/trainers/tracking.py)"""
import torch
import torch.nn as nn


class Tracker:
    def __init__(self):
        self.total = 0
        self.count = 0

    def reset(self):
        self.total = 0
        self.count = 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def average(self):
        return (self.total / self.count).detach().item()


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        self.criterion = nn.CrossEntropyLoss()
        self.tracker = Tracker()

    def one_batch(self, examples, labels):
        self.optimizer.zero_grad()
        loss = self.criterion(self.model(examples), labels)
        self.tracker.update(loss, labels.size(0))  # missed: ADL023
        loss.backward()
        self.optimizer.step()
        return loss

    def train_model(self, loader, epochs=1):
        for _ in range(epochs):
            self.tracker.reset()
            for examples, labels in loader:
                self.one_batch(examples, labels)
        return self.tracker


def bug_shows():
    """After an epoch, the tracker's total is a tensor whose graph reaches back
    through every batch's loss (one `AddBackward0` per batch)."""
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]
    tracker = Trainer(model).train_model(loader)
    depth, node = 0, tracker.total.grad_fn
    while node is not None and node.name() == "AddBackward0":
        depth += 1
        node = node.next_functions[0][0]
    return tracker.total.grad_fn is not None and depth >= 4
