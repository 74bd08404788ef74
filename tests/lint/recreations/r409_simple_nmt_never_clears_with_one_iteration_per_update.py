"""simple-nmt's maximum-likelihood engine clears the gradients at the start
of a window, `if engine.state.iteration % engine.config.iteration_per_update
== 1:`, and steps when the iteration count is a multiple of
`iteration_per_update`.  With `iteration_per_update == 1` (no accumulation)
the clearing test `i % 1 == 1` is never true: `zero_grad()` never runs and
every step applies the sum of all gradients so far.  The fix clears when
`iteration_per_update == 1` too (or clears after each step).  `Engine` below
stands for ignite's, which calls the process function once per batch.
Buggy line: `engine.optimizer.zero_grad()` in `MaximumLikelihoodEstimationEngine.train`.
Source: https://github.com/kh-kim/simple-nmt/pull/22"""
from types import SimpleNamespace

import torch
import torch.nn as nn


class Engine:
    def __init__(self, process_function):
        self._process_function = process_function
        self.state = SimpleNamespace(iteration=0)

    def run(self, data):
        for batch in data:
            self.state.iteration += 1
            self._process_function(self, batch)


class MaximumLikelihoodEstimationEngine(Engine):
    def __init__(self, func, model, crit, optimizer, config):
        self.model = model
        self.crit = crit
        self.optimizer = optimizer
        self.config = config
        super().__init__(func)

    @staticmethod
    def train(engine, mini_batch):
        engine.model.train()
        if engine.state.iteration % engine.config.iteration_per_update == 1:
            if engine.state.iteration > 1:
                engine.optimizer.zero_grad()  # missed: none

        x, y = mini_batch
        y_hat = engine.model(x)
        loss = engine.crit(y_hat, y)
        backward_target = loss.div(y.size(0)).div(engine.config.iteration_per_update)
        backward_target.backward()

        if engine.state.iteration % engine.config.iteration_per_update == 0 and engine.state.iteration > 0:
            torch.nn.utils.clip_grad_norm_(engine.model.parameters(), engine.config.max_grad_norm)
            engine.optimizer.step()
        return float(loss)


def bug_shows():
    """The second step applies the first batch's gradient again: the
    parameters differ from two plain SGD steps written by hand."""
    torch.manual_seed(0)
    model = nn.Linear(3, 4)
    reference = nn.Linear(3, 4)
    reference.load_state_dict(model.state_dict())
    crit = nn.CrossEntropyLoss(reduction="sum")
    config = SimpleNamespace(iteration_per_update=1, max_grad_norm=1e6)
    batches = [(torch.randn(2, 3), torch.tensor([0, 3])) for _ in range(2)]
    engine = MaximumLikelihoodEstimationEngine(
        MaximumLikelihoodEstimationEngine.train, model, crit, torch.optim.SGD(model.parameters(), lr=0.1), config)
    engine.run(batches)
    for x, y in batches:
        grads = torch.autograd.grad(crit(reference(x), y) / y.size(0), list(reference.parameters()))
        with torch.no_grad():
            for p, g in zip(reference.parameters(), grads):
                p -= 0.1 * g
    return not all(torch.allclose(a, b) for a, b in zip(model.parameters(), reference.parameters()))
