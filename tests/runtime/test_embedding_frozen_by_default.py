"""AD241: an embedding layer rebuilt with `from_pretrained` from a tensor that requires grad is
frozen by the default `freeze=True`, and the model around it trains without it; nothing fails
(held-out set 22, huggingface/optimum-graphcore#304: embedding shards stacked back with
`nn.Embedding.from_pretrained(torch.vstack(...), padding_idx=0)`; undiagnosed on the first run).
The two programs here are other shapes of the same cause: a vocabulary grown by concatenating new
rows to the trained weight, with the optimizer built from the parameters that require grad, and an
`nn.EmbeddingBag` copied from a trained `nn.Embedding`, with the optimizer built from all
parameters (it holds the frozen weight, which never gets a gradient). The near-twins load fixed
vectors on purpose, pass `freeze=True` explicitly, pass `freeze=False`, or unfreeze afterwards."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

GROWN = """
import torch
import torch.nn as nn
torch.manual_seed(0)


def grow_vocabulary(model, extra):
    old = model.embed.weight
    rows = torch.randn(extra, old.shape[1]) * 0.02
    model.embed = nn.Embedding.from_pretrained(torch.cat([old, rows]))  # CALL
    return model


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(8, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, ids):
        return self.out(self.embed(ids))


model = grow_vocabulary(Tagger(), 4)
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.01)
ids, tags = torch.randint(0, 12, (5, 7)), torch.randint(0, 3, (5, 7))
for step in range(3):
    loss = nn.functional.cross_entropy(model(ids).reshape(-1, 3), tags.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # STEP
params = [p.detach().clone() for p in model.parameters()]
"""

BAG = """
import torch
import torch.nn as nn
torch.manual_seed(0)

token_embedding = nn.Embedding(20, 5)


class BagClassifier(nn.Module):
    def __init__(self, source):
        super().__init__()
        self.bag = nn.EmbeddingBag.from_pretrained(source.weight, mode="mean")  # CALL
        self.head = nn.Linear(5, 2)

    def forward(self, ids, offsets):
        return self.head(self.bag(ids, offsets))


classifier = BagClassifier(token_embedding)
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.5)
ids, offsets, y = torch.randint(0, 20, (12,)), torch.tensor([0, 4, 8]), torch.tensor([0, 1, 1])
for step in range(3):
    optimizer.zero_grad()
    nn.functional.cross_entropy(classifier(ids, offsets), y).backward()
    optimizer.step()  # STEP
params = [p.detach().clone() for p in classifier.parameters()]
"""

CASES = {"a vocabulary grown by concatenation": GROWN, "an EmbeddingBag copied from a trained Embedding": BAG}


def _answer(source: str) -> str:
    return "\n".join(line.replace("]))  # CALL", "]), freeze=False)").replace('mode="mean")  # CALL',
                                                                             'mode="mean", freeze=False)')
                     for line in source.splitlines())


@pytest.mark.parametrize("name", list(CASES))
def test_the_call_is_named(tmp_path, name):
    outcome = run_program(tmp_path, CASES[name])
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD241"]
    assert diagnosis.primary.line == outcome.line("CALL")
    assert [r.line for r in diagnosis.related] == [outcome.line("STEP")]
    assert "freeze=False)" in diagnosis.help[0].replacement


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_trains_as_the_answer_does(tmp_path, name):
    outcome = run_program(tmp_path, CASES[name])
    change = next(d for d in outcome.diagnoses if d.code == "AD241").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["params"]
    answer_source = _answer(CASES[name])
    assert answer_source != CASES[name]
    answer = run_plain(tmp_path, answer_source, name="answer.py")["params"]
    assert len(fixed) == len(answer) and all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, CASES[name], name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


SILENT = {
    "fixed vectors frozen on purpose": GROWN.replace("torch.cat([old, rows])", "torch.randn(12, 6)"),
    "freeze=True written out": BAG.replace('mode="mean")', 'mode="mean", freeze=True)'),
    "freeze=False": _answer(GROWN),
    "unfrozen afterwards": GROWN.replace("    return model\n", "    model.embed.weight.requires_grad_(True)\n"
                                                             "    return model\n"),
}


@pytest.mark.parametrize("name", list(SILENT))
def test_correct_programs_are_silent(tmp_path, name):
    assert SILENT[name] not in CASES.values()
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD241"], name


def test_from_pretrained_is_restored_after_the_doctor(tmp_path):
    before = vars(torch.nn.Embedding)["from_pretrained"]
    run_program(tmp_path, GROWN)
    assert vars(torch.nn.Embedding)["from_pretrained"] is before
