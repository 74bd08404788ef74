"""A loss term computed through a function of the program that cuts what it returns from the
graph (`h = h.data`, `h.detach()` inside it): the term adds to the loss's value and trains
nothing, while the other terms keep the loss trainable, so nothing raises. AD206 names the cut
inside the function (the line to change), with the call's statement as "called from"."""

from __future__ import annotations

import torch

from helpers import run_plain, run_program
from autograd_doctor.analysis.fixes import apply_replacement

FEATURE_TERM_CUT_INSIDE_HELPER = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 6))
    probe = nn.Linear(6, 4)


    def features(x):
        h = probe(x)
        h = h.detach()  # CUT
        return h.abs().mean(1)


    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randn(8, 6)
    for step in range(3):
        out = net(x)
        feature_loss = F.l1_loss(features(out), features(y))  # TERM
        loss = F.mse_loss(out, y) + 0.5 * feature_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in net.parameters()]
"""

INTENDED = FEATURE_TERM_CUT_INSIDE_HELPER.replace("h = h.detach()", "h = h")

TARGET_DETACHED_INSIDE_HELPER = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    net = nn.Linear(3, 3)


    def target_of(y):
        t = y * 2
        t = t.detach()
        return t


    y = torch.randn(4, 3, requires_grad=True)
    loss = F.mse_loss(net(torch.randn(4, 3)), target_of(y))
    loss.backward()
"""


def test_the_cut_inside_the_called_function_is_named(tmp_path):
    outcome = run_program(tmp_path, FEATURE_TERM_CUT_INSIDE_HELPER)
    assert outcome.error is None
    terms = [d for d in outcome.diagnoses if d.code == "AD206"]
    assert terms, [d.code for d in outcome.diagnoses]
    diagnosis = terms[0]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert outcome.line("TERM") in {location.line for location in diagnosis.related}
    assert diagnosis.help[0].replacement == "h = h"


def test_the_help_applied_trains_through_the_feature_term_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, FEATURE_TERM_CUT_INSIDE_HELPER)
    help = next(d for d in outcome.diagnoses if d.code == "AD206").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help.location, help.replacement), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    cut = run_plain(tmp_path, outcome.source, "cut.py")
    assert not all(torch.equal(a, b) for a, b in zip(cut["result"], intended["result"]))


def test_a_helper_that_detaches_a_target_next_to_a_trained_prediction_says_nothing(tmp_path):
    outcome = run_program(tmp_path, TARGET_DETACHED_INSIDE_HELPER)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD206"]


def test_a_helper_that_gives_a_detached_input_to_a_module_says_nothing(tmp_path):
    # A critic's loss: the generator's output is detached, the critic itself is trained through
    # the term (set 10's DeblurGAN correct version drew AD206 here).
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        generator, critic = nn.Linear(3, 3), nn.Linear(3, 1)

        def critic_loss(real, fake):
            fake_score = critic(fake.detach()).mean()
            real_score = critic(real).mean()
            return fake_score - real_score

        fake = generator(torch.randn(4, 3))
        loss = critic_loss(torch.randn(4, 3), fake)
        loss.backward()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []
