"""Ultralytics' trainer steps the optimizer only when `ni - last_opt_step >=
self.accumulate` batches have been backpropagated, and its `optimizer_step`
clears the gradients after each step.  It also called
`self.optimizer.zero_grad()` at the start of every epoch: the batches at the
end of an epoch that did not reach `accumulate` are backpropagated, then
thrown away before any step applies them.  Nothing raises.  The fix removes
the clear at the start of the epoch.
Buggy line: `self.optimizer.zero_grad()` at the start of the epoch in `_do_train`.
Source: https://github.com/ultralytics/ultralytics/pull/11217"""
import torch
import torch.nn as nn


class BaseTrainer:
    def __init__(self, model, accumulate=3, epochs=2, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.accumulate = accumulate
        self.epochs = epochs
        self.steps = 0

    def optimizer_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()
        self.steps += 1

    def _do_train(self, train_loader):
        nb = len(train_loader)
        last_opt_step = -1
        for epoch in range(self.epochs):
            self.model.train()
            self.optimizer.zero_grad()  # missed: ADL018
            for i, (x, y) in enumerate(train_loader):
                ni = i + nb * epoch
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                if ni - last_opt_step >= self.accumulate:
                    self.optimizer_step()
                    last_opt_step = ni


class RecordingTrainer(BaseTrainer):
    def __init__(self, model):
        super().__init__(model)
        self.applied = []

    def optimizer_step(self):
        self.applied.append(self.model.weight.grad.clone())
        super().optimizer_step()


def bug_shows():
    """The batch backpropagated last in the first epoch never reaches a step:
    the two steps apply less than the six batches before them computed."""
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    loader = [(torch.randn(4, 2), torch.randn(4, 1)) for _ in range(4)]
    computed = []
    model.weight.register_hook(lambda g: computed.append(g.clone()))
    trainer = RecordingTrainer(model)
    trainer._do_train(loader)
    return len(trainer.applied) == 2 and not torch.allclose(sum(trainer.applied), sum(computed[:6]))
