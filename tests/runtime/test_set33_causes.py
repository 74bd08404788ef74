"""Held-out set 33's miss with no help (Stable-Style-Transformer#1): a generator took an auto-encoder
step (`recon_loss.backward(retain_graph=True)`, `aed_trainer.step()`) and then backwarded a second
loss built from the same decoder output. AD103's help computed the decoder line again after the
step, but not the encoder line it reads (`enc_out = genmodel.encoder(del_idx)`), whose graph also
goes through weights the step overwrote: the changed program still failed. Now the help also
computes again, in source order, the one-line assignments of the block that bind the tensors the
forward line reads when their graphs reach parameters the failing step() updated (and still hold
the value the forward line read). Applied, each help gives the hand-written version's result; the
hand-written versions run silent under the doctor."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SET33 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set33")
CASE = "a_style_transformer_recon_step_before_generated_sentence_loss.py"

# Another shape, written before the fix was run: a body and a head trained by one optimizer on a
# fitting loss, then by another on a frozen critic's score of the same output.
BODY_HEAD_CRITIC = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
body = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
head = nn.Linear(8, 3)
critic = nn.Linear(3, 1)
critic.requires_grad_(False)
params = list(body.parameters()) + list(head.parameters())
opt_a = torch.optim.SGD(params, lr=0.1)
opt_b = torch.optim.SGD(params, lr=0.05)
losses = []
for step in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 3)
    feats = body(x)
    out = head(feats)
    fit = F.mse_loss(out, y)
    opt_a.zero_grad()
    fit.backward(retain_graph=True)
    opt_a.step()
    score = critic(out).mean()
    opt_b.zero_grad()
    score.backward()
    opt_b.step()
    losses.append(torch.stack([fit.detach(), score.detach()]))
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in params]}
"""

BODY_HEAD_CRITIC_FIXED_OLD = "    opt_a.step()\n"
BODY_HEAD_CRITIC_FIXED_NEW = "    opt_a.step()\n    feats = body(x)\n    out = head(feats)\n"


def _diagnose(path):
    error = run_watched(path)
    assert error is not None
    (found,) = [d for d in autograd_doctor.diagnoses_of(error) if d.code == "AD103"]
    return found


def _recompute_help(found):
    (suggestion,) = [s for s in found.help if "again after" in s.message]
    return suggestion


def _fixed_result(folder, path, suggestion):
    target = folder / os.path.basename(path)
    target.write_text(apply_suggestion(open(path).read(), suggestion))
    error, namespace = run_plain(str(target))
    assert error is None, error
    return namespace["result"]


def _close(a, b):
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, dict):
        return all(_close(a[k], b[k]) for k in a)
    return all(_close(x, y) for x, y in zip(a, b))


def test_set33_recompute_help_includes_the_encoder_line(tmp_path):
    path = os.path.join(SET33, "cases", CASE)
    found = _diagnose(path)
    suggestion = _recompute_help(found)
    assert "lines 78 and 79" in suggestion.message
    assert suggestion.replacement.splitlines()[1].strip() == "enc_out = genmodel.encoder(del_idx)"
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET33, "correct", CASE))
    assert _close(fixed, correct["result"])


def test_body_head_critic_recomputes_both_lines(tmp_path):
    path = write(tmp_path, textwrap.dedent(BODY_HEAD_CRITIC), "program")
    found = _diagnose(path)
    suggestion = _recompute_help(found)
    lines = [line.strip() for line in suggestion.replacement.splitlines()]
    assert lines == ["opt_a.step()", "feats = body(x)", "out = head(feats)"]
    fixed = _fixed_result(tmp_path, path, suggestion)
    folder = tmp_path / "correct"
    folder.mkdir()
    hand = textwrap.dedent(BODY_HEAD_CRITIC).replace(BODY_HEAD_CRITIC_FIXED_OLD, BODY_HEAD_CRITIC_FIXED_NEW)
    error, namespace = run_plain(write(folder, hand, "program"))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def test_hand_written_versions_are_silent(tmp_path):
    assert run_watched(os.path.join(SET33, "correct", CASE)) is None
    hand = textwrap.dedent(BODY_HEAD_CRITIC).replace(BODY_HEAD_CRITIC_FIXED_OLD, BODY_HEAD_CRITIC_FIXED_NEW)
    assert run_watched(write(tmp_path, hand, "program")) is None


def test_input_not_through_the_stepped_weights_is_not_recomputed(tmp_path):
    # The head reads a feature whose weights the failing step() does not update (the first
    # optimizer trains the head only): only the head line is computed again, as before.
    source = textwrap.dedent(BODY_HEAD_CRITIC).replace(
        "opt_a = torch.optim.SGD(params, lr=0.1)", "opt_a = torch.optim.SGD(head.parameters(), lr=0.1)")
    path = write(tmp_path, source, "program")
    found = _diagnose(path)
    suggestion = _recompute_help(found)
    lines = [line.strip() for line in suggestion.replacement.splitlines()]
    assert lines == ["opt_a.step()", "out = head(feats)"]
