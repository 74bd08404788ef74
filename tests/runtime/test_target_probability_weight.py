"""AD175: a loss weights a target's log-probability by that target's own probability, computed as
the exp of the very same log-probability and not detached (`p = logp.exp(); loss = -(p * logp)`).
Held-out set 14's DFT loss (twinkle#291) was silent. The term -p*log(p) of one class's
probability is largest at p = 1/e: differentiating the weight multiplies each example's gradient
by 1 + log(p), which lowers the target's probability wherever p < 1/e. With the weight detached
the gradient is p times cross-entropy's. These programs are other shapes of that cause: a
confidence-weighted loss module of an image classifier that picks the target's log-probability by
advanced indexing, and a token-weighted loss helper of a speech recogniser's decoder built with
`torch.exp(...)` and `gather`. An entropy over the whole distribution and a focal loss stay
silent."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

INDEXED_IN_A_LOSS_MODULE = textwrap.dedent("""
    import torch
    from torch import nn

    torch.manual_seed(0)


    class ConfidenceWeightedNLL(nn.Module):
        def forward(self, scores, labels):
            log_probs = torch.log_softmax(scores, dim=1)
            target_log_prob = log_probs[torch.arange(len(labels)), labels]
            confidence = torch.exp(target_log_prob)  # WEIGHT
            return -(confidence * target_log_prob).mean()


    classifier = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 10))
    criterion = ConfidenceWeightedNLL()
    optimizer = torch.optim.SGD(classifier.parameters(), lr=0.5)
    images, labels = torch.randn(16, 3, 8, 8), torch.randint(0, 10, (16,))
    for epoch in range(3):
        optimizer.zero_grad()
        loss = criterion(classifier(images), labels)
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in classifier.parameters()]
""")

INDEXED_REFERENCE = INDEXED_IN_A_LOSS_MODULE.replace("confidence = torch.exp(target_log_prob)  # WEIGHT",
                                                     "confidence = torch.exp(target_log_prob).detach()  # WEIGHT")

GATHERED_IN_A_HELPER = textwrap.dedent("""
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    BLANK = 0


    def token_weighted_loss(decoder_logits, transcript):
        keep = transcript != BLANK
        log_probs = F.log_softmax(decoder_logits, dim=-1)
        chosen = log_probs.gather(2, transcript.unsqueeze(2)).squeeze(2)
        token_weight = chosen.exp()  # WEIGHT
        return -(token_weight * chosen * keep).sum() / keep.sum()


    decoder = nn.GRU(6, 12, batch_first=True)
    projection = nn.Linear(12, 20)
    optimizer = torch.optim.Adam(list(decoder.parameters()) + list(projection.parameters()), lr=1e-2)
    features = torch.randn(4, 9, 6)
    transcript = torch.randint(0, 20, (4, 9))
    for step in range(3):
        hidden, _ = decoder(features)
        loss = token_weighted_loss(projection(hidden), transcript)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in list(decoder.parameters()) + list(projection.parameters())]
""")

GATHERED_REFERENCE = GATHERED_IN_A_HELPER.replace("token_weight = chosen.exp()  # WEIGHT",
                                                  "token_weight = chosen.exp().detach()  # WEIGHT")


def _check_named_and_fixed(tmp_path, program: str, reference: str, weight_line: str) -> None:
    outcome = run_program(tmp_path, program)
    assert outcome.error is None
    codes = [d.code for d in outcome.diagnoses]
    assert codes == ["AD175"], codes
    diagnosis = outcome.diagnosis
    assert diagnosis.primary.line == outcome.line("WEIGHT")
    help_ = diagnosis.help[0]
    assert help_.replacement == weight_line
    assert "1/e" in " ".join(diagnosis.notes)
    fixed = apply_replacement(program, help_.location, help_.replacement)
    assert fixed == reference
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    reference_result = run_plain(tmp_path, reference, "reference.py")["result"]
    original = run_plain(tmp_path, program, "original.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed_result, reference_result))
    assert not all(torch.allclose(a, b) for a, b in zip(original, reference_result))
    assert not [d for d in run_program(tmp_path, fixed, "fixed_watched.py").diagnoses if d.code == "AD175"]


def test_an_indexed_target_probability_weight_in_a_loss_module(tmp_path):
    _check_named_and_fixed(tmp_path, INDEXED_IN_A_LOSS_MODULE, INDEXED_REFERENCE,
                           "confidence = torch.exp(target_log_prob).detach()")


def test_a_gathered_target_probability_weight_in_a_helper(tmp_path):
    _check_named_and_fixed(tmp_path, GATHERED_IN_A_HELPER, GATHERED_REFERENCE, "token_weight = chosen.exp().detach()")


def test_an_entropy_bonus_and_a_focal_loss_say_nothing(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        policy = nn.Linear(4, 5)
        optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
        states, actions = torch.randn(8, 4), torch.randint(0, 5, (8,))
        for step in range(3):
            log_probs = torch.log_softmax(policy(states), dim=-1)
            probs = log_probs.exp()
            entropy = -(probs * log_probs).sum(-1).mean()
            log_pt = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
            focal = -((1 - log_pt.exp()) ** 2 * log_pt).mean()
            loss = focal - 0.01 * entropy
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD175"], [d.code for d in outcome.diagnoses]
