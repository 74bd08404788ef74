"""Causes worked on after the thirty-eighth held-out set (docs/lint.md, "A thirty-eighth
held-out set, written as real code is written (r776-r787)").

* ADL034 (r783): a loss rebuilt as a new leaf is reported when the constructor's argument is a
  plain number summed from cut values - a name last bound to a number and augmented since only
  with values cut from the graph (`E += (i + 1) * values[i]` of `values = values.detach().numpy()`,
  `total += reward * log_prob.item()`; an element of cut values is cut) - and when the new leaf
  is rebound to arithmetic of itself with Python numbers only (`loss = -loss`,
  `loss = -loss / len(rewards)`) before its backward.  A rebinding that adds anything else
  (`loss = loss + policy_loss`) is not followed.

The fresh shape (tests/lint/recall_r776_programs/bad_*) was written and run under torch before
the changed linter ran on it; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_r776_programs"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def test_a_sum_of_items_rebuilt_as_a_leaf_and_scaled_trains_nothing():
    source = program_source(PROGRAMS, "bad_reinforce_return_sum_of_items_rebuilt_then_scaled")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "total += reward * log_prob.item()"), "ADL034")]
    assert "made from `log_prob.item()`" in found[0][2]
    assert "`self.optimizer.step()`" in found[0][2]
    assert run_as_module(source, "bad_rebuilt_scaled").bug_shows()


def test_the_sum_kept_as_a_tensor_and_scaled_stays_silent():
    source = program_source(PROGRAMS, "ok_reinforce_return_kept_as_tensor_then_scaled")
    assert _found(source) == []
    assert run_as_module(source, "ok_kept_scaled").trains()


def test_a_rebuilt_baseline_added_to_a_loss_with_a_graph_stays_silent():
    source = program_source(PROGRAMS, "ok_rebuilt_baseline_added_to_a_graph_loss")
    assert _found(source) == []
    assert run_as_module(source, "ok_baseline_added").trains()
