"""AD216: `module.requires_grad = False` adds an attribute and freezes nothing; the optimizer that
takes every parameter that requires grad trains the "frozen" module, silently. The report names
the assignment and helps with `module.requires_grad_(False)` (held-out set 8, allennlp#2927, where
BertPooler's `requires_grad=False` had no effect)."""

import torch

from helpers import apply_help, run_plain, run_program

FINETUNE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.box_head = nn.Linear(8, 4)
model = Detector()
model.backbone.requires_grad = False  # FLAG
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
images, boxes = torch.randn(5, 6), torch.randn(5, 4)
for step in range(2):
    loss = ((model.box_head(model.backbone(images)) - boxes) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()  # STEP
params = [p.detach().clone() for p in model.parameters()]
"""

ANSWER = FINETUNE.replace("model.backbone.requires_grad = False  # FLAG",
                          "for p in model.backbone.parameters():\n    p.requires_grad = False")


def test_the_assignment_is_named_and_the_method_is_the_help(tmp_path):
    outcome = run_program(tmp_path, FINETUNE)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD216")
    assert diagnosis.primary.line == outcome.line("FLAG")
    assert "freezes nothing" in diagnosis.notes[0]
    assert diagnosis.related[0].line == outcome.line("STEP")
    assert diagnosis.help[0].replacement == "model.backbone.requires_grad_(False)"
    assert len([d for d in outcome.diagnoses if d.code == "AD216"]) == 1  # once, not at every step


def test_the_help_applied_trains_what_the_answer_trains(tmp_path):
    outcome = run_program(tmp_path, FINETUNE)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    before = run_plain(tmp_path, FINETUNE, name="plain.py")["params"]
    assert not torch.equal(before[0], answer[0])  # the bug trains the backbone


def test_the_method_or_an_attribute_matching_the_parameters_is_silent(tmp_path):
    for freeze in ("model.backbone.requires_grad_(False)",
                   # a module that keeps its own setting as an attribute and applies it to its parameters
                   "model.backbone.requires_grad = False\nfor p in model.backbone.parameters():\n    p.requires_grad = False",
                   "model.backbone.requires_grad = True"):
        outcome = run_program(tmp_path, FINETUNE.replace("model.backbone.requires_grad = False  # FLAG", freeze))
        assert outcome.error is None
        assert not [d for d in outcome.diagnoses if d.code == "AD216"]
