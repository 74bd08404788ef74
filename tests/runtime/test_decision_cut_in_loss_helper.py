"""AD206: a loss term computed by a helper of the program from a hard decision, an argmax or a
comparison, of what the model predicts. Indices and comparisons are integer-valued: they have no
graph, so the term changes the printed loss and trains nothing. Set 17's hair-segmentation loss
compared image edges with the edges of `pred.argmax(1).float()`; the accepted fix used the hair
channel's probability, `pred[:, 1]`.

Over two classes given as a softmax's probabilities, argmax's value is the indicator of class 1
and its expected value is the probability of class 1; for a sigmoid's probability, `p > 0.5` has
the expected value `p`. Where the tensor decided on is such a probability, the change writes that
differentiable counterpart; anywhere else (more classes, logits, another threshold) the help is
advice. The two programs below were written for this cause before the check existed: a router's
compute budget (dim=-1, no keepdim) and an anomaly detector's flagged fraction (a comparison)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

ROUTER_BUDGET_ON_ARGMAX = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
    router = nn.Linear(16, 2)
    head = nn.Linear(16, 3)
    params = [*encoder.parameters(), *router.parameters(), *head.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.1)
    tokens, labels = torch.randn(10, 6), torch.randint(0, 3, (10,))


    def budget_penalty(gate_probs, budget):
        used = gate_probs.argmax(dim=-1).float()  # DECIDE
        return (used.mean() - budget) ** 2


    losses = []
    for step in range(3):
        hidden = encoder(tokens)
        gate = F.softmax(router(hidden), dim=-1)
        logits = head(hidden) * gate[:, 1:]
        loss = F.cross_entropy(logits, labels) + 0.5 * budget_penalty(gate, 0.3)  # TERM
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in params]]
"""

ROUTER_INTENDED = ROUTER_BUDGET_ON_ARGMAX.replace("gate_probs.argmax(dim=-1).float()  # DECIDE",
                                                  "gate_probs[..., 1]")

FLAGGED_FRACTION_ON_THRESHOLD = """
    import torch
    from torch import nn

    torch.manual_seed(1)
    detector = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 1))
    optimizer = torch.optim.Adam(detector.parameters(), lr=1e-2)
    readings = torch.randn(16, 5)
    faults = (readings[:, 0] > 1.0).float()


    def alarm_rate_loss(scores, expected_rate):
        flagged = (scores > 0.5).float()  # DECIDE
        rate = flagged.mean()
        return torch.abs(rate - expected_rate)


    losses = []
    for step in range(3):
        scores = torch.sigmoid(detector(readings)).squeeze(1)
        fit = nn.functional.binary_cross_entropy(scores, faults)
        loss = fit + 0.2 * alarm_rate_loss(scores, 0.1)  # TERM
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in detector.parameters()]]
"""

FLAGGED_INTENDED = FLAGGED_FRACTION_ON_THRESHOLD.replace("(scores > 0.5).float()  # DECIDE", "scores")

# Logits decided over three classes: which differentiable value was meant only the author knows.
THREE_CLASS_LOGITS = ROUTER_BUDGET_ON_ARGMAX.replace("router = nn.Linear(16, 2)", "router = nn.Linear(16, 3)") \
    .replace("gate = F.softmax(router(hidden), dim=-1)", "gate = router(hidden)").replace("gate[:, 1:]", "gate[:, 2:]")


def _decision_diagnosis(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD206"]
    return diagnosis


def test_the_routers_argmax_is_named_in_the_helper(tmp_path):
    outcome = run_program(tmp_path, ROUTER_BUDGET_ON_ARGMAX)
    diagnosis = _decision_diagnosis(outcome)
    assert diagnosis.primary.line == outcome.line("DECIDE")
    assert [r.line for r in diagnosis.related if r.role == "called from"] == [outcome.line("TERM")]
    assert "gate_probs.argmax(dim=-1)" in diagnosis.primary.note and "no gradient" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == "used = gate_probs[..., 1].float()"
    assert "probability of class 1" in diagnosis.help[0].message


def test_the_routers_probability_trains_as_the_hand_written_version(tmp_path):
    outcome = run_program(tmp_path, ROUTER_BUDGET_ON_ARGMAX)
    outcome.diagnoses = [_decision_diagnosis(outcome)]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, ROUTER_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    buggy = run_plain(tmp_path, ROUTER_BUDGET_ON_ARGMAX, "buggy.py")
    assert not torch.equal(buggy["result"][3], intended["result"][3])  # the router trains differently


def test_the_detectors_threshold_is_named_and_the_score_kept(tmp_path):
    outcome = run_program(tmp_path, FLAGGED_FRACTION_ON_THRESHOLD)
    diagnosis = _decision_diagnosis(outcome)
    assert diagnosis.primary.line == outcome.line("DECIDE")
    assert "scores > 0.5" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == "flagged = (scores).float()"
    outcome.diagnoses = [diagnosis]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, FLAGGED_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_a_decision_over_three_logits_gets_advice_only(tmp_path):
    outcome = run_program(tmp_path, THREE_CLASS_LOGITS)
    diagnosis = _decision_diagnosis(outcome)
    assert diagnosis.primary.line == outcome.line("DECIDE")
    assert diagnosis.help and diagnosis.help[0].replacement is None


def test_the_intended_versions_are_silent(tmp_path):
    for source in (ROUTER_INTENDED, FLAGGED_INTENDED):
        outcome = run_program(tmp_path, source)
        assert not [d for d in outcome.diagnoses if d.code == "AD206"]


def test_a_decision_used_as_a_target_is_silent(tmp_path):
    # The argmax picks a class to compare with (pseudo-labels): the term itself carries the
    # prediction's gradient, so nothing is cut from the loss.
    source = """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        inputs = torch.randn(8, 4)


        def self_training_loss(probs):
            pseudo = probs.argmax(dim=1)
            return F.nll_loss(torch.log(probs + 1e-8), pseudo)


        for step in range(2):
            probs = F.softmax(model(inputs), dim=1)
            loss = probs.pow(2).mean() + self_training_loss(probs)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    outcome = run_program(tmp_path, source)
    assert not [d for d in outcome.diagnoses if d.code == "AD206"]
