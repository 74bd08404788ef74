"""Set P (docs/lint.md, eighteenth check).  Two of its first run's false alarms
had general causes:

* ADL005 on RAD-TTS's `f0_target = torch.detach(f0_target)`: the function
  form `torch.detach(x)` was read as the method `.detach()` of the name
  `torch`, so a write to the result was said to change `torch`.  The tensor
  detached is the argument.
* ADL018 on CAVIA's meta-update: the loop takes its gradients with
  `torch.autograd.grad`, sums them in a list and assigns `param.grad = ...`
  before `meta_optimiser.step()`.  An assignment to `.grad` replaces whatever
  backward passes added, as `p.grad = None` does.

Each claim below is run with torch: the reported code really misbehaves, the
silent code runs, and its values equal a reference."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "set_p.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_p.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- ADL005: `torch.detach(x)` detaches x ----------------------------------

# RAD-TTS's shape: the detached tensor is a clone that nothing reads again.
DETACHED_CLONE = textwrap.dedent("""
    import torch

    def log_f0_target(f0, voiced):
        target = f0.clone()
        target = torch.detach(target)
        target[voiced] = torch.log(target[voiced])
        return torch.div(target, 6), f0.mean()
    """)

# The function form on the tensor itself, which is read after the write.
DETACHED_SOURCE_READ_LATER = textwrap.dedent("""
    import torch

    def log_f0_target(f0, voiced):
        target = torch.detach(f0)
        target[voiced] = torch.log(target[voiced])
        return target / 6, f0.mean()
    """)


def _f0():
    torch.manual_seed(0)
    f0 = torch.rand(6) * 100 + 50
    return f0, f0 > 80


def _reference_log_f0(f0, voiced):
    return torch.where(voiced, torch.log(f0), f0) / 6, f0.mean()


def test_torch_detach_of_a_clone_is_silent_and_matches_a_reference():
    assert _codes(DETACHED_CLONE) == []
    f0, voiced = _f0()
    kept = f0.clone()
    target, mean = _namespace(DETACHED_CLONE)["log_f0_target"](f0, voiced)
    expected_target, expected_mean = _reference_log_f0(kept, voiced)
    assert torch.equal(target, expected_target) and torch.equal(mean, expected_mean)
    assert torch.equal(f0, kept)


def test_torch_detach_of_a_tensor_read_later_is_reported_and_changes_it():
    write = _line_of(DETACHED_SOURCE_READ_LATER, "target[voiced] =")
    findings = lint_source(DETACHED_SOURCE_READ_LATER, "set_p.py")
    assert [(f.line, f.code) for f in findings] == [(write, "ADL005")]
    assert "shares memory with `f0`" in findings[0].message
    f0, voiced = _f0()
    kept = f0.clone()
    _, mean = _namespace(DETACHED_SOURCE_READ_LATER)["log_f0_target"](f0, voiced)
    assert not torch.equal(mean, _reference_log_f0(kept, voiced)[1])  # f0 itself was logged


# ----- ADL018: `param.grad = ...` replaces the gradient ------------------------

# CAVIA's meta-update: gradients from autograd.grad, assigned before the step.
ASSIGNED_META_GRADIENT = textwrap.dedent("""
    import torch
    import torch.nn.functional as F

    def meta_train(model, tasks, steps, lr):
        opt = torch.optim.SGD(model.parameters(), lr)
        for _ in range(steps):
            meta_gradient = [0 for _ in model.parameters()]
            for x, y in tasks:
                loss = F.mse_loss(model(x), y)
                grads = torch.autograd.grad(loss, list(model.parameters()))
                for i in range(len(grads)):
                    meta_gradient[i] += grads[i].detach()
            for i, param in enumerate(model.parameters()):
                param.grad = meta_gradient[i] / len(tasks)
            opt.step()
        return model
    """)

# The same update with backward(): nothing clears, so the sums pile up.
ACCUMULATED_META_GRADIENT = textwrap.dedent("""
    import torch
    import torch.nn.functional as F

    def meta_train(model, tasks, steps, lr):
        opt = torch.optim.SGD(model.parameters(), lr)
        for _ in range(steps):
            for x, y in tasks:
                loss = F.mse_loss(model(x), y) / len(tasks)
                loss.backward()
            opt.step()
        return model
    """)


def _tasks():
    torch.manual_seed(0)
    return [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(3)]


def _reference_meta_train(model, tasks, steps, lr):
    """Plain gradient descent on the mean task loss, written out by hand."""
    for _ in range(steps):
        loss = sum(torch.nn.functional.mse_loss(model(x), y) for x, y in tasks) / len(tasks)
        grads = torch.autograd.grad(loss, list(model.parameters()))
        with torch.no_grad():
            for p, g in zip(model.parameters(), grads):
                p -= lr * g
    return model


def _trained(source, steps):
    torch.manual_seed(1)
    model = nn.Linear(3, 1)
    reference = nn.Linear(3, 1)
    reference.load_state_dict(model.state_dict())
    _namespace(source)["meta_train"](model, _tasks(), steps, 0.1)
    _reference_meta_train(reference, _tasks(), steps, 0.1)
    return model, reference


def test_a_gradient_assigned_before_each_step_is_silent_and_matches_a_reference():
    assert _codes(ASSIGNED_META_GRADIENT) == []
    model, reference = _trained(ASSIGNED_META_GRADIENT, 4)
    for got, expected in zip(model.parameters(), reference.parameters()):
        assert torch.allclose(got, expected, atol=1e-6)


def test_a_gradient_assigned_by_unpacking_is_walked_and_the_loop_still_reported():
    # `p.grad, = autograd.grad(...)` (torchdyn's solvers): the target's own value is not known
    source = ACCUMULATED_META_GRADIENT.replace(
        "        opt.step()",
        "        weight = model.weight\n        weight.grad, = torch.autograd.grad(loss, weight)\n        opt.step()")
    assert "weight.grad, =" in source
    assert _codes(source) == [(_line_of(source, "opt.step()"), "ADL018")]


def test_gradients_added_by_backward_and_never_cleared_are_reported_and_pile_up():
    step = _line_of(ACCUMULATED_META_GRADIENT, "opt.step()")
    assert _codes(ACCUMULATED_META_GRADIENT) == [(step, "ADL018")]
    model, reference = _trained(ACCUMULATED_META_GRADIENT, 4)
    assert not torch.allclose(model.weight, reference.weight, atol=1e-3)
    one_step, reference_one = _trained(ACCUMULATED_META_GRADIENT, 1)  # nothing to pile up yet
    assert torch.allclose(one_step.weight, reference_one.weight, atol=1e-6)


# ----- r320: TUNIT's IIC loss, cloned as ADL012's help says -------------------

RECREATIONS = Path(__file__).parent / "recreations"


def _recreation_module(source: str, name: str):
    namespace: dict = {"__name__": name}
    exec(compile(source, name + ".py", "exec"), namespace)
    return namespace


def test_r320_marginals_cloned_before_the_clamp_are_silent_and_match_a_reference():
    source = next(RECREATIONS.glob("r320_*.py")).read_text(encoding="utf-8")
    fixed = source.replace(".expand(k, k)\n", ".expand(k, k).clone()\n")
    assert fixed.count(".clone()\n") == 2
    assert _codes(fixed) == []
    iic = _recreation_module(fixed, "r320_fixed")["calc_iic_loss"]

    def reference(x_out, x_tf_out, eps=1e-10):  # the same loss, clamped out of place
        p_i_j = x_out.unsqueeze(2) * x_tf_out.unsqueeze(1)
        p_i_j = p_i_j.sum(dim=0)
        p_i_j = (p_i_j + p_i_j.t()) / 2.
        p_i_j = p_i_j / p_i_j.sum()
        k = p_i_j.size(0)
        p_i = p_i_j.sum(dim=1).view(k, 1).expand(k, k).clamp(min=eps)
        p_j = p_i_j.sum(dim=0).view(1, k).expand(k, k).clamp(min=eps)
        p_i_j = p_i_j.clamp(min=eps)
        return (-p_i_j * (torch.log(p_i_j) - torch.log(p_j) - torch.log(p_i))).sum()

    torch.manual_seed(0)
    logits = torch.randn(8, 5)
    losses, grads = [], []
    for loss_fn in (iic, reference):
        a = logits.clone().requires_grad_()
        b = (logits + 0.1).clone().requires_grad_()
        loss = loss_fn(a.softmax(1), b.softmax(1))
        loss.backward()
        losses.append(loss.detach())
        grads.append((a.grad, b.grad))
    assert torch.allclose(losses[0], losses[1])
    assert all(torch.allclose(g, r, atol=1e-7) for g, r in zip(grads[0], grads[1]))
    _recreation_module(fixed, "r320_fixed")["run"]()  # trains without raising


# ----- ADL012: a mask written on every alias of what it writes -----------------

# BAN's shape: a comparison's mask, unsqueezed and expanded, its first column
# cleared across both expanded dimensions.
MASK_CLEARED_ACROSS_EXPANDED_DIMS = textwrap.dedent("""
    import torch

    def entity_mask(e, att):
        mask = (e == 0).unsqueeze(1).unsqueeze(2).expand(att.size())
        mask[:, :, :, 0].data.fill_(0)
        return att.masked_fill(mask, -99)
    """)

# One glimpse only: the other glimpses share the memory and change too.
MASK_CLEARED_IN_ONE_GLIMPSE = MASK_CLEARED_ACROSS_EXPANDED_DIMS.replace(
    "mask[:, :, :, 0]", "mask[:, 0, :, 0]")

# The same columns cleared by an indexed assignment: it checks for overlapping
# memory and raises, mask or not.
MASK_ASSIGNED_ACROSS_EXPANDED_DIMS = MASK_CLEARED_ACROSS_EXPANDED_DIMS.replace(
    "mask[:, :, :, 0].data.fill_(0)", "mask[:, :, :, 0] = False")

# The same write to an expanded tensor with a graph.
SCORES_CLEARED_ACROSS_EXPANDED_DIMS = textwrap.dedent("""
    import torch

    def glimpse_scores(proj, q, att):
        scores = proj(q).unsqueeze(1).unsqueeze(2).expand(att.size())
        scores[:, :, :, 0] = 0
        return att * scores
    """)


def _entities():
    e = torch.tensor([[1, 0, 2, 0], [0, 3, 0, 0]])
    att = torch.arange(2 * 3 * 5 * 4, dtype=torch.float).view(2, 3, 5, 4)
    return e, att


def _reference_entity_mask(e, att, glimpse=None):
    """The same mask, cleared on the unexpanded (or a materialised) tensor."""
    mask = (e == 0).unsqueeze(1).unsqueeze(2).expand(att.size()).clone()
    if glimpse is None:
        mask[:, :, :, 0] = False
    else:
        mask[:, glimpse, :, 0] = False
    return att.masked_fill(mask, -99)


def test_a_mask_cleared_across_its_expanded_dimensions_is_silent_and_matches_a_reference():
    assert _codes(MASK_CLEARED_ACROSS_EXPANDED_DIMS) == []
    e, att = _entities()
    got = _namespace(MASK_CLEARED_ACROSS_EXPANDED_DIMS)["entity_mask"](e, att)
    assert torch.equal(got, _reference_entity_mask(e, att))


def test_a_mask_cleared_in_one_expanded_slice_is_reported_and_changes_the_others():
    assert _codes(MASK_CLEARED_IN_ONE_GLIMPSE) == [
        (_line_of(MASK_CLEARED_IN_ONE_GLIMPSE, "fill_"), "ADL012")]
    e, att = _entities()
    got = _namespace(MASK_CLEARED_IN_ONE_GLIMPSE)["entity_mask"](e, att)
    assert not torch.equal(got, _reference_entity_mask(e, att, glimpse=0))


def test_the_same_write_to_an_expanded_tensor_with_a_graph_is_reported_and_raises():
    assert _codes(SCORES_CLEARED_ACROSS_EXPANDED_DIMS) == [
        (_line_of(SCORES_CLEARED_ACROSS_EXPANDED_DIMS, "scores[:, :, :, 0] = 0"), "ADL012")]
    _, att = _entities()
    proj = nn.Linear(3, 4)
    with pytest.raises(RuntimeError, match="single memory location"):
        _namespace(SCORES_CLEARED_ACROSS_EXPANDED_DIMS)["glimpse_scores"](proj, torch.randn(2, 3), att)


def test_the_same_columns_cleared_by_an_indexed_assignment_are_reported_and_raise():
    assert _codes(MASK_ASSIGNED_ACROSS_EXPANDED_DIMS) == [
        (_line_of(MASK_ASSIGNED_ACROSS_EXPANDED_DIMS, "= False"), "ADL012")]
    e, att = _entities()
    with pytest.raises(RuntimeError, match="single memory location"):
        _namespace(MASK_ASSIGNED_ACROSS_EXPANDED_DIMS)["entity_mask"](e, att)


# ----- cost: a long sum is walked once per level -------------------------------

def test_a_long_sum_of_constant_tensors_asks_each_operand_once(monkeypatch):
    """The transfer-learning collection's `output_path = args.outdir + '_' + ...`
    (21 operands) took seconds to lint: `is_const` asked each side of a `+`
    twice, so a chain of n constant operands cost about 2**n calls (73,697 for
    the 14 below).  Counted with the real method wrapped, not timed."""
    from autograd_doctor.lint.knowledge import TensorKnowledge
    calls = []
    real = TensorKnowledge.is_const

    def counted(self, node):
        calls.append(node)
        return real(self, node)

    monkeypatch.setattr(TensorKnowledge, "is_const", counted)
    operands = " + ".join(["offset"] * 14)
    source = f"import torch\n\ndef offsets(n):\n    offset = torch.zeros(n)\n    total = {operands}\n    return total\n"
    assert _codes(source) == []
    assert 0 < len(calls) < 1000
    assert torch.equal(_namespace(source)["offsets"](3), torch.zeros(3))
