"""Held-out set 34, part A: the causes its first run showed.

AD120 (gsplat#76): a custom Function's backward returns a tuple written out over several lines,
`return (\n    g_means, g_scales, None, ...,\n)`, one gradient short. The help appended the
missing `None` after the closing parenthesis (`return (...), None`): a pair, the tuple and None,
and the changed program still failed ("expected 14, got 2"). The help now extends a written-out
tuple element by element, unpacks any other expression that holds several gradients
(`return (*grads, None)`) and keeps `return g, None` for a single gradient. Each help applied gives
the hand-written version's result; the hand-written versions run silent under the doctor."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SET34 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set34")
GSPLAT = "a_gsplat_project_gaussians_clip_threshold_without_its_gradient.py"

# Another shape, written before the fix was run: a learned-step quantizer of a video codec whose
# backward collects its gradients in a name and returns the name; `bits` (an int) was added to
# forward later.
QUANTIZER_GRADS_NAME = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class LearnedStepQuantizer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, step, bits):
        ctx.save_for_backward(x, step)
        ctx.bits = bits
        levels = 2 ** (bits - 1)
        return torch.clamp(torch.round(x / step), -levels, levels - 1) * step

    @staticmethod
    def backward(ctx, grad_out):
        x, step = ctx.saved_tensors
        levels = 2 ** (ctx.bits - 1)
        inside = ((x / step) >= -levels) & ((x / step) <= levels - 1)
        grad_x = grad_out * inside
        grad_step = (grad_out * (torch.round(x / step) - x / step) * inside).sum().reshape(step.shape)
        grads = (grad_x, grad_step)
        return grads


encoder = nn.Conv2d(3, 4, 3, padding=1)
decoder = nn.Conv2d(4, 3, 3, padding=1)
step = nn.Parameter(torch.tensor([0.1]))
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()) + [step], lr=1e-2)
losses = []
for it in range(3):
    frames = torch.rand(2, 3, 8, 8)
    latent = LearnedStepQuantizer.apply(encoder(frames), step, 4)
    loss = ((decoder(latent) - frames) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "step": step.detach().clone()}
"""
QUANTIZER_OLD = "        return grads\n"
QUANTIZER_NEW = "        return grad_x, grad_step, None\n"

# A single gradient returned bare (PyTorch wraps it in a 1-tuple): `return g, None` stays right.
SINGLE_GRADIENT = """
import torch

torch.manual_seed(0)


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out * ctx.factor


w = torch.randn(3, requires_grad=True)
loss = (ScaleGrad.apply(w * 2, 0.5) ** 2).sum()
loss.backward()
result = w.grad.clone()
"""
SINGLE_OLD = "        return grad_out * ctx.factor\n"
SINGLE_NEW = "        return grad_out * ctx.factor, None\n"


def _diagnose(path):
    error = run_watched(path)
    assert error is not None
    (found,) = [d for d in autograd_doctor.diagnoses_of(error) if d.code == "AD120"]
    return found


def _first_code_help(found):
    return next(s for s in found.help if s.replacement)


def _fixed_result(folder, path, suggestion):
    target = folder / ("fixed_" + os.path.basename(path))
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


def _hand_written(tmp_path, source, old, new):
    folder = tmp_path / "correct"
    folder.mkdir(exist_ok=True)
    assert old in source
    return write(folder, source.replace(old, new), "program")


def test_gsplat_multi_line_tuple_is_extended_inside(tmp_path):
    path = os.path.join(SET34, "cases", GSPLAT)
    found = _diagnose(path)
    assert found.primary.line == 48
    suggestion = _first_code_help(found)
    assert "return None for clip_thresh" in suggestion.message
    assert suggestion.replacement.strip() == (
        "return v_means3d, v_scales, None, None, None, None, None, None, None, None, None, None, None, None")
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET34, "correct", GSPLAT))
    assert _close(fixed, correct["result"])


def test_gradients_held_in_a_name_are_unpacked(tmp_path):
    source = textwrap.dedent(QUANTIZER_GRADS_NAME)
    path = write(tmp_path, source, "program")
    found = _diagnose(path)
    suggestion = _first_code_help(found)
    assert suggestion.replacement.strip() == "return (*grads, None)"
    fixed = _fixed_result(tmp_path, path, suggestion)
    error, namespace = run_plain(_hand_written(tmp_path, source, QUANTIZER_OLD, QUANTIZER_NEW))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def test_single_gradient_keeps_the_pair(tmp_path):
    source = textwrap.dedent(SINGLE_GRADIENT)
    path = write(tmp_path, source, "program")
    found = _diagnose(path)
    suggestion = _first_code_help(found)
    assert suggestion.replacement.strip() == "return grad_out * ctx.factor, None"
    fixed = _fixed_result(tmp_path, path, suggestion)
    error, namespace = run_plain(_hand_written(tmp_path, source, SINGLE_OLD, SINGLE_NEW))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def test_hand_written_versions_are_silent(tmp_path):
    assert run_watched(os.path.join(SET34, "correct", GSPLAT)) is None
    source = textwrap.dedent(QUANTIZER_GRADS_NAME)
    assert run_watched(_hand_written(tmp_path, source, QUANTIZER_OLD, QUANTIZER_NEW)) is None


# AD321 (Pointcept#343): a custom Function with a forward and no backward, differentiated.
KNN = "a_point_transformer_knn_query_function_without_backward.py"

# Another shape, written before the fix was run: a VQ tokenizer's codebook search as a Function
# without backward; its distance output is used in a commitment-like term of the encoder's loss.
CODEBOOK_SEARCH = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class CodebookSearch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, latents, codebook):
        d = torch.cdist(latents, codebook)
        dist, index = d.min(dim=1)
        return index, dist


encoder = nn.Linear(6, 4)
codebook = torch.randn(8, 4)
decoder = nn.Linear(4, 6)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(decoder.parameters()), lr=0.1)
losses = []
for it in range(3):
    x = torch.randn(5, 6)
    z = encoder(x)
    index, dist = CodebookSearch.apply(z, codebook)
    quantized = z + (codebook[index] - z).detach()
    loss = ((decoder(quantized) - x) ** 2).mean() + 0.1 * dist.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in encoder.parameters()]}
"""
CODEBOOK_OLD = "        return index, dist\n"
CODEBOOK_NEW = ("        return index, dist\n\n    @staticmethod\n    def backward(ctx, grad_index, grad_dist):\n"
                "        return None, None\n")

# The backward is there, under a misspelled name.
MISSPELLED = """
import torch

torch.manual_seed(0)


class Clip(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1, 1)

    @staticmethod
    def backwards(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * (x.abs() <= 1)


w = torch.randn(6, requires_grad=True)
(Clip.apply(w * 3) ** 2).sum().backward()
result = w.grad.clone()
"""
MISSPELLED_OLD = "    def backwards(ctx, grad_out):\n"
MISSPELLED_NEW = "    def backward(ctx, grad_out):\n"


def _diagnose_code(path, code):
    error = run_watched(path)
    assert error is not None
    (found,) = [d for d in autograd_doctor.diagnoses_of(error) if d.code == code]
    return found


def test_knn_query_gets_a_backward_returning_none(tmp_path):
    path = os.path.join(SET34, "cases", KNN)
    found = _diagnose_code(path, "AD321")
    assert found.primary.line == 37
    suggestion = _first_code_help(found)
    assert "unverified" in suggestion.message
    assert suggestion.replacement.rstrip().endswith("return None, None, None, None, None")
    assert any("xyz, new_xyz" in note for note in found.notes)
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET34, "correct", KNN))
    assert _close(fixed, correct["result"])


def test_codebook_search_without_backward(tmp_path):
    source = textwrap.dedent(CODEBOOK_SEARCH)
    path = write(tmp_path, source, "program")
    found = _diagnose_code(path, "AD321")
    suggestion = _first_code_help(found)
    assert suggestion.replacement.rstrip().endswith("return None, None")
    fixed = _fixed_result(tmp_path, path, suggestion)
    error, namespace = run_plain(_hand_written(tmp_path, source, CODEBOOK_OLD, CODEBOOK_NEW))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def test_misspelled_backward_is_renamed(tmp_path):
    source = textwrap.dedent(MISSPELLED)
    path = write(tmp_path, source, "program")
    found = _diagnose_code(path, "AD321")
    suggestion = _first_code_help(found)
    assert suggestion.replacement.strip() == "def backward(ctx, grad_out):"
    fixed = _fixed_result(tmp_path, path, suggestion)
    error, namespace = run_plain(_hand_written(tmp_path, source, MISSPELLED_OLD, MISSPELLED_NEW))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def test_functions_with_backward_are_silent(tmp_path):
    assert run_watched(os.path.join(SET34, "correct", KNN)) is None
    source = textwrap.dedent(CODEBOOK_SEARCH)
    assert run_watched(_hand_written(tmp_path, source, CODEBOOK_OLD, CODEBOOK_NEW)) is None
    assert run_watched(_hand_written(tmp_path, textwrap.dedent(MISSPELLED), MISSPELLED_OLD, MISSPELLED_NEW)) is None


# AD240 for a call inside a grad-off block (Valley#13): the trainable projector applied inside the
# `with torch.no_grad():` block that runs the frozen vision tower.
VALLEY = "a_valley_video_projector_applied_inside_no_grad.py"

# Another shape, written before the fix was run: a latent diffusion model whose forward encodes
# the images with a frozen VAE under no_grad, and, in the same block, embeds the class label with
# a trainable embedding inside a loop over the conditioning keys.
LATENT_DIFFUSION = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class LatentDiffusion(nn.Module):
    def __init__(self):
        super().__init__()
        self.vae = nn.Conv2d(3, 4, 2, stride=2)
        self.class_embed = nn.Embedding(5, 4)
        self.unet = nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.SiLU(), nn.Conv2d(8, 4, 3, padding=1))

    def forward(self, images, cond, noise):
        with torch.no_grad():
            latents = self.vae(images)
            context = []
            for key in ("label",):
                emb = self.class_embed(cond[key])
                context.append(emb)
        noisy = latents + noise
        h = noisy + context[0][:, :, None, None]
        return ((self.unet(h) - noise) ** 2).mean()


model = LatentDiffusion()
model.vae.requires_grad_(False)
optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-3)
losses = []
for step in range(3):
    images = torch.randn(2, 3, 8, 8)
    cond = {"label": torch.randint(0, 5, (2,))}
    noise = torch.randn(2, 4, 4, 4)
    loss = model(images, cond, noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "class_embed": model.class_embed.weight.detach().clone()}
"""
LATENT_OLD = "                emb = self.class_embed(cond[key])\n"
LATENT_NEW = "                with torch.enable_grad():\n                    emb = self.class_embed(cond[key])\n"


def test_valley_projector_call_inside_the_block_is_named(tmp_path):
    path = os.path.join(SET34, "cases", VALLEY)
    error, _ = run_plain(path)
    assert error is None
    found = _silent_diagnosis(path)
    assert found.primary.line == 56
    suggestion = _first_code_help(found)
    assert suggestion.replacement.splitlines()[0] == "with torch.enable_grad():"
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET34, "correct", VALLEY))
    assert _close(fixed, correct["result"])


def _watched_diagnoses(path):
    import runpy
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.enable_grad(), autograd_doctor.watch() as doctor:
            runpy.run_path(path, run_name="__main__")
    return list(doctor.diagnoses)


def _silent_diagnosis(path):
    found = [d for d in _watched_diagnoses(path) if d.code == "AD240"]
    assert len(found) == 1, [d.code for d in found]
    return found[0]


def test_embedding_in_a_loop_inside_the_block(tmp_path):
    source = textwrap.dedent(LATENT_DIFFUSION)
    path = write(tmp_path, source, "program")
    found = _silent_diagnosis(path)
    assert found.primary.source.strip() == "emb = self.class_embed(cond[key])"
    suggestion = _first_code_help(found)
    fixed = _fixed_result(tmp_path, path, suggestion)
    error, namespace = run_plain(_hand_written(tmp_path, source, LATENT_OLD, LATENT_NEW))
    assert error is None, error
    assert _close(fixed, namespace["result"])


def _codes_of(path):
    return [d.code for d in _watched_diagnoses(path)]


def test_frozen_or_otherwise_trained_modules_in_a_block_are_silent(tmp_path):
    assert _codes_of(os.path.join(SET34, "correct", VALLEY)) == []
    source = textwrap.dedent(LATENT_DIFFUSION)
    assert _codes_of(_hand_written(tmp_path, source, LATENT_OLD, LATENT_NEW)) == []
    # left out of the optimizer (a module used frozen on purpose)
    frozen = source.replace("model.vae.requires_grad_(False)",
                            "model.vae.requires_grad_(False)\nmodel.class_embed.requires_grad_(False)")
    assert _codes_of(write(tmp_path, frozen, "frozen")) == []
    # also called with gradients on elsewhere: it gets a gradient
    twice = source.replace("        h = noisy + context[0][:, :, None, None]\n",
                           "        h = noisy + context[0][:, :, None, None] + self.class_embed(cond['label'])[:, :, None, None]\n")
    assert twice != source
    assert _codes_of(write(tmp_path, twice, "twice")) == []
