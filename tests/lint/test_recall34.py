"""Causes worked on after the thirty-fourth held-out set (docs/lint.md, "A
thirty-fourth held-out set, written as real code is written (r701-r712)").

* ADL003 (r704, r712): optimizers kept one per element of a container of modules,
  paired by position -- `optimizerDs[i] = Adam(discriminators[i].parameters())`, or
  `optimizers = [Adam(m.parameters()) for m in models]` -- step the same-index element:
  `optimizerDs[i].step()` updates `discriminators[i]`, and a value computed by calling
  `discriminators[i](...)` earlier in the same iteration of the loop binding `i` was
  built from the old weights.  Also list displays paired position by position
  (`optimizers = [opt1, opt2]` after `models = [model1, model2]`, each `optK` over
  `modelK` alone; Fed_ABIDE's `federated_MoE.py`, found by the precision guard).
* ADL023 (r707): an in-place add of the backpropagated loss, `total.add_(loss)`, is a
  sum like `total += loss`; so is `stats.device_stat("loss").add_(loss)` when the
  object is built before the loop from a class of the file whose method returns a
  tensor the object keeps (`return self.device_stats[name]`).

Each fresh shape (tests/lint/recall34_programs/bad_*) was written and run under
torch before the changed rule ran on it; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall34_programs"


def _found(source: str, code: str):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


# ADL003 ----------------------------------------------------------------------------

def test_step_of_an_optimizer_in_a_list_before_backward_through_its_critic_is_found():
    source = program_source(PROGRAMS, "bad_critics_in_lists_step_before_actor_backward")
    found = _found(source, "ADL003")
    assert [line for line, _ in found] == [line_starting(source, "self.critic_optims[k].step()")]
    assert "`self.critics[k]`" in found[0][1] and "`q` (line 30)" in found[0][1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad3").run()


def test_backward_before_the_element_step_is_silent_and_runs():
    source = program_source(PROGRAMS, "ok_critics_in_lists_actor_backward_before_step")
    assert _found(source, "ADL003") == []
    run_as_module(source, "ok3a").run()


def test_value_of_another_element_is_silent_and_runs():
    source = program_source(PROGRAMS, "ok_critics_in_lists_other_element_value")
    assert _found(source, "ADL003") == []
    run_as_module(source, "ok3b").run()


def test_step_of_an_optimizer_in_a_list_display_paired_with_the_modules_is_found():
    source = program_source(PROGRAMS, "bad_generators_in_list_display_step_before_backward")
    found = _found(source, "ADL003")
    assert [line for line, _ in found] == [line_starting(source, "opts[k].step()")]
    assert "`gens[k]`" in found[0][1] and "`fake` (line 20)" in found[0][1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad3c").run()


def test_list_display_in_another_order_is_silent_and_runs():
    source = program_source(PROGRAMS, "ok_generators_in_list_display_other_order")
    assert _found(source, "ADL003") == []
    run_as_module(source, "ok3c").run()


# ADL023 ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, line_start", [
    ("bad_logger_meter_add_loss", 'logger.meter("loss").add_(loss)'),
    ("bad_running_total_add_loss", "running.add_(loss)"),
])
def test_in_place_add_of_the_loss_is_a_sum(name, line_start):
    source = program_source(PROGRAMS, name)
    found = _found(source, "ADL023")
    assert [line for line, _ in found] == [line_starting(source, line_start)]
    assert "sums `loss`" in found[0][1]
    assert run_as_module(source, name).bug_shows()  # the kept sum is attached to the graph


def test_in_place_add_of_the_detached_loss_is_silent():
    source = program_source(PROGRAMS, "ok_logger_meter_add_detached_loss")
    assert _found(source, "ADL023") == []
    logger = run_as_module(source, "ok23a").run()
    assert logger.meter("loss").grad_fn is None


def test_in_place_add_into_a_fresh_tensor_is_silent():
    source = program_source(PROGRAMS, "ok_logger_meter_returns_fresh_tensor")
    assert _found(source, "ADL023") == []
    logger = run_as_module(source, "ok23b").run()
    assert all(v.grad_fn is None for v in logger.meters.values())
