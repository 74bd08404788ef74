"""Held-out set 38's cause.

SpiralNotebook (the reparameterisation notebook): a Gaussian's width is fitted with
`y = Normal(x, delta).sample()`. `sample()` draws under no_grad, the loss has no grad_fn and
backward() raises "element 0 of tensors does not require grad". AD301 named the backward() call
with the advice "make sure the parameters require grad": the path search followed `y` back to the
`sample()` statement but saw no input that carried gradients (the distribution object is not a
tensor). Now a live distribution whose parameters require grad carries gradients, and a `sample()`
on such a distribution that has `rsample()` (or on one built in place, `Normal(mu, sigma).sample()`)
is the cut: the line named is the draw and the help is `rsample()`. Tested on the set-38 case and on
another shape written before the change was run on it (moment matching with a distribution built
in place and `sample((256,))`); the `rsample()` versions run silent, and a Categorical, which has
no `rsample()`, gets no rsample help."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_help, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET38 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set38")
NOISE = "noise_scale_fit_through_sample_instead_of_rsample.py"

MOMENT_MATCHING = """
    import torch

    torch.manual_seed(1)
    target_mean = torch.tensor([1.5, -0.5])
    target_std = torch.tensor([0.7, 2.0])

    mu = torch.zeros(2, requires_grad=True)
    log_std = torch.zeros(2, requires_grad=True)
    optimizer = torch.optim.SGD([mu, log_std], lr=0.1)
    losses = []
    for step in range(10):
        optimizer.zero_grad()
        draws = torch.distributions.Normal(mu, log_std.exp()).sample((256,))  # DRAW
        loss = ((draws.mean(0) - target_mean) ** 2).sum() + ((draws.std(0) - target_std) ** 2).sum()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

    result = {"losses": torch.stack(losses), "mu": mu.detach().clone(), "log_std": log_std.detach().clone()}
"""

CATEGORICAL_DRAW = """
    import torch

    torch.manual_seed(2)
    logits = torch.zeros(4, requires_grad=True)
    values = torch.tensor([0.0, 1.0, 2.0, 3.0])
    policy = torch.distributions.Categorical(logits=logits)
    actions = policy.sample((64,))  # DRAW
    loss = -values[actions].float().mean()
    loss.backward()
"""


def test_the_set38_case_names_the_draw_and_its_help_gives_the_correct_version(tmp_path):
    source = open(os.path.join(SET38, "cases", NOISE)).read()
    outcome = run_program(tmp_path, source, "noise.py")
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD301"
    assert outcome.diagnosis.primary.line == 25
    assert outcome.diagnosis.help[0].replacement is not None and "normal.rsample()" in apply_help(outcome)
    fixed = apply_help(outcome)
    correct = run_plain(tmp_path, open(os.path.join(SET38, "correct", NOISE)).read(), "correct.py")["result"]
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    assert torch.equal(fixed_result["losses"], correct["losses"])
    assert torch.equal(fixed_result["delta"], correct["delta"])
    fixed_outcome = run_program(tmp_path, fixed, "fixed_watched.py")
    assert fixed_outcome.error is None and not fixed_outcome.diagnoses


def test_a_distribution_built_in_place_and_sampled_is_named_at_the_draw(tmp_path):
    program = textwrap.dedent(MOMENT_MATCHING)
    outcome = run_program(tmp_path, program)
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD301"
    assert outcome.diagnosis.primary.line == outcome.line("DRAW")
    fixed = apply_help(outcome)
    by_hand = program.replace(".sample((256,))", ".rsample((256,))")
    assert fixed == by_hand
    fixed_outcome = run_program(tmp_path, by_hand, "by_hand.py")
    assert fixed_outcome.error is None and not fixed_outcome.diagnoses
    assert run_plain(tmp_path, by_hand, "by_hand_plain.py")["result"]["mu"].abs().sum() > 0


def test_a_categorical_draw_gets_no_rsample_help(tmp_path):
    outcome = run_program(tmp_path, textwrap.dedent(CATEGORICAL_DRAW))
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD301"
    assert not any("rsample" in (h.message + str(h.replacement)) for h in outcome.diagnosis.help)
