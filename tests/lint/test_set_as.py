"""Set AS (docs/lint.md, "A forty-seventh held-out check: set AS"): the false causes
of its first run fixed here, each with the false shape (silent), a second false
shape written before the change ran on it, a real shape of the same rule still
found, and a torch check.  None of the shapes is a copy of the set's code:

- ADL028 in HannesStark/EquiBind (https://github.com/HannesStark/EquiBind,
  `trainer/trainer.py`): a training step returns `list_detach(predictions)`, where
  `list_detach` (another file of the project) detaches every tensor of a nested list
  by calling itself on each item (`return [list_detach(x) for x in element]`) or
  `return element.detach()`; the caller's loop keeps what it returns.  Only a helper
  whose every `return` was one detaching method chain counted as releasing the graph.
- ADL018 in stanfordnlp/pyvene (https://github.com/stanfordnlp/pyvene,
  `tutorials/advanced_tutorials/tutorial_ioi_utils.py`): `intervenable =
  IntervenableModel(config, gpt2)`, the class re-exported by the package's
  `__init__.py`, and `intervenable.set_zero_grad()` after each step, a method that
  calls `zero_grad()` on every trainable part the optimizer holds.  Only `self.m()`
  of an inherited project class and imported functions were read for a clear.
"""

from __future__ import annotations

import os

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, filename="<string>", select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename=filename, selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _project(tmp_path, helpers, trainer):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "__init__.py").write_text("")
    (tmp_path / "common" / "tensors.py").write_text(helpers)
    path = tmp_path / "train.py"
    path.write_text(trainer)
    return os.fspath(path)


# --- ADL028: a training step's result passed through a project helper that detaches ----

# The recursive form (the set's): a nested list detached item by item.
NESTED_DETACH = '''
def detach_all(value):
    if isinstance(value, (list, tuple)):
        return [detach_all(v) for v in value]
    return value.detach()
'''

# A second false form, written before the change ran on it: a tuple of a pair's parts,
# each released by its own chain, or the recursion over a dict's values as a tuple.
PAIR_DETACH = '''
def detach_all(value):
    if isinstance(value, tuple):
        return tuple(detach_all(v) for v in value)
    if isinstance(value, list):
        return [detach_all(value[0]), *[detach_all(v) for v in value[1:]]]
    return value.detach().cpu()
'''

# The real form: the helper only moves the tensors, keeping their graphs.
NESTED_MOVE = NESTED_DETACH.replace("return value.detach()", "return value.cpu()")

TRAINER = '''
import torch
from torch import nn
from common.tensors import detach_all


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optim = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(self, x, y):
        out = self.model(x)
        loss = nn.functional.mse_loss(out, y)
        loss.backward()
        self.optim.step()
        self.optim.zero_grad()
        return loss.item(), detach_all([out])

    def fit(self, batches):
        kept = []
        for x, y in batches:
            loss, outs = self.step(x, y)
            kept.extend(outs)
        return kept
'''


@pytest.mark.parametrize("helpers", [NESTED_DETACH, PAIR_DETACH], ids=["recursive-list", "tuple-and-star"])
def test_a_step_result_detached_by_a_recursive_project_helper_is_silent(tmp_path, helpers):
    path = _project(tmp_path, helpers, TRAINER)
    assert _found(TRAINER, filename=path, select=("ADL028",)) == []


def test_a_project_helper_that_keeps_the_graph_is_still_reported(tmp_path):
    path = _project(tmp_path, NESTED_MOVE, TRAINER)
    assert _found(TRAINER, filename=path, select=("ADL028",)) == [("ADL028", _line(TRAINER, "kept.extend(outs)"))]


def test_a_recursion_with_no_releasing_return_does_not_count(tmp_path):
    only_recursion = "def detach_all(value):\n    return [detach_all(v) for v in value]\n"
    path = _project(tmp_path, only_recursion, TRAINER)
    assert _found(TRAINER, filename=path, select=("ADL028",)) == [("ADL028", _line(TRAINER, "kept.extend(outs)"))]


def test_torch_agrees_what_the_helpers_keep():
    model = nn.Linear(3, 2)
    batches = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(3)]
    for helpers, keeps in [(NESTED_DETACH, False), (PAIR_DETACH, False), (NESTED_MOVE, True)]:
        tensors = _load(helpers, "tensors")
        trainer = _load(TRAINER.replace("from common.tensors import detach_all\n", ""), "train")
        trainer["detach_all"] = tensors["detach_all"]
        kept = trainer["Trainer"](model).fit(batches)
        assert len(kept) == 3
        assert all((t.grad_fn is not None) == keeps for t in kept)


# --- ADL018: a clear through a method of a project class the function instantiates -----

WRAPPER_PACKAGE = {
    "__init__.py": "from .wrapping import Wrapper\n",
    "wrapping.py": '''
from torch import nn


class Wrapper(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.parts = nn.ModuleDict({"body": model})

    def forward(self, x):
        return self.parts["body"](x)

    def trainable(self):
        return list(self.parts.parameters())

    def clear_parts(self):
        for part in self.parts.values():
            part.zero_grad()

    def report(self):
        return sum(p.grad.norm().item() for p in self.trainable() if p.grad is not None)
''',
}

# A second false form, written before the change ran on it: the clearing method is
# inherited from a project base class in another module and sets `.grad = None`.
BASE_PACKAGE = {
    "__init__.py": "from .wrapping import Wrapper\n",
    "base.py": '''
from torch import nn


class Resettable(nn.Module):
    def reset(self):
        for p in self.parameters():
            p.grad = None
''',
    "wrapping.py": '''
from torch import nn
from wrap.base import Resettable


class Wrapper(Resettable):
    def __init__(self, model):
        super().__init__()
        self.body = model

    def forward(self, x):
        return self.body(x)

    def trainable(self):
        return list(self.body.parameters())

    def report(self):
        return 0.0
''',
}

FIT = '''
import torch
from torch import nn
from wrap import Wrapper


def fit(model, batches, method):
    wrapper = Wrapper(model)
    optimizer = torch.optim.SGD(wrapper.trainable(), lr=0.1)
    for x, y in batches:
        loss = nn.functional.mse_loss(wrapper(x), y)
        loss.backward()
        optimizer.step()
        wrapper.METHOD()
    return wrapper
'''


def _package(tmp_path, files, fit):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "wrap").mkdir()
    for name, text in files.items():
        (tmp_path / "wrap" / name).write_text(text)
    path = tmp_path / "fit.py"
    path.write_text(fit)
    return os.fspath(path)


@pytest.mark.parametrize("files,method", [(WRAPPER_PACKAGE, "clear_parts"), (BASE_PACKAGE, "reset")],
                         ids=["re-exported-class", "inherited-method"])
def test_a_clear_through_a_project_instance_method_is_silent(tmp_path, files, method):
    fit = FIT.replace("METHOD", method)
    path = _package(tmp_path, files, fit)
    assert _found(fit, filename=path, select=("ADL018",)) == []


@pytest.mark.parametrize("files,method", [(WRAPPER_PACKAGE, "report"), (BASE_PACKAGE, "report")],
                         ids=["method-that-reads", "class-without-the-clear"])
def test_a_project_instance_method_that_does_not_clear_is_still_reported(tmp_path, files, method):
    fit = FIT.replace("METHOD", method)
    path = _package(tmp_path, files, fit)
    assert _found(fit, filename=path, select=("ADL018",)) == [("ADL018", _line(fit, "optimizer.step()"))]


def test_a_name_bound_to_something_else_too_is_no_evidence(tmp_path):
    fit = FIT.replace("METHOD", "clear_parts").replace(
        "    for x, y in batches:", "    if model is None:\n        wrapper = make_wrapper()\n    for x, y in batches:")
    path = _package(tmp_path, WRAPPER_PACKAGE, fit)
    assert _found(fit, filename=path, select=("ADL018",)) == [("ADL018", _line(fit, "optimizer.step()"))]


def test_torch_agrees_the_instance_method_clears(tmp_path):
    import sys
    _package(tmp_path, WRAPPER_PACKAGE, FIT)
    sys.path.insert(0, os.fspath(tmp_path))
    try:
        for name in [m for m in sys.modules if m == "wrap" or m.startswith("wrap.")]:
            del sys.modules[name]
        x, y = torch.randn(4, 3), torch.randn(4, 2)
        grads = {}
        for method in ("clear_parts", "report"):
            torch.manual_seed(0)
            model = nn.Linear(3, 2)
            fit = _load(FIT.replace("METHOD", method), "fit")["fit"]
            fit(model, [(x, y)] * 2, method)
            loss = nn.functional.mse_loss(model(x), y)  # one more backward onto what the loop left
            loss.backward()
            grads[method] = model.weight.grad.clone()
        torch.manual_seed(0)
        fresh = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(fresh.parameters(), lr=0.1)
        for _ in range(2):  # the correct loop: one clear per step
            optimizer.zero_grad()
            nn.functional.mse_loss(fresh(x), y).backward()
            optimizer.step()
        optimizer.zero_grad()
        nn.functional.mse_loss(fresh(x), y).backward()
        assert torch.equal(grads["clear_parts"], fresh.weight.grad)  # the method cleared after each step
        assert not torch.allclose(grads["report"], fresh.weight.grad)  # without a clear they pile up
    finally:
        sys.path.remove(os.fspath(tmp_path))
        for name in [m for m in sys.modules if m == "wrap" or m.startswith("wrap.")]:
            del sys.modules[name]
