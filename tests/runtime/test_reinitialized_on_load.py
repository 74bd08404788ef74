"""AD171: a data-dependent initialisation (Glow's ActNorm) whose flag is a plain attribute runs
again after `load_state_dict()` and overwrites the loaded values. The flag's line is named; the
advice (the flag in a buffer, set with `fill_`), applied, makes a run resumed from a checkpoint
train exactly as the uninterrupted run; a flag kept in a buffer, and a module whose flag is set
before the load, are silent."""

import torch

from helpers import run_plain, run_program

PROGRAM = """
import io
import torch
import torch.nn as nn
torch.manual_seed(0)


class ActNorm2d(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.logs = nn.Parameter(torch.zeros(1, channels, 1, 1))
        self.inited = False  # FLAG

    def forward(self, x):
        if not self.inited:
            with torch.no_grad():
                self.bias.data.copy_(-x.mean(dim=(0, 2, 3), keepdim=True))
                self.logs.data.copy_(-torch.log(x.std(dim=(0, 2, 3), keepdim=True) + 1e-6))
            self.inited = True
        return (x + self.bias) * self.logs.exp()


def make():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), ActNorm2d(4), nn.Conv2d(4, 2, 3, padding=1))


def train(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for x in batches:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


data = [torch.randn(8, 2, 6, 6) * 3 + 1 for _ in range(6)]
model = make()
losses = train(model, data[:3])
if RESUME:
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    model = make()
    model.load_state_dict(torch.load(buffer))  # LOAD
losses += train(model, data[3:])
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""

BUFFERED = PROGRAM.replace("        self.inited = False  # FLAG",
                           "        self.register_buffer(\"inited\", torch.tensor(False))  # FLAG") \
    .replace("            self.inited = True", "            self.inited.fill_(True)")


def test_the_flag_is_named_and_the_advice_makes_the_resumed_run_the_uninterrupted_one(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("RESUME", "True"))
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD171"]
    assert diagnosis.primary.line == outcome.line("FLAG")
    assert outcome.line("LOAD") in [r.line for r in diagnosis.related]
    assert 'register_buffer("inited", torch.tensor(False))' in diagnosis.help[0].message
    assert "self.inited.fill_(True)" in diagnosis.help[0].message
    advised = run_plain(tmp_path, BUFFERED.replace("RESUME", "True"), "advised.py")["result"]
    uninterrupted = run_plain(tmp_path, PROGRAM.replace("RESUME", "False"), "uninterrupted.py")["result"]
    assert torch.allclose(advised["losses"], uninterrupted["losses"])
    assert all(torch.allclose(a, b) for a, b in zip(advised["params"], uninterrupted["params"]))
    assert not torch.allclose(outcome.namespace["result"]["losses"], uninterrupted["losses"])


def test_a_flag_kept_in_a_buffer_is_silent(tmp_path):
    outcome = run_program(tmp_path, BUFFERED.replace("RESUME", "True"))
    assert [d.code for d in outcome.diagnoses] == []


def test_a_module_whose_flag_is_already_set_is_silent(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("RESUME", "True").replace(
        "    model.load_state_dict(torch.load(buffer))  # LOAD",
        "    model(data[0])\n    model.load_state_dict(torch.load(buffer))  # LOAD"))
    assert [d.code for d in outcome.diagnoses] == []
