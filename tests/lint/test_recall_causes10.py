"""Causes left open by r422-r495 (docs/lint.md, "Recall causes worked on again,
7 December (r422-r495)").

* ADL023, a running total written as the first-iteration idiom, a conditional
  expression (`total = loss if total is None else total + loss`): both branches
  keep the loss.  The loss may reach the backward through an alias bound in the
  sum's branch (`loss = losses`, then `loss.backward()`), and a binding of the
  total in the other branch of an `if` that goes on from the total itself
  (`total = tuple(map(sum, zip(total, parts)))`) does not start it again
  (RecBole's trainer, r487).
* ADL017, a tensor computed once in a module's `__init__` from one of its own
  parameters by an op that saves tensors for its backward (`self.length_scale =
  torch.exp(self.log_length_scale)`), read by the loss that a loop of the class
  backpropagates on every iteration: the second backward raises (MiniGP, r492).

Each cause: the plain form and fresh programs in other shapes (written before
the rule was run on them), buggy -> a finding at the line, near twins that are
correct silent, and the claim run with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import apply_edits


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "causes10.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "causes10.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ----- ADL023: the first-iteration sum as a conditional expression ----------------

FIRST_OR_SUM = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def train(model, optimizer, batches):
        total = None
        for x, y in batches:
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total = loss if total is None else total + loss
        return total
    """)
FIRST_OR_SUM_LINE = "total = loss if total is None else total + loss"

# fresh 1: the test the other way round, in a `while` loop of a method
FIRST_OR_SUM_WHILE = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Fitter:
        def __init__(self, net):
            self.net = net
            self.opt = torch.optim.SGD(net.parameters(), lr=0.05)
            self.criterion = nn.MSELoss()

        def fit(self, xs, ys, steps):
            running = None
            i = 0
            while i < steps:
                self.opt.zero_grad()
                err = self.criterion(self.net(xs[i]), ys[i])
                err.backward()
                self.opt.step()
                running = running + err if running is not None else err
                i += 1
            return running
    """)
FIRST_OR_SUM_WHILE_LINE = "running = running + err if running is not None else err"

# fresh 2: RecBole's shape: a tuple of losses summed by items in one branch, a
# single loss kept through an alias of the backpropagated name in the other
FIRST_OR_SUM_ALIAS = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def run_epoch(model, optimizer, loader, compute):
        epoch_loss = None
        for batch in loader:
            optimizer.zero_grad()
            out = compute(model, batch)
            if isinstance(out, tuple):
                objective = out[0] + out[1]
                parts = tuple(o.item() for o in out)
                epoch_loss = parts if epoch_loss is None else tuple(a + b for a, b in zip(epoch_loss, parts))
            else:
                objective = out
                epoch_loss = out if epoch_loss is None else epoch_loss + out
            objective.backward()
            optimizer.step()
        return epoch_loss


    def compute(model, batch):
        x, y = batch
        return F.mse_loss(model(x), y)
    """)
FIRST_OR_SUM_ALIAS_LINE = "epoch_loss = out if epoch_loss is None else epoch_loss + out"


@pytest.mark.parametrize("source, line", [
    (FIRST_OR_SUM, FIRST_OR_SUM_LINE),
    (FIRST_OR_SUM_WHILE, FIRST_OR_SUM_WHILE_LINE),
    (FIRST_OR_SUM_ALIAS, FIRST_OR_SUM_ALIAS_LINE),
])
def test_adl023_first_iteration_sum_is_reported(source, line):
    assert (_line_of(source, line), "ADL023") in _codes(source)


@pytest.mark.parametrize("source, old, new", [
    (FIRST_OR_SUM, "else total + loss", "else total + loss.item()"),
    (FIRST_OR_SUM, "total = loss if total is None else total + loss",
     "total = loss.detach() if total is None else total + loss.detach()"),
    # the sum restarts on every iteration: one iteration's graph
    (FIRST_OR_SUM, "optimizer.zero_grad()\n", "optimizer.zero_grad()\n        total = None\n"),
    # not the first-iteration idiom: the branches add different values
    (FIRST_OR_SUM, "total = loss if total is None else total + loss",
     "total = 0.0 if total is None else total + loss.item()"),
    (FIRST_OR_SUM_WHILE, "running + err if", "running + err.item() if"),
    (FIRST_OR_SUM_WHILE, "else err\n", "else err.item()\n"),
    # the other branch releases the total (`.item()`): it starts again from a number
    (FIRST_OR_SUM_ALIAS, "tuple(a + b for a, b in zip(epoch_loss, parts))", "epoch_loss.item()"),
    (FIRST_OR_SUM_ALIAS, "else epoch_loss + out", "else epoch_loss + out.detach()"),
])
def test_adl023_first_iteration_near_twins_are_silent(source, old, new):
    twin = _twin(source, old, new)
    assert not [c for c in _codes(twin) if c[1] == "ADL023"], twin


def test_adl023_first_iteration_fix_applied_is_silent():
    for source in (FIRST_OR_SUM, FIRST_OR_SUM_WHILE, FIRST_OR_SUM_ALIAS):
        findings = [f for f in lint_source(source, "causes10.py") if f.code == "ADL023"]
        fixed, count = apply_edits(source, findings, unsafe=True)
        assert count == 1
        assert not [f for f in lint_source(fixed, "causes10.py") if f.code == "ADL023"], fixed


def _batches(count=3, seed=1):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(4, 3, generator=g), torch.randn(4, 2, generator=g)) for _ in range(count)]


def test_adl023_first_iteration_claims_run_with_torch():
    """The buggy totals hold a graph; the fixed ones hold the same value and none."""
    for source, run in ((FIRST_OR_SUM, lambda ns, m, b: ns["train"](m, torch.optim.SGD(m.parameters(), lr=0.1), b)),
                        (FIRST_OR_SUM_ALIAS, lambda ns, m, b: ns["run_epoch"](
                            m, torch.optim.SGD(m.parameters(), lr=0.1), b, ns["compute"]))):
        findings = [f for f in lint_source(source, "causes10.py") if f.code == "ADL023"]
        fixed, _ = apply_edits(source, findings, unsafe=True)
        totals = []
        for program in (source, fixed):
            torch.manual_seed(0)
            model = torch.nn.Linear(3, 2)
            totals.append(run(_namespace(program), model, _batches()))
        buggy, good = totals
        assert buggy.grad_fn is not None and good.grad_fn is None
        assert torch.equal(buggy.detach(), good)
    ns = _namespace(FIRST_OR_SUM_WHILE)
    torch.manual_seed(0)
    batches = _batches()
    running = ns["Fitter"](torch.nn.Linear(3, 2)).fit([x for x, _ in batches], [y for _, y in batches], 3)
    assert running.grad_fn is not None


# ----- ADL017: a tensor taken once in `__init__` from a parameter ------------------

TAKEN_ONCE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Scaled(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.lin = nn.Linear(d, 1)
            self.raw_scale = nn.Parameter(torch.zeros(d))
            self.scale = F.softplus(self.raw_scale)

        def forward(self, x):
            return self.lin(x * self.scale)

        def fit(self, x, y, epochs=3):
            opt = torch.optim.SGD(self.parameters(), lr=0.1)
            for _ in range(epochs):
                opt.zero_grad()
                loss = F.mse_loss(self(x), y)
                loss.backward()
                opt.step()
            return loss.item()
    """)
TAKEN_ONCE_LINE = "self.scale = F.softplus(self.raw_scale)"

# fresh 1: a tensor method (`.exp()`), read through a chain of methods, in a `while` loop
TAKEN_ONCE_METHOD = textwrap.dedent("""
    import math
    import torch
    import torch.nn as nn


    class Gaussian(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.mu = nn.Parameter(torch.zeros(d))
            self.log_std = nn.Parameter(torch.zeros(d))
            self.std = self.log_std.exp()

        def log_prob(self, x):
            z = (x - self.mu) / self.std
            return -0.5 * z.pow(2).sum(-1) - torch.log(self.std).sum() - 0.5 * x.size(-1) * math.log(2 * math.pi)

        def nll(self, x):
            return -self.log_prob(x).mean()

        def train_steps(self, x, steps=3):
            opt = torch.optim.Adam(self.parameters(), lr=0.05)
            step = 0
            while step < steps:
                opt.zero_grad()
                objective = self.nll(x)
                objective.backward()
                opt.step()
                step += 1
    """)
TAKEN_ONCE_METHOD_LINE = "self.std = self.log_std.exp()"


@pytest.mark.parametrize("source, line", [
    (TAKEN_ONCE, TAKEN_ONCE_LINE),
    (TAKEN_ONCE_METHOD, TAKEN_ONCE_METHOD_LINE),
])
def test_adl017_taken_once_is_reported(source, line):
    assert (_line_of(source, line), "ADL017") in _codes(source)


# correct: a transpose saves nothing and is a view (the optimizer's update is seen)
TRANSPOSED_VIEW = _twin(TAKEN_ONCE, "self.scale = F.softplus(self.raw_scale)", "self.scale = self.raw_scale.t()")


@pytest.mark.parametrize("source, old, new", [
    # computed where it is used
    (TAKEN_ONCE, "x * self.scale", "x * F.softplus(self.raw_scale)"),
    # a constant on purpose
    (TAKEN_ONCE, "F.softplus(self.raw_scale)\n", "F.softplus(self.raw_scale).detach()\n"),
    # re-taken in the loop's method before each loss
    (TAKEN_ONCE, "            opt.zero_grad()\n",
     "            opt.zero_grad()\n            self.scale = F.softplus(self.raw_scale)\n"),
    # the loss is not computed from the object's methods
    (TAKEN_ONCE, "loss = F.mse_loss(self(x), y)", "loss = F.mse_loss(self.lin(x), y)"),
    # taken again on every call of the method that reads it
    # a parameter that does not require grad: the op records no graph
    (TAKEN_ONCE, "nn.Parameter(torch.zeros(d))", "nn.Parameter(torch.zeros(d), requires_grad=False)"),
    (TAKEN_ONCE_METHOD, "    def log_prob(self, x):\n",
     "    def log_prob(self, x):\n        self.std = self.log_std.exp()\n"),
])
def test_adl017_taken_once_near_twins_are_silent(source, old, new):
    twin = _twin(source, old, new)
    assert not [c for c in _codes(twin) if c[1] == "ADL017"], twin


def test_adl017_view_that_saves_nothing_is_silent():
    assert not [c for c in _codes(TRANSPOSED_VIEW) if c[1] == "ADL017"]


def test_adl017_taken_once_claims_run_with_torch():
    """The buggy programs raise on the second backward; computed where used, the
    training equals SGD written by hand."""
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    for source, run in ((TAKEN_ONCE, lambda ns: ns["Scaled"](3).fit(x, y)),
                        (TAKEN_ONCE_METHOD, lambda ns: ns["Gaussian"](3).train_steps(x))):
        torch.manual_seed(0)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            run(_namespace(source))
    fixed = _twin(TAKEN_ONCE, "x * self.scale", "x * F.softplus(self.raw_scale)")
    torch.manual_seed(0)
    model = _namespace(fixed)["Scaled"](3)
    reference = [p.detach().clone().requires_grad_(True) for p in (model.lin.weight, model.lin.bias, model.raw_scale)]
    last = model.fit(x, y)
    w, b, raw = reference
    for _ in range(3):
        loss = torch.nn.functional.mse_loss(torch.nn.functional.linear(x * torch.nn.functional.softplus(raw), w, b), y)
        gw, gb, graw = torch.autograd.grad(loss, (w, b, raw))
        with torch.no_grad():
            w.add_(gw, alpha=-0.1)
            b.add_(gb, alpha=-0.1)
            raw.add_(graw, alpha=-0.1)
    assert last == loss.item()
    assert torch.equal(model.raw_scale.detach(), raw.detach())
    assert torch.equal(model.lin.weight.detach(), w.detach())
    # the transpose twin runs, and its backward sees the updated parameter
    torch.manual_seed(0)
    _namespace(TRANSPOSED_VIEW)["Scaled"](1).fit(torch.randn(5, 1), y)
