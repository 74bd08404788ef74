"""pinot's `TrainAndTest.run()` trains, then evaluates every saved state with
the metric functions and returns the results; the metrics are computed on the
network's outputs without `torch.no_grad()`, so each result still holds a
graph tensor.  The experiment script runs one `TrainAndTest` per parameter
set and appends each result to a list: every run's evaluation graph stays in
memory (memory grows far beyond the state dicts the issue expected).  The fix
returns `.item()`/`.detach()` values from the metrics.
Buggy line: `results.append(result)` in `run_experiments`.
Source: https://github.com/choderalab/pinot/issues/23"""
import copy

import torch
import torch.nn as nn


def rmse(net, g, y):
    return torch.sqrt(((net(g) - y) ** 2).mean())


class Train:
    def __init__(self, net, data, optimizer, n_epochs=2):
        self.net, self.data, self.optimizer, self.n_epochs = net, data, optimizer, n_epochs
        self.states = {}

    def train(self):
        for epoch in range(self.n_epochs):
            for g, y in self.data:
                self.optimizer.zero_grad()
                loss = ((self.net(g) - y) ** 2).sum()
                loss.backward()
                self.optimizer.step()
            self.states[epoch] = copy.deepcopy(self.net.state_dict())
        return self.net


class TrainAndTest:
    def __init__(self, net, data, optimizer, metrics=(rmse,), n_epochs=2):
        self.net, self.data, self.metrics = net, data, metrics
        self.train = Train(net, data, optimizer, n_epochs)

    def run(self):
        self.train.train()
        results = {metric.__name__: {} for metric in self.metrics}
        g, y = self.data[0]
        for state_name, state in self.train.states.items():
            self.net.load_state_dict(state)
            for metric in self.metrics:
                results[metric.__name__][state_name] = metric(self.net, g, y)
        return results


def run_experiments(param_dicts, data):
    results = []
    for param_dict in param_dicts:
        net = nn.Sequential(nn.Linear(4, param_dict["hidden"]), nn.ReLU(), nn.Linear(param_dict["hidden"], 1))
        optimizer = torch.optim.Adam(net.parameters(), lr=param_dict["lr"])
        train_and_test = TrainAndTest(net, data, optimizer)
        result = train_and_test.run()
        results.append(result)  # missed: ADL028
    return results


def bug_shows():
    """Every kept result still reaches its evaluation graph."""
    torch.manual_seed(0)
    data = [(torch.randn(5, 4), torch.randn(5, 1))]
    results = run_experiments([{"hidden": 8, "lr": 1e-3}, {"hidden": 4, "lr": 1e-2}], data)
    return all(value.grad_fn is not None for result in results for value in result["rmse"].values())
