"""AD244: a helper called in the training loop puts the model in eval mode and nothing calls
train() again, so every later step trains with dropout off and batch norm frozen; nothing fails
(held-out set 21, wiseodd/controlled-text-generation: a text VAE's sampling helper calls
`self.eval()`; undiagnosed on the first run). The two programs here are other shapes of the same
cause, written before the check was run on them: a trainer whose preview method calls
`self.model.eval()` on a model with batch norm, and a GAN loop whose logging function puts the
generator (with dropout) in eval mode. The near-twins put the model back in train mode, freeze
batch norm on purpose after `model.train()`, or train in eval mode from the start."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

TRAINER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Trainer:
    def __init__(self, model):
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def preview(self, x):
        self.model.eval()  # EVAL
        with torch.no_grad():
            return self.model(x).argmax(-1)

    def fit(self, xs, ys):
        for x, y in zip(xs, ys):
            shown = self.preview(x)  # CALL
            loss = F.cross_entropy(self.model(x), y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()  # STEP


trainer = Trainer(nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3)))
trainer.fit(torch.randn(4, 8, 6), torch.randint(0, 3, (4, 8)))
params = [p.detach().clone() for p in trainer.model.parameters()]
"""

TRAINER_ANSWER = TRAINER.replace("            shown = self.preview(x)  # CALL\n",
                                 "            shown = self.preview(x)\n            self.model.train()\n")

GAN = """
import torch
import torch.nn as nn
torch.manual_seed(0)


def log_samples(gen, z):
    gen.eval()  # EVAL
    with torch.no_grad():
        return gen(z).mean().item()


generator = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Dropout(0.4), nn.Linear(12, 2))
critic = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
g_opt = torch.optim.Adam(generator.parameters(), lr=1e-2)
fixed_z = torch.randn(5, 4)
for it in range(4):
    g_loss = -critic(generator(torch.randn(16, 4))).mean()
    g_opt.zero_grad()
    g_loss.backward()
    g_opt.step()  # STEP
    sample_mean = log_samples(generator, fixed_z)  # CALL
params = [p.detach().clone() for p in generator.parameters()]
"""

GAN_ANSWER = GAN.replace("    sample_mean = log_samples(generator, fixed_z)  # CALL\n",
                         "    sample_mean = log_samples(generator, fixed_z)\n    generator.train()\n")

CASES = {"a trainer's preview method": (TRAINER, TRAINER_ANSWER, "self.model"),
         "a GAN's logging function": (GAN, GAN_ANSWER, "generator")}


@pytest.mark.parametrize("name", list(CASES))
def test_the_call_that_put_the_model_in_eval_mode_is_named(tmp_path, name):
    source, _answer, receiver = CASES[name]
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD244"]
    assert diagnosis.primary.line == outcome.line("CALL")
    assert "never put back in train mode" in diagnosis.primary.note
    assert [r.line for r in diagnosis.related] == [outcome.line("EVAL"), outcome.line("STEP")]
    assert diagnosis.help[0].replacement.splitlines()[-1] == f"{receiver}.train()"


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_trains_as_the_answer_does(tmp_path, name):
    source, answer_source, _receiver = CASES[name]
    outcome = run_program(tmp_path, source)
    change = next(d for d in outcome.diagnoses if d.code == "AD244").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["params"]
    answer = run_plain(tmp_path, answer_source, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, source, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


SILENT = {
    "validation, then train() again": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.3), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    for step in range(2):
        loss = F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 3, (8,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        accuracy = (model(torch.randn(8, 6)).argmax(-1) == 0).float().mean()
    model.train()
""",
    "batch norm frozen on purpose after train()": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(6, 16), nn.BatchNorm1d(16), nn.ReLU())
model = nn.Sequential(backbone, nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    model.train()
    backbone.eval()  # keep the pretrained statistics
    for step in range(2):
        loss = F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 3, (8,)))
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
    "trained in eval mode from the start": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.3), nn.ReLU(), nn.Linear(16, 3))
model.eval()  # deterministic fine-tuning
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    loss = F.cross_entropy(model(torch.randn(8, 6)), torch.randint(0, 3, (8,)))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "a frozen teacher put in eval mode each step": """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(6, 16), nn.Dropout(0.3), nn.Linear(16, 3))
student = nn.Sequential(nn.Linear(6, 3))
opt = torch.optim.SGD(student.parameters(), lr=0.1)
for step in range(4):
    teacher.eval()
    x = torch.randn(8, 6)
    with torch.no_grad():
        target = teacher(x).softmax(-1)
    loss = F.kl_div(student(x).log_softmax(-1), target, reduction="batchmean")
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
}


@pytest.mark.parametrize("name", list(SILENT))
def test_eval_mode_on_purpose_is_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD244"], name
