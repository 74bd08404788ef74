"""ADL019's misses, by cause (docs/lint.md, "ADL019's misses, by cause (stop 44)").

* A module's state carried across its forward calls: a same-file module whose
  forward re-binds `self.<state>` from its previous value without `.detach()`
  (`out, self.hidden_state = self.layer(x, self.hidden_state)`, a spiking
  neuron's `self.v = self.v + (x - self.v) / tau`), run by the network a loop
  calls and backpropagates in every iteration, with nothing in the loop that may
  reset the state (r304, r488).
* ADL017 (stop 45): a state the forward re-binds to a detached value before
  re-binding it from itself is no state carried with its graph (ok6, ok8, ok9);
  a copy that keeps the graph (`h.clone()`, b4) is still reported.

The programs in adl019_causes_programs/ were written and run under torch before
the rule was run on them (b*: raise "Trying to backward through the graph a
second time"; ok*: run).  ok1-ok3 are b1-b3 with the reset or detach the help
asks for applied.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection

PROGRAMS = Path(__file__).parent / "adl019_causes_programs"


def _source(name: str) -> str:
    return next(PROGRAMS.glob(name + "_*.py")).read_text(encoding="utf-8")


def _run(source: str, name: str) -> None:
    module = type(torch)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    module.run()


def _findings(source: str, codes=("ADL019",)):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py", Selection(codes))]


def _marked(source: str) -> list[int]:
    return [i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# ADL019")]


@pytest.mark.parametrize("name, state", [("b2", "self.m"), ("b3", "self.state")])
def test_carried_module_state_is_found_at_the_backward(name, state):
    source = _source(name)
    found = _findings(source)
    assert [line for line, _, _ in found] == _marked(source)
    message = found[0][2]
    assert f"keeps `{state}`" in message and "without `.detach()`" in message
    assert "detach (or reset)" in message
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _run(source, name)


def test_state_reported_once_where_adl017_reports_it():
    # b1's state is re-bound by a GRU cell and bound nowhere else: ADL017 reports it
    # where it is kept, and ADL019 stays silent at the backward (one finding per bug)
    source = _source("b1")
    found = _findings(source, ("ADL017", "ADL019"))
    assert [(line, code) for line, code, _ in found] == [(18, "ADL017")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _run(source, "b1")


@pytest.mark.parametrize("name", ["ok1", "ok2", "ok3", "ok4", "ok5", "ok6", "ok7", "ok8", "ok9"])
def test_near_twins_run_and_stay_silent(name):
    source = _source(name)
    _run(source, name)
    assert _findings(source) == []


@pytest.mark.parametrize("name", ["ok6", "ok8", "ok9"])
def test_state_detached_earlier_in_the_forward_is_no_adl017(name):
    # the forward re-binds the state to a detached value before re-binding it from
    # itself: `tuple(h.detach() for h in self.hidden)` under `if ... is not None:`
    # (ok6), `self.h.detach()` in the `else` of `if self.h is None:` (ok8), a
    # same-file helper every return of which detaches (ok9)
    source = _source(name)
    _run(source, name)
    assert _findings(source, ("ADL017", "ADL019")) == []


def test_state_copied_not_detached_is_still_adl017():
    # `tuple(h.clone() for h in self.hidden)` keeps the graph: still reported, once
    source = _source("b4")
    found = _findings(source, ("ADL017", "ADL019"))
    assert [(line, code) for line, code, _ in found] == [(_marked_as(source, "ADL017"), "ADL017")]
    assert "`self.hidden` is given a tensor that carries this call's graph" in found[0][2]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _run(source, "b4")


def _marked_as(source: str, code: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# " + code))
