"""Fresh shape (recall34, ADL023 through an in-place add): a trainer keeps per-name running
sums in a logger object and adds each batch's loss into the logger's stored tensor with
`.add_`; the stored sum ends up attached to every batch's graph."""
import torch
import torch.nn as nn


class MetricLogger:
    def __init__(self, names):
        self.meters = {name: torch.zeros(()) for name in names}

    def meter(self, name):
        return self.meters[name]


def fit(model, batches, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    logger = MetricLogger(["loss"])
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.meter("loss").add_(loss)
    return logger


def run():
    torch.manual_seed(0)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    return fit(nn.Linear(3, 1), batches)


def bug_shows():
    return run().meter("loss").grad_fn is not None
