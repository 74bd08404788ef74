"""AD172: a parameter two modules share (weight tying, `head.weight = embedding.weight`) unfrozen
through one of its names after the model was frozen (set 15's Gemma `lm_head` tied to
`embed_tokens`). `requires_grad` belongs to the tensor, so the module meant to stay frozen trains
too, and nothing fails. Two programs of the same cause in other shapes (written before the check):
a character-level recogniser tied unconditionally in `__init__`, frozen parameter by parameter and
its classifier unfrozen with `requires_grad_(True)` inside a fine-tuning function, and a session
recommender tied under a constructor flag, frozen with `model.requires_grad_(False)` and its scorer
unfrozen through the parameter's path. The help gives the unfrozen name its own copy and keeps the
other frozen; applied, it gives the untied reference's losses and parameters."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

RECOGNISER = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(11)
    SYMBOLS, WIDTH = 30, 10


    class CharRecogniser(nn.Module):
        def __init__(self):
            super().__init__()
            self.char_embedding = nn.Embedding(SYMBOLS, WIDTH)
            self.encoder = nn.GRU(WIDTH, WIDTH, batch_first=True)
            self.classifier = nn.Linear(WIDTH, SYMBOLS, bias=False)
            self.classifier.weight = self.char_embedding.weight  # TIED

        def forward(self, chars):
            hidden, _ = self.encoder(self.char_embedding(chars))
            return self.classifier(hidden)


    def finetune(model, chars, steps):
        for parameter in model.parameters():
            parameter.requires_grad_(False)  # FROZEN
        model.classifier.requires_grad_(True)  # UNFROZEN
        optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
        for _ in range(steps):
            logits = model(chars[:, :-1])
            loss = F.cross_entropy(logits.reshape(-1, SYMBOLS), chars[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()  # STEP
        return loss.detach()


    model = CharRecogniser()
    chars = torch.randint(0, SYMBOLS, (4, 9))
    last_loss = finetune(model, chars, 3)
    learned = {name: p.detach().clone() for name, p in model.named_parameters(remove_duplicate=False)}
"""

# What the user meant, written by hand: the classifier its own copy of the embedding's values.
RECOGNISER_REFERENCE = RECOGNISER.replace(
    "self.classifier.weight = self.char_embedding.weight  # TIED",
    "self.classifier.weight = nn.Parameter(self.char_embedding.weight.detach().clone())")

RECOMMENDER = """
    import torch
    import torch.nn as nn

    torch.manual_seed(4)
    ITEMS = 40


    class SessionRecommender(nn.Module):
        def __init__(self, items, width, share_item_weights):
            super().__init__()
            self.item_embedding = nn.Embedding(items, width)
            self.user_tower = nn.Sequential(nn.Linear(width, width), nn.Tanh())
            self.scorer = nn.Linear(width, items, bias=False)
            if share_item_weights:
                self.scorer.weight = self.item_embedding.weight  # TIED
            else:
                self.scorer.weight = nn.Parameter(self.item_embedding.weight.detach().clone())

        def forward(self, sessions):
            return self.scorer(self.user_tower(self.item_embedding(sessions).mean(dim=1)))


    model = SessionRecommender(ITEMS, 8, share_item_weights=True)  # BUILT
    model.requires_grad_(False)  # FROZEN
    model.scorer.weight.requires_grad = True  # UNFROZEN
    model.user_tower.requires_grad_(True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    sessions, next_items = torch.randint(0, ITEMS, (12, 5)), torch.randint(0, ITEMS, (12,))
    losses = []
    for step in range(4):
        loss = nn.functional.cross_entropy(model(sessions), next_items)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # STEP
        losses.append(loss.detach())
    losses = torch.stack(losses)
    learned = {name: p.detach().clone() for name, p in model.named_parameters(remove_duplicate=False)}
"""

RECOMMENDER_REFERENCE = RECOMMENDER.replace("share_item_weights=True)  # BUILT", "share_item_weights=False)")

# Tied and trained as a whole (nothing frozen), or frozen with both names unfrozen, or with the
# shared tensor left frozen: the program means what it does, silent.
RECOMMENDER_ALL_TRAINED = RECOMMENDER.replace("    model.requires_grad_(False)  # FROZEN\n", "")
RECOMMENDER_BOTH_UNFROZEN = RECOMMENDER.replace(
    "    model.user_tower.requires_grad_(True)\n",
    "    model.user_tower.requires_grad_(True)\n    model.item_embedding.requires_grad_(True)\n")
RECOMMENDER_SHARED_FROZEN = RECOMMENDER.replace("    model.scorer.weight.requires_grad = True  # UNFROZEN\n", "")
# A freeze in a branch that did not run froze nothing: the whole model trains as written, silent.
RECOMMENDER_FREEZE_NOT_RUN = RECOMMENDER.replace(
    "    model.requires_grad_(False)  # FROZEN\n", "    if ITEMS > 100:\n        model.requires_grad_(False)\n")
assert len({RECOMMENDER, RECOMMENDER_ALL_TRAINED, RECOMMENDER_BOTH_UNFROZEN, RECOMMENDER_SHARED_FROZEN,
            RECOMMENDER_FREEZE_NOT_RUN}) == 5


def _shown(diagnosis, line: int) -> bool:
    """Whether a related location covers `line` (a loop's statement spans its body)."""
    return any(location.line <= line <= (location.end_line or location.line) for location in diagnosis.related)


def _same(first: dict, second: dict) -> bool:
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def test_the_recogniser_is_reported_at_the_tie_with_the_unfreezing_line(tmp_path):
    outcome = run_program(tmp_path, RECOGNISER)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD172"]
    assert diagnosis.primary.line == outcome.line("TIED")
    assert _shown(diagnosis, outcome.line("UNFROZEN")) and _shown(diagnosis, outcome.line("FROZEN"))
    assert _shown(diagnosis, outcome.line("STEP"))
    text = " ".join([diagnosis.primary.note or ""] + diagnosis.notes)
    assert "char_embedding.weight" in text and "classifier.weight" in text
    first = diagnosis.help[0]
    assert first.location.line == outcome.line("UNFROZEN")
    assert first.replacement.splitlines()[1:] == [
        "model.classifier.weight = nn.Parameter(model.classifier.weight.detach().clone())",
        "model.char_embedding.weight.requires_grad_(False)"]


def test_the_recogniser_help_gives_the_untied_reference(tmp_path):
    outcome = run_program(tmp_path, RECOGNISER)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD172"]
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, RECOGNISER_REFERENCE, name="reference.py")
    buggy = run_plain(tmp_path, RECOGNISER, name="buggy.py")
    assert torch.equal(fixed["last_loss"], reference["last_loss"])
    assert _same(fixed["learned"], reference["learned"])
    assert not torch.equal(buggy["learned"]["char_embedding.weight"], reference["learned"]["char_embedding.weight"])


def test_the_recommender_is_reported_at_the_construction_that_asks_for_the_tie(tmp_path):
    outcome = run_program(tmp_path, RECOMMENDER)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD172"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert _shown(diagnosis, outcome.line("TIED")) and _shown(diagnosis, outcome.line("UNFROZEN"))
    assert "share_item_weights=True" in (diagnosis.primary.note or "")
    assert diagnosis.help[0].location.line == outcome.line("UNFROZEN")


def test_the_recommender_help_gives_the_untied_reference(tmp_path):
    outcome = run_program(tmp_path, RECOMMENDER)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD172"]
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, RECOMMENDER_REFERENCE, name="reference.py")
    assert torch.equal(fixed["losses"], reference["losses"])
    assert _same(fixed["learned"], reference["learned"])


def test_tied_weights_meant_as_they_are_are_silent(tmp_path):
    for index, source in enumerate((RECOGNISER_REFERENCE, RECOMMENDER_REFERENCE, RECOMMENDER_ALL_TRAINED,
                                    RECOMMENDER_BOTH_UNFROZEN, RECOMMENDER_SHARED_FROZEN,
                                    RECOMMENDER_FREEZE_NOT_RUN)):
        folder = tmp_path / str(index)
        folder.mkdir()
        outcome = run_program(folder, source)
        assert outcome.error is None, (index, outcome.error)
        assert not [d for d in outcome.diagnoses if d.code == "AD172"], index
