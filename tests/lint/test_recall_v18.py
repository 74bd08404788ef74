"""Recall on the cause of a miss in the r456-r470 re-creations: each case the
linter now reports really shows its bug when run, its corrected twin (the
change the finding asks for, applied) stays silent and computes what a
hand-written reference computes, and similar correct patterns stay silent
(and really run)."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ADL028: a loss returned with its graph by a same-file training step (a method that
# clears, backpropagates and steps) summed into a name across the caller's loop,
# `total_loss += total` (r457, faster-rcnn-pytorch's `fit_one_epoch`), as a list
# append of it already was.
SUMMED_STEP = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class StepTrainer:
        def __init__(self, model, lr=0.1):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

        def train_step(self, x, y):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            return loss

    def fit_one_epoch(train_util, batches):
        total_loss = 0
        for x, y in batches:
            loss = train_util.train_step(x, y)
            total_loss += loss
        return total_loss / len(batches)
""")

SUMMED_STEP_FIXED = SUMMED_STEP.replace("total_loss += loss", "total_loss += loss.item()")

# The sum starts again inside the loop (one window's graphs; ADL023's policy too).
SUMMED_STEP_RESTARTED = SUMMED_STEP.replace(
    "        total_loss += loss\n",
    "        total_loss += loss\n        total_loss = 0\n")

# The step returns a number: nothing to keep.
SUMMED_STEP_RETURNS_ITEM = SUMMED_STEP.replace("        return loss\n", "        return loss.item()\n")

# The loop sums what a function without a backward returns (an evaluation): not a
# training graph by this rule's evidence.
SUMMED_EVALUATION = SUMMED_STEP.replace("        loss.backward()\n", "").replace(
    "        self.optimizer.step()\n", "")


def _batches():
    torch.manual_seed(1)
    return [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(3)]


def _run(source):
    namespace = _load(source)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    return namespace["fit_one_epoch"](namespace["StepTrainer"](model), _batches()), model


def test_sum_of_a_returned_training_loss_is_reported():
    assert _findings(SUMMED_STEP) == [(_line(SUMMED_STEP, "total_loss += loss"), "ADL028")]


def test_sum_of_a_returned_training_loss_shows_its_bug():
    mean, _ = _run(SUMMED_STEP)
    assert mean.grad_fn is not None  # the epoch's mean holds every batch's graph


def test_the_fix_applied_is_silent_and_gives_the_reference():
    assert _findings(SUMMED_STEP_FIXED) == []
    mean, model = _run(SUMMED_STEP_FIXED)
    assert isinstance(mean, float)
    torch.manual_seed(0)
    reference = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    total = 0.0
    for x, y in _batches():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(reference(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    assert mean == total / 3
    assert torch.equal(model.weight, reference.weight) and torch.equal(model.bias, reference.bias)


def test_restarted_sum_item_and_evaluation_are_silent():
    for source in (SUMMED_STEP_RESTARTED, SUMMED_STEP_RETURNS_ITEM, SUMMED_EVALUATION):
        assert source != SUMMED_STEP
        assert _findings(source) == []
        _run(source)
