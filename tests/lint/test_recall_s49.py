"""Causes of misses worked on at stop 49 (docs/lint.md, "Recall causes worked on, stop 49").

* ADL023 (r762, fresh shapes r788 and bad_regression_epoch_correlation_summed_with_graph): a
  sum, into a name bound to a number before the training loop, of a value that is not the
  backpropagated loss but carries a graph of its own -- a metric of the model's output computed
  by a function of the file (`dice += dice_coeff(sig(output), target)`) -- by the interpreter
  of returned graphs.  A helper that returns `.item()`, a sum of `.item()` and a sum under
  `torch.no_grad()` carry no graph.
* ADL009 (r763, fresh shapes r789 and bad_sequence_losses_copied_by_tensor_of_comprehension):
  `torch.tensor([...])` of a list comprehension whose elements carry a graph (the values it
  iterates followed: `enumerate(logits.unbind(1))`, `zip`, `itertools.combinations`, the
  file's own functions).  `torch.stack` of the comprehension, or a tensor of `.item()`
  numbers, is silent.

Each fresh shape was written and run under torch before the changed linter ran on it; the
correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_s49_programs"
RECREATIONS = Path(__file__).parent / "recreations"


def _found(source: str, select=Selection()):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py", select)]


def _recreation(name: str) -> str:
    return next(RECREATIONS.glob(name + "_*.py")).read_text(encoding="utf-8")


def test_a_metric_of_the_model_output_summed_in_a_trainer_method():
    source = _recreation("r788")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "epoch_iou += iou_score(torch.sigmoid(logits), masks)"), "ADL023")]
    assert "`epoch_iou` sums `iou_score(torch.sigmoid(logits), masks)`, a tensor with a graph" in found[0][2]
    assert "`loss.backward()` on line 44" in found[0][2]


def test_the_dice_of_r762_summed_with_its_graph():
    source = _recreation("r762")
    assert [(line, code) for line, code, _ in _found(source)] == [
        (line_starting(source, "dice += dice_coeff(sig_output, target)"), "ADL023")]


def test_a_metric_summed_by_rebinding_the_total_and_its_fix():
    source = program_source(PROGRAMS, "bad_regression_epoch_correlation_summed_with_graph")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "corr_total = corr_total + pearson(pred, y)"), "ADL023")]
    buggy = run_as_module(source, "bad_corr").run()
    assert buggy.grad_fn is not None
    # the help applied: the same value, and the model the same, with no graph kept
    text, count = fix_source(source, lambda t: lint_source(t, "prog.py", Selection(("ADL023",))), unsafe=True)
    assert count == 1 and "pearson(pred, y).detach()" in text and _found(text) == []
    fixed = run_as_module(text, "bad_corr_fixed").run()
    hand = run_as_module(source.replace("pearson(pred, y)\n", "pearson(pred, y).item()\n"), "bad_corr_hand").run()
    assert fixed.grad_fn is None and torch.equal(fixed, buggy.detach()) and fixed.item() == pytest.approx(hand)


@pytest.mark.parametrize("name", [
    "ok_segmentation_trainer_epoch_iou_item", "ok_segmentation_metric_helper_returns_number",
    "ok_segmentation_metric_summed_under_no_grad"])
def test_metrics_summed_without_a_graph_are_silent(name):
    source = program_source(PROGRAMS, name)
    assert _found(source, Selection(("ALL",))) == []
    result = run_as_module(source, name).run()
    assert not isinstance(result, torch.Tensor) or result.grad_fn is None


def test_losses_of_a_comprehension_over_heads_copied_by_torch_tensor():
    source = _recreation("r789")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "task_losses = torch.tensor([self.criterion(head(features)"), "ADL009")]
    assert "`task_losses` will not backpropagate into them" in found[0][2]


def test_losses_of_r763s_pairs_copied_by_torch_tensor():
    source = _recreation("r763")
    assert [(line, code) for line, code, _ in _found(source)] == [
        (line_starting(source, "loss = torch.tensor([loss_fn(r0, r1, y0, y1)"), "ADL009")]


def test_losses_of_a_comprehension_over_unbound_steps_and_the_fix():
    source = program_source(PROGRAMS, "bad_sequence_losses_copied_by_tensor_of_comprehension")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "step_losses = torch.tensor([F.cross_entropy(step"), "ADL009")]
    module = run_as_module(source, "bad_sequence")
    assert module.bug_shows()  # the model never moves
    # the help applied (`torch.stack`) trains as the hand-written sum of the step losses does
    text, count = fix_source(source, lambda t: lint_source(t, "prog.py", Selection(("ADL009",))), unsafe=True)
    assert count == 1 and "torch.stack([F.cross_entropy(step" in text
    hand = source.replace(
        "torch.tensor([F.cross_entropy(step, tags[:, t]) for t, step in enumerate(logits.unbind(1))])",
        "sum(F.cross_entropy(logits[:, t], tags[:, t]) for t in range(logits.shape[1])).unsqueeze(0)")
    assert hand != source
    _, got = run_as_module(text, "bad_sequence_fixed").run()
    _, want = run_as_module(hand, "bad_sequence_hand").run()
    for a, b in zip(got, want):
        assert torch.allclose(a, b, atol=1e-6)
    before, _ = run_as_module(text, "bad_sequence_fixed_again").run()
    assert not all(torch.equal(b, a) for b, a in zip(before, got))


@pytest.mark.parametrize("name", [
    "ok_multihead_trainer_losses_stacked_from_comprehension", "ok_logged_tensor_of_comprehension_of_numbers"])
def test_comprehensions_kept_on_the_graph_or_of_numbers_are_silent(name):
    source = program_source(PROGRAMS, name)
    assert _found(source, Selection(("ALL",))) == []
    run_as_module(source, name).run()
