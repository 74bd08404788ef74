"""SpareNet's point-cloud completion runner keeps its training losses in an
`AverageMeter` built in `__init__` (`self.losses = AverageMeter([...])`).
`train_step`, called once per batch by the base runner's `train()` loop,
backpropagates the total loss and then hands the meter the coarse and refine
losses themselves, scaled by 1000.  `AverageMeter.update` adds each value into
`self._sum[idx]` in a loop, so the sums link to the graph of every batch of the
epoch: memory grows with the number of batches, nothing raises.  The fix
hands the meter `coarse_loss.item() * 1000`.
Buggy line: `self.losses.update([...])` in `SpareNetRunner.train_step`.
Source: https://github.com/microsoft/SpareNet/issues/12"""
import torch
import torch.nn as nn


class AverageMeter:
    """Computes and stores the average and current value of several items."""

    def __init__(self, items=None):
        self.items = items
        self.n_items = 1 if items is None else len(items)
        self.reset()

    def reset(self):
        self._val = [0] * self.n_items
        self._sum = [0] * self.n_items
        self._count = [0] * self.n_items

    def update(self, values):
        if isinstance(values, list):
            for idx, v in enumerate(values):
                self._val[idx] = v
                self._sum[idx] += v
                self._count[idx] += 1
        else:
            self._val[0] = values
            self._sum[0] += values
            self._count[0] += 1

    def avg(self, idx):
        return self._sum[idx] / self._count[idx]


class CompletionNet(nn.Module):
    def __init__(self, n=8):
        super().__init__()
        self.coarse = nn.Linear(3, 3)
        self.refine = nn.Linear(3, 3)

    def forward(self, partial):
        coarse = self.coarse(partial)
        return coarse, self.refine(coarse)


class BaseRunner:
    def __init__(self):
        self.models = CompletionNet()
        self.optimizers = torch.optim.Adam(self.models.parameters(), lr=1e-3)
        self.loss = {}

    def train(self, loader):
        for items in loader:
            self.train_step(items)


class SpareNetRunner(BaseRunner):
    def __init__(self):
        super().__init__()
        self.losses = AverageMeter(["CoarseLoss", "RefineLoss"])

    def completion(self, data):
        coarse, refine = self.models(data["partial_cloud"])
        coarse_loss = (coarse - data["gtcloud"]).pow(2).mean()
        refine_loss = (refine - data["gtcloud"]).pow(2).mean()
        return coarse_loss + refine_loss, refine_loss, coarse_loss

    def train_step(self, data):
        _loss, refine_loss, coarse_loss = self.completion(data)
        self.models.zero_grad()
        _loss.backward()
        self.optimizers.step()

        self.loss["rec_loss"] = _loss
        self.losses.update([coarse_loss * 1000, refine_loss * 1000])  # expect: ADL023


def bug_shows():
    """After an epoch the meter's sums still carry a graph."""
    torch.manual_seed(0)
    runner = SpareNetRunner()
    loader = [{"partial_cloud": torch.randn(16, 3), "gtcloud": torch.randn(16, 3)} for _ in range(3)]
    runner.train(loader)
    return all(isinstance(s, torch.Tensor) and s.grad_fn is not None for s in runner.losses._sum)
