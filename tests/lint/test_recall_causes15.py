"""Recall causes of r581-r605 (docs/lint.md, "Recall causes worked on (r581-r605)").

* ADL034 (r589, r591): a loss rebuilt as a new tensor (`torch.tensor`,
  `from_numpy`, `Variable`, ...) from a value cut from the graph (`.item()`,
  `.detach()`, `.data`, NumPy, `float()`), then backpropagated: the backward
  fails, or (made with `requires_grad=True`) trains nothing before a `step()`.
* ADL035 (the cause of r599 and r601): `backward()` with no `gradient` of a loss
  that keeps a dimension (`sum(dim=1)`, `reduction="none"`, element-wise ops of
  those).

The programs in recall_causes15_programs/ (`b*` buggy, `ok*` correct near
twins) were written and run under torch before the rules ran on them.  Buggy
-> the finding at the line marked `# BUG34` / `# BUG35` with its help; the help
applied -> runs, the model trains, gradients equal a hand-written version, and
the linter is silent; near twins silent."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from autograd_doctor.lint import lint_source

PROGRAMS = Path(__file__).parent / "recall_causes15_programs"


def _findings(path: Path, codes=("ADL034", "ADL035")):
    return [f for f in lint_source(path.read_text(encoding="utf-8"), path.name) if f.code in codes]


def _marked(path: Path, mark: str) -> int:
    return next(i for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if mark in line)


def _load(source: str):
    namespace: dict = {}
    exec(compile(source, "<prog>", "exec"), namespace)
    return namespace


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BUGGY34 = sorted(PROGRAMS.glob("b34_*.py"))
BUGGY35 = sorted(PROGRAMS.glob("b35_*.py"))


@pytest.mark.parametrize("path", BUGGY34 + BUGGY35, ids=lambda p: p.stem)
def test_buggy_program_fails_and_is_found_at_its_line(path):
    module = _module(path)
    code = "ADL034" if path.name.startswith("b34") else "ADL035"
    try:
        silent = module.run()
    except RuntimeError as e:
        assert "does not require grad" in str(e) or "only for scalar outputs" in str(e)
    else:
        assert silent is True  # the weights never moved
    found = _findings(path)
    assert [(f.line, f.code) for f in found] == [(_marked(path, "# BUG" + code[-2:]), code)]


def test_adl034_help_texts():
    raising = _findings(PROGRAMS / "b34_from_numpy_raises.py")[0].message
    assert "`loss` is a new tensor made from `out.detach()`" in raising
    assert "`loss.backward()` on line 11 will fail (element 0 of tensors does not require grad" in raising
    silent = _findings(PROGRAMS / "b34_variable_data.py")[0].message
    assert "`self.crit(logits, y).data`" in silent
    assert "reaches no parameter and `self.opt.step()` on line 17 changes nothing" in silent
    assert "compute the loss with torch operations on the model's output" in silent


def test_adl035_help_text():
    message = _findings(PROGRAMS / "b35_sum_dim1.py")[0].message
    assert "`((pred - y) ** 2).sum(dim=1)` keeps a dimension" in message
    assert "grad can be implicitly created only for scalar outputs" in message
    assert "`loss.mean().backward()`" in message


@pytest.mark.parametrize("name", ["ok34_fresh_leaf_optimized.py", "ok35_reduced.py"])
def test_near_twins_run_and_stay_silent(name):
    path = PROGRAMS / name
    assert _module(path).run() is True
    assert _findings(path) == []


def test_adl034_help_applied_trains_like_the_hand_written_loss():
    """b34_variable_data with the help applied (the loss is the criterion's tensor):
    silent, and its gradients are those of the hand-written loss."""
    source = (PROGRAMS / "b34_variable_data.py").read_text(encoding="utf-8")
    fixed = source.replace("Variable(self.crit(logits, y).data, requires_grad=True)", "self.crit(logits, y)")
    assert fixed != source
    assert [f for f in lint_source(fixed, "prog.py") if f.code == "ADL034"] == []
    ns = _load(fixed)
    torch.manual_seed(0)
    learner = ns["Learner"]()
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    w, b = learner.net.weight.detach().clone(), learner.net.bias.detach().clone()
    learner.update(x, y)
    w.requires_grad_(), b.requires_grad_()
    gw, gb = torch.autograd.grad(F.cross_entropy(F.linear(x, w, b), y), (w, b))
    assert torch.equal(learner.net.weight.grad, gw) and torch.equal(learner.net.bias.grad, gb)
    assert not torch.equal(learner.net.weight, w)


def test_adl034_help_applied_to_the_raising_shape():
    source = (PROGRAMS / "b34_from_numpy_raises.py").read_text(encoding="utf-8")
    fixed = source.replace("err = np.abs(out.detach().numpy() - y.numpy())  # BUG34", "err = (out - y).abs()")
    fixed = fixed.replace("loss = torch.from_numpy(err).mean()", "loss = err.mean()")
    assert [f for f in lint_source(fixed, "prog.py") if f.code == "ADL034"] == []
    ns = _load(fixed)
    model = ns["nn"].Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(5, 3), torch.randn(5, 1)
    w, b = model.weight.detach().clone().requires_grad_(), model.bias.detach().clone().requires_grad_()
    gw, gb = torch.autograd.grad((F.linear(x, w, b) - y).abs().mean(), (w, b))
    ns["fit"](model, x, y, opt)
    assert torch.allclose(model.weight, w - 0.1 * gw) and torch.allclose(model.bias, b - 0.1 * gb)


def test_adl035_help_applied_runs_with_the_mean_gradient():
    source = (PROGRAMS / "b35_sum_dim1.py").read_text(encoding="utf-8")
    fixed = source.replace("    loss.backward()", "    loss.mean().backward()")
    assert [f for f in lint_source(fixed, "prog.py") if f.code == "ADL035"] == []
    ns = _load(fixed)
    model = ns["nn"].Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3), torch.randn(4, 2)
    w, b = model.weight.detach().clone().requires_grad_(), model.bias.detach().clone().requires_grad_()
    gw, gb = torch.autograd.grad(((F.linear(x, w, b) - y) ** 2).sum(dim=1).mean(), (w, b))
    ns["train"](model, opt, x, y)
    assert torch.allclose(model.weight.grad, gw) and torch.allclose(model.bias.grad, gb)


def test_adl034_silent_without_evidence():
    """A rebuilt leaf with `requires_grad=True` but no step after the backward, a
    re-bound loss, a loss combined with a graph term, a `requires_grad=flag`."""
    source = """\
import torch


def a(model, x):
    v = torch.tensor(model(x).sum().item(), requires_grad=True)
    v.backward()
    return v.grad


def b(model, x, opt):
    loss = torch.tensor(model(x).sum().item())
    loss = model(x).sum()
    loss.backward()
    opt.step()


def c(model, x, opt, flag):
    loss = torch.tensor(model(x).sum().item(), requires_grad=flag)
    loss.backward()
    opt.step()
"""
    assert [f for f in lint_source(source, "prog.py") if f.code == "ADL034"] == []
