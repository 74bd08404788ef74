"""Set O (docs/lint.md, seventeenth check).  Two of its first run's false alarms
had general causes:

* ADL012 on UnsupervisedMT's beam search: `cand_scores` is bound to an
  `expand()`ed `gather` in one branch of an `if`, and written in place
  (`torch.gather(..., out=cand_scores)`, `cand_scores.log_()`) in another
  branch of the same `if`; each step binds a fresh buffer first, so the
  expanded tensor never reaches the write.
* ADL001 on KAIR's `otf[..., 1][torch.abs(otf[..., 1]) < eps] = 0`: `abs`
  keeps its input, but its result only feeds a comparison, whose bool result
  carries no graph: no backward reaches what `abs` saved.

Each claim below is run with torch: the reported code really fails, the silent
code runs, and the suggested change gives the values of a reference."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "set_o.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_o.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- ADL012: the expand() binding must be on a path to the write -------------

# Bound in one branch, written in the others; a fresh buffer each step.
FRESH_BUFFER_EACH_STEP = textwrap.dedent("""
    import torch

    def sample_scores(probs, prefix, steps, k):
        bsz = probs.size(0)
        rows = []
        for step in range(steps):
            scores = torch.empty(bsz, k)
            if prefix is not None and step < prefix.size(1):
                scores = torch.gather(probs, 1, prefix[:, step].view(-1, 1)).expand(-1, k)
            elif step % 2 == 0:
                index = torch.arange(k).repeat(bsz, 1)
                torch.gather(probs, 1, index, out=scores)
                scores.log_()
            else:
                scores = probs[:, :k].log()
            rows.append(scores.sum(1))
        return torch.stack(rows)
    """)

# The same branches, but the buffer is made once before the loop: a later step
# writes the tensor that an earlier step expanded.
CARRIED_ACROSS_STEPS = textwrap.dedent("""
    import torch

    def sample_scores(probs, prefix, steps, k):
        bsz = probs.size(0)
        rows = []
        scores = torch.empty(bsz, k)
        for step in range(steps):
            if prefix is not None and step < prefix.size(1):
                scores = torch.gather(probs, 1, prefix[:, step].view(-1, 1)).expand(-1, k)
            else:
                index = torch.arange(k).repeat(bsz, 1)
                torch.gather(probs, 1, index, out=scores)
                scores.log_()
            rows.append(scores.sum(1))
        return torch.stack(rows)
    """)

# The write after the `if`: on the path from the expanding branch.
WRITTEN_AFTER_THE_IF = textwrap.dedent("""
    import torch

    def prefix_scores(probs, prefix, k, prefixed):
        scores = probs[:, :k].clone()
        if prefixed:
            scores = torch.gather(probs, 1, prefix.view(-1, 1)).expand(-1, k)
        scores.mul_(2)
        return scores
    """)


def _probs():
    torch.manual_seed(0)
    return torch.rand(3, 5) + 0.1, torch.tensor([[1, 4], [2, 0], [0, 3]])


def _reference_scores(probs, prefix, steps, k):
    """What every step is meant to give, written without buffers or writes."""
    rows = []
    for step in range(steps):
        if step < prefix.size(1):
            rows.append(torch.gather(probs, 1, prefix[:, step].view(-1, 1)).sum(1) * k)
        elif step % 2 == 0:
            rows.append(torch.gather(probs, 1, torch.arange(k).repeat(probs.size(0), 1)).log().sum(1))
        else:
            rows.append(probs[:, :k].log().sum(1))
    return torch.stack(rows)


def test_a_write_in_another_branch_than_the_expand_is_silent_and_runs():
    assert _codes(FRESH_BUFFER_EACH_STEP) == []
    probs, prefix = _probs()
    got = _namespace(FRESH_BUFFER_EACH_STEP)["sample_scores"](probs, prefix, 5, 2)
    assert torch.equal(got, _reference_scores(probs, prefix, 5, 2))


def test_an_expanded_tensor_carried_to_a_later_step_is_reported_and_fails():
    gather = _line_of(CARRIED_ACROSS_STEPS, "out=scores")
    assert _codes(CARRIED_ACROSS_STEPS) == [(gather, "ADL012"), (gather + 1, "ADL012")]
    probs, prefix = _probs()
    with pytest.raises(RuntimeError, match="single memory location"):
        _namespace(CARRIED_ACROSS_STEPS)["sample_scores"](probs, prefix[:, :1], 3, 2)


def test_the_carried_expand_cloned_as_the_help_says_matches_the_reference():
    fixed = CARRIED_ACROSS_STEPS.replace(".expand(-1, k)", ".expand(-1, k).clone()")
    assert _codes(fixed) == []
    probs, prefix = _probs()
    got = _namespace(fixed)["sample_scores"](probs, prefix[:, :1], 3, 2)
    # steps 1 and 2 both gather into the buffer (no odd-step branch here)
    expected = torch.stack([_reference_scores(probs, prefix[:, :1], 1, 2)[0]] + [
        torch.gather(probs, 1, torch.arange(2).repeat(3, 1)).log().sum(1)] * 2)
    assert torch.equal(got, expected)


def test_a_write_after_the_if_that_expanded_is_still_reported_and_fails():
    assert _codes(WRITTEN_AFTER_THE_IF) == [(_line_of(WRITTEN_AFTER_THE_IF, "mul_"), "ADL012")]
    probs, prefix = _probs()
    with pytest.raises(RuntimeError, match="single memory location"):
        _namespace(WRITTEN_AFTER_THE_IF)["prefix_scores"](probs, prefix[:, 0], 2, True)


# ----- ADL001: a save whose op only feeds a comparison -----------------------

COMPARED_ONLY = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Denoise(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, eps):
            out = self.fc(x)
            out[:, 1][torch.abs(out[:, 1]) < eps] = 0.0
            return out
    """)

# The magnitude also feeds the result: backward reads what `abs` saved.
MAGNITUDE_KEPT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Denoise(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x, eps):
            out = self.fc(x)
            magnitude = torch.abs(out[:, 1])
            out[:, 1][magnitude < eps] = 0.0
            return out * magnitude.unsqueeze(1)
    """)


def _reference_denoise(fc, x, eps, scaled):
    """The same forward written without in-place writes (torch.where)."""
    out = fc(x)
    column = out[:, 1]
    magnitude = torch.abs(column)
    cleaned = torch.where(magnitude < eps, torch.zeros_like(column), column)
    out = torch.cat([out[:, :1], cleaned.unsqueeze(1), out[:, 2:]], dim=1)
    return out * magnitude.unsqueeze(1) if scaled else out


def _grads(model, forward, x):
    model.zero_grad()
    y = forward(x)
    y.pow(2).sum().backward()
    return y.detach(), [p.grad.clone() for p in model.parameters()]


def test_a_save_that_only_feeds_a_comparison_is_silent_and_matches_a_reference():
    assert _codes(COMPARED_ONLY) == []
    torch.manual_seed(0)
    model, x = _namespace(COMPARED_ONLY)["Denoise"](), torch.randn(6, 4)
    got, got_grads = _grads(model, lambda v: model(v, 0.3), x)
    want, want_grads = _grads(model, lambda v: _reference_denoise(model.fc, v, 0.3, False), x)
    assert torch.equal(got, want)
    assert all(torch.equal(a, b) for a, b in zip(got_grads, want_grads))


def test_a_save_that_also_feeds_the_result_is_still_reported_and_fails():
    write = _line_of(MAGNITUDE_KEPT, "out[:, 1][magnitude < eps]")
    assert _codes(MAGNITUDE_KEPT) == [(write, "ADL001")]
    torch.manual_seed(0)
    model = _namespace(MAGNITUDE_KEPT)["Denoise"]()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model(torch.randn(6, 4), 0.3).sum().backward()


def test_the_saved_magnitude_written_out_of_place_matches_the_reference():
    fixed = MAGNITUDE_KEPT.replace(
        "out[:, 1][magnitude < eps] = 0.0",
        "out = torch.cat([out[:, :1], torch.where(magnitude < eps, torch.zeros_like(magnitude),"
        " out[:, 1]).unsqueeze(1), out[:, 2:]], dim=1)")
    assert _codes(fixed) == []
    torch.manual_seed(0)
    model, x = _namespace(fixed)["Denoise"](), torch.randn(6, 4)
    got, got_grads = _grads(model, lambda v: model(v, 0.3), x)
    want, want_grads = _grads(model, lambda v: _reference_denoise(model.fc, v, 0.3, True), x)
    assert torch.equal(got, want)
    assert all(torch.equal(a, b) for a, b in zip(got_grads, want_grads))


# ----- ADL001: the last layer skips the activation ---------------------------
# Found in a left-out repository of set O (bundle-adjusting NeRF): `feat =
# layer(feat)`, then `if li != len(self.mlp) - 1: feat = F.relu(feat)`, and after
# the loop `feat.sigmoid_()`.  The last iteration skips the ReLU, so the write
# is to the last linear layer's output, which nothing keeps; and a loop over the
# layers the class built runs, so the ReLU before it does not reach the write.

LAST_LAYER_SKIPS_RELU = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Head(nn.Module):
        def __init__(self, widths):
            super().__init__()
            self.inp = nn.Linear(3, widths[0])
            self.mlp = nn.ModuleList()
            for a, b in zip(widths[:-1], widths[1:]):
                self.mlp.append(nn.Linear(a, b))

        def forward(self, x):
            feat = F.relu(self.inp(x))
            for li, layer in enumerate(self.mlp):
                feat = layer(feat)
                if li != len(self.mlp) - 1:
                    feat = F.relu(feat)
            rgb = feat.sigmoid_()
            return rgb
    """)

# The ReLU on every layer, the last one included: sigmoid_ writes what it kept.
EVERY_LAYER_RELU = LAST_LAYER_SKIPS_RELU.replace(
    "if li != len(self.mlp) - 1:\n                feat = F.relu(feat)",
    "feat = F.relu(feat)")
assert EVERY_LAYER_RELU != LAST_LAYER_SKIPS_RELU

# The layers handed in by the caller: an empty list leaves the first ReLU's output.
# (`a77e9bf` could not analyse this function at all: the check that a name is
# re-bound on every path recursed without end into the loop's own range.)
LAYERS_FROM_THE_CALLER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(3, 4)

        def forward(self, x, layers):
            feat = F.relu(self.inp(x))
            for layer in layers:
                feat = layer(feat)
            rgb = feat.sigmoid_()
            return rgb
    """)


def _head_grads(source: str, write: str):
    torch.manual_seed(0)
    head = _namespace(source)["Head"]([4, 5, 3])
    x = torch.randn(6, 3)
    if write != "sigmoid_":
        head.forward = _namespace(source.replace("feat.sigmoid_()", "torch.sigmoid(feat)"))[
            "Head"].forward.__get__(head)
    head.zero_grad()
    y = head(x)
    y.pow(2).sum().backward()
    return y.detach(), [p.grad.clone() for p in head.parameters()]


def test_a_relu_skipped_on_the_last_layer_is_silent_and_matches_the_out_of_place_head():
    assert _codes(LAST_LAYER_SKIPS_RELU) == []
    got, got_grads = _head_grads(LAST_LAYER_SKIPS_RELU, "sigmoid_")
    want, want_grads = _head_grads(LAST_LAYER_SKIPS_RELU, "sigmoid")
    assert torch.equal(got, want)
    assert all(torch.equal(a, b) for a, b in zip(got_grads, want_grads))


def test_a_relu_on_every_layer_is_still_reported_and_fails():
    assert _codes(EVERY_LAYER_RELU) == [(_line_of(EVERY_LAYER_RELU, "sigmoid_"), "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _head_grads(EVERY_LAYER_RELU, "sigmoid_")


def test_a_relu_skipped_on_the_last_layer_written_out_of_place_needs_no_change():
    fixed = LAST_LAYER_SKIPS_RELU.replace("feat.sigmoid_()", "torch.sigmoid(feat)")
    assert _codes(fixed) == []


def test_layers_from_the_caller_may_be_none_so_the_first_relu_is_still_reported():
    assert _codes(LAYERS_FROM_THE_CALLER) == [(_line_of(LAYERS_FROM_THE_CALLER, "sigmoid_"), "ADL001")]
    torch.manual_seed(0)
    head = _namespace(LAYERS_FROM_THE_CALLER)["Head"]()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        head(torch.randn(6, 3), []).sum().backward()
    head(torch.randn(6, 3), [nn.Linear(4, 4)]).sum().backward()  # with a layer: runs
