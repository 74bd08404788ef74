"""ADL001: a saved output reached through a module container's result (issue 16, r705).

* `corr = self.encoders[1](x)[0]`: item ``k`` (a constant) of what an element of a
  container of modules of a same-file class returns is what that class's `forward`
  gives back at position ``k`` of its tuple (statements.module_result_item_save).
* `for layer in self.layers: x = layer(x)`, then `return x, residuals`: a name bound
  once in a top-level loop over a container of layers the class built holds the last
  layer's output after the loop (summaries._layer_loop_bindings); a forward's
  parameter re-bound that way (`x = layer(x)`) counts too.

The programs in adl001_containers_programs/ were written and run under torch before
the rule was changed (b*: raise; ok*: run and stay silent).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from program_checks import run_as_module  # tests/lint/ is on sys.path
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

PROGRAMS = Path(__file__).parent / "adl001_containers_programs"
ADL001 = Selection(("ADL001",))


def _source(name: str) -> str:
    return next(PROGRAMS.glob(name + "_*.py")).read_text(encoding="utf-8")


def _found(source: str):
    return [(f.line, f.message) for f in lint_source(source, "prog.py", ADL001) if f.code == "ADL001"]


def _marked(source: str) -> list[int]:
    return [i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# ADL001")]


BUGGY = {
    "b1": ("`feat` is modified in place (an augmented assignment)", "ReluBackward0 keeps its output"),
    "b2": ("`out` is modified in place (an augmented assignment)", "ReluBackward0 keeps its output"),
}


@pytest.mark.parametrize("name", sorted(BUGGY))
def test_buggy_shape_found_at_its_line_and_raises(name):
    source = _source(name)
    found = _found(source)
    assert [line for line, _ in found] == _marked(source)
    for text in BUGGY[name]:
        assert text in found[0][1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, name).run()


# the hand-written correct line of each buggy program
HAND_WRITTEN = {
    "b1": ("feat += bias  # ADL001", "feat = feat + bias"),
    "b2": ("out *= 2.0  # ADL001", "out = out * 2.0"),
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_fix_applied_is_silent_and_gives_the_hand_written_gradients(name):
    source = _source(name)
    text, count = fix_source(source, lambda t: lint_source(t, "prog.py", ADL001), unsafe=True)
    assert count > 0 and _found(text) == []
    old, new = HAND_WRITTEN[name]
    assert old in source
    got = run_as_module(text, name + "_fixed").run()
    want = run_as_module(source.replace(old, new), name + "_hand").run()
    assert len(got) == len(want) > 0
    for a, b in zip(got, want):
        assert torch.equal(a, b)


@pytest.mark.parametrize("name", ["ok1", "ok2", "ok3", "ok4"])
def test_correct_near_twins_silent_and_running(name):
    source = _source(name)
    assert _found(source) == []
    run_as_module(source, name).run()


def test_a_container_of_two_classes_is_no_evidence():
    # the entries come from two constructors: which forward `self.stages[0]` runs is unknown
    source = _source("b1").replace(
        "nn.ModuleList([Stage(3, 6), Stage(6, 6)])", "nn.ModuleList([Stage(3, 6), Other()])") \
        + "\n\nclass Other(nn.Module):\n    def forward(self, x):\n        return x, x\n"
    assert _found(source) == []


def test_a_loop_that_may_leave_early_is_no_evidence():
    # after `break` the name may hold an earlier layer's output, or the argument
    source = _source("b2").replace("            h = layer(h)\n",
                                   "            h = layer(h)\n            if h.shape[-1] == 8:\n"
                                   "                break\n")
    assert _found(source) == []


def test_an_item_the_forward_does_not_give_back_saved_is_no_evidence():
    # item [0] of b2's blocks is `h * 0.5`: MulBackward0 with a number keeps nothing of it
    source = _source("b2").replace("self.blocks[i](x)[1]", "self.blocks[i](x)[0]")
    assert _found(source) == []
