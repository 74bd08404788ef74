"""ADL019: a value computed before the loop from a leaf that requires grad, by an op that saves a
tensor for backward, and backpropagated in every iteration (a learned initial state, `h0 =
torch.tanh(start)`). The first backward frees what the op saved; the second fails.

Both bad programs (tests/lint/adl019_leaf_programs/bad_*) were written and run under torch before
the rule knew this link: they raise, and the linter at 8ef97b78 said nothing. The near twins
(ok_*) run and stay silent: the value made in the loop, an op that saves nothing (`bias + 1.0`),
and a value detached before the loop."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "adl019_leaf_programs"


def _findings(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def _main(name: str):
    spec = importlib.util.spec_from_file_location(name, PROGRAMS / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


@pytest.mark.parametrize("name, value, backward", [
    ("bad_learned_initial_state_before_loop", "h0 = torch.tanh(start)", "loss.backward()"),
    ("bad_log_scale_exponentiated_before_epochs", "scale = log_scale.exp()", "loss.backward()"),
])
def test_a_value_saved_from_a_leaf_before_the_loop_is_found_and_fails(name, value, backward):
    source = program_source(PROGRAMS, name)
    found = _findings(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, backward), "ADL019")]
    bound = value.split(" = ")[0]
    assert f"`{bound}` (line {line_starting(source, value)}) is computed once, before the loop" in found[0][2]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _main(name)()


@pytest.mark.parametrize("name", [
    "ok_learned_initial_state_inside_loop",
    "ok_offset_added_before_epochs",
    "ok_scale_detached_before_epochs",
])
def test_near_twins_run_and_are_silent(name):
    assert _findings(program_source(PROGRAMS, name)) == []
    _main(name)()


def test_the_help_computed_inside_the_loop_trains_as_the_near_twin():
    """Moving `h0 = torch.tanh(start)` into the loop, as the message says, gives the near twin's
    parameters exactly."""
    bad = program_source(PROGRAMS, "bad_learned_initial_state_before_loop")
    fixed = bad.replace("    h0 = torch.tanh(start)\n    for step in range(steps):\n",
                        "    for step in range(steps):\n        h0 = torch.tanh(start)\n")
    assert fixed != bad and _findings(fixed) == []
    namespace = {"__name__": "fixed"}
    exec(compile(fixed, "fixed.py", "exec"), namespace)
    assert namespace["main"]().equal(_main("ok_learned_initial_state_inside_loop")())
