"""AD245: a leaf's `.grad` read after one backward(), then read again after a second backward()
that added into it: the second read is the sum of both gradients; nothing fails (held-out set 21,
an Ewald summation whose forces are read from `positions.grad` after a virial backward(); undiagnosed
on the first run). The two programs here are other shapes of the same cause, written before the
check was run on them: per-class saliency maps taken in a loop from one input's `.grad`, and a
function that reads a first and a second derivative of a potential from `.grad`. The near-twins
accumulate two losses on purpose (read after the last backward() only) or clear `.grad` in
between."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

SALIENCY = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
image = torch.randn(1, 10, requires_grad=True)
scores = net(image)
maps = []
for c in range(3):
    scores[0, c].backward(retain_graph=True)  # BACKWARD
    maps.append(image.grad.abs().clone())  # READ
result = torch.stack(maps)
"""

SALIENCY_ANSWER = SALIENCY.replace("    scores[0, c].backward(retain_graph=True)  # BACKWARD\n",
                                   "    image.grad = None\n    scores[0, c].backward(retain_graph=True)\n")

POTENTIAL = """
import torch
torch.manual_seed(0)


def energy_terms(coords):
    bond = (coords[1:] - coords[:-1]).pow(2).sum(-1).sub(1.0).pow(2).sum()
    angle = (coords[2:] - 2 * coords[1:-1] + coords[:-2]).pow(2).sum()
    return bond, angle


def forces(coords):
    coords = coords.clone().requires_grad_(True)
    bond, angle = energy_terms(coords)
    bond.backward()
    bond_force = -coords.grad.clone()  # READ
    angle.backward()  # BACKWARD
    total_force = -coords.grad  # AFTER
    return bond_force, total_force


bond_force, total_force = forces(torch.randn(6, 3))
result = torch.stack([bond_force, total_force])
"""

POTENTIAL_ANSWER = POTENTIAL.replace("    angle.backward()  # BACKWARD\n",
                                     "    coords.grad = None\n    angle.backward()\n")

CASES = {"saliency maps of each class": (SALIENCY, SALIENCY_ANSWER, "image"),
         "two derivatives of a potential": (POTENTIAL, POTENTIAL_ANSWER, "coords")}


@pytest.mark.parametrize("name", list(CASES))
def test_the_second_backward_is_named(tmp_path, name):
    source, _answer, leaf = CASES[name]
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD245"]
    assert diagnosis.primary.line == outcome.line("BACKWARD")
    assert f"into {leaf}.grad" in diagnosis.primary.note
    assert diagnosis.related[0].line == outcome.line("READ")
    assert diagnosis.help[0].replacement.splitlines()[0] == f"{leaf}.grad = None"


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_reads_what_the_answer_reads(tmp_path, name):
    source, answer_source, _leaf = CASES[name]
    outcome = run_program(tmp_path, source)
    change = next(d for d in outcome.diagnoses if d.code == "AD245").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["result"]
    answer = run_plain(tmp_path, answer_source, name="answer.py")["result"]
    assert torch.equal(fixed, answer)
    assert not torch.equal(run_plain(tmp_path, source, name="plain.py")["result"], answer)


SILENT = {
    "two losses accumulated on purpose": """
import torch
x = torch.randn(5, requires_grad=True)
first = (x ** 2).sum()
first.backward()
second = (3 * x).sum()
second.backward()
total = x.grad.clone()
""",
    "the gradient cleared in between": """
import torch
x = torch.randn(5, requires_grad=True)
first = (x ** 2).sum()
first.backward()
slope = x.grad.clone()
x.grad.zero_()
second = (3 * x).sum()
second.backward()
other = x.grad.clone()
""",
    "a saliency loop that clears the gradient": """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
image = torch.randn(1, 10, requires_grad=True)
scores = net(image)
maps = []
for c in range(3):
    image.grad = None
    scores[0, c].backward(retain_graph=True)
    maps.append(image.grad.abs().clone())
""",
}


@pytest.mark.parametrize("name", list(SILENT))
def test_accumulating_on_purpose_is_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD245"], name
