"""The doctor's own failure on a saved output of unbind/split/chunk whose base was modified in place
(docs/bug-reports.md, "The doctor's own failures, swept (stop 43)", "Second round").

Reading `.grad_fn` of such a view raises PyTorch's own "Output N of Split is a view and its base ...
has been modified inplace" error. Strict mode words PyTorch's version message from the saved input's
grad_fn before backward runs, so it failed inside (an internal error; found on fresh set 17's
cart-pole rollout, https://github.com/pypose/pypose/issues/344). PyTorch raises that error, not a
version error, for such a save: the doctor now raises it unchanged in every mode, without failing,
and the catalogue explains it (AD138). Tested on another shape (split of a non-leaf, `sin` of a
piece, the base written with add_) and on its correct near-twin (the write before the split).
"""

from __future__ import annotations

import runpy

import pytest
import torch

import autograd_doctor
from autograd_doctor.doctor import internal_error_count
from helpers import run_plain, run_program, write_program

SPLIT_PIECE_SAVED = """
    import torch
    w = torch.linspace(0.5, 1.5, 8, requires_grad=True)
    h = w * 2
    left, right = torch.split(h, 4)
    y = torch.sin(left) + right.square().sum()
    h.add_(1.0)  # WRITE
    y.sum().backward()
"""

WRITE_BEFORE_SPLIT = """
    import torch
    w = torch.linspace(0.5, 1.5, 8, requires_grad=True)
    h = w * 2
    h = h.add(1.0)
    left, right = torch.split(h, 4)
    y = torch.sin(left) + right.square().sum()
    y.sum().backward()
    grad = w.grad
"""

MODES = [dict(), dict(mode="full"), dict(strict=True)]


def _plain_error(tmp_path) -> RuntimeError:
    with pytest.raises(RuntimeError) as caught:
        run_plain(tmp_path, __import__("textwrap").dedent(SPLIT_PIECE_SAVED), "plain.py")
    return caught.value


@pytest.mark.parametrize("options", MODES, ids=["default", "full", "strict"])
def test_pytorchs_own_error_comes_through_and_is_explained(tmp_path, options):
    expected = _plain_error(tmp_path)
    path = write_program(tmp_path, __import__("textwrap").dedent(SPLIT_PIECE_SAVED))
    before = internal_error_count()
    with pytest.raises(RuntimeError) as caught:  # as a script: the error leaves the watched block
        with autograd_doctor.watch(**options):
            runpy.run_path(path, run_name="__main__")
    assert internal_error_count() == before
    assert type(caught.value) is RuntimeError
    assert str(caught.value).split("\n\nautograd-doctor:")[0] == str(expected)
    assert "AD138" in [d.code for d in autograd_doctor.diagnoses_of(caught.value)]


@pytest.mark.parametrize("options", MODES, ids=["default", "full", "strict"])
def test_the_write_before_the_split_is_silent_and_keeps_the_gradient(tmp_path, options):
    outcome = run_program(tmp_path, WRITE_BEFORE_SPLIT, **options)
    assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []
    plain = run_plain(tmp_path, __import__("textwrap").dedent(WRITE_BEFORE_SPLIT))
    assert torch.equal(outcome.namespace["grad"], plain["grad"])
