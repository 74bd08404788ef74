"""Recall cause of r646-r656 worked on (docs/lint.md, "A twenty-ninth held-out
set, written as real code is written (r646-r660)").

* ADL003 (r650): an optimizer built in a constructor over the parameters of a
  module the constructor was handed (`self.critic = critic`,
  `Adam(critic.parameters())`) steps the module the other methods call as
  `self.critic`.  The alias holds when the argument is never re-bound in the
  constructor and the class binds the attribute once; a call of the object
  holding it (`self(obs)`) does not count as a use of it.

The fresh shape (tests/lint/recall29_programs/, written and run under torch
before the linter ran on it): the finding at its line, raising under torch;
the suggested change (the policy loss built after the critic's step) gives the
gradients of a hand-written version; correct near twins silent."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import torch

from autograd_doctor.lint import lint_source

PROGRAMS = Path(__file__).parent / "recall29_programs"


def _load(name: str):
    path = next(PROGRAMS.glob(name + "_*.py"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path.read_text(encoding="utf-8"), module


def _found(source: str, code: str = "ADL003"):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_critic_step_before_policy_backward_found_through_the_constructor_argument():
    source, module = _load("b1")
    found = _found(source)
    assert [line for line, _ in found] == [_line_of(source, "self.critic_opt.step()")]
    assert "updates the parameters of `self.critic` in place" in found[0][1]
    assert "`policy_loss`" in found[0][1] and "will fail" in found[0][1]
    try:
        module.run()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
    else:
        raise AssertionError("b1 should raise")


def test_policy_loss_after_the_critic_step_is_silent_and_gives_the_hand_written_gradients():
    source, module = _load("ok1")
    assert _found(source) == []
    b1_source, b1 = _load("b1")
    agent = b1.make_agent()
    actor, critic = copy.deepcopy(agent.actor), copy.deepcopy(agent.critic)
    torch.manual_seed(1)
    s, a, r, s2 = torch.randn(8, 3), torch.randn(8, 1), torch.randn(8, 1), torch.randn(8, 3)
    fixed = module.DDPGAgent(agent.actor, agent.critic)
    fixed.update(s, a, r, s2)
    # by hand: one Adam step of the critic, then the policy loss's gradient
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    with torch.no_grad():
        y = r + 0.99 * critic(torch.cat([s2, actor(s2)], 1))
    critic_opt.zero_grad()
    (critic(torch.cat([s, a], 1)) - y).pow(2).mean().backward()
    critic_opt.step()
    actor.zero_grad()
    policy_loss = -critic(torch.cat([s, actor(s)], 1)).mean()
    grads = torch.autograd.grad(policy_loss, list(actor.parameters()))
    for expected, actual in zip(grads, [p.grad for p in fixed.actor.parameters()]):
        assert torch.equal(expected, actual)


def test_call_of_the_object_holding_the_module_is_not_a_use_of_it():
    source, module = _load("ok2")
    assert _found(source) == []
    module.run()


def test_recreation_r650_found_at_both_critic_steps():
    path = next((Path(__file__).parent / "recreations").glob("r650_*.py"))
    source = path.read_text(encoding="utf-8")
    found = _found(source)
    assert [line for line, _ in found] == [_line_of(source, "self.critic1_optim.step()  #"),
                                          _line_of(source, "self.critic2_optim.step()  #")]
    assert "`self.critic1`" in found[0][1] and "`self.critic2`" in found[1][1]
