"""Causes worked on after the thirty-fifth held-out set (docs/lint.md, "A
thirty-fifth held-out set, written as real code is written (r721-r732)").

* ADL003 (r723): the layers of an object built outside `__init__` -- in a method the
  caller runs after construction (pix2pix's `initialize(opt)`, a Lightning-style
  `setup`) -- are known as layers when the methods that use them are read: such a
  builder method is walked before the methods the class calls (checker.callees_first),
  so that a method returning the losses (`loss_G_A, loss_G_B = self.backward_G()`) is
  summarised with the layers each loss went through.
* ADL003 (r723): a same-file function returning several layers as a tuple
  (`encoder = nn.Sequential(...); decoder = ...; return encoder, decoder`) is a factory
  of each: `self.enc, self.dec = define_ED(...)` binds both layers
  (modules.tuple_factories).

Each fresh shape (tests/lint/recall35_programs/bad_*) was written and run under torch
before the changed linter ran on it; the correct near twins (ok_*) run and stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from program_checks import line_starting, program_source, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall35_programs"


def _found(source: str):
    return [(f.line, f.code, f.message) for f in lint_source(source, "prog.py")]


def test_layers_built_in_a_setup_method_are_known_to_the_returned_losses():
    source = program_source(PROGRAMS, "bad_setup_builds_layers_losses_tuple_step_first")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "self.opt_c.step()"), "ADL003")]
    assert "`self.critic`" in found[0][2] and "`generator_loss`" in found[0][2]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad1").run()


def test_layers_from_a_tuple_factory_are_known_to_the_returned_losses():
    source = program_source(PROGRAMS, "bad_tuple_factory_layers_step_before_backward")
    found = _found(source)
    assert [(line, code) for line, code, _ in found] == [(line_starting(source, "self.enc_optim.step()"), "ADL003")]
    assert "`self.encoder`" in found[0][2] and "`reconstruction_loss`" in found[0][2]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "bad2").run()


@pytest.mark.parametrize("name", ["ok_setup_builds_layers_both_backwards_before_steps",
                                  "ok_tuple_factory_layers_loss_recomputed_after_step"])
def test_correct_near_twins_run_and_stay_silent(name):
    source = program_source(PROGRAMS, name)
    assert _found(source) == []
    run_as_module(source, name).run()

