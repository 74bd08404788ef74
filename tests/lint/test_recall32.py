"""Recall cause worked on after the thirty-second held-out set (docs/lint.md, "A
thirty-second held-out set, written as real code is written (r679-r690)").

* ADL003 (r681): an optimizer that a class receives through its constructor and
  stores on `self` (`self.c_opt = c_optimizer`), built by the file's own code over
  `x.parameters()` of a module `x` passed to the same constructor call and stored
  on `self` too (`self.C = critic`): its step updates that module.  Keywords the
  constructor does not name follow `super().__init__(**kwargs)` to a same-file
  base class.  Every instantiation in the file must give the same relation;
  `*args` / `**kwargs` at a call, a same-file subclass, an attribute bound twice,
  a re-bound name: nothing is claimed.

* ADL019 (precision, found while checking the near twins above): a factory that
  reads only the shape of its tensor argument (`torch.ones_like(d_out)`,
  `full_like`, `zeros_like`, ..., `d_out.new_zeros(n)`) makes a new constant
  without the argument's graph; frozen62 followed the argument's graph through it
  and reported a backward that reads such labels after the discriminator's
  backward freed its output (ok4, a DCGAN loop, 2 false ADL019).

The fresh shape (tests/lint/recall32_programs/b1, a WGAN trainer given its
networks and optimizers, written and run under torch before the rule ran on it):
found at the critic's step, raises; the fix applied (the generator's loss scores
the fake batch again after the step, ok1) is silent and gives the hand-written
update; correct near twins silent."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source
from program_checks import line_containing, run_as_module  # tests/lint/ is on sys.path

PROGRAMS = Path(__file__).parent / "recall32_programs"
ROOT = Path(__file__).parents[2]


def _source(name: str) -> str:
    return next(PROGRAMS.glob(name + "_*.py")).read_text(encoding="utf-8")


def _found(source: str, code: str = "ADL003"):
    return [(f.line, f.message) for f in lint_source(source, "prog.py") if f.code == code]


def test_constructor_given_optimizer_step_before_backward_found():
    source = _source("b1")
    found = _found(source)
    assert [line for line, _ in found] == [line_containing(source, "self.c_opt.step()")]
    message = found[0][1]
    assert "`self.c_opt.step()` updates the parameters of `self.C`" in message
    assert "`c_fake`" in message
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_as_module(source, "b1").run()


def test_fix_applied_is_silent_and_gives_the_hand_written_update():
    source = _source("ok1")
    assert _found(source) == []
    generator, critic, _ = run_as_module(source, "ok1").run()
    # the same two steps written by hand: the critic on the detached fake, then the
    # generator through the critic's new weights
    torch.manual_seed(0)
    g = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    c = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    g_opt = torch.optim.RMSprop(g.parameters(), lr=5e-4)
    c_opt = torch.optim.RMSprop(c.parameters(), lr=5e-4)
    bce = torch.nn.BCEWithLogitsLoss()
    for _ in range(2):
        real = torch.randn(6, 3)
        z = torch.randn(6, 4)
        c.zero_grad()
        g.zero_grad()
        fake = g(z)
        c_real = c(real)
        ones, zeros = torch.ones_like(c_real), torch.zeros_like(c_real)
        c_loss = bce(c_real, ones) + bce(c(fake.detach()), zeros)
        c_loss.backward()
        c_opt.step()
        g_loss = bce(c(fake), ones)
        g.zero_grad()
        g_loss.backward()
        g_opt.step()
    for a, b in zip(list(generator.parameters()) + list(critic.parameters()),
                    list(g.parameters()) + list(c.parameters())):
        assert torch.equal(a, b)


@pytest.mark.parametrize("name", ["ok1", "ok2", "ok3"])
def test_correct_near_twins_silent_and_running(name):
    source = _source(name)
    assert _found(source) == []
    run_as_module(source, name).run()


def test_disagreeing_instantiations_claim_nothing():
    # b1's trainer built a second time with the optimizers swapped: which module
    # `self.c_opt` steps is not one thing, so the step is not claimed
    source = _source("b1").replace(
        "        trainer.train_step(torch.randn(6, 3))\n",
        "        trainer.train_step(torch.randn(6, 3))\n"
        "    other = GANTrainer(generator, critic, c_opt, g_opt)\n")
    assert _found(source) == []


def test_r681_found_at_its_step():
    path = next((ROOT / "tests/lint/recreations").glob("r681_*.py"))
    source = path.read_text(encoding="utf-8")
    assert [line for line, _ in _found(source)] == [line_containing(source, "opt_enc.step()  # expect: ADL003")]


def test_labels_shaped_like_a_freed_output_are_constants():
    source = _source("ok4")
    assert _found(source, "ADL019") == []
    run_as_module(source, "ok4").run()


def test_the_freed_output_itself_still_found():
    source = _source("b2")
    found = _found(source, "ADL019")
    assert [line for line, _ in found] == [line_containing(source, "errG.backward()")]
    assert "`output`" in found[0][1]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        run_as_module(source, "b2").run()
