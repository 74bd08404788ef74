"""Held-out set 41's causes (docs/bug-reports.md, "Set 41"). The other shapes below were written
before the changes were run on them.

- AD112, a tensor computed element by element from leaves of its own shape (`A = x * y`,
  pythonclear.com): the derivative of each element is asked for, and the lines after backward()
  read the tensor as the values it holds; the help reduces it only inside the call, not the variable.
- AD301, a distribution's `sample()` written in a helper method of a module (laserkelvin.github.io's
  Bayesian linear layer, `Normal(mu, sigma).sample()` built in place): the draw is named, and every
  such draw of the class is changed to `rsample()`.
- AD309, a hand-written gradient accumulation `p.grad += q.grad` into a `.grad` that is None
  (discuss.pytorch.org 192471, first-order MAML): the help starts the sum from zeros, as PyTorch's
  None gradient means."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_replacement, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET41 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set41")

# --- AD112: one output per input element, read after backward() --------------------------------

TRAJECTORY = """
    import torch

    t = torch.linspace(0.0, 2.0, 6, requires_grad=True)
    position = 0.5 * 9.81 * t ** 2 + 3.0 * t
    position.backward()  # BACKWARD
    velocity = t.grad.clone()
    heights = position.detach().clone()
    result = {"velocity": velocity, "heights": heights}
"""

TRAJECTORY_BY_HAND = TRAJECTORY.replace("position.backward()", "position.backward(torch.ones_like(position))")

# A loss per element of a model's parameter, logged after backward(): the variable itself is reduced
# (the rule of set 11, kept).
PARAMETER_LOSS_LOGGED = """
    import torch
    from torch import nn

    w = nn.Parameter(torch.tensor([1.0, -2.0, 0.5]))
    target = torch.tensor([0.0, 1.0, 2.0])
    optimizer = torch.optim.SGD([w], lr=0.1)
    history = []
    for step in range(3):
        optimizer.zero_grad()
        loss = (w - target) ** 2
        loss.backward()  # BACKWARD
        optimizer.step()
        history.append(loss.detach())
    result = {"history": torch.stack(history), "w": w.detach().clone()}
"""

# --- AD301: sample() in a helper method of a module -----------------------------------------------

STOCHASTIC_POLICY = """
    import torch
    import torch.nn as nn

    torch.manual_seed(5)


    class GaussianPolicy(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 16)
            self.mean = nn.Linear(16, 2)
            self.log_std = nn.Parameter(torch.zeros(2))

        def act(self, mu):
            dist = torch.distributions.Normal(mu, self.log_std.exp())
            return dist.sample()  # DRAW

        def forward(self, state):
            return self.act(self.mean(torch.tanh(self.body(state))))


    policy = GaussianPolicy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    states = torch.randn(32, 4)
    goal = torch.tensor([1.0, -1.0])
    for step in range(3):
        optimizer.zero_grad()
        action = policy(states)
        loss = ((action - goal) ** 2).mean()
        loss.backward()
        optimizer.step()
    result = {"params": [p.detach().clone() for p in policy.parameters()]}
"""

STOCHASTIC_POLICY_BY_HAND = STOCHASTIC_POLICY.replace("return dist.sample()", "return dist.rsample()")

# A categorical draw in a helper has no rsample(): no rsample help.
CATEGORICAL_POLICY = STOCHASTIC_POLICY.replace(
    "dist = torch.distributions.Normal(mu, self.log_std.exp())",
    "dist = torch.distributions.Categorical(logits=mu)").replace(
    "loss = ((action - goal) ** 2).mean()", "loss = ((action.float() - goal[0]) ** 2).mean()")

# --- AD309: p.grad += q.grad into a None .grad --------------------------------------------------

WORKER_AVERAGE = """
    import copy

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(6)
    main = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(main.parameters(), lr=0.1)
    shards = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(3)]
    for step in range(3):
        optimizer.zero_grad()
        for xs, ys in shards:
            worker = copy.deepcopy(main)
            loss = F.mse_loss(worker(xs), ys)
            loss.backward()
            for p_main, p_worker in zip(main.parameters(), worker.parameters()):
                p_main.grad += p_worker.grad / len(shards)  # ACCUMULATE
        optimizer.step()
    result = {"params": [p.detach().clone() for p in main.parameters()]}
"""

WORKER_AVERAGE_BY_HAND = WORKER_AVERAGE.replace(
    "                p_main.grad += p_worker.grad / len(shards)  # ACCUMULATE",
    "                if p_main.grad is None:\n"
    "                    p_main.grad = torch.zeros_like(p_main)\n"
    "                p_main.grad += p_worker.grad / len(shards)  # ACCUMULATE")

# A weight decay added by hand to a parameter no loss uses: the .grad is None because the loss
# does not reach it, which zeros would hide: the advice stays.
DECAY_BY_HAND = """
    import torch
    import torch.nn as nn

    model = nn.Linear(3, 1)
    unused = nn.Parameter(torch.ones(3))
    loss = model(torch.randn(5, 3)).pow(2).mean()
    loss.backward()
    for p in [model.weight, unused]:
        p.grad += 0.01 * p  # DECAY
"""


def _case(name: str) -> tuple[str, str]:
    with open(os.path.join(SET41, "cases", name), encoding="utf-8") as stream:
        case = stream.read()
    with open(os.path.join(SET41, "correct", name), encoding="utf-8") as stream:
        correct = stream.read()
    return case, correct


def _apply_chain(outcome) -> str:
    """The first help with its chained helps ("and the next line of the same kind") applied, from
    the bottom up, as --verify-fix applies them."""
    helps = outcome.diagnosis.help
    chain = [helps[0]] + [h for h in helps[1:] if h.message.startswith("and the next line of the same kind")]
    source = outcome.source
    for suggestion in sorted(chain, key=lambda h: h.location.line, reverse=True):
        assert suggestion.replacement, suggestion.message
        source = apply_replacement(source, suggestion.location, suggestion.replacement)
    return source


def _same_result(tmp_path, fixed: str, correct: str):
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    correct_result = run_plain(tmp_path, correct, "correct.py")["result"]
    flat_fixed, flat_correct = _flatten(fixed_result), _flatten(correct_result)
    assert len(flat_fixed) == len(flat_correct)
    for a, b in zip(flat_fixed, flat_correct):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def _flatten(value) -> list:
    if isinstance(value, dict):
        return [t for key in sorted(value) for t in _flatten(value[key])]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flatten(item)]
    return [value]


# --- AD112 ----------------------------------------------------------------------------------------


def test_the_set41_product_is_reduced_only_in_the_backward_call(tmp_path):
    case, correct = _case("product_tensor_backward_without_gradient.py")
    outcome = run_as_script(tmp_path, case)
    assert outcome.diagnosis.code == "AD112" and outcome.diagnosis.primary.line == 16
    help = outcome.diagnosis.help[0]
    assert help.replacement == "A.sum().backward()"
    assert "A itself keeps its values" in help.message
    _same_result(tmp_path, _apply_chain(outcome), correct)


def test_a_position_per_time_step_keeps_its_values_after_the_help(tmp_path):
    outcome = run_as_script(tmp_path, TRAJECTORY)
    assert outcome.diagnosis.code == "AD112" and outcome.diagnosis.primary.line == outcome.line("BACKWARD")
    assert outcome.diagnosis.help[0].replacement == "position.sum().backward()"
    _same_result(tmp_path, _apply_chain(outcome), textwrap.dedent(TRAJECTORY_BY_HAND))


def test_a_loss_per_element_of_a_parameter_logged_afterwards_is_still_reduced_itself(tmp_path):
    outcome = run_as_script(tmp_path, PARAMETER_LOSS_LOGGED)
    assert outcome.diagnosis.code == "AD112"
    assert outcome.diagnosis.help[0].replacement == "loss = loss.sum()\nloss.backward()"


def test_the_corrected_trajectory_runs_silent(tmp_path):
    outcome = run_program(tmp_path, TRAJECTORY_BY_HAND)
    assert outcome.error is None and not outcome.diagnoses


# --- AD301 ----------------------------------------------------------------------------------------


def test_the_set41_bayesian_layer_draws_are_named_and_both_become_rsample(tmp_path):
    case, correct = _case("bayesian_linear_weights_drawn_with_sample.py")
    outcome = run_as_script(tmp_path, case)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301" and diagnosis.primary.line == 41
    assert [h.location.line for h in diagnosis.help if h.replacement] == [41, 46]
    _same_result(tmp_path, _apply_chain(outcome), correct)


def test_a_policy_drawing_in_a_helper_method_is_named_there(tmp_path):
    outcome = run_as_script(tmp_path, STOCHASTIC_POLICY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301" and diagnosis.primary.line == outcome.line("DRAW")
    assert diagnosis.help[0].replacement.startswith("return dist.rsample()")
    _same_result(tmp_path, _apply_chain(outcome), textwrap.dedent(STOCHASTIC_POLICY_BY_HAND))


def test_a_categorical_draw_in_a_helper_gets_no_rsample_help(tmp_path):
    outcome = run_as_script(tmp_path, CATEGORICAL_POLICY)
    assert outcome.error is not None
    assert all("rsample" not in (h.replacement or "") for d in outcome.diagnoses for h in d.help)


def test_the_reparameterised_policy_runs_silent(tmp_path):
    outcome = run_program(tmp_path, STOCHASTIC_POLICY_BY_HAND)
    assert outcome.error is None and not outcome.diagnoses


# --- AD309 ----------------------------------------------------------------------------------------


def test_the_set41_fomaml_sum_starts_from_zeros(tmp_path):
    case, correct = _case("fomaml_outer_loop_adds_local_grad_to_none_grad.py")
    outcome = run_as_script(tmp_path, case)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD309" and diagnosis.primary.line == 48
    assert diagnosis.help[0].replacement.splitlines()[:2] == [
        "if p_global.grad is None:", "    p_global.grad = torch.zeros_like(p_global)"]
    _same_result(tmp_path, _apply_chain(outcome), correct)


def test_worker_gradients_averaged_by_hand_start_from_zeros(tmp_path):
    outcome = run_as_script(tmp_path, WORKER_AVERAGE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD309" and diagnosis.primary.line == outcome.line("ACCUMULATE")
    _same_result(tmp_path, _apply_chain(outcome), textwrap.dedent(WORKER_AVERAGE_BY_HAND))


def test_a_decay_added_to_an_unused_parameter_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, DECAY_BY_HAND)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD309"
    assert all("zeros_like" not in (h.replacement or "") for h in diagnosis.help)


def test_the_averaged_workers_run_silent(tmp_path):
    outcome = run_program(tmp_path, WORKER_AVERAGE_BY_HAND)
    assert outcome.error is None and not outcome.diagnoses


# Fixed noise drawn in place in a helper, `Normal(torch.zeros(...), torch.ones(...)).sample()`, is
# no cut: the cut is the detach, and no rsample help is offered for the noise.
NOISE_IN_HELPER = """
    import torch
    import torch.nn as nn

    torch.manual_seed(7)


    class NoisyEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.mu = nn.Linear(3, 2)

        def noise(self, like):
            return torch.distributions.Normal(torch.zeros(like.shape), torch.ones(like.shape)).sample()

        def forward(self, x):
            mu = self.mu(x).detach()
            return mu + 0.1 * self.noise(mu)


    encoder = NoisyEncoder()
    loss = encoder(torch.randn(4, 3)).pow(2).mean()
    loss.backward()
"""


def test_fixed_noise_drawn_in_a_helper_is_not_named_as_the_cut(tmp_path):
    outcome = run_as_script(tmp_path, NOISE_IN_HELPER)
    assert outcome.error is not None
    assert all("rsample" not in (h.replacement or "") for d in outcome.diagnoses for h in d.help)
