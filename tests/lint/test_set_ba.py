"""Set BA (docs/lint.md, "A fifty-fifth held-out check: set BA"): the false cause of
its first run fixed here, with the false shape (silent), other shapes of the same
cause written before the change ran on them, real shapes still found, the help
applied to them, and a torch check.  None of the shapes is a copy of the set's code:

- ADL023 in qbit-glitch/unsupervised_panoptic_segmentation
  (https://github.com/qbit-glitch/unsupervised_panoptic_segmentation,
  `mbps_pytorch/train_coco_cluster_lookup.py` and `train_mobile_panoptic.py`): a
  loss term summed for the epoch as `corr_loss.item() if torch.is_tensor(corr_loss)
  else corr_loss` (the term is `0.0` when its option is off).  The branch that keeps
  the name as is runs only when it is no tensor, so the sum holds numbers; the file's
  interpreter of returned graphs (returned_graphs.py) joined both branches and took
  the total for a graph.  Now a branch that a type test proves runs with the name no
  tensor (lint/type_tests.py) reads that name as holding no graph.
"""

from __future__ import annotations

import torch
from torch import nn

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

ADL023 = Selection(("ADL023",))


def _adl023(source):
    return [f for f in lint_source(source, "set_ba.py") if f.code == "ADL023"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _namespace(source):
    namespace = {}
    exec(compile(source, "set_ba.py", "exec"), namespace)
    return namespace


_MODEL = nn.Linear  # every program below is trained on nn.Linear(4, 2) and three batches


def _batches():
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(8, 4, generator=generator) for _ in range(3)]


def _run(source, function="fit"):
    torch.manual_seed(0)
    model = _MODEL(4, 2)
    return _namespace(source)[function](model, _batches()), model


# The set's form: the term's tensor branch made a number, the other branch taken
# only when the term is no tensor.
SET_FORM = '''
import torch


def correlation(code):
    return code.pow(2).mean()


def fit(model, data):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    epoch_corr = 0
    for x in data:
        code = model(x)
        corr = correlation(code)
        loss = corr + code.abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_corr += (corr.item() if torch.is_tensor(corr) else corr)
    return epoch_corr
'''

# Written, and run under torch, before the change ran on them: `float()` under
# `isinstance(..., torch.Tensor)` into a name summed next, `hasattr(..., "item")`,
# and an if statement that rebinds the name when it is not a float.
OTHER_SHAPES = '''
import torch


def smoothness(pred):
    return (pred[:, 1:] - pred[:, :-1]).abs().mean()


def fit(model, data):
    optimizer = torch.optim.Adam(model.parameters())
    running = 0.0
    total = 0.0
    rebound = 0.0
    for x in data:
        pred = model(x)
        reg = smoothness(pred)
        loss = pred.pow(2).mean() + reg
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        reg_value = float(reg) if isinstance(reg, torch.Tensor) else reg
        running += reg_value
        total += reg.item() if hasattr(reg, "item") else reg
        if not isinstance(reg, float):
            reg = reg.item()
        rebound += reg
    return running, total, rebound
'''

# Near twins that keep the graph: the tensor branch sums the tensor itself, the
# number test's other branch (the tensor's) sums it, the statement's tensor branch
# sums it.
TWINS = '''
import torch


def correlation(code):
    return code.pow(2).mean()


def fit(model, data):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    total_a = 0.0
    total_b = 0.0
    total_c = 0.0
    for x in data:
        code = model(x)
        corr = correlation(code)
        loss = corr + code.abs().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total_a += (corr if torch.is_tensor(corr) else 0.0)
        total_b += (corr.item() if isinstance(corr, float) else corr)
        if not isinstance(corr, float):
            total_c += corr
    return total_a, total_b, total_c
'''


def test_the_sets_form_is_silent():
    assert _adl023(SET_FORM) == []


def test_other_shapes_of_the_type_test_are_silent():
    assert _adl023(OTHER_SHAPES) == []


def test_twins_that_keep_the_graph_are_still_found():
    found = _adl023(TWINS)
    assert [f.line for f in found] == [_line(TWINS, "total_a +="), _line(TWINS, "total_b +="),
                                       _line(TWINS, "total_c +=")]
    assert all("keeps the graph of every iteration alive" in f.message for f in found)


def test_torch_the_silent_sums_hold_numbers_and_the_twins_hold_graphs():
    total, _ = _run(SET_FORM)
    assert isinstance(total, float)
    assert all(isinstance(t, float) for t in _run(OTHER_SHAPES)[0])
    assert all(t.grad_fn is not None for t in _run(TWINS)[0])


def test_the_help_applied_makes_the_twins_hold_numbers_and_keeps_the_training():
    fixed, count = fix_source(TWINS, lambda t: lint_source(t, "set_ba.py", ADL023), unsafe=True)
    assert count == 3 and _adl023(fixed) == []
    before, model_before = _run(TWINS)
    after, model_after = _run(fixed)
    assert all(t.grad_fn is None for t in after)
    assert [t.item() for t in before] == [float(t) for t in after]
    assert all(torch.equal(a, b) for a, b in zip(model_before.parameters(), model_after.parameters()))
