"""Recall causes of r621-r631 (docs/lint.md, "A twenty-seventh held-out set,
measured once (r621-r631)").

* ADL037 (r625, r629): an optimizer's `step` decorated with `no_grad()` /
  `inference_mode()` calls the closure it is passed (forward, loss,
  `backward()`) with gradients off; the backward fails.

Fresh shapes (tests/lint/recall_causes16_programs/, written and run under torch
before the rule ran on them): `b37_lion_bare_decorator.py` (a bare
`@torch.no_grad`, `from torch.optim.optimizer import Optimizer`, the closure
called in a conditional expression), `b37_inherited_base_closure_last.py` (a
same-file base derived from `optim.Optimizer`, `@torch.inference_mode()`, a
keyword-only closure).  Near twins (`ok37_near_twins.py`): the closure inside
`enable_grad()`, an undecorated step, a non-optimizer class's `no_grad` step
calling a closure that returns a number."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source

PROGRAMS = Path(__file__).parent / "recall_causes16_programs"


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"rc16_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _found(path: Path, code: str = "ADL037"):
    return [f for f in lint_source(path.read_text(encoding="utf-8"), str(path)) if f.code == code]


@pytest.mark.parametrize("name", ["b37_lion_bare_decorator.py", "b37_inherited_base_closure_last.py"])
def test_adl037_found_at_the_closure_call_and_the_program_raises(name):
    path = PROGRAMS / name
    lines = path.read_text(encoding="utf-8").splitlines()
    bug_line = next(i for i, line in enumerate(lines, 1) if "# bug" in line)
    findings = _found(path)
    assert [f.line for f in findings] == [bug_line]
    assert "`closure()` runs the forward" in findings[0].message
    assert "with torch.enable_grad():" in findings[0].message
    with pytest.raises(RuntimeError, match="does not require grad"):
        _load(path).run()


def test_adl037_help_applied_gives_the_hand_written_gradient():
    """The help (call the closure inside `enable_grad()`) applied to the Lion
    program: it runs, no finding is left, and the first step's gradient equals
    the hand-written one."""
    path = PROGRAMS / "b37_lion_bare_decorator.py"
    fixed = re.sub(r"loss = closure\(\) if closure is not None else None  # bug",
                   "with torch.enable_grad():\n            loss = closure() if closure is not None else None",
                   path.read_text(encoding="utf-8"))
    assert not [f for f in lint_source(fixed, "fixed.py") if f.code == "ADL037"]
    namespace: dict = {}
    exec(compile(fixed, "<fixed>", "exec"), namespace)
    torch.manual_seed(0)
    net = namespace["nn"].Linear(3, 1)
    opt = namespace["Lion"](net.parameters())
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    w0, b0 = net.weight.detach().clone(), net.bias.detach().clone()

    def closure():
        opt.zero_grad()
        loss = ((net(x) - y) ** 2).mean()
        loss.backward()
        return loss

    opt.step(closure)
    residual = x @ w0.T + b0 - y
    assert torch.allclose(net.weight.grad, 2 * (residual * x).mean(0, keepdim=True), atol=1e-6)
    assert torch.allclose(net.bias.grad, 2 * residual.mean(0), atol=1e-6)


def test_adl037_near_twins_silent_and_correct():
    path = PROGRAMS / "ok37_near_twins.py"
    assert not _found(path)
    module = _load(path)
    for cls in (module.SGDEnabled, module.SGDPlain):
        net, x, y = module.grads(cls)
        w = torch.manual_seed(0) and torch.nn.Linear(3, 1)
        residual = x @ w.weight.detach().T + w.bias.detach() - y
        assert torch.allclose(net.weight.grad, 2 * (residual * x).mean(0, keepdim=True), atol=1e-6)


def test_adl037_recreations_found():
    rec = Path(__file__).parent / "recreations"
    for stem in ("r625_", "r629_"):
        path = next(rec.glob(stem + "*.py"))
        assert len(_found(path)) == 1


# ADL020 (r622): a torch function of the leaf (`w = torch.clamp(w, 0, 1)`,
# `std = torch.exp(log_std)`) makes a non-leaf, as a method of it does.
# Fresh shapes: b20_exp_of_log_std_optimized.py (the optimizer refuses it),
# b20_sigmoid_rebinds_gate.py (`gate.grad` read after the backward is None);
# near twins ok20_near_twins.py (the leaf kept under its own name,
# `torch.as_tensor` of the leaf, a clamp of a detached copy made a new leaf).

@pytest.mark.parametrize("name,error", [("b20_exp_of_log_std_optimized.py", ValueError),
                                        ("b20_sigmoid_rebinds_gate.py", TypeError)])
def test_adl020_torch_function_of_the_leaf_found(name, error):
    path = PROGRAMS / name
    lines = path.read_text(encoding="utf-8").splitlines()
    bug_line = next(i for i, line in enumerate(lines, 1) if "# bug" in line)
    findings = _found(path, "ADL020")
    assert [f.line for f in findings] == [bug_line]
    assert "is not a leaf but the result of `torch." in findings[0].message
    with pytest.raises(error):
        _load(path).run()


def test_adl020_help_applied_gives_the_hand_written_gradient():
    """The help (`gate = torch.sigmoid(gate).detach().clone().requires_grad_()`) applied:
    no finding, and `gate.grad` is the hand-written 2 * (gate - target)."""
    path = PROGRAMS / "b20_sigmoid_rebinds_gate.py"
    fixed = path.read_text(encoding="utf-8").replace(
        "gate = torch.sigmoid(gate)", "gate = torch.sigmoid(gate).detach().clone().requires_grad_()")
    assert not [f for f in lint_source(fixed, "fixed.py") if f.code == "ADL020"]
    namespace: dict = {}
    exec(compile(fixed, "<fixed>", "exec"), namespace)
    step = namespace["run"]()
    target = torch.tensor([0.2, 0.9, 0.5])
    assert torch.allclose(step, 0.1 * 2 * (torch.sigmoid(torch.zeros(3)) - target))


def test_adl020_near_twins_silent_and_correct():
    path = PROGRAMS / "ok20_near_twins.py"
    assert not _found(path, "ADL020")
    raw_grad, same_grad, leaf_grad = _load(path).run()
    target = torch.tensor([0.2, 0.9, 0.5])
    s = torch.sigmoid(torch.zeros(3))
    assert torch.allclose(raw_grad, 2 * (s - target) * s * (1 - s))
    assert torch.allclose(same_grad, 2 * (torch.zeros(3) - target))
    assert leaf_grad is not None


# ADL001 (r623): the output of a module whose last layer is an in-place
# activation (`nn.LeakyReLU(inplace=True)`, `nn.ELU(inplace=True)`) is kept by
# that op's backward (the saves table's `:inplace` entry), also when the module is
# a same-file `nn.Sequential` subclass built by `super().__init__(a, ..., z)`.
# Fresh shape: b01_sequential_subclass_in_place_tail.py; near twins
# ok01_sequential_subclass_twins.py (the subclass ends in a convolution; a
# subclass with its own `forward` returning a clone; the skip added out of place).

def test_adl001_in_place_tail_of_sequential_subclass_found():
    path = PROGRAMS / "b01_sequential_subclass_in_place_tail.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    bug_line = next(i for i, line in enumerate(lines, 1) if "# bug" in line)
    findings = _found(path, "ADL001")
    assert [f.line for f in findings] == [bug_line]
    assert "EluBackward1 keeps its output" in findings[0].message
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(path).run()


def test_adl001_help_applied_gives_the_hand_written_gradient():
    """The unsafe fix (`y = y + skip`) applied: no finding, and the gradient of the
    skip input is the hand-written one (d/dskip of mean((elu(gn(conv x)) + skip)^2))."""
    path = PROGRAMS / "b01_sequential_subclass_in_place_tail.py"
    fixed = path.read_text(encoding="utf-8").replace("y += skip  # bug", "y = y + skip")
    assert not [f for f in lint_source(fixed, "fixed.py") if f.code == "ADL001"]
    namespace: dict = {}
    exec(compile(fixed, "<fixed>", "exec"), namespace)
    torch.manual_seed(0)
    dec = namespace["Decoder"](4)
    x, skip = torch.randn(2, 4, 6, 6), torch.randn(2, 4, 6, 6, requires_grad=True)
    dec(x, skip).pow(2).mean().backward()
    with torch.no_grad():
        block = dec.up
        y = torch.nn.functional.elu(block[1](block[0](x))) + skip
    assert torch.allclose(skip.grad, 2 * y / y.numel(), atol=1e-6)


def test_adl001_sequential_subclass_twins_silent():
    path = PROGRAMS / "ok01_sequential_subclass_twins.py"
    assert not _found(path, "ADL001")
    assert _load(path).run() is not None
