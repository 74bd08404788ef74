"""A Lightning pull request, "Clip before step": the optimisation loop ran
`closure -> on_before_optimizer_step -> optimizer.step -> log_grad_norm ->
clip_gradients`, so the clipping came after the update it was meant to
limit; the fix moves `clip_gradients` before `optimizer.step`.  Re-created as
a small hook-based training loop (`Loop.optimizer_step` with a closure,
`on_before_optimizer_step`, grad-norm logging and a `clip_gradients` helper)
keeping that order.  Nothing raises; each update uses the unclipped
gradients.
Buggy line: `self.clip_gradients(model)` after `optimizer.step()` (clips
gradients the step has already used).
Source: https://github.com/Lightning-AI/pytorch-lightning/pull/10248"""
import torch
import torch.nn as nn


class Loop:
    def __init__(self, gradient_clip_val=0.1):
        self.gradient_clip_val = gradient_clip_val
        self.logged = []

    def clip_gradients(self, model):
        torch.nn.utils.clip_grad_norm_(model.parameters(), self.gradient_clip_val)

    def log_grad_norm(self, model):
        norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
        self.logged.append(torch.stack(norms).norm().item())

    def on_before_optimizer_step(self, optimizer):
        pass

    def optimizer_step(self, model, optimizer, closure):
        closure()
        self.on_before_optimizer_step(optimizer)
        optimizer.step()
        self.log_grad_norm(model)
        self.clip_gradients(model)  # missed: ADL022

    def fit(self, model, batches, lr=1.0):
        optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        for x, y in batches:
            def closure():
                optimizer.zero_grad()
                loss = ((model(x) - y) ** 2).mean()
                loss.backward()
                return loss
            self.optimizer_step(model, optimizer, closure)


def bug_shows():
    """The update moved the weights by the full, unclipped gradient."""
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = torch.randn(4, 3), torch.randn(4, 1) * 100
    before = [p.detach().clone() for p in model.parameters()]
    Loop(gradient_clip_val=0.1).fit(model, [(x, y)], lr=1.0)
    step = torch.cat([(b - p.detach()).flatten() for b, p in zip(before, model.parameters())])
    return step.norm().item() > 0.1 + 1e-6
