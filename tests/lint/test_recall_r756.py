"""Causes worked on after the thirty-seventh held-out set (docs/lint.md, "A thirty-seventh
held-out set, written as real code is written (r756-r767)").

* ADL034 (r765): a loss rebuilt as a new tensor is reported when the constructor's argument
  still carries the graph, not only when it was cut before (`.item()`, `.detach()`, NumPy):
  `torch.tensor(loss, requires_grad=True)` of a loss summed with `loss += (...model...)` from
  `0` copies the values into a fresh leaf, its backward reaches no parameter and the step
  changes nothing.  A name carries the graph when it is known to, or when it was last bound
  to a number (or a graph value) and summed since with `+=`/`-=` (also `*=`, `/=`) of values
  that carry one, with gradients on.

The fresh shape (tests/lint/recall_r756_programs/bad_*) was written and run under torch before
the changed linter ran on it; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_r756_programs"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def test_a_loss_summed_from_zero_and_rebuilt_by_torch_tensor_trains_nothing():
    source = program_source(PROGRAMS, "bad_regression_trainer_epoch_loss_rebuilt")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "loss = torch.tensor(batch_loss / n"), "ADL034")]
    assert "copies from `batch_loss / n`, which carries the graph" in found[0][2]
    assert "`self.optimizer.step()`" in found[0][2]
    assert run_as_module(source, "bad_rebuilt").bug_shows()


def test_the_summed_loss_backpropagated_as_it_is_stays_silent():
    source = program_source(PROGRAMS, "ok_regression_trainer_epoch_loss_kept")
    assert _found(source) == []
    assert run_as_module(source, "ok_kept").trains()


def test_a_tensor_made_from_a_sum_of_items_for_logging_stays_silent():
    source = program_source(PROGRAMS, "ok_logged_sum_of_items_rebuilt_for_logging")
    assert _found(source) == []
    assert run_as_module(source, "ok_logged").trains()
