"""AD181: a stateful optimizer built anew at every iteration of the training loop. Each new one
starts its state (moments, momentum buffers) at zero while the parameters carry on training, so
every update is a first step; nothing fails. Found when the doctor stops; the construction is
named and the help moves it before the loop (held-out set 20, Wangyixinxin/ACN#9: a
discriminator's Adam built inside the batch loop; undiagnosed on the first run). The two programs
here are other shapes of the same cause, written before the check was run on them: an acoustic
model's RMSprop built per utterance inside nested loops, and a trainer method whose `while` loop
builds `self.opt` (an Adam) each step."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

ACOUSTIC = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
acoustic = nn.Sequential(nn.Linear(10, 12), nn.Tanh(), nn.Linear(12, 4))
frames, targets = torch.randn(6, 8, 10), torch.randn(6, 8, 4)
for epoch in range(2):
    for utterance in range(6):
        rms = torch.optim.RMSprop(acoustic.parameters(), lr=1e-2, momentum=0.5)  # BUILT
        loss = F.mse_loss(acoustic(frames[utterance]), targets[utterance])
        rms.zero_grad()
        loss.backward()
        rms.step()  # STEP
params = [p.detach().clone() for p in acoustic.parameters()]
"""

ACOUSTIC_ANSWER = ACOUSTIC.replace(
    "        rms = torch.optim.RMSprop(acoustic.parameters(), lr=1e-2, momentum=0.5)  # BUILT\n", "").replace(
    "for epoch in range(2):\n",
    "rms = torch.optim.RMSprop(acoustic.parameters(), lr=1e-2, momentum=0.5)\nfor epoch in range(2):\n")

TRAINER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Trainer:
    def __init__(self, net):
        self.net = net

    def fit(self, xs, ys, steps):
        i = 0
        while i < steps:
            self.opt = torch.optim.Adam(self.net.parameters(), lr=0.05, betas=(0.8, 0.99))  # BUILT
            loss = F.cross_entropy(self.net(xs[i]), ys[i])
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()  # STEP
            i += 1


trainer = Trainer(nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3)))
trainer.fit(torch.randn(4, 9, 5), torch.randint(0, 3, (4, 9)), 4)
params = [p.detach().clone() for p in trainer.net.parameters()]
"""

TRAINER_ANSWER = TRAINER.replace(
    "            self.opt = torch.optim.Adam(self.net.parameters(), lr=0.05, betas=(0.8, 0.99))  # BUILT\n",
    "").replace("        while i < steps:\n",
                "        self.opt = torch.optim.Adam(self.net.parameters(), lr=0.05, betas=(0.8, 0.99))\n"
                "        while i < steps:\n")

CASES = {"acoustic RMSprop in nested loops": (ACOUSTIC, ACOUSTIC_ANSWER, "rms", "for epoch in range(2):"),
         "a trainer's Adam in a while loop": (TRAINER, TRAINER_ANSWER, "self.opt", "while i < steps:")}


@pytest.mark.parametrize("name", list(CASES))
def test_the_construction_is_named_and_moved_before_the_loop(tmp_path, name):
    source, _answer, receiver, loop_header = CASES[name]
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD181"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert "built at every iteration" in diagnosis.primary.note
    assert [r.line for r in diagnosis.related] == [outcome.line("STEP")]
    move = diagnosis.help[0]
    assert move.message.startswith(f"build {receiver} once, before the loop")
    first, second = move.replacement.splitlines()[:2]
    assert first.startswith(f"{receiver} = torch.optim.") and second == loop_header


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_trains_as_the_answer_does(tmp_path, name):
    source, answer_source, _receiver, _header = CASES[name]
    outcome = run_program(tmp_path, source)
    move = next(d for d in outcome.diagnoses if d.code == "AD181").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, move.location, move.replacement))["params"]
    answer = run_plain(tmp_path, answer_source, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, source, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


TEST_TIME_ADAPTATION = """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
initial = copy.deepcopy(model.state_dict())
predictions = []
for sample in torch.randn(5, 4, 6):
    model.load_state_dict(initial)  # every test sample starts from the trained weights
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    probs = F.softmax(model(sample), dim=1)
    entropy = -(probs * probs.log()).sum(1).mean()
    optimizer.zero_grad()
    entropy.backward()
    optimizer.step()
    predictions.append(model(sample).argmax(1))
params = [p.detach().clone() for p in model.parameters()]
"""

PER_TASK_COPY = """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
base = nn.Linear(4, 2)
for task in range(4):
    learner = copy.deepcopy(base)  # a fresh copy per task
    inner = torch.optim.SGD(learner.parameters(), lr=0.1, momentum=0.9)
    loss = F.mse_loss(learner(torch.randn(8, 4)), torch.randn(8, 2))
    inner.zero_grad()
    loss.backward()
    inner.step()
params = [p.detach().clone() for p in base.parameters()]
"""

SILENT = {
    "the answers": ACOUSTIC_ANSWER,
    "the trainer's answer": TRAINER_ANSWER,
    "built once per epoch, several steps each": ACOUSTIC.replace(
        "        rms = torch.optim.RMSprop(acoustic.parameters(), lr=1e-2, momentum=0.5)  # BUILT\n", "").replace(
        "    for utterance in range(6):\n",
        "    rms = torch.optim.RMSprop(acoustic.parameters(), lr=1e-2, momentum=0.5)\n    for utterance in range(6):\n"),
    "plain SGD (no state) built every batch": ACOUSTIC.replace(
        "torch.optim.RMSprop(acoustic.parameters(), lr=1e-2, momentum=0.5)", "torch.optim.SGD(acoustic.parameters(), lr=1e-2)"),
    "test-time adaptation that loads the weights back": TEST_TIME_ADAPTATION,
    "an inner optimizer per task over a fresh copy": PER_TASK_COPY,
}


@pytest.mark.parametrize("name", list(SILENT))
def test_optimizers_built_again_on_purpose_are_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD181"], name
