"""Causes worked on after the thirty-third held-out set (docs/lint.md, "A
thirty-third held-out set, written as real code is written (r682-r690)").

* ADL026 (precision, r686): a call of a module of a same-file class whose
  `__call__` or `forward` (its own or a same-file base's) backpropagates computes
  gradients; a `step()` after it applies them.  The frozen copy reported OpenNMT-py's
  sharded loss computer (`loss_compute(dec_out, ...)`, whose `__call__` runs the
  backward) as "a step with no gradients".
* ADL001 (r685): a same-file function's returned name that an op kept as its output
  (`g = torch.sigmoid(g); return g`), or the result of calling one of its module
  parameters (`node_vecs = W_n(node_vecs); return node_vecs, messages`) when the
  caller passes a module whose output layer keeps its output (`nn.Sequential(...,
  nn.ReLU())`), is that saved output at the call: a write into it is found.
* ADL003 (r687): an optimizer a top-level function is handed (`def train(model,
  loader, optimizer, state)`) steps the module that every call of the function in
  the file builds it over and passes for one same parameter; a parameter carried
  through the loop (`logits, hidden = net(tokens, hidden)`) is the loop's binding
  in the next iteration; a tensor's cast (`action.double()`, `.to(device)`) keeps
  its graph.

Each fresh shape (tests/lint/recall33_programs/bad_*) was written and run under
torch before the rule ran on it; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall33_programs"
RECREATIONS = Path(__file__).parent / "recreations"


def _found(source: str, code: str):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


# ADL026 ----------------------------------------------------------------------------

def test_step_after_module_whose_forward_backpropagates_is_silent_and_learns():
    source = program_source(PROGRAMS, "ok_step_after_module_whose_forward_backpropagates")
    assert _found(source, "ADL026") == []
    model, history = run_as_module(source, "ok26").run()
    assert len(history) == 2 and model.weight.grad is not None


def test_step_after_plain_criterion_module_still_found():
    source = program_source(PROGRAMS, "bad_step_after_plain_criterion_module")
    found = _found(source, "ADL026")
    assert [line for line, _ in found] == [line_starting(source, "opt.step()")]
    assert "applies no gradients" in found[0][1]
    model, _ = run_as_module(source, "bad26").run()
    assert model.weight.grad is None  # the step had nothing to apply


def test_sharded_loss_call_before_step_is_not_a_step_without_backward():
    path = next(RECREATIONS.glob("r686_*.py"))
    assert _found(path.read_text(encoding="utf-8"), "ADL026") == []


# ADL001 ----------------------------------------------------------------------------

def test_helper_returned_sigmoid_masked_in_place_found():
    source = program_source(PROGRAMS, "bad_gate_helper_output_masked_in_place")
    found = _found(source, "ADL001")
    assert [line for line, _ in found] == [line_starting(source, "gate[pad] = 0.0")]
    assert "torch.sigmoid" in found[0][1] and "SigmoidBackward0 keeps its output" in found[0][1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad01").run()


def test_helper_returned_sigmoid_masked_out_of_place_silent_and_right():
    source = program_source(PROGRAMS, "ok_gate_helper_output_masked_out_of_place")
    assert _found(source, "ADL001") == []
    module = run_as_module(source, "ok01")
    assert torch.equal(module.run(), module.expected_grad())


def test_parameter_module_ending_in_linear_is_silent():
    source = program_source(PROGRAMS, "ok_helper_calls_parameter_linear_then_writes")
    assert _found(source, "ADL001") == []
    assert run_as_module(source, "ok01b").run() is not None


def test_modof_parameter_module_output_row_write_found_and_fix_runs():
    path = next(RECREATIONS.glob("r685_*.py"))
    source = path.read_text(encoding="utf-8")
    found = _found(source, "ADL001")
    assert [line for line, _ in found] == [line_starting(source, "hatom[0,:] = hatom[0,:] * 0")]
    # the suggested change (a copy before the write) keeps the forward and runs
    fixed = source.replace("        hatom[0,:] = hatom[0,:] * 0", "        hatom = hatom.clone()\n        hatom[0,:] = hatom[0,:] * 0")
    assert _found(fixed, "ADL001") == []
    run_as_module(fixed, "r685fixed").run()


# ADL003 ----------------------------------------------------------------------------

def test_handed_optimizer_and_carried_hidden_found():
    source = program_source(PROGRAMS, "bad_language_model_fit_carries_hidden")
    found = _found(source, "ADL003")
    assert [line for line, _ in found] == [line_starting(source, "optimizer.step()")]
    assert "`hidden`" in found[0][1] and "next iteration" in found[0][1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad03").run()


def test_detached_hidden_silent_and_runs():
    source = program_source(PROGRAMS, "ok_language_model_fit_detaches_hidden")
    assert _found(source, "ADL003") == []
    assert len(run_as_module(source, "ok03").run()) == 2


def test_callers_disagreeing_on_the_module_claim_nothing():
    assert _found(program_source(PROGRAMS, "ok_fit_callers_disagree_on_module"), "ADL003") == []


def test_recurrent_ppo_pretraining_found():
    path = next(RECREATIONS.glob("r687_*.py"))
    source = path.read_text(encoding="utf-8")
    found = _found(source, "ADL003")
    assert [line for line, _ in found] == [line_starting(source, "optimizer.step()  # expect")]
    assert "`lstm_states`" in found[0][1]
