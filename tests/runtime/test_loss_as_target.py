"""AD227 for a loss used as a target: a head that predicts each sample's loss is regressed onto
the per-sample loss of the same forward pass, not detached (set 15's LDU uncertainty head was the
held-out case; the program below is another of the same cause, a loss-prediction module of
active learning). Named at the comparison; the help detaches the loss, and the program then
trains as the intended one. The detached version, and a loss compared with a constant, stay
silent."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

LOSS_PREDICTION_MODULE = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    backbone, classifier, loss_predictor = nn.Linear(5, 8), nn.Linear(8, 3), nn.Linear(8, 1)
    params = [*backbone.parameters(), *classifier.parameters(), *loss_predictor.parameters()]
    optimizer = torch.optim.SGD(params, lr=0.1)
    x, labels = torch.randn(16, 5), torch.randint(0, 3, (16,))
    for step in range(3):
        optimizer.zero_grad()
        features = torch.relu(backbone(x))
        per_sample = F.cross_entropy(classifier(features), labels, reduction="none")
        predicted_loss = loss_predictor(features).squeeze(1)
        module_loss = F.mse_loss(predicted_loss, per_sample)  # TARGET
        loss = per_sample.mean() + module_loss
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in params]
"""

INTENDED = LOSS_PREDICTION_MODULE.replace("F.mse_loss(predicted_loss, per_sample)  # TARGET",
                                          "F.mse_loss(predicted_loss, per_sample.detach())  # TARGET")


def test_the_comparison_is_named_and_the_help_detaches_the_loss(tmp_path):
    outcome = run_program(tmp_path, LOSS_PREDICTION_MODULE)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD227", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("TARGET")
    assert "a loss of the same forward pass" in diagnosis.primary.note
    assert diagnosis.help[0].replacement == "module_loss = F.mse_loss(predicted_loss, per_sample.detach())"


def test_the_help_applied_trains_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, LOSS_PREDICTION_MODULE)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, outcome.source, "original.py")
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], intended["result"]))


def test_the_detached_loss_and_a_loss_against_a_constant_say_nothing(tmp_path):
    outcome = run_program(tmp_path, INTENDED)
    assert outcome.error is None
    assert outcome.diagnoses == []
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(6, 4), torch.randint(0, 2, (6,))
        budget = torch.full((6,), 0.5)
        for step in range(2):
            optimizer.zero_grad()
            per_sample = F.cross_entropy(model(x), y, reduction="none")
            loss = per_sample.mean() + F.mse_loss(per_sample, budget)
            loss.backward()
            optimizer.step()
    """, name="constant.py")
    assert outcome.error is None
    assert outcome.diagnoses == []
