"""Held-out set 44's causes (docs/bug-reports.md, "Set 44"). The other shapes below were written
before the changes were run on them.

- AD305, torch.autograd.grad with respect to `model.parameters()`: grad() consumes the iterator,
  so the doctor read no inputs at all, could not see that not one of them reaches the output, and
  offered a zero gradient for them (materialize_grads=True), which runs and trains nothing
  (an EWC Fisher estimate from detached log-likelihoods). The inputs are now read from the tuple
  grad() made of them; and when the output itself is a leaf made to require grad (it records
  nothing it was computed from), the line that makes it is named.
- AD123, a seed of ones in another shape than its output: `loss.backward(idx)` with
  `idx = torch.ones(n_gpus)` for a 0-d loss (a name bound to ones, read live), and
  `torch.autograd.backward([loss0, ...], [torch.ones(1), ...])` written as lists in the call: a seed
  of ones asks for the gradient of the sum of the output's elements, so ones of the output's own
  shape (`torch.ones_like`) ask for the same."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET44 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set44")


def _case(name: str) -> tuple[str, str]:
    with open(os.path.join(SET44, "cases", name), encoding="utf-8") as stream:
        case = stream.read()
    with open(os.path.join(SET44, "correct", name), encoding="utf-8") as stream:
        correct = stream.read()
    return case, correct


def _same_result(tmp_path, fixed: str, correct: str):
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    correct_result = run_plain(tmp_path, textwrap.dedent(correct), "correct.py")["result"]
    assert fixed_result.keys() == correct_result.keys()
    for key in fixed_result:
        fixed_value, correct_value = fixed_result[key], correct_result[key]
        if isinstance(fixed_value, torch.Tensor):
            fixed_value, correct_value = [fixed_value], [correct_value]
        assert len(fixed_value) == len(correct_value)
        for a, b in zip(fixed_value, correct_value):
            assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


# --- AD305: the inputs given as an iterator ---------------------------------------------------------

# A reward read with .item() and wrapped in a new leaf, differentiated with respect to the policy's
# parameters, given as the iterator `policy.parameters()`.
REWARD_WRAPPED_IN_A_NEW_LEAF = """
    import torch
    import torch.nn as nn

    torch.manual_seed(1)
    policy = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    state = torch.randn(5, 4)
    reward = policy(state).softmax(dim=-1)[:, 0].mean().item()
    objective = torch.tensor(reward, requires_grad=True)  # MADE
    grads = torch.autograd.grad(objective, policy.parameters())  # GRAD
"""

# One layer of the iterator's parameters is used, another is not: a zero gradient for the unused
# one is still offered, as it is for a tuple of inputs.
ONE_LAYER_UNUSED = """
    import torch
    import torch.nn as nn

    torch.manual_seed(2)


    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.used = nn.Linear(3, 1)
            self.spare = nn.Linear(3, 1)

        def forward(self, x):
            return self.used(x)


    model = TwoHeads()
    out = model(torch.randn(4, 3)).sum()
    grads = torch.autograd.grad(out, model.parameters())  # GRAD
    result = {"grads": list(grads)}
"""


def test_the_set44_fisher_estimate_gets_no_zero_gradient_help(tmp_path):
    case, _ = _case("ewc_fisher_log_likelihoods_detached_then_marked.py")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == "AD305" and outcome.diagnosis.primary.line == 41
    assert "made here as a new leaf" in outcome.diagnosis.primary.note
    assert not any("materialize_grads" in (h.replacement or "") for h in outcome.diagnosis.help)
    assert any("none of the inputs is used" in note for note in outcome.diagnosis.notes)


def test_a_reward_wrapped_in_a_new_leaf_gets_no_zero_gradient_help(tmp_path):
    outcome = run_as_script(tmp_path, REWARD_WRAPPED_IN_A_NEW_LEAF)
    assert outcome.diagnosis.code == "AD305" and outcome.diagnosis.primary.line == outcome.line("MADE")
    assert not any("materialize_grads" in (h.replacement or "") for h in outcome.diagnosis.help)


def test_one_unused_layer_of_an_iterator_still_gets_the_zero_gradient_help(tmp_path):
    outcome = run_as_script(tmp_path, ONE_LAYER_UNUSED)
    assert outcome.diagnosis.code == "AD305"
    assert outcome.diagnosis.help[0].replacement.endswith("materialize_grads=True)")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]["grads"]
    assert len(fixed) == 4 and torch.equal(fixed[2], torch.zeros(1, 3)) and torch.equal(fixed[3], torch.zeros(1))


# --- AD123: a seed of ones in another shape -----------------------------------------------------------

# A critic's loss weighted per sample before the mean, then back-propagated with a seed of ones
# kept on the trainer (one per sample, from before the loss was averaged).
SEED_KEPT_ON_THE_TRAINER = """
    import torch
    import torch.nn as nn

    torch.manual_seed(4)


    class CriticTrainer:
        def __init__(self, batch_size):
            self.critic = nn.Linear(3, 1)
            self.optimizer = torch.optim.SGD(self.critic.parameters(), lr=0.1)
            self.seed = torch.ones(batch_size)

        def step(self, states, returns):
            self.optimizer.zero_grad()
            loss = ((self.critic(states).squeeze(-1) - returns) ** 2).mean()
            loss.backward(self.seed)  # SEED
            self.optimizer.step()
            return loss.item()


    trainer = CriticTrainer(batch_size=6)
    losses = [trainer.step(torch.randn(6, 3), torch.randn(6)) for _ in range(3)]
    result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in trainer.critic.parameters()]}
"""

SEED_KEPT_ON_THE_TRAINER_BY_HAND = SEED_KEPT_ON_THE_TRAINER.replace("loss.backward(self.seed)", "loss.backward()")

# An actor-critic's two losses back-propagated together, the seeds written as a tuple in the call.
TWO_LOSSES_IN_A_TUPLE = """
    import torch
    import torch.nn as nn

    torch.manual_seed(5)
    body = nn.Linear(4, 8)
    actor, critic = nn.Linear(8, 2), nn.Linear(8, 1)
    params = [*body.parameters(), *actor.parameters(), *critic.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.05)
    for step in range(3):
        features = torch.relu(body(torch.randn(5, 4)))
        policy_loss = -actor(features).log_softmax(dim=-1)[:, 0].mean()
        value_loss = critic(features).pow(2).mean()
        optimizer.zero_grad()
        torch.autograd.backward((policy_loss, value_loss), (torch.ones(1), torch.ones(1)))  # SEEDS
        optimizer.step()
    result = {"params": [p.detach().clone() for p in params]}
"""

TWO_LOSSES_BY_HAND = TWO_LOSSES_IN_A_TUPLE.replace("(torch.ones(1), torch.ones(1))",
                                                   "(torch.tensor(1.), torch.tensor(1.))")

# A seed of halves in the wrong shape: what was meant is not shown, so no change is offered.
SEED_OF_HALVES = """
    import torch

    w = torch.randn(3, requires_grad=True)
    loss = (w ** 2).sum()
    weights = torch.full((4,), 0.5)
    loss.backward(weights)  # SEED
"""

# The correct twin: a seed of ones of the loss's own shape.
SEED_OF_THE_OUTPUT_SHAPE = """
    import torch

    w = torch.randn(3, requires_grad=True)
    loss = (w ** 2).sum()
    seed = torch.ones_like(loss)
    loss.backward(seed)
    result = {"grad": w.grad.clone()}
"""


def test_the_set44_per_gpu_seed_becomes_ones_of_the_loss_shape(tmp_path):
    case, correct = _case("lidar_moving_object_loss_backward_with_per_gpu_seed.py")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == "AD123" and outcome.diagnosis.primary.line == 53
    assert outcome.diagnosis.help[0].replacement == "loss_m.backward(torch.ones_like(loss_m))"
    _same_result(tmp_path, apply_help(outcome), correct)


def test_the_set44_part_losses_get_ones_of_their_own_shapes(tmp_path):
    case, correct = _case("reid_part_losses_backward_with_one_element_seeds.py")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == "AD123" and outcome.diagnosis.primary.line == 56
    assert "torch.ones_like(loss5)" in outcome.diagnosis.help[0].replacement
    _same_result(tmp_path, apply_help(outcome), correct)


def test_a_seed_kept_on_the_trainer_becomes_ones_of_the_loss_shape(tmp_path):
    outcome = run_as_script(tmp_path, SEED_KEPT_ON_THE_TRAINER)
    assert outcome.diagnosis.code == "AD123" and outcome.diagnosis.primary.line == outcome.line("SEED")
    _same_result(tmp_path, apply_help(outcome), SEED_KEPT_ON_THE_TRAINER_BY_HAND)


def test_two_losses_with_seeds_in_a_tuple_get_ones_of_their_own_shapes(tmp_path):
    outcome = run_as_script(tmp_path, TWO_LOSSES_IN_A_TUPLE)
    assert outcome.diagnosis.code == "AD123" and outcome.diagnosis.primary.line == outcome.line("SEEDS")
    _same_result(tmp_path, apply_help(outcome), TWO_LOSSES_BY_HAND)


def test_a_seed_of_halves_gets_no_change(tmp_path):
    outcome = run_as_script(tmp_path, SEED_OF_HALVES)
    assert outcome.diagnosis.code == "AD123"
    assert not any(h.replacement for h in outcome.diagnosis.help)


def test_a_seed_of_the_output_shape_is_silent(tmp_path):
    outcome = run_program(tmp_path, SEED_OF_THE_OUTPUT_SHAPE)
    assert outcome.error is None and not outcome.diagnoses
