"""pytorch-golden-template runs training, validation and testing through
one pipeline base class: `_run_and_optimize_model(data)` runs the model,
computes the losses and, when the pipeline optimizes, steps.  The tester
inherits it with `optimize=False`, but "Testing mode was not using
no_grad(), which may cause potential problems"; the fix adds `with
torch.no_grad():` in the tester's `_run_and_optimize_model` (merged, labelled
bug).  Nothing raises.
Buggy line: `model_output = self.model(data)` when the tester runs.
Source: https://github.com/amjltc295/pytorch-golden-template/pull/66"""
import torch
import torch.nn as nn


class BasePipeline:
    def __init__(self, model, loss_functions, optimizer=None):
        self.model = model
        self.loss_functions = loss_functions
        self.optimizer = optimizer
        self.optimize = optimizer is not None
        self.outputs = []

    def _run_and_optimize_model(self, data):
        model_output = self.model(data["input"])  # the tester's missing no_grad itself is not reported (ADL031, opt-in, silent too)
        loss = sum(fn(model_output, data["target"]) for fn in self.loss_functions)
        if self.optimize:
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return model_output, loss

    def _iter_data(self, data_loader):
        total = 0.0
        for data in data_loader:
            model_output, loss = self._run_and_optimize_model(data)
            total += loss.item()
            self.outputs.append(model_output)  # expect: ADL028
        return total / len(data_loader)


class Trainer(BasePipeline):
    def run(self, data_loader):
        self.model.train()
        return self._iter_data(data_loader)


class Tester(BasePipeline):
    def __init__(self, model, loss_functions):
        super().__init__(model, loss_functions, optimizer=None)

    def run(self, data_loader):
        self.model.eval()
        return self._iter_data(data_loader)


def bug_shows():
    """The tester's saved outputs carry graphs."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    losses = [nn.MSELoss()]
    data = [{"input": torch.randn(3, 4), "target": torch.randn(3, 2)} for _ in range(2)]
    Trainer(model, losses, torch.optim.SGD(model.parameters(), lr=0.1)).run(data)
    tester = Tester(model, losses)
    tester.run(data)
    return all(out.grad_fn is not None for out in tester.outputs)
