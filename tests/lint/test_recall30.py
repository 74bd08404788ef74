"""Recall cause of r661-r672 worked on (docs/lint.md, "A thirtieth held-out
set, measured once (r661-r672)").

* ADL020 (r667): a tensor marked `requires_grad=True` and then converted with a
  dtype given besides the device (`.to(device=d, dtype=torch.float64)`,
  `.to(d, torch.float64)`) is a copy, a non-leaf, whenever the dtype differs
  from the factory's: its `.grad` stays None.  Before, only the first
  positional argument of `.to(...)` was read, so the device hid the dtype.
  Unknown source or target dtype stays silent.

The fresh shape (tests/lint/recall30_programs/, written and run under torch
before the linter ran on it): the finding at its line, raising under torch;
the help applied gives the hand-written gradient-descent result; correct
near twins silent."""

from __future__ import annotations

from pathlib import Path

import torch

from autograd_doctor.lint import lint_source

PROGRAMS = Path(__file__).parent / "recall30_programs"
RECREATIONS = Path(__file__).parent / "recreations"


def _load_source(source: str, name: str):
    module = type(torch)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def _program(name: str):
    path = next(PROGRAMS.glob(name + "_*.py"))
    return path.read_text(encoding="utf-8")


def _found(source: str, code: str = "ADL020"):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_weights_cast_with_device_and_dtype_found_at_the_grad_read():
    source = _program("b2")
    found = _found(source)
    assert [line for line, _ in found] == [_line_of(source, "w -= lr * w.grad")]
    message = found[0][1]
    assert "`w.grad` stays None" in message and "`.to()` on line 11" in message
    assert "w = w.to(X.device, dtype=torch.float64).detach().clone().requires_grad_()" in message
    try:
        _load_source(source, "b2").run()
    except TypeError as error:
        assert "NoneType" in str(error)
    else:
        raise AssertionError("b2 should raise")


def test_the_help_applied_gives_the_hand_written_descent():
    source = _program("b2")
    fixed = source.replace("w = w.to(X.device, dtype=torch.float64)\n",
                           "w = w.to(X.device, dtype=torch.float64).detach().clone().requires_grad_()\n")
    fixed = fixed.replace("            w -= lr * w.grad\n", "            w -= lr * w.grad\n            w.grad.zero_()\n")
    assert fixed != source and not _found(fixed)
    got = _load_source(fixed, "b2_fixed").run()
    torch.manual_seed(0)
    X = torch.randn(20, 3, dtype=torch.float64)
    y = (X[:, 0] > 0).double()
    w = torch.zeros(3, dtype=torch.float64)
    for _ in range(3):
        p = torch.sigmoid(X @ w)
        w = w - 0.5 * X.T @ (p - y) / len(y)  # d/dw of the mean binary cross-entropy
    assert torch.allclose(got.detach(), w)


def test_correct_twins_are_silent_and_run():
    for name in ("ok1", "ok2", "ok3", "ok4"):
        source = _program(name)
        assert not _found(source), name
        _load_source(source, name).run()


def test_r667_found_at_the_grad_read():
    path = next(RECREATIONS.glob("r667_*.py"))
    source = path.read_text(encoding="utf-8")
    assert [line for line, _ in _found(source)] == [_line_of(source, "assert torch.allclose(x.grad")]
