"""Recall on the shape real code has (fixtures/rules/recall_v4_summaries.py):
each flagged case really fails, and the suggested change, applied, runs with
the gradients torch's numerical check (or an untouched copy) expects."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint.engine import lint_file

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "recall_v4_summaries.py"


@pytest.fixture(scope="module")
def cases():
    spec = importlib.util.spec_from_file_location(FIXTURE.stem, FIXTURE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def flagged_in(name: str) -> set[int]:
    import ast
    tree = ast.parse(FIXTURE.read_text(encoding="utf-8"))
    node = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == name)
    lines = range(node.lineno, node.end_lineno + 1)
    return {f.line for f in lint_file(str(FIXTURE))[0] if f.line in lines}


def test_container_layers_bug_fails_and_fix_has_checked_gradients(cases):
    assert len(flagged_in("ContainerBug")) == 2 and not flagged_in("ContainerFixed")
    torch.manual_seed(0)
    bug = cases.ContainerBug().double()
    fixed = cases.ContainerFixed().double()
    fixed.load_state_dict(bug.state_dict())
    x = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    assert torch.equal(bug(x), fixed(x))  # same forward values
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        bug(x).sum().backward()
    assert torch.autograd.gradcheck(fixed, (x,))


def test_views_returned_by_a_method_bug_fails_and_fix_has_checked_gradients(cases):
    assert flagged_in("forward_bug") and not flagged_in("forward_fixed")
    torch.manual_seed(0)
    attention = cases.Attention().double()
    x = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        attention.forward_bug(x)
    assert torch.autograd.gradcheck(attention.forward_fixed, (x,))


def test_losses_returned_in_a_tuple_bug_fails_and_fix_uses_the_old_critic(cases):
    assert flagged_in("update_bug") and not flagged_in("update_fixed")
    torch.manual_seed(0)
    obs, target = torch.randn(5, 3), torch.randn(5, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        cases.Agent().update_bug(obs, target)
    agent = cases.Agent()
    critic, actor = copy.deepcopy(agent.critic), copy.deepcopy(agent.actor)
    (-critic(torch.tanh(actor(obs))).mean()).backward()  # the actor's gradient before any step
    agent.update_fixed(obs, target)
    assert torch.equal(agent.actor.weight.grad, actor.weight.grad)


def test_value_computed_before_the_loop_bug_fails_and_fix_runs(cases):
    assert flagged_in("epochs_bug") and not flagged_in("epochs_fixed")
    torch.manual_seed(0)
    obs, returns = torch.randn(5, 3), torch.randn(5)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        cases.Agent().epochs_bug(obs, returns)
    agent = cases.Agent()
    reference = copy.deepcopy(agent.actor)
    advantages = (returns - agent.critic(obs).squeeze(-1)).detach()
    (-(torch.log_softmax(reference(obs), dim=-1)[:, 0] * advantages).mean()).backward()
    agent.epochs_fixed(obs, returns, epochs=1)
    assert torch.equal(agent.actor.weight.grad, reference.weight.grad)


@pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf")
def test_grad_of_a_cast_leaf_bug_fails_fix_and_same_dtype_run(cases):
    assert flagged_in("cast_bug") and not flagged_in("cast_fixed") and not flagged_in("same_dtype_is_the_leaf")
    xs, ys = torch.randn(4, 3), torch.randn(4)
    with pytest.raises(TypeError):
        cases.cast_bug(xs, ys)
    expected = (2 * (xs @ torch.zeros(3) - ys)[:, None] * xs).mean(0)
    assert torch.allclose(cases.cast_fixed(xs, ys), expected)
    assert torch.allclose(cases.same_dtype_is_the_leaf(xs, ys), expected)


def test_state_carried_on_the_module_fails_and_reset_runs(cases):
    assert flagged_in("CarriedState") and not flagged_in("ResetState")
    torch.manual_seed(0)
    xs = torch.randn(2, 1, 5, 3)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        cases.carried_state_bug(cases.CarriedState(), xs)
    model = cases.ResetState()
    reference = copy.deepcopy(model)
    reference(xs[0]).sum().backward()  # the first step's gradient, from a zero state
    cases.reset_state_fixed(model, xs[:1])
    assert torch.equal(model.rnn.weight_hh_l0.grad, reference.rnn.weight_hh_l0.grad)
