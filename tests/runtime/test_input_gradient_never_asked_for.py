"""AD309 for the `.grad` of an input that never asked for a gradient, read after backward()
(analysis/errors/requires_grad.py, `_input_gradient_never_asked_for`): the help makes the input
require grad right after it is made, which changes no value and no parameter's gradient.

Held-out set 47's UPSNet#24 (a saliency map from `data["data"].grad` in a panoptic trainer) got
advice only ("set requires_grad = True on it and give it to the optimizer", a parameter's
advice). Another shape, written before the change ran on it: an FGSM step on the images a loop
over batches yields (`images.grad.sign()`). Near twins: the same programs asking for the gradient
run silent, and an input the forward pass never reads keeps AD309's other help."""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET47 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set47")
PANOPTIC = "panoptic_input_gradient_never_required"

FGSM = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))
loader = [(torch.rand(4, 3, 2, 2), torch.randint(0, 3, (4,))) for _ in range(2)]
adversarial = []
for images, labels in loader:
    loss = F.cross_entropy(model(images), labels)
    model.zero_grad()
    loss.backward()
    adversarial.append((images + 0.03 * images.grad.sign()).clamp(0, 1))
result = {"adversarial": torch.stack(adversarial), "grads": [p.grad.clone() for p in model.parameters()]}
"""
FGSM_ANSWER = FGSM.replace("for images, labels in loader:\n",
                           "for images, labels in loader:\n    images.requires_grad = True\n")

# The forward pass never reads `noise`: asking for its gradient would not give it one.
UNUSED_INPUT = """
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
x = torch.randn(4, 3)
noise = torch.randn(4, 3)
loss = model(x).pow(2).mean()
loss.backward()
print(noise.grad.abs())
"""


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET47, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def _equal(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))


def test_the_set47_saliency_input_is_made_to_require_grad_where_it_is_made(tmp_path):
    outcome = run_as_script(tmp_path, _source("cases", PANOPTIC))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.LEAF_GRAD_NONE_READ
    assert diagnosis.related[0].source == 'data = {"data": torch.randn(2, 3, 16, 16)}'
    assert diagnosis.help[0].message.startswith('make data["data"] require grad before the forward pass')
    assert diagnosis.help[0].replacement == \
        'data = {"data": torch.randn(2, 3, 16, 16)}\ndata["data"].requires_grad_()'
    changed = run_plain(tmp_path, apply_help(outcome))
    assert _equal(changed["result"], run_plain(tmp_path, _source("correct", PANOPTIC), "c.py")["result"])


def test_an_fgsm_step_on_the_images_of_a_loop(tmp_path):
    outcome = run_as_script(tmp_path, FGSM)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.LEAF_GRAD_NONE_READ
    assert diagnosis.help[0].replacement == "images.requires_grad_()\nloss = F.cross_entropy(model(images), labels)"
    changed = run_plain(tmp_path, apply_help(outcome))
    assert _equal(changed["result"], run_plain(tmp_path, FGSM_ANSWER, "c.py")["result"])


def test_inputs_that_ask_for_the_gradient_run_silent_and_an_unread_input_gets_no_such_help(tmp_path):
    for source in (FGSM_ANSWER, _source("correct", PANOPTIC)):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses
    outcome = run_as_script(tmp_path, UNUSED_INPUT)
    assert outcome.diagnosis.code == codes.LEAF_GRAD_NONE_READ
    assert not any("before the forward pass" in help.message for help in outcome.diagnosis.help)
