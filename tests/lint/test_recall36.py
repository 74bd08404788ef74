"""Causes worked on at stop 47 (docs/lint.md, "Recall causes worked on, stop 47
(r695-r732)").

* ADL018 (r726, fresh shape r745): the update of a hand-written optimizer of the file
  (`self.optimizer.apply(gradients, weights)`, `optimizer.update()` of a class whose
  method writes each tensor in place from its gradient) is read as a step when the
  receiver is an optimizer and the gradients reach it (`.grad` read by the method or
  passed in by the call).  An update method run once per batch is reported also for a
  class whose bases are classes of the same file, and in a file that clears gradients
  elsewhere when nothing the loop, the class or its bases run clears them.
* ADL017 (r701, fresh shape r746): a module's `__init__` that stores the output of one
  of its own layers (called there, or through a method of the class that calls one and
  returns what it computed), read by `forward`, with a loop that backpropagates a loss
  from a call of the module on every iteration (in a function that builds the module
  or is handed it by every call).

Each fresh shape (tests/lint/recall36_programs/bad_*, r745) was written and run under
torch before the changed linter ran on it; the correct near twins (ok_*) run and stay
silent, and the buggy programs differ from the hand-written correct version."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall36_programs"
RECREATIONS = Path(__file__).parent / "recreations"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def test_apply_gradients_of_a_hand_written_optimizer_in_an_update_method():
    source = program_source(PROGRAMS, "bad_agent_apply_gradients_pairs")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [
        (line_starting(source, "self.optimizer.apply_gradients("), "ADL018")]
    assert "`self.optimizer.apply_gradients()` in `learn`" in found[0][2]
    assert f"the loop on line {line_starting(source, 'for batch in episodes():')}" in found[0][2]
    # the claim: each update applies the sum of all gradients so far, unlike SGD written by hand
    agent = run_as_module(source, "bad_agent").run()
    torch.manual_seed(0)
    reference = run_as_module(source, "reference_agent").ValueAgent(4)
    for states, returns in run_as_module(source, "episodes").episodes():
        grads = torch.autograd.grad(((reference.net(states).squeeze(1) - returns) ** 2).mean(), reference.weights)
        with torch.no_grad():
            for w, g in zip(reference.weights, grads):
                w -= 0.05 * g
    assert not all(torch.allclose(a, b) for a, b in zip(agent.weights, reference.weights))


def test_autograd_grad_handed_to_the_same_optimizer_is_silent_and_correct():
    source = program_source(PROGRAMS, "ok_agent_apply_gradients_from_autograd_grad")
    assert _found(source) == []
    agent = run_as_module(source, "ok_agent").run()
    torch.manual_seed(0)
    reference = run_as_module(source, "reference_agent").ValueAgent(4)
    for states, returns in run_as_module(source, "episodes").episodes():
        for w in reference.weights:
            w.grad = None
        ((reference.net(states).squeeze(1) - returns) ** 2).mean().backward()
        with torch.no_grad():
            for w in reference.weights:
                w -= 0.05 * w.grad
    assert all(torch.equal(a, b) for a, b in zip(agent.weights, reference.weights))


@pytest.mark.parametrize("name", ["ok_scratch_optimizer_with_its_own_zero_grad",
                                  "ok_optimizer_update_clears_what_it_applied"])
def test_hand_written_optimizers_that_clear_are_silent(name):
    source = program_source(PROGRAMS, name)
    assert _found(source) == []
    network = run_as_module(source, name).run()
    assert all(torch.isfinite(p).all() for p in network.parameters())


def _recreation(prefix: str):
    path = next(RECREATIONS.glob(prefix + "_*.py"))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return path.read_text(encoding="utf-8"), module


@pytest.mark.parametrize("prefix, call", [("r745", "optimizer.update()"),
                                          ("r726", "self.optimizer.apply(gradients, trainable_weights)")])
def test_the_recreations_of_the_cause_are_found_at_the_update(prefix, call):
    source, module = _recreation(prefix)
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, call), "ADL018")]
    assert module.bug_shows()


def test_the_update_method_is_silent_when_the_loop_clears_in_a_file_that_clears():
    source, _ = _recreation("r726")
    fixed = source.replace("                logs = self.train_step(",
                           "                self.zero_grad()\n                logs = self.train_step(")
    assert fixed != source
    assert _found(fixed) == []


def test_the_update_method_is_silent_when_a_base_class_of_another_file_may_clear():
    source, _ = _recreation("r726")
    imported = source.replace("class Model(nn.Module):",
                              "from project.engine import Model\n\n\nclass _Model(nn.Module):")
    assert imported != source
    assert _found(imported) == []


@pytest.mark.parametrize("prefix, assignment", [
    ("r746", "self.class_embeddings = self.text_proj(class_descriptions)"),
    ("r701", "self.label_representation = self.build_label_representation(tag2id)")])
def test_a_layer_output_stored_in_init_and_read_by_forward(prefix, assignment):
    source, module = _recreation(prefix)
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, assignment), "ADL017")]
    assert "computed once, in `__init__`" in found[0][2] and "loss.backward()" in found[0][2]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        module.run()


def test_a_layer_output_stored_with_detach_is_silent_and_runs():
    source, _ = _recreation("r746")
    detached = source.replace("self.text_proj(class_descriptions)  #", "self.text_proj(class_descriptions).detach()  #")
    assert detached != source
    assert _found(detached) == []
    run_as_module(detached, "r746_detached").run()


def test_a_module_only_evaluated_in_the_loop_is_silent():
    source, _ = _recreation("r746")
    evaluated = source.replace("            loss.backward()\n", "")
    assert evaluated != source
    assert [code for _, code, _ in _found(evaluated)] == []


@pytest.mark.parametrize("name", ["ok_zero_shot_head_class_embeddings_in_forward",
                                  "ok_label_prototypes_encoded_once_under_no_grad"])
def test_layer_outputs_computed_in_forward_or_without_grad_are_silent_and_run(name):
    source = program_source(PROGRAMS, name)
    assert _found(source) == []
    model = run_as_module(source, name).run()
    assert all(torch.isfinite(p).all() for p in model.parameters())
