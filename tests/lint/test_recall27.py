"""Recall causes of r632-r645 (docs/lint.md, "A twenty-eighth held-out set,
written as real code is written (r632-r645)").

* ADL038 (r642, r643): a same-file function that differentiates a value it
  computes (`loss.backward()`, `torch.autograd.grad(out, ...)`) is called
  inside a `torch.no_grad()` / `torch.inference_mode()` block; there the value
  has no graph and the call raises.  No earlier rule's scope fits (ADL031 and
  ADL033 are about evaluation that keeps gradients on, the opposite hazard).

The re-creation's form and a fresh shape (written before the rule was run on
it), buggy -> the finding at its line with its help and raising under torch,
the suggested change (`torch.enable_grad()` around the call) -> the values of
a hand-written version, correct near twins silent."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _found(source: str, code: str = "ADL038"):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


def _run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<prog>", "exec"), namespace)
    return namespace


VALIDATE = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def contractive_loss(model, x, y, weight=0.1):
        x = x.clone().requires_grad_(True)
        out = model(x)
        (jac,) = torch.autograd.grad(out.sum(), x, create_graph=True)
        return F.mse_loss(out, y) + weight * jac.pow(2).sum(dim=1).mean()


    def validate(model, batches):
        total = 0.0
        with torch.no_grad():
            for x, y in batches:
                total += contractive_loss(model, x, y).item()
        return total / len(batches)


    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    result = validate(model, batches)
""")

# A fresh shape: a method of a trainer, inference_mode, the physics residual of a
# model's output computed in another method of the class, backward() on it.
TRAINER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class PhysicsTrainer:
        def __init__(self):
            self.net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
            self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.01)

        def residual_step(self, t):
            t = t.clone().requires_grad_(True)
            u = self.net(t)
            du = torch.autograd.grad(u.sum(), t, create_graph=True)[0]
            residual = ((du + u) ** 2).mean()
            residual.backward()
            return residual.item()

        def evaluate(self, points):
            scores = []
            with torch.inference_mode():
                for t in points:
                    scores.append(self.residual_step(t))
            return scores


    torch.manual_seed(0)
    result = PhysicsTrainer().evaluate([torch.rand(5, 1) for _ in range(2)])
""")


@pytest.mark.parametrize("source, call, mode, what", [
    (VALIDATE, "total += contractive_loss(model, x, y).item()", "no_grad", "torch.autograd.grad()"),
    (TRAINER, "scores.append(self.residual_step(t))", "inference_mode", "torch.autograd.grad()"),
])
def test_call_under_grad_off_of_a_differentiating_function_is_found(source, call, mode, what):
    found = _found(source)
    assert [line for line, _ in found] == [_line_of(source, call)]
    message = found[0][1]
    assert f"under `torch.{mode}()`" in message and what in message
    assert "element 0 of tensors does not require grad" in message and "torch.enable_grad()" in message
    with pytest.raises(RuntimeError, match="does not require grad"):
        _run(source)


def test_enable_grad_around_the_call_gives_the_hand_written_value():
    fixed = _twin(VALIDATE, "            total += contractive_loss(model, x, y).item()",
                  "            with torch.enable_grad():\n"
                  "                total += contractive_loss(model, x, y).item()")
    assert _found(fixed) == []
    ns = _run(fixed)
    model, torch_ = ns["model"], torch
    torch_.manual_seed(0)
    expected = 0.0
    for x, y in ns["batches"]:
        x = x.clone().requires_grad_(True)
        out = model(x)
        (jac,) = torch_.autograd.grad(out.sum(), x, create_graph=True)
        expected += (torch_.nn.functional.mse_loss(out, y) + 0.1 * jac.pow(2).sum(dim=1).mean()).item()
    assert ns["result"] == pytest.approx(expected / len(ns["batches"]))


@pytest.mark.parametrize("old, new", [
    # called with gradients on
    ("    with torch.no_grad():\n        for x, y in batches:\n            total += contractive_loss(model, x, y).item()",
     "    for x, y in batches:\n        total += contractive_loss(model, x, y).item()"),
    # gradients turned back on inside the function
    ("    x = x.clone().requires_grad_(True)\n    out = model(x)",
     "    x = x.clone().requires_grad_(True)\n    with torch.enable_grad():\n        out = model(x)"),
    # the differentiation only under a test of the mode
    ("    (jac,) = torch.autograd.grad(out.sum(), x, create_graph=True)\n    return",
     "    if torch.is_grad_enabled():\n        (jac,) = torch.autograd.grad(out.sum(), x, create_graph=True)\n"
     "    else:\n        jac = torch.zeros_like(x)\n    return"),
    # the differentiated value handed in (it may carry a graph made before the block)
    ("def contractive_loss(model, x, y, weight=0.1):\n    x = x.clone().requires_grad_(True)\n    out = model(x)\n",
     "def contractive_loss(model, x, y, weight=0.1, out=None):\n    x = x.clone().requires_grad_(True)\n"),
])
def test_correct_near_twins_are_silent(old, new):
    assert _found(_twin(VALIDATE, old, new)) == []


def test_a_name_defined_twice_is_not_resolved():
    twice = VALIDATE + textwrap.dedent("""
        class Other:
            def contractive_loss(self, model, x, y):
                return model(x).sum()
    """)
    assert _found(twice) == []


def test_a_trainer_method_under_inference_mode_raises_and_runs_when_moved_out():
    with pytest.raises(RuntimeError, match="does not require grad"):
        _run(TRAINER)
    fixed = _twin(TRAINER, "        with torch.inference_mode():\n", "        if True:\n")
    assert _found(fixed) == []
    assert len(_run(fixed)["result"]) == 2
