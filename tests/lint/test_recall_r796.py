"""Causes worked on after the thirty-ninth held-out set (docs/lint.md, "A thirty-ninth
held-out set, written as real code is written (r796-r807)").

* ADL032 (r798): the next state's value may be chosen by a conditional expression
  (`self.critic(next_state) if not done else torch.zeros_like(value)`); the branch that calls the
  stepped network carries its graph into the target.
* ADL032, precision (r805's false finding of the first run): a statement that sets the target
  against the prediction but only binds a name that is read later solely through `.detach()`
  (`advantages = targets - values`, then `advantages.detach()` in the policy loss) is not the
  loss; the rule goes on to the target's next undetached use.
* ADL032, precision (a false finding of frozen72 on the fetched course repository's batched
  actor-critics): a read of the target inside a detached expression
  (`advantages = (td_targets - values).detach()`) is not a use; the critic's loss after it is.

The fresh shapes (tests/lint/recall_r796_programs/bad_*) were written and run under torch before
the changed linter ran on them; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_r796_programs"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def test_a_next_value_chosen_by_a_conditional_expression_is_a_target_with_a_graph():
    source = program_source(PROGRAMS, "bad_sarsa_next_q_from_conditional_expression")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "loss = F.smooth_l1_loss(q, target)"), "ADL032")]
    assert f"the TD target `target` (line {line_starting(source, 'target = reward')})" in found[0][2]
    assert "use `target.detach()`" in found[0][2]
    assert run_as_module(source, "bad_sarsa_ifexp").bug_shows()


def test_the_detached_branch_applied_stays_silent_and_is_the_td_update():
    source = program_source(PROGRAMS, "ok_sarsa_next_q_detached_in_conditional_expression")
    assert _found(source) == []
    assert run_as_module(source, "ok_sarsa_ifexp").is_semi_gradient()


def test_an_advantage_read_only_detached_is_not_the_loss():
    source = program_source(PROGRAMS, "ok_a2c_advantage_of_undetached_target_read_only_detached")
    assert _found(source) == []
    assert run_as_module(source, "ok_a2c_advantage").is_semi_gradient()


def test_an_advantage_squared_as_the_critic_loss_is_reported_where_it_is_formed():
    source = program_source(PROGRAMS, "bad_a2c_advantage_of_undetached_target_squared")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "advantage = target - value"), "ADL032")]
    assert run_as_module(source, "bad_a2c_advantage").bug_shows()


def test_an_advantage_detached_as_a_whole_is_not_a_use_of_the_target():
    source = program_source(PROGRAMS, "ok_a2c_advantage_detached_as_a_whole")
    assert _found(source) == []
    assert run_as_module(source, "ok_a2c_detached_whole").is_semi_gradient()


def test_the_critic_loss_after_a_wholly_detached_advantage_is_where_it_is_reported():
    source = program_source(PROGRAMS, "bad_a2c_advantage_detached_but_critic_target_not")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "critic_loss = F.mse_loss(values, td_targets)"), "ADL032")]
    assert run_as_module(source, "bad_a2c_detached_whole").bug_shows()


def test_td_errors_read_by_a_loop_header_still_reach_the_loss():
    source = program_source(PROGRAMS, "bad_dqn_td_errors_squared_in_a_loop")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "td_errors = targets - q"), "ADL032")]
    assert run_as_module(source, "bad_dqn_loop").bug_shows()
