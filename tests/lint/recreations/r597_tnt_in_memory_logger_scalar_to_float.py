"""torchtnt (PyTorch's TNT training framework): the in-memory logger turns
each logged scalar into a Python float with a helper, `scalar_to_float`,
which for a tensor goes through numpy.  An integration test with a full
training loop logged the step's loss tensor as it was (still requiring grad)
and the logger failed with "Can't call numpy() on Tensor that requires grad.
Use tensor.detach().numpy() instead."  The fix adds `.detach()` in
`scalar_to_float()`.  Re-created as the framework's pieces: the helper, an
`InMemoryLogger` with `log(name, data, step)`, and a train step that logs
its loss before calling backward.  Raises at the first log.
Buggy line: `return float(scalar.cpu().numpy().item())` in `scalar_to_float`
(no detach before numpy).
Source: https://github.com/meta-pytorch/tnt/pull/551"""
from collections import OrderedDict

import torch
import torch.nn as nn


def scalar_to_float(scalar):
    if isinstance(scalar, float):
        return scalar
    if isinstance(scalar, torch.Tensor):
        if scalar.numel() != 1:
            raise ValueError(f"Scalar tensor must contain a single item, {scalar.numel()} given.")
        return float(scalar.cpu().numpy().item())  # expect: ADL036
    return float(scalar)


class InMemoryLogger:
    def __init__(self):
        self._log_buffer = OrderedDict()

    def log(self, name, data, step):
        self._log_buffer.setdefault(step, {})[name] = scalar_to_float(data)


class Unit:
    def __init__(self, module, logger):
        self.module = module
        self.optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        self.logger = logger
        self.step = 0

    def train_step(self, batch):
        x, y = batch
        loss = nn.functional.mse_loss(self.module(x), y)
        self.logger.log("loss", loss, self.step)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.step += 1


def run():
    torch.manual_seed(0)
    unit = Unit(nn.Linear(4, 1), InMemoryLogger())
    for _ in range(3):
        unit.train_step((torch.randn(8, 4), torch.randn(8, 1)))
