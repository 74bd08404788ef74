"""Set AW (docs/lint.md, "A fifty-first held-out check: set AW"): the false cause of
its first run fixed here, with the false shape (silent), a second false shape
written before the change ran on it, real shapes of the same rule still found, and
a torch check.  None of the shapes is a copy of the set's code:

- ADL038 in gordicaleksa/pytorch-GAT (https://github.com/gordicaleksa/pytorch-GAT,
  `training_script_cora.py`, `training_script_ppi.py`): the epoch function a factory
  returns runs `loss.backward()` only under `if phase == LoopPhase.TRAIN:`, and the
  validation call under `torch.no_grad()` passes `phase=LoopPhase.VAL`; `LoopPhase`
  is an `enum.Enum` of another project file, star-imported, whose members have
  distinct values, so that call never reaches the backward.  Only bare flag tests
  (`if train:`) were read against the call's constant.
"""

from __future__ import annotations

import enum
import os

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, filename="<string>", select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename=filename, selection=Selection(select=select))
            if f.code != "ADL000"]


def _adl038(source, filename="<string>"):
    return [line for code, line in _found(source, filename) if code == "ADL038"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _project(tmp_path, files: dict, main_name: str, main: str):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for relative, text in files.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    path = tmp_path / main_name
    path.write_text(main)
    return os.fspath(path)


# --- ADL038: a parameter compared with an enumeration member the call passes ---------

STAGES = '''
import enum


class Stage(enum.Enum):
    FIT = 0,
    CHECK = 1,
    REPORT = 2
'''

# The set's form: a factory's closure, an enum of another file star-imported.
STAGE_RUNNER = '''
import torch
from torch import nn

from common.stages import *


def make_runner(net, optimizer, inputs, targets):
    def run(stage, epoch=0):
        out = net(inputs)
        loss = nn.functional.mse_loss(out, targets)
        if stage == Stage.FIT:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()

    return run


def fit(net, inputs, targets, epochs):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    run = make_runner(net, optimizer, inputs, targets)
    for epoch in range(epochs):
        run(stage=Stage.FIT, epoch=epoch)
        with torch.no_grad():
            checked = run(stage=Stage.PASSED, epoch=epoch)
    return checked
'''


def test_adl038_enum_member_failing_the_test_is_silent(tmp_path):
    main = STAGE_RUNNER.replace("PASSED", "CHECK")
    path = _project(tmp_path, {"common/__init__.py": "", "common/stages.py": STAGES}, "train.py", main)
    assert _adl038(main, path) == []


def test_adl038_enum_member_passing_the_test_still_found(tmp_path):
    main = STAGE_RUNNER.replace("PASSED", "FIT")
    path = _project(tmp_path, {"common/__init__.py": "", "common/stages.py": STAGES}, "train.py", main)
    assert _adl038(main, path) == [_line(main, "checked = run(")]


def test_adl038_enum_alias_or_unknown_values_still_found(tmp_path):
    main = STAGE_RUNNER.replace("PASSED", "CHECK")
    # an alias: equal values make one member, so `Stage.CHECK == Stage.FIT`
    aliased = STAGES.replace("CHECK = 1,", "CHECK = 0,")
    path = _project(tmp_path / "a", {"common/__init__.py": "", "common/stages.py": aliased}, "train.py", main)
    assert _adl038(main, path) == [_line(main, "checked = run(")]
    # values `auto()` gives are not read
    automatic = STAGES.replace("0,", "enum.auto()").replace("1,", "enum.auto()")
    path = _project(tmp_path / "b", {"common/__init__.py": "", "common/stages.py": automatic}, "train.py", main)
    assert _adl038(main, path) == [_line(main, "checked = run(")]
    # a plain class of constants: its attributes may be re-bound, no claim
    plain = STAGES.replace("class Stage(enum.Enum):", "class Stage:")
    path = _project(tmp_path / "c", {"common/__init__.py": "", "common/stages.py": plain}, "train.py", main)
    assert _adl038(main, path) == [_line(main, "checked = run(")]
    # the class not found in the project
    path = _project(tmp_path / "d", {}, "train.py", main)
    assert _adl038(main, path) == [_line(main, "checked = run(")]


# Written before the change ran on it: a same-file IntEnum and an early return on
# `!=`; a string constant compared with `==` and a default left out.
SECOND_SHAPES = '''
import enum

import torch
from torch import nn


class Mode(enum.IntEnum):
    TRAIN = 1
    EVAL = 2


class Learner:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def step(self, x, y, mode=Mode.TRAIN):
        pred = self.net(x)
        loss = (pred - y).pow(2).mean()
        if mode != Mode.TRAIN:
            return loss.item()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        return loss.item()


def run_split(net, opt, x, y, split="val"):
    loss = nn.functional.l1_loss(net(x), y)
    if split == "train":
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


def evaluate(learner, net, opt, x, y):
    with torch.no_grad():
        a = learner.step(x, y, mode=EVAL_MODE)
        b = run_split(net, opt, x, y)
        c = run_split(net, opt, x, y, split=SPLIT)
    return a + b + c
'''


def test_adl038_int_enum_early_return_and_string_split_are_silent():
    source = SECOND_SHAPES.replace("EVAL_MODE", "Mode.EVAL").replace("SPLIT", '"test"')
    assert _adl038(source) == []


def test_adl038_int_enum_and_string_passing_the_test_still_found():
    source = SECOND_SHAPES.replace("EVAL_MODE", "Mode.TRAIN").replace("SPLIT", '"train"')
    assert _adl038(source) == [_line(source, "a = learner.step("), _line(source, "c = run_split(")]
    # a name bound to the class elsewhere in the file: which class it is is not known
    rebound = source.replace("EVAL_MODE", "Mode.EVAL") + "\nMode = dict\n"
    assert _line(rebound, "a = learner.step(") in _adl038(rebound)


class _Stage(enum.Enum):
    FIT = 0,
    CHECK = 1,


def _runner(net, optimizer, x, y):
    def run(stage):
        loss = nn.functional.mse_loss(net(x), y)
        if stage == _Stage.FIT:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return loss.item()
    return run


def test_torch_member_failing_the_test_runs_under_no_grad_and_passing_it_raises():
    torch.manual_seed(0)
    net = nn.Linear(3, 1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    run = _runner(net, torch.optim.SGD(net.parameters(), lr=0.1), x, y)
    expected = nn.functional.mse_loss(net(x), y).item()
    with torch.no_grad():
        assert run(_Stage.CHECK) == pytest.approx(expected)
        with pytest.raises(RuntimeError, match="does not require grad"):
            run(_Stage.FIT)


# --- ADL016 (recall, r749): a function handed to `<module>.apply` gets modules ---------

# Seen while reading BUPT-GAMMA/OpenHGNN (https://github.com/BUPT-GAMMA/OpenHGNN,
# `openhgnn/layers/AdapropT.py`): `W_samp.apply(freeze)` with `def freeze(m):
# m.requires_grad = False`.  A second shape: a top-level function, a model built
# from a same-file class and used as a module.
APPLIED = '''
import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Linear(4, 8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        return self.head(torch.relu(self.stem(x)))


def stop_training(module):
    module.requires_grad = False


def build():
    model = Encoder()
    model.stem.apply(stop_training)
    model.apply(stop_training)
    model.train()
    return torch.optim.Adam(model.parameters())
'''


def test_adl016_flag_set_on_what_apply_hands_over_found():
    assert [c for c in _found(APPLIED) if c[0] == "ADL016"] == [("ADL016", _line(APPLIED, "module.requires_grad = False"))]


def test_adl016_function_also_called_otherwise_or_unknown_receiver_silent():
    # the function is also called with something else: its argument may be a tensor
    called = APPLIED + "\n\nstop_training(torch.zeros(3))\n"
    assert [c for c in _found(called) if c[0] == "ADL016"] == []
    # a receiver nothing shows to be a module (a table's `apply`)
    table = APPLIED.replace("    model.stem.apply(stop_training)\n    model.apply(stop_training)\n",
                            "    frame.apply(stop_training)\n").replace("def build():", "def build(frame):")
    assert [c for c in _found(table) if c[0] == "ADL016"] == []
    # the parameters frozen one by one: right
    right = APPLIED.replace("    module.requires_grad = False",
                            "    for p in module.parameters(recurse=False):\n        p.requires_grad = False")
    assert [c for c in _found(right) if c[0] == "ADL016"] == []
    # a class of the file with a `requires_grad` setting of its own
    own = APPLIED.replace("        self.head = nn.Linear(8, 2)\n",
                          "        self.head = nn.Linear(8, 2)\n        self.requires_grad = True\n")
    assert [c for c in _found(own) if c[0] == "ADL016"] == []


def test_torch_flag_through_apply_freezes_nothing_and_requires_grad_underscore_does():
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))

    def wrong(m):
        m.requires_grad = False

    model.apply(wrong)
    assert all(p.requires_grad for p in model.parameters())
    model.apply(lambda m: m.requires_grad_(False))
    assert not any(p.requires_grad for p in model.parameters())
