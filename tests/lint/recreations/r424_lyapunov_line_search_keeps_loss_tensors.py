"""neural-network-lyapunov trains a Lyapunov function with steepest descent
and a backtracking line search.  The line search evaluates the loss through a
closure; the closure computes the loss, appends it to `losses` and returns
it.  Every evaluation, taken with gradients on, appends a tensor with its
graph: the list keeps the graph of every evaluation of the run, and memory
grows with the iterations (the PR: "closure should return only loss, and
losses list only stores the float value, not the tensor").
Buggy line: `losses.append(loss)` in the closure of `train_line_search`.
Source: https://github.com/StanfordASL/neural-network-lyapunov/pull/140"""
import torch
import torch.nn as nn


class LyapunovHybridSystem(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))

    def lyapunov_value(self, x):
        return self.relu(x).squeeze(-1) + 0.1 * x.pow(2).sum(-1)


class TrainLyapunov:
    def __init__(self, system):
        self.system = system
        self.max_iterations = 3

    def total_loss(self, x, x_next):
        v = self.system.lyapunov_value(x)
        v_next = self.system.lyapunov_value(x_next)
        return torch.relu(v_next - v + 0.01 * x.norm(dim=-1)).mean()

    def train_line_search(self, x, x_next, lr=0.1):
        params = list(self.system.parameters())
        losses = []

        def closure():
            loss = self.total_loss(x, x_next)
            losses.append(loss)  # expect: ADL023
            return loss

        for _ in range(self.max_iterations):
            for p in params:
                p.grad = None
            loss = closure()
            loss.backward()
            step = lr
            with torch.no_grad():
                start = [p.detach().clone() for p in params]
            for _ in range(3):
                with torch.no_grad():
                    for p, p0 in zip(params, start):
                        p.copy_(p0 - step * p.grad)
                if closure() < loss:
                    break
                step *= 0.5
        return losses


def bug_shows():
    """The run's list of losses carries the graph of each evaluation."""
    torch.manual_seed(0)
    trainer = TrainLyapunov(LyapunovHybridSystem())
    x = torch.randn(16, 2)
    losses = trainer.train_line_search(x, 0.9 * x)
    return len(losses) > 3 and all(loss.grad_fn is not None for loss in losses)
