"""torchbearer's `MeanSquaredError` metric returned `torch.pow(y_pred -
y_true.view_as(y_pred), 2)` from `process`, computed on the model's
prediction (which carries the graph), and the running `Mean` it is wrapped
in sums every batch's value for the epoch.  The sum holds every batch's
graph: memory grows with the epoch's length.  The fix returns the value's
`.data`.
Buggy line: `return torch.pow(y_pred - y_true.view_as(y_pred), 2)` in `MeanSquaredError.process`.
Source: https://github.com/pytorchbearer/torchbearer/issues/506"""
import torch
import torch.nn as nn

Y_PRED, Y_TRUE = "y_pred", "y_true"


class MeanSquaredError:
    def process(self, state):
        y_pred = state[Y_PRED]
        y_true = state[Y_TRUE]
        return torch.pow(y_pred - y_true.view_as(y_pred), 2)  # missed: ADL023


class Mean:
    """Running mean of a metric over the epoch."""

    def __init__(self, metric):
        self.metric = metric
        self.reset()

    def reset(self):
        self._sum = 0.0
        self._count = 0

    def process(self, state):
        value = self.metric.process(state)
        self._sum += value.sum()
        self._count += value.numel()

    def process_final(self):
        return self._sum / self._count


class Trial:
    def __init__(self, model, optimizer, metrics):
        self.model = model
        self.optimizer = optimizer
        self.metrics = metrics

    def run(self, batches):
        for metric in self.metrics:
            metric.reset()
        for x, y in batches:
            state = {Y_TRUE: y}
            self.optimizer.zero_grad()
            state[Y_PRED] = self.model(x)
            loss = nn.functional.mse_loss(state[Y_PRED], y)
            loss.backward()
            self.optimizer.step()
            for metric in self.metrics:
                metric.process(state)
        return {id(m): m.process_final() for m in self.metrics}


def bug_shows():
    """The epoch's metric sum carries the graph of every batch."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    mse = Mean(MeanSquaredError())
    Trial(model, torch.optim.SGD(model.parameters(), lr=0.1), [mse]).run(
        [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)])
    return mse._sum.grad_fn is not None
