"""Recall cause worked on after the thirty-first held-out set (docs/lint.md, "A
thirty-first held-out set, written as real code is written (r673-r678)").

* ADL003 (r672, an open cause of the thirtieth set): a method other than `step`
  of a same-file `torch.optim.Optimizer` subclass that writes the parameters in
  place (SAM's `first_step`: `for p in group["params"]: p.add_(e_w)`) is a step
  for ADL003 when it is called on an optimizer built from that class on known
  modules' parameters, and a backward after it goes through a graph built
  before it.  A write through `.data` bumps no version and does not count; the
  method is a step for ADL003 only (it may clear the gradients itself, so
  ADL018 does not count it), and the file defining the optimizer no longer
  silences this finding when the call is in the training code.

The fresh shape (tests/lint/recall31_programs/b1, an ASAM held by a trainer
class, written and run under torch before the rule ran on it): found at the
ascent step, raises; the fix applied (a second forward, ok1) gives the
hand-written SAM update; correct near twins silent."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograd_doctor.lint import lint_source
from program_checks import line_containing, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall31_programs"
ROOT = Path(__file__).parents[2]


def _source(name: str) -> str:
    return next(PROGRAMS.glob(name + "_*.py")).read_text(encoding="utf-8")


def _found(source: str, code: str = "ADL003"):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


def test_optimizer_method_step_before_second_backward_found():
    source = _source("b1")
    found = _found(source)
    assert [line for line, _ in found] == [line_containing(source, "self.minimizer.ascent_step()")]
    message = found[0][1]
    assert "`self.minimizer.ascent_step()` updates the parameters of `self.net`" in message
    assert "`logits`" in message
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "b1").run()


def _hand_written_sam(net, x, y, lr=0.1, rho=0.5, eta=0.01):
    params = list(net.parameters())
    grads = torch.autograd.grad(F.cross_entropy(net(x), y), params)
    with torch.no_grad():
        e_ws = [(p.abs() + eta) ** 2 * g * rho for p, g in zip(params, grads)]
        for p, e in zip(params, e_ws):
            p.add_(e)
    grads = torch.autograd.grad(F.cross_entropy(net(x), y), params)
    with torch.no_grad():
        for p, e, g in zip(params, e_ws, grads):
            p.sub_(e)
            p.sub_(lr * g)


def test_fix_applied_second_forward_is_silent_and_gives_the_sam_update():
    source = _source("ok1")
    assert _found(source) == []
    module = run_as_module(source, "ok1")
    trainer = module.Trainer()
    reference = copy.deepcopy(trainer.net)
    torch.manual_seed(1)
    x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
    trainer.train_step(x, y)
    _hand_written_sam(reference, x, y)
    for got, want in zip(trainer.net.parameters(), reference.parameters()):
        assert torch.allclose(got, want, atol=1e-6)


def test_data_writes_of_an_optimizer_method_are_not_a_step():
    source = _source("ok2")
    assert [f.code for f in lint_source(source, "prog.py")] == []
    run_as_module(source, "ok2").run()


def test_optimizer_method_is_not_a_step_for_the_zero_grad_rule():
    """SAM's `first_step(zero_grad=True)` clears the gradients itself."""
    for part in ("cases", "correct"):
        path = ROOT / "tests/bug_reports/fresh/set4" / part / "sam_second_pass_reuses_output.py"
        codes = [f.code for f in lint_source(path.read_text(encoding="utf-8"), str(path))]
        assert "ADL018" not in codes


def test_method_of_a_class_that_is_not_an_optimizer_is_not_a_step():
    source = _source("b1").replace("class ASAM(Optimizer):", "class ASAM:").replace(
        "        super().__init__(params, dict(rho=rho, eta=eta, **kwargs))\n",
        "        self.param_groups = [dict(params=list(params), rho=rho, eta=eta)]\n        self.state = {}\n")
    assert _found(source) == []
