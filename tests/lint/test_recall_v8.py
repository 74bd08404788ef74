"""Recall on the causes of misses in the r180-r199 re-creations: each case the
linter now reports really fails, its corrected twin stays silent and computes
what a reference computes, and a similar correct pattern stays silent (and
really runs)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


# IIC's loss: marginals made with `.expand()` from a helper's (unannotated)
# parameter, then floored in place (IIC indexes with a mask, which PyTorch now
# only warns about; `clamp_` raises).  `.expand()` is a tensor's method, so its
# result is a tensor whatever the walk knows of the receiver.
EXPANDED_MARGINAL_FLOORED = textwrap.dedent("""
    import torch

    def mutual_information(x_out, x_tf_out, eps=1e-4):
        _, k = x_out.size()
        p_i_j = (x_out.unsqueeze(2) * x_tf_out.unsqueeze(1)).sum(dim=0)
        p_i_j = p_i_j / p_i_j.sum()
        p_i = p_i_j.sum(dim=1).view(k, 1).expand(k, k)
        p_i.clamp_(min=eps)
        return -(p_i_j * (torch.log(p_i_j) - torch.log(p_i))).sum()
    """)

EXPANDED_MARGINAL_CLAMPED = EXPANDED_MARGINAL_FLOORED.replace(
    "p_i.clamp_(min=eps)", "p_i = torch.clamp(p_i, min=eps)")

# The same marginal copied before the floor: `.expand(...).clone()` owns its memory.
EXPANDED_MARGINAL_CLONED = EXPANDED_MARGINAL_FLOORED.replace(".expand(k, k)", ".expand(k, k).clone()")


def _probabilities():
    torch.manual_seed(0)
    logits = torch.randn(6, 3, requires_grad=True)
    return logits, torch.softmax(logits, dim=1), torch.softmax(logits + 0.1, dim=1)


def test_in_place_floor_of_an_expanded_marginal_is_found():
    assert _findings(EXPANDED_MARGINAL_FLOORED) == [(9, "ADL012")]
    _, a, b = _probabilities()
    with pytest.raises(RuntimeError, match="single memory location"):
        _load(EXPANDED_MARGINAL_FLOORED)["mutual_information"](a, b)


def test_clamped_marginal_is_silent_and_matches_a_reference():
    assert _findings(EXPANDED_MARGINAL_CLAMPED) == []
    logits, a, b = _probabilities()
    loss = _load(EXPANDED_MARGINAL_CLAMPED)["mutual_information"](a, b)
    grad, = torch.autograd.grad(loss, logits)
    ref_logits = logits.detach().clone().requires_grad_(True)
    pa, pb = torch.softmax(ref_logits, dim=1), torch.softmax(ref_logits + 0.1, dim=1)
    joint = (pa.unsqueeze(2) * pb.unsqueeze(1)).sum(dim=0)
    joint = joint / joint.sum()
    marginal = torch.clamp(joint.sum(dim=1, keepdim=True), min=1e-4)
    reference = -(joint * (torch.log(joint) - torch.log(marginal))).sum()
    ref_grad, = torch.autograd.grad(reference, ref_logits)
    assert torch.equal(loss.detach(), reference.detach())
    assert torch.allclose(grad, ref_grad)


def test_cloned_marginal_is_silent_and_runs():
    assert _findings(EXPANDED_MARGINAL_CLONED) == []
    logits, a, b = _probabilities()
    _load(EXPANDED_MARGINAL_CLONED)["mutual_information"](a, b).backward()
    assert logits.grad is not None


# A same-file helper hands its parameter to an op that keeps it for backward
# (`F.softplus` keeps its input): at each call, the caller's tensor is kept, and
# the caller's later in-place write breaks the backward.
HELPER_KEEPS_ARGUMENT = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def smooth_gate(h):
        return F.softplus(h) * 0.5

    class GatedLayer(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x):
            h = self.lin(x)
            gate = smooth_gate(h)
            h += 1.0
            return gate * h
    """)

HELPER_KEEPS_ARGUMENT_FIXED = HELPER_KEEPS_ARGUMENT.replace("h += 1.0", "h = h + 1.0")

# The helper's op keeps its output, not its input (`torch.sigmoid`): the write is harmless.
HELPER_KEEPS_ITS_OUTPUT = HELPER_KEEPS_ARGUMENT.replace("F.softplus(h) * 0.5", "torch.sigmoid(h) * 0.5")


def _layer(source):
    torch.manual_seed(0)
    return _load(source)["GatedLayer"](), torch.randn(4, 3)


def test_write_after_a_helper_kept_the_argument_is_found_at_the_write():
    assert _findings(HELPER_KEEPS_ARGUMENT) == [(17, "ADL001")]
    layer, x = _layer(HELPER_KEEPS_ARGUMENT)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        layer(x).sum().backward()


def test_out_of_place_write_is_silent_and_matches_a_reference():
    assert _findings(HELPER_KEEPS_ARGUMENT_FIXED) == []
    layer, x = _layer(HELPER_KEEPS_ARGUMENT_FIXED)
    loss = layer(x).sum()
    grad, = torch.autograd.grad(loss, layer.lin.weight)
    weight = layer.lin.weight.detach().clone().requires_grad_(True)
    h = torch.nn.functional.linear(x, weight, layer.lin.bias.detach())
    reference = (torch.nn.functional.softplus(h) * 0.5 * (h + 1.0)).sum()
    ref_grad, = torch.autograd.grad(reference, weight)
    assert torch.equal(loss.detach(), reference.detach())
    assert torch.allclose(grad, ref_grad)


def test_helper_keeping_only_its_output_is_silent_and_runs():
    assert _findings(HELPER_KEEPS_ITS_OUTPUT) == []
    layer, x = _layer(HELPER_KEEPS_ITS_OUTPUT)
    layer(x).sum().backward()
    assert layer.lin.weight.grad is not None
