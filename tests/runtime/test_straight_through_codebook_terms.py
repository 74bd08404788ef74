"""AD163: a codebook loss computed on the straight-through output `x + (e - x).detach()` instead of
on the codebook's own lookup `e`: the term's gradient goes through the straight-through's identity
path into `x` (the encoder) and the codebook never gets one (set 16's Olaf-World latent actions).
Two programs of the same cause in other shapes (written before the check was): a speech tokenizer
whose codebook is an `nn.Parameter` indexed by hand, the term a squared difference, at module
level; a recommender's quantised user features inside a training function, the codebook an
`nn.Embedding`, the term `smooth_l1_loss`."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

SPEECH_TOKENIZER = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Tokenizer(nn.Module):
        def __init__(self):
            super().__init__()
            self.codes = nn.Parameter(torch.randn(8, 3))

        def forward(self, hidden):
            index = torch.cdist(hidden.detach(), self.codes.detach()).argmin(dim=1)
            entries = self.codes[index]
            return hidden + (entries - hidden).detach(), entries


    encoder = nn.Sequential(nn.Linear(12, 10), nn.Tanh(), nn.Linear(10, 3))
    tokenizer = Tokenizer()
    decoder = nn.Linear(3, 12)
    optimizer = torch.optim.Adam([*encoder.parameters(), *tokenizer.parameters(), *decoder.parameters()], lr=0.05)
    waves = torch.randn(16, 12)
    losses = []
    for epoch in range(3):
        hidden = encoder(waves)
        quantized, entries = tokenizer(hidden)
        reconstruction = (decoder(quantized) - waves).pow(2).mean()
        codebook_term = ((quantized - hidden.detach()) ** 2).mean()  # TERM
        commitment = ((hidden - quantized.detach()) ** 2).mean()
        loss = reconstruction + codebook_term + 0.25 * commitment
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # STEP
        losses.append(loss.detach())
    result = [torch.stack(losses), tokenizer.codes.detach().clone(), *[p.detach().clone() for p in encoder.parameters()]]
"""

# The hand-written version: the codebook term on the codebook's own entries.
SPEECH_TOKENIZER_INTENDED = SPEECH_TOKENIZER.replace(
    "codebook_term = ((quantized - hidden.detach()) ** 2).mean()  # TERM",
    "codebook_term = ((entries - hidden.detach()) ** 2).mean()")

USER_FEATURES = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(1)
    tower = nn.Sequential(nn.Linear(9, 7), nn.ReLU(), nn.Linear(7, 5))
    centroids = nn.Embedding(6, 5)
    scorer = nn.Linear(5, 1)


    def train_step(optimizer, users, clicks):
        feats = tower(users)
        slot = torch.cdist(feats.detach(), centroids.weight.detach()).argmin(dim=1)
        codes = centroids(slot)
        st = feats + (codes - feats).detach()
        click_loss = F.binary_cross_entropy_with_logits(scorer(st).squeeze(1), clicks)
        align = F.smooth_l1_loss(st, feats.detach())  # TERM
        total = click_loss + align
        optimizer.zero_grad()
        total.backward()
        optimizer.step()  # STEP
        return total.detach()


    optimizer = torch.optim.SGD(list(tower.parameters()) + list(centroids.parameters()) + list(scorer.parameters()),
                                lr=0.3)
    users, clicks = torch.randn(20, 9), torch.randint(0, 2, (20,)).float()
    totals = [train_step(optimizer, users, clicks) for _ in range(3)]
    result = [torch.stack(totals), centroids.weight.detach().clone(), *[p.detach().clone() for p in tower.parameters()]]
"""

USER_FEATURES_INTENDED = USER_FEATURES.replace(
    "align = F.smooth_l1_loss(st, feats.detach())  # TERM",
    "align = F.smooth_l1_loss(codes, feats.detach())")

# A codebook updated by moving averages (no gradient wanted, requires_grad off): the term on the
# straight-through output is only the commitment; nothing is missing.
MOVING_AVERAGE_CODEBOOK = SPEECH_TOKENIZER.replace(
    "self.codes = nn.Parameter(torch.randn(8, 3))",
    "self.codes = nn.Parameter(torch.randn(8, 3), requires_grad=False)")


def _equal(a, b) -> bool:
    return all(torch.allclose(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(a, b))


def test_the_speech_tokenizer_term_is_named_with_the_lookup_in_its_place(tmp_path):
    outcome = run_program(tmp_path, SPEECH_TOKENIZER)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD163"]
    assert diagnosis.primary.line == outcome.line("TERM")
    assert outcome.line("STEP") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement == "codebook_term = ((entries - hidden.detach()) ** 2).mean()"
    assert "entries" in diagnosis.help[0].message and "quantized" in diagnosis.help[0].message


def test_the_speech_tokenizer_help_applied_trains_the_codebook_as_intended(tmp_path):
    outcome = run_program(tmp_path, SPEECH_TOKENIZER)
    fixed = run_plain(tmp_path, apply_help(_only(outcome, "AD163")), "fixed.py")
    intended = run_plain(tmp_path, SPEECH_TOKENIZER_INTENDED, "intended.py")
    assert _equal(fixed["result"], intended["result"])
    original = run_plain(tmp_path, SPEECH_TOKENIZER, "original.py")
    assert not torch.equal(original["result"][1], fixed["result"][1])  # the codebook trains now


def test_the_user_features_term_is_named_inside_the_training_function(tmp_path):
    outcome = run_program(tmp_path, USER_FEATURES)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD163"]
    assert diagnosis.primary.line == outcome.line("TERM")
    assert diagnosis.help[0].replacement == "align = F.smooth_l1_loss(codes, feats.detach())"
    fixed = run_plain(tmp_path, apply_help(_only(outcome, "AD163")), "fixed.py")
    intended = run_plain(tmp_path, USER_FEATURES_INTENDED, "intended.py")
    assert _equal(fixed["result"], intended["result"])


def _only(outcome, code):
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == code]
    return outcome


def test_the_intended_versions_are_silent(tmp_path):
    for number, source in enumerate([SPEECH_TOKENIZER_INTENDED, USER_FEATURES_INTENDED]):
        outcome = run_program(tmp_path, source, f"intended{number}.py")
        assert outcome.error is None
        assert not outcome.diagnoses


def test_a_codebook_that_wants_no_gradient_is_silent(tmp_path):
    outcome = run_program(tmp_path, MOVING_AVERAGE_CODEBOOK)
    assert outcome.error is None
    assert not outcome.diagnoses
