"""AD240: an optimizer holds the parameters of a module whose `forward` carries a grad-off
decorator; they require grad and never get a gradient, and nothing fails (held-out set 22,
haotian-liu/LLaVA#1449: a CLIP vision tower unfrozen and optimised, its forward decorated with
`@torch.no_grad()`; undiagnosed on the first run). The two programs here are other shapes of the
same cause: a trainer class whose text encoder (stepped in its own parameter group) has a
decorated forward, and a speech model whose feature extractor, two modules deep, is decorated with
`no_grad()` imported from torch. The near-twins freeze the decorated module, train a decorated
module through another method, or have no decorator."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

TRAINER = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class TextEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.mix = nn.Linear(8, 8)

    @torch.no_grad()  # DECORATOR
    def forward(self, ids):
        return torch.tanh(self.mix(self.embed(ids))).mean(dim=1)


class Trainer:
    def __init__(self):
        self.encoder = TextEncoder()
        self.classifier = nn.Linear(8, 3)
        self.opt = torch.optim.Adam([{"params": self.encoder.parameters(), "lr": 1e-3},
                                     {"params": self.classifier.parameters(), "lr": 1e-2}])

    def fit(self, ids, labels):
        for _ in range(4):
            loss = nn.functional.cross_entropy(self.classifier(self.encoder(ids)), labels)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()  # STEP


trainer = Trainer()
trainer.fit(torch.randint(0, 10, (6, 5)), torch.randint(0, 3, (6,)))
params = [p.detach().clone() for p in list(trainer.encoder.parameters()) + list(trainer.classifier.parameters())]
"""

SPEECH = """
import torch
import torch.nn as nn
from torch import no_grad
torch.manual_seed(0)


class FeatureExtractor(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 5, stride=2)

    @no_grad()  # DECORATOR
    def forward(self, wave):
        return torch.relu(self.conv(wave)).transpose(1, 2)


class Frontend(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = FeatureExtractor()
        self.norm = nn.LayerNorm(4)

    def forward(self, wave):
        return self.norm(self.features(wave))


class SpeechModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.frontend = Frontend()
        self.out = nn.Linear(4, 6)

    def forward(self, wave):
        return self.out(self.frontend(wave)).mean(dim=1)


model = SpeechModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
wave, target = torch.randn(3, 1, 40), torch.randint(0, 6, (3,))
for step in range(3):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(wave), target)
    loss.backward()
    optimizer.step()  # STEP
params = [p.detach().clone() for p in model.parameters()]
"""

CASES = {"a trainer's text encoder": TRAINER, "a feature extractor two modules deep": SPEECH}


def _answer(source: str) -> str:
    lines = source.splitlines(keepends=True)
    return "".join(line for line in lines if "# DECORATOR" not in line)


@pytest.mark.parametrize("name", list(CASES))
def test_the_decorator_is_named(tmp_path, name):
    outcome = run_program(tmp_path, CASES[name])
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD240"]
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    assert [r.line for r in diagnosis.related] == [outcome.line("STEP")]
    assert "never got a gradient" in diagnosis.related[0].note
    assert diagnosis.help[0].replacement.startswith("def forward(self")


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_trains_as_the_answer_does(tmp_path, name):
    outcome = run_program(tmp_path, CASES[name])
    change = next(d for d in outcome.diagnoses if d.code == "AD240").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["params"]
    answer = run_plain(tmp_path, _answer(CASES[name]), name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, CASES[name], name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


SILENT = {
    "the decorated encoder frozen and left out": TRAINER.replace(
        "        self.opt = torch.optim.Adam([{\"params\": self.encoder.parameters(), \"lr\": 1e-3},\n"
        "                                     {\"params\": self.classifier.parameters(), \"lr\": 1e-2}])",
        "        self.encoder.requires_grad_(False)\n"
        "        self.opt = torch.optim.Adam(self.classifier.parameters(), lr=1e-2)"),
    "the decorated extractor frozen, optimizer over all parameters": SPEECH.replace(
        "model = SpeechModel()\n", "model = SpeechModel()\nmodel.frontend.features.requires_grad_(False)\n"),
    "no decorator": _answer(SPEECH),
    "a decorated forward for inference, trained through another method": """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Codebook(nn.Module):
    def __init__(self):
        super().__init__()
        self.codes = nn.Parameter(torch.randn(5, 3))

    def distances(self, x):
        return torch.cdist(x, self.codes)

    @torch.no_grad()
    def forward(self, x):
        return self.distances(x).argmin(dim=1)


book = Codebook()
optimizer = torch.optim.SGD(book.parameters(), lr=0.1)
x = torch.randn(8, 3)
for step in range(3):
    index = book(x)
    loss = book.distances(x).gather(1, index[:, None]).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
}


# A MoCo-style momentum encoder left requiring grad (set 30's catalogue variant, before its correct
# version froze it): called under no_grad in the parent's forward, held by the optimizer through
# model.parameters(), never given a gradient, and updated on purpose through `.data` from the query
# encoder. AD240 said "they never train" here (stop 49); parameters that change between the first two
# steps without a gradient are updated by the program, so nothing is reported.
MOMENTUM_ENCODER = """
import torch
from torch import nn


class MomentumContrast(nn.Module):
    def __init__(self, momentum=0.9):
        super().__init__()
        self.query_encoder = nn.Linear(6, 4)
        self.key_encoder = nn.Linear(6, 4)
        self.key_encoder.load_state_dict(self.query_encoder.state_dict())
        self.momentum = momentum

    def forward(self, view_a, view_b):
        queries = nn.functional.normalize(self.query_encoder(view_a), dim=1)
        for q_param, k_param in zip(self.query_encoder.parameters(), self.key_encoder.parameters()):
            k_param.data.mul_(self.momentum).add_(q_param.data, alpha=1 - self.momentum)
        with torch.no_grad():
            keys = nn.functional.normalize(self.key_encoder(view_b), dim=1)  # BLOCK
        logits = queries @ keys.t() / 0.2
        return nn.functional.cross_entropy(logits, torch.arange(len(logits)))


torch.manual_seed(0)
model = MomentumContrast()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    batch = torch.randn(3, 6)
    optimizer.zero_grad()
    loss = model(batch + 0.1 * torch.randn(3, 6), batch + 0.1 * torch.randn(3, 6))
    loss.backward()
    optimizer.step()
"""


def test_a_momentum_encoder_updated_through_data_is_not_said_to_never_train(tmp_path):
    outcome = run_program(tmp_path, MOMENTUM_ENCODER)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD240"]
    # Without the momentum update the same module is never updated, and AD240 names its call.
    frozen_in_place = MOMENTUM_ENCODER.replace(
        "            k_param.data.mul_(self.momentum).add_(q_param.data, alpha=1 - self.momentum)\n", "            pass\n")
    outcome = run_program(tmp_path, frozen_in_place)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD240"]
    assert diagnosis.primary.line == outcome.line("BLOCK")


def test_the_frozen_twins_change_the_source():
    assert all(SILENT[name] not in CASES.values() for name in SILENT)


@pytest.mark.parametrize("name", list(SILENT))
def test_correct_programs_are_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD240"], name
