"""Causes of misses worked on at stop 50 (docs/lint.md, "Recall causes worked on, stop 50").

* ADL003 across loop iterations (the multi-agent learner's idiom; r462, r758, r777, fresh shapes
  bad_committee_members_step_under_joint_prediction and bad_drone_policies_joined_by_comprehension):
  every element's module output joined (`torch.cat`/`torch.stack`, of a list filled in a first
  loop or of one comprehension) before a loop over the same elements whose iterations
  backpropagate through the joined value, keeping the graph, and write the element's module in
  place -- its optimizer's step, or a method of its class that writes a target module
  (`load_state_dict`, `t.mul_(...)`).  The next iteration's backward goes through a module an
  earlier iteration wrote.  Steps after every backward, a joined value rebuilt in the loop, target
  actions joined under `torch.no_grad()`, and a soft update through `.data` are silent.
* ADL034 across functions (r784, fresh shape bad_contrastive_loss_helper_returns_new_leaf): a
  helper of the file returns `Variable(v, requires_grad=True)` / `torch.tensor(v,
  requires_grad=True)` of a value it computed, and the caller backpropagates that binding and
  steps; a constant leaf returned for an empty batch is silent.

Each fresh shape was written and run under torch before the changed linter ran on it; the
correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_causes18_programs"
RECREATIONS = Path(__file__).parent / "recreations"


def _found(source: str, select=Selection()):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py", select)]


def _recreation(name: str) -> str:
    return next(RECREATIONS.glob(name + "_*.py")).read_text(encoding="utf-8")


def test_members_stepped_under_a_prediction_joined_before_the_loop():
    source = program_source(PROGRAMS, "bad_committee_members_step_under_joint_prediction")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "member.opt.step()"), "ADL003")]
    message = found[0][2]
    assert "writes the parameters of `member.net` in place" in message
    assert f"`joint` (line {line_starting(source, 'joint = torch.stack(forecasts)')})" in message
    assert f"`backward()` on line {line_starting(source, 'loss.backward(retain_graph=True)')}" in message
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad_committee").run()


def test_policies_joined_by_one_comprehension_before_the_loop():
    source = program_source(PROGRAMS, "bad_drone_policies_joined_by_comprehension")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "drone.policy_opt.step()"), "ADL003")]
    assert "writes the parameters of `drone.policy` in place" in found[0][2]
    assert f"`joint_action` (line {line_starting(source, 'joint_action = torch.cat(')})" in found[0][2]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad_drones").run()


def test_the_actor_step_and_the_soft_update_of_the_multi_agent_learner():
    source = _recreation("r777")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "agent.actor.optimiser.step()"), "ADL003"),
        (line_starting(source, "agent.update_network_parameters()"), "ADL003")]
    assert "`mu` (line" in found[0][2] and "`new_actions` (line" in found[1][2]
    assert "writes the parameters of `agent.target_actor`" in found[1][2]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "r777").run()


def test_a_soft_update_written_in_place_is_a_write_and_through_data_is_not():
    twin = program_source(PROGRAMS, "ok_pursuers_targets_joined_soft_update_through_data")
    in_place = twin.replace(
        "t.data.copy_(self.tau * p.data + (1 - self.tau) * t.data)", "t.mul_(1 - self.tau).add_(self.tau * p)"
    ).replace("    def soft_update(self):\n", "    @torch.no_grad()\n    def soft_update(self):\n")
    assert in_place != twin
    found = _found(in_place)
    assert [(line, code) for line, code, _ in found] == [(line_starting(in_place, "pursuer.soft_update()"), "ADL003")]
    assert "`next_actions`" in found[0][2]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(in_place, "in_place").run()


@pytest.mark.parametrize("name", [
    "ok_committee_members_step_after_every_backward", "ok_committee_joint_rebuilt_per_member",
    "ok_pursuers_targets_under_no_grad_actions_per_agent", "ok_pursuers_targets_joined_soft_update_through_data",
    "ok_drone_policies_joined_inside_the_loop"])
def test_correct_near_twins_are_silent_and_run(name):
    source = program_source(PROGRAMS, name)
    assert _found(source, Selection(("ALL",))) == []
    result = run_as_module(source, name).run()
    assert result is not None


def test_the_suggested_order_gives_the_hand_written_update():
    """The rule's advice (every backward through the old graph first, then the steps) applied to
    the fresh shape: its near twin.  Its members end where a hand-written update ends: one loss of
    the joined prediction, its gradients, one SGD step of each member's net."""
    source = program_source(PROGRAMS, "ok_committee_members_step_after_every_backward")
    module = run_as_module(source, "ordered")
    torch.manual_seed(0)
    committee = module.Committee(3, 4)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    before = [[p.detach().clone() for p in m.net.parameters()] for m in committee.members]
    joint = torch.stack([m.net(x) for m in committee.members]).mean(0)
    loss = torch.nn.functional.mse_loss(joint, y) + 0.1 * joint.pow(2).mean()
    grads = torch.autograd.grad(loss, [p for m in committee.members for p in m.net.parameters()])
    committee.update(x, y)
    after = [p for m in committee.members for p in m.net.parameters()]
    expected = [b - 0.1 * g for b, g in zip([p for ps in before for p in ps], grads)]
    assert all(torch.allclose(a, e) for a, e in zip(after, expected))


# ADL034 across functions (r784, fresh shape bad_contrastive_loss_helper_returns_new_leaf): a
# helper of the file returns `Variable(v, requires_grad=True)` / `torch.tensor(v,
# requires_grad=True)` of a value it computed; the caller backpropagates that binding and steps.


def test_a_loss_helper_returning_a_new_leaf_trains_nothing():
    source = program_source(PROGRAMS, "bad_contrastive_loss_helper_returns_new_leaf")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "return torch.tensor(loss.item(), requires_grad=True)"), "ADL034")]
    message = found[0][2]
    assert "`nt_xent()` returns a new tensor that `torch.tensor()` makes from `loss.item()`" in message
    assert f"`loss.backward()` on line {line_starting(source, 'loss.backward()')} reaches no parameter" in message
    assert run_as_module(source, "bad_nt_xent").bug_shows()


def test_the_dagmm_loss_returned_as_a_new_variable_by_a_method_of_another_class():
    source = _recreation("r784")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "return Variable(loss, requires_grad=True)"), "ADL034")]
    assert "`forward()` returns a new tensor that `Variable()` makes from `loss`" in found[0][2]


def test_returning_the_loss_itself_trains_as_the_hand_written_step():
    source = program_source(PROGRAMS, "bad_contrastive_loss_helper_returns_new_leaf")
    fixed = source.replace("return torch.tensor(loss.item(), requires_grad=True)", "return loss")
    assert fixed != source and _found(fixed) == []
    before, after = run_as_module(fixed, "fixed_nt_xent").run()
    assert not all(torch.equal(b, a) for b, a in zip(before, after))
    # the twin, whose helper returns the loss for a non-empty batch, is the hand-written step
    _, hand = run_as_module(program_source(PROGRAMS, "ok_contrastive_loss_helper_dummy_leaf_for_empty_batch"),
                            "hand_nt_xent").run()
    assert all(torch.equal(a, h) for a, h in zip(after, hand))


def test_a_constant_leaf_for_an_empty_batch_is_silent():
    source = program_source(PROGRAMS, "ok_contrastive_loss_helper_dummy_leaf_for_empty_batch")
    assert _found(source, Selection(("ALL",))) == []
    before, after = run_as_module(source, "ok_nt_xent").run()
    assert not all(torch.equal(b, a) for b, a in zip(before, after))
