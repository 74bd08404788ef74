"""ALF added gradient accumulation (`grad_acc_steps`) to
`Algorithm.update_with_gradient`, which kept clearing the gradients at its
start, `self._optimizer.zero_grad()`, on every call, but stepped only every
`grad_acc_steps` calls: each step used the last micro-batch's gradient alone,
not the window's.  Nothing raises.  The fix clears only after a step (the
start of a window).
Buggy line: `self._optimizer.zero_grad()` in `Algorithm.update_with_gradient`.
Source: https://github.com/HorizonRobotics/alf/pull/1788"""
import torch
import torch.nn as nn


class Algorithm:
    def __init__(self, module, lr=0.1, grad_acc_steps=2):
        self._module = module
        self._optimizer = torch.optim.SGD(module.parameters(), lr=lr)
        self._grad_acc_steps = grad_acc_steps
        self._num_micro_batches = 0

    def compute_loss(self, batch):
        x, y = batch
        return ((self._module(x) - y) ** 2).mean()

    def update_with_gradient(self, loss):
        self._optimizer.zero_grad()  # expect: ADL018
        (loss / self._grad_acc_steps).backward()
        self._num_micro_batches += 1
        if self._num_micro_batches % self._grad_acc_steps == 0:
            self._optimizer.step()

    def train_iter(self, batches):
        for batch in batches:
            self.update_with_gradient(self.compute_loss(batch))


def bug_shows():
    """After one window of two micro-batches the weights differ from a step
    on the window's summed (averaged) gradient, written by hand."""
    torch.manual_seed(0)
    module = nn.Linear(3, 1)
    reference = nn.Linear(3, 1)
    reference.load_state_dict(module.state_dict())
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    Algorithm(module, lr=0.1, grad_acc_steps=2).train_iter(batches)

    loss = sum(((reference(x) - y) ** 2).mean() for x, y in batches) / 2
    grads = torch.autograd.grad(loss, list(reference.parameters()))
    with torch.no_grad():
        expected = [p - 0.1 * g for p, g in zip(reference.parameters(), grads)]
    return not all(torch.allclose(p, e) for p, e in zip(module.parameters(), expected))
