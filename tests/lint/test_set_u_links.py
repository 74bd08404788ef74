"""Set U (docs/lint.md, twenty-third check).  The set's first run, with the
rules frozen at df77f05, had 4 false alarms; these tests keep the cause fixed
and the real form next to it, each claim run with torch:

* ADL016 on Mammoth's LUCIR classifier (https://github.com/aimagelab/mammoth,
  `models/lucir.py`, false): `self.weights` is an `nn.ParameterList`, so
  `self.weights[i - 1].requires_grad = False` sets the flag of a parameter
  and freezes it.  The linter took an item of any module container for a
  module.  An item of an `nn.ParameterList` / `nn.ParameterDict` is a
  parameter: silent, and the frozen weights stay where they were while the
  others take the step written by hand.  The item of an `nn.ModuleList` is a
  module: still reported, its parameters still train, and the help applied
  (`requires_grad_(False)`) freezes them.  A misspelt flag on a
  `ParameterList` item is reported as the parameter's (it still requires
  grad), and the rename applied freezes it.

The form left (a diffusion sampler's in-place update, called only under
`no_grad` from another file) is described in docs/lint.md."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

ADL016 = Selection(("ADL016",))


def _findings(source: str):
    return [f for f in lint_source(source, "set_u.py") if f.code != "ADL000"]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_u.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "set_u.py", ADL016), unsafe=True)
    assert count > 0
    return text


# ----- a classifier with one weight matrix per task --------------------------

TASK_CLASSIFIER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class TaskClassifier(nn.Module):
        def __init__(self, in_features, per_task, n_tasks):
            super().__init__()
            torch.manual_seed(0)
            self.weights = nn.ParameterList(
                [nn.Parameter(torch.randn(per_task, in_features)) for _ in range(n_tasks)])
            self.scales = nn.ParameterDict({"old": nn.Parameter(torch.ones(1)),
                                            "new": nn.Parameter(torch.ones(1))})

        def start_task(self, i):
            self.weights[i].requires_grad = True
            self.weights[i - 1].requires_grad = False
            self.scales["old"].requires_grad = False

        def forward(self, x):
            logits = [F.linear(x, w) for w in self.weights]
            return torch.cat(logits, dim=1) * self.scales["old"] * self.scales["new"]


    def train_step(model, x, y, lr):
        loss = F.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= lr * p.grad
        return loss
    """)


def _data():
    generator = torch.Generator().manual_seed(2)
    return torch.randn(8, 5, generator=generator), torch.randint(0, 6, (8,), generator=generator)


def test_items_of_a_parameter_list_or_dict_are_parameters_not_modules():
    assert _findings(TASK_CLASSIFIER) == []


def test_the_flag_set_on_a_parameter_list_item_freezes_it():
    ns = _namespace(TASK_CLASSIFIER)
    model = ns["TaskClassifier"](5, 3, 2)
    model.start_task(1)
    before = [p.detach().clone() for p in model.parameters()]
    x, y = _data()
    ns["train_step"](model, x, y, lr=0.5)
    assert model.weights[0].requires_grad is False and model.scales["old"].requires_grad is False
    assert torch.equal(model.weights[0], before[0])       # the old task's weights: frozen
    assert torch.equal(model.scales["old"], before[2])
    # the others took the SGD step written by hand from the same gradients
    w0, w1, s_old, s_new = (t.clone() for t in before)
    w1.requires_grad_(True)
    s_new.requires_grad_(True)
    logits = torch.cat([x @ w0.t(), x @ w1.t()], dim=1) * s_old * s_new
    torch.nn.functional.cross_entropy(logits, y).backward()
    assert torch.equal(model.weights[1], (w1 - 0.5 * w1.grad).detach())
    assert torch.equal(model.scales["new"], (s_new - 0.5 * s_new.grad).detach())


# ----- the real form kept: an item of a module list --------------------------

BLOCKS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Blocks(nn.Module):
        def __init__(self, dim, n):
            super().__init__()
            torch.manual_seed(0)
            self.blocks = nn.ModuleList([nn.Linear(dim, dim) for _ in range(n)])

        def freeze_block(self, i):
            self.blocks[i].requires_grad = False

        def forward(self, x):
            for block in self.blocks:
                x = torch.tanh(block(x))
            return x
    """)


def test_the_flag_set_on_a_module_list_item_is_still_reported_and_freezes_nothing():
    findings = _findings(BLOCKS)
    assert [(f.line, f.code) for f in findings] == [(_line_of(BLOCKS, "self.blocks[i].requires_grad"), "ADL016")]
    assert "a module has no attribute `requires_grad`" in findings[0].message
    model = _namespace(BLOCKS)["Blocks"](4, 2)
    model.freeze_block(0)
    assert all(p.requires_grad for p in model.blocks[0].parameters())
    model(torch.randn(3, 4)).sum().backward()
    assert model.blocks[0].weight.grad is not None


def test_the_help_applied_to_a_module_list_item_freezes_its_parameters():
    fixed = _fixed(BLOCKS)
    assert "self.blocks[i].requires_grad_(False)" in fixed
    assert _findings(fixed) == []
    model = _namespace(fixed)["Blocks"](4, 2)
    model.freeze_block(0)
    model(torch.randn(3, 4)).sum().backward()
    assert all(not p.requires_grad and p.grad is None for p in model.blocks[0].parameters())
    assert all(p.grad is not None for p in model.blocks[1].parameters())


# ----- a misspelt flag on a parameter list item ------------------------------

MISSPELT = TASK_CLASSIFIER.replace("self.weights[i - 1].requires_grad = False",
                                   "self.weights[i - 1].require_grad = False")


def test_a_misspelt_flag_on_a_parameter_list_item_is_reported_as_the_parameters():
    findings = _findings(MISSPELT)
    assert [(f.line, f.code) for f in findings] == [(_line_of(MISSPELT, "require_grad = False"), "ADL016")]
    assert "`require_grad` is a misspelling of `requires_grad`" in findings[0].message
    assert "nothing is frozen: `self.weights[i - 1]` still requires grad" in findings[0].message
    model = _namespace(MISSPELT)["TaskClassifier"](5, 3, 2)
    model.start_task(1)
    assert model.weights[0].requires_grad is True


def test_the_rename_applied_freezes_the_parameter_list_item():
    fixed = _fixed(MISSPELT)
    assert fixed == TASK_CLASSIFIER
    model = _namespace(fixed)["TaskClassifier"](5, 3, 2)
    model.start_task(1)
    assert model.weights[0].requires_grad is False and model.weights[1].requires_grad is True
