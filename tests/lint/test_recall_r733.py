"""Causes worked on after the thirty-sixth held-out set (docs/lint.md, "A thirty-sixth
held-out set, written as real code is written (r733-r744)").

* ADL022 (r738): a grad scaler is known by its use, whatever its name -- `R.scale(loss)
  .backward()` or `R = ...GradScaler(...)` makes `R.step(optimizer)` a step (RefTeacher's
  `scalar`, a trainer's `self.amp`); and a step or backward later in the text does not
  count as running after the clip when it is in the other branch of an `if` around the
  clip (`if use_amp: ... else: ...`).  `nn.utils.clip_grad_norm_` is torch's when no import
  of the file binds `nn` (RefTeacher's train_semi.py takes `nn` from a star import).
* ADL016 (r744): a misspelt `requires_grad = True` on a parameter is reported when the file
  freezes parameters (`p.requires_grad = False` over `.parameters()`, `requires_grad_(False)`):
  the line meant to unfreeze them leaves them frozen.  Without a freeze in the file the
  misspelt `= True` changes nothing and stays silent.

Each fresh shape (tests/lint/recall_r733_programs/bad_*) was written and run under torch
before the changed linter ran on it; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall_r733_programs"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def test_a_grad_scaler_known_by_its_use_steps_before_the_clip():
    source = program_source(PROGRAMS, "bad_amp_trainer_clips_after_amp_step")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "torch.nn.utils.clip_grad_value_"), "ADL022")]
    assert "`self.amp.step()`" in found[0][2]
    assert run_as_module(source, "bad_amp").bug_shows()


def test_a_step_in_the_other_branch_does_not_run_after_the_clip():
    source = program_source(PROGRAMS, "bad_use_amp_branch_clips_after_step")
    found = _found(source)
    clip_line = next(i for i, line in enumerate(source.splitlines(), 1)
                     if "clip_grad_norm_" in line and i > line_starting(source, "scaler.step(optimizer)"))
    assert [(line, code) for line, code, _ in found] == [(clip_line, "ADL022")]
    assert run_as_module(source, "bad_branch").bug_shows()


def test_a_clip_through_nn_from_a_star_import_is_a_clip():
    source = program_source(PROGRAMS, "bad_star_import_nn_clips_after_scaler_step")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "nn.utils.clip_grad_norm_"), "ADL022")]
    assert "`scalar.step()`" in found[0][2]
    assert run_as_module(source, "bad_star").bug_shows()


def test_a_misspelt_unfreeze_after_a_freeze_is_reported():
    source = program_source(PROGRAMS, "bad_finetune_unfreeze_typo_after_freezing")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "p.requires_grads = True"), "ADL016")]
    assert f"frozen on line {line_starting(source, 'p.requires_grad = False')}" in found[0][2]
    assert run_as_module(source, "bad_unfreeze").bug_shows()


@pytest.mark.parametrize("name", [
    "ok_amp_trainer_unscales_clips_then_steps",
    "ok_use_amp_branch_clips_before_both_steps",
    "ok_unfreeze_typo_without_any_freeze",
    "ok_freeze_then_unfreeze_spelt_right",
    "ok_star_import_nn_unscales_clips_then_steps",
])
def test_near_twins_run_and_stay_silent(name):
    source = program_source(PROGRAMS, name)
    assert _found(source) == []
    run_as_module(source, name).run()
