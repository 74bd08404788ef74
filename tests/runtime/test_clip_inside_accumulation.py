"""AD212: `clip_grad_norm_` / `clip_grad_value_` called after every backward() of a gradient
accumulation clips partial sums (the next backward() adds to the clipped values), so the one
step() applies clip(clip(g1) + g2) + ... instead of the clipped total, without an error. The help
moves the clipping call to just before the step() (held-out set 9, transformers#1563, undiagnosed
on the first run; this program is another one: a small CNN, three micro-batches per step,
`clip_grad_value_`)."""

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

ACCUMULATING = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(4 * 4 * 4, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images, labels = torch.randn(12, 1, 6, 6) * 3, torch.randint(0, 3, (12,))
accumulation = 3
for i in range(6):
    x, y = images[2 * i: 2 * i + 2], labels[2 * i: 2 * i + 2]
    loss = F.cross_entropy(model(x), y) / accumulation
    loss.backward()  # BACKWARD
    torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)  # CLIP
    if (i + 1) % accumulation == 0:
        optimizer.step()  # STEP
        optimizer.zero_grad()
params = [p.detach().clone() for p in model.parameters()]
"""

ANSWER = ACCUMULATING.replace(
    "    torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)  # CLIP\n"
    "    if (i + 1) % accumulation == 0:\n",
    "    if (i + 1) % accumulation == 0:\n"
    "        torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)  # CLIP\n")


def test_the_clipping_call_is_named_and_moved_before_the_step(tmp_path):
    outcome = run_program(tmp_path, ACCUMULATING)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD212")
    assert diagnosis.primary.line == outcome.line("CLIP")
    assert {r.line for r in diagnosis.related} == {outcome.line("BACKWARD"), outcome.line("STEP")}
    assert "once per step(), just before step()" in diagnosis.help[0].message
    assert diagnosis.help[0].replacement.splitlines() == [
        "if (i + 1) % accumulation == 0:",
        "    torch.nn.utils.clip_grad_value_(model.parameters(), 0.05)  # CLIP",
        "    optimizer.step()  # STEP"]
    assert not [d for d in outcome.diagnoses if d.code == "AD208"]


def test_the_help_applied_clips_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, ACCUMULATING)
    help_ = next(d for d in outcome.diagnoses if d.code == "AD212").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help_.location, help_.replacement))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, ACCUMULATING, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))  # the clipping order matters here


def test_clipping_once_per_step_is_silent(tmp_path):
    for source in (ANSWER,
                   # no accumulation: backward, clip, step every iteration
                   ACCUMULATING.replace("accumulation = 3", "accumulation = 1"),
                   # the gradients are cleared after each clipping (set_to_none=False): nothing adds to them
                   ACCUMULATING.replace("    if (i + 1) % accumulation == 0:\n",
                                        "    optimizer.zero_grad(set_to_none=False)\n"
                                        "    if (i + 1) % accumulation == 0:\n")):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert not [d for d in outcome.diagnoses if d.code == "AD212"]
