"""Recall on the causes of misses in the r70-r89 re-creations
(fixtures/rules/recall_v5_helpers_and_transforms.py): each flagged case really
fails, its corrected twin stays silent, and the correction computes the values
and gradients of a reference."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint.engine import lint_file

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "recall_v5_helpers_and_transforms.py"


@pytest.fixture(scope="module")
def cases():
    spec = importlib.util.spec_from_file_location(FIXTURE.stem, FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def findings_in(name: str) -> list[tuple[int, str]]:
    tree = ast.parse(FIXTURE.read_text(encoding="utf-8"))
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    lines = range(node.lineno, node.end_lineno + 1)
    return sorted((f.line, f.code) for f in lint_file(str(FIXTURE))[0] if f.line in lines)


def batch():
    torch.manual_seed(0)
    return torch.randn(16, 5), torch.randint(0, 2, (16, 1)).float(), torch.randn(16)


def test_grad_read_after_a_helper_runs_backward_is_found_and_fix_trains(cases):
    source = FIXTURE.read_text(encoding="utf-8").splitlines()
    found = findings_in("train_bug")
    assert [code for _, code in found] == ["ADL020"]
    assert "theta.grad" in source[found[0][0] - 1]
    assert not findings_in("train_fixed") and not findings_in("update")
    with pytest.raises(TypeError):  # `lr * None`
        cases.train_bug(*batch())
    # the fix: the leaf has the view's shape; its update is the policy gradient
    states, actions, returns = batch()
    theta = cases.train_fixed(states, actions, returns)
    reference = torch.zeros(5, 1, requires_grad=True)
    cases.policy_gradient_step(reference, states, actions, returns)
    assert torch.equal(theta, 0.1 * reference.grad)


def test_write_after_exp_in_a_transform_call_is_found_and_fix_matches_softmax(cases):
    source = FIXTURE.read_text(encoding="utf-8").splitlines()
    write = next(i for i, line in enumerate(source, 1) if "probs /= " in line)
    assert findings_in("SoftmaxTransformBug") == [(write, "ADL001")]
    assert not findings_in("SoftmaxTransformFixed")
    x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        cases.SoftmaxTransformBug()(x).pow(2).sum().backward()
    fixed = cases.SoftmaxTransformFixed()
    assert torch.allclose(fixed(x), torch.softmax(x, -1))
    assert torch.autograd.gradcheck(lambda t: fixed(t), (x,))
    grad, = torch.autograd.grad(fixed(x).pow(2).sum(), x)
    expected, = torch.autograd.grad(torch.softmax(x, -1).pow(2).sum(), x)
    assert torch.allclose(grad, expected)


def test_write_to_what_the_previous_loop_iteration_saved_is_found_and_fix_matches(cases):
    source = FIXTURE.read_text(encoding="utf-8").splitlines()
    found = findings_in("RowShiftBug")
    assert [code for _, code in found] == ["ADL001"] and "b[i] = b[i] + 1" in source[found[0][0] - 1]
    assert not findings_in("RowShiftFixed") and not findings_in("RowShiftFresh")
    a = torch.randn(4, 1, dtype=torch.float64)
    bug = cases.RowShiftBug().double()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        bug(a).sum().backward()
    fixed = cases.RowShiftFixed().double()
    fixed.load_state_dict(bug.state_dict())
    y = fixed(a)
    assert torch.allclose(y, cases.row_shift_reference(fixed.param, a))
    grad, = torch.autograd.grad(y.sum(), fixed.param)
    param = fixed.param.detach().clone().requires_grad_()
    expected, = torch.autograd.grad(cases.row_shift_reference(param, a).sum(), param)
    assert torch.allclose(grad, expected)
