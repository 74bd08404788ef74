"""ADL001's misses, by cause (docs/lint.md, "ADL001's misses, by cause (stop 44)").

* Alias: a bare-name copy (`out = inp`, `scaled = act`) is the same tensor under a
  second name: a write through either changes what an op saved of the other.  A
  same-file module whose forward writes its argument (through such a copy too) and
  then keeps it (`x = token; x += pos; x = self.transformer(x)`) keeps it at the
  call, so a second such call on the same tensor is found there (r29).
* Alias: a forward that returns `g = g.permute(...)` after `g = torch.sigmoid(...)`
  returns the saved output's memory (r646).
* Graph: a method of a same-file class called through a held instance
  (`self.se3.warp(pts, rot, trans)` with `self.se3 = SE3Field()` in `__init__`, or
  `sim.step(...)` after `sim = Simulator()`) is fed the graph its call passes (r99).

The programs in adl001_causes_programs/ were written and run under torch before
the rule was changed (b*: raise; ok*: run), b7/ok6/ok7 after the first two causes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from program_checks import run_as_module  # tests/lint/ is on sys.path
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

PROGRAMS = Path(__file__).parent / "adl001_causes_programs"
ADL001 = Selection(("ADL001",))


def _source(name: str) -> str:
    return next(PROGRAMS.glob(name + "_*.py")).read_text(encoding="utf-8")


def _found(source: str):
    return [(f.line, f.message) for f in lint_source(source, "prog.py", ADL001) if f.code == "ADL001"]


def _marked(source: str) -> list[int]:
    return [i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# ADL001")]


BUGGY = {
    "b1": ("`gate` is modified in place (`self.block` (its forward writes its argument in place))",
           "`torch.sigmoid`"),
    "b2": ("`act` is modified in place (`.mul_()` through `scaled`)", "`torch.tanh`"),
    "b3": ("`h` is modified in place (`.add_()`)", "MulBackward0 keeps this input"),
    "b4": ("`w` is modified in place (an augmented assignment)", "SigmoidBackward0 keeps its output"),
    "b5": ("`scale` is modified in place (an augmented assignment)", "`torch.exp`"),
    "b6": ("`throttle` is modified in place (an indexed assignment)", "`torch.sigmoid`"),
    "b7": ("`feats` is modified in place (`self.reg` (its forward writes its argument in place))",
           "`F.linear`"),
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


# the hand-written correct line of each program whose finding has an unsafe fix
HAND_WRITTEN = {
    "b3": ("h.add_(1.0)  # ADL001", "h = h + 1.0"),
    "b4": ("w *= 2.0  # ADL001", "w = w * 2.0"),
    "b5": ("scale += self.eps  # ADL001", "scale = scale + self.eps"),
    "b6": ("throttle[:, 0] = 0.0  # ADL001", "throttle = torch.cat([torch.zeros_like(throttle[:, :1]), "
                                             "throttle[:, 1:]], dim=1)"),
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
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert torch.allclose(a, b, atol=1e-6, rtol=1e-5)


def test_module_call_and_alias_findings_offer_no_fix():
    # b1 / b7: the write is inside the callee's forward, the call has nothing to rewrite;
    # b2: a write through a second name gets none (as a write through `.data`)
    for name in ("b1", "b2", "b7"):
        findings = [f for f in lint_source(_source(name), "prog.py", ADL001) if f.code == "ADL001"]
        assert findings and all(f.fix is None for f in findings)


@pytest.mark.parametrize("name", ["ok1", "ok2", "ok3", "ok4", "ok5", "ok6", "ok7"])
def test_correct_near_twins_silent_and_running(name):
    source = _source(name)
    assert _found(source) == []
    run_as_module(source, name).run()


def test_b7_fixed_by_a_copy_per_head_gives_its_gradients():
    # ok6 is b7 with `feats.clone()` given to each head: the hand-written correct version
    grads = run_as_module(_source("ok6"), "ok6").run()
    assert all(torch.isfinite(g).all() for g in grads)


def test_a_method_name_defined_twice_in_the_file_is_no_evidence():
    # another class with a `step` method: `sim.step(...)` is not known to reach
    # Simulator.step by name alone, so b6 stays silent
    source = _source("b6") + "\n\nclass Other:\n    def step(self, state, action):\n        return state\n"
    assert _found(source) == []


def test_an_attribute_bound_twice_is_no_evidence():
    source = _source("b5").replace("        self.scaler = Scaler()\n",
                                   "        self.scaler = Scaler()\n"
                                   "        if dim > 8:\n            self.scaler = None\n")
    assert _found(source) == []
