"""AD301: a called function's grad-off block is chosen by a flag parameter whose default turns
gradients off, and the call on the path to the loss does not pass it (held-out set 22,
LAION-AI/CLAP#92: `audio_features(waveforms, filterbank)` with `require_grad=False` by default,
called from the embedding method without the flag; the first run gave advice only). The call is
now the primary location and the help passes `FLAG=<first argument>.requires_grad`, the accepted
fix. The two programs here are other shapes of the same cause: `torch.set_grad_enabled(train)`
with the encoder called straight from the training step, and a conditional header
`torch.no_grad() if not differentiable else nullcontext()` with a keyword-only flag, called from a
class's method. Near-twins: the flag passed (silent), and a call that passes the flag as False on
purpose (the older advice, no rewrite)."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

ENCODER = """
import torch
torch.manual_seed(0)
weight = torch.randn(4, 3)


def encode(x, train=False):
    with torch.set_grad_enabled(train):
        return torch.tanh(x @ weight)


latent = torch.randn(5, 4, requires_grad=True)
target = torch.randn(5, 3)
optimizer = torch.optim.SGD([latent], lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    loss = (encode(latent) - target).pow(2).mean()  # CALL
    loss.backward()
    optimizer.step()
result = latent.detach().clone()
"""

RENDERER = """
import contextlib
import torch
torch.manual_seed(0)


def render(points, scale, *, differentiable=False):
    with (torch.no_grad() if not differentiable else contextlib.nullcontext()):
        return torch.sigmoid(points * scale).sum(dim=-1)


class Fitter:
    def __init__(self):
        self.scale = torch.tensor(2.0)

    def image(self, points):
        return render(points, self.scale)  # CALL


points = torch.randn(6, 2, requires_grad=True)
goal = torch.rand(6)
fitter = Fitter()
optimizer = torch.optim.Adam([points], lr=0.05)
for step in range(3):
    optimizer.zero_grad()
    loss = (fitter.image(points) - goal).abs().mean()
    loss.backward()
    optimizer.step()
result = points.detach().clone()
"""

CASES = {
    "set_grad_enabled(flag), called from the step": (ENCODER, "train=latent.requires_grad",
                                                      "encode(latent, train=True)"),
    "a conditional header, keyword-only flag": (RENDERER, "differentiable=points.requires_grad",
                                                "render(points, self.scale, differentiable=True)"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_call_without_the_flag_is_named(tmp_path, name):
    source, passed, _answer = CASES[name]
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD301"
    assert outcome.diagnosis.primary.line == outcome.line("CALL")
    assert "is called without" in outcome.diagnosis.primary.note
    assert passed in outcome.diagnosis.help[0].replacement


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_gives_the_answer(tmp_path, name):
    source, _passed, answer_call = CASES[name]
    outcome = run_program(tmp_path, source)
    change = outcome.diagnosis.help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, change.location, change.replacement))["result"]
    call = answer_call.split("(")[0]
    answer_source = "\n".join(
        line[:line.index(call + "(")] + answer_call + line[line.index(")", line.index(call + "(")) + 1:]
        if "# CALL" in line else line for line in source.splitlines())
    answer = run_plain(tmp_path, answer_source, name="answer.py")["result"]
    assert torch.equal(fixed, answer)


def test_the_flag_passed_is_silent(tmp_path):
    source = RENDERER.replace("render(points, self.scale)", "render(points, self.scale, differentiable=True)")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    assert not outcome.diagnoses


def test_the_flag_passed_as_false_on_purpose_is_not_rewritten(tmp_path):
    source = ENCODER.replace("encode(latent)", "encode(latent, False)")
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD301"
    assert outcome.diagnosis.primary.line != outcome.line("CALL") or "is called without" not in (
        outcome.diagnosis.primary.note or "")
    assert not any("requires_grad" in (h.replacement or "") for h in outcome.diagnosis.help)
