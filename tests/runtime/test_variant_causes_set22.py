"""Causes found by held-out variants set 22 (docs/errors.md, "Held-out variants", set 22), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD101: `t[mask] = 0.0` with a boolean mask of fewer dimensions than `t` (a mask over the rows of a
[rows, features] tensor) got the help `t = torch.where(mask, 0.0, t)`, which fails: the mask indexes the
leading dimensions, torch.where broadcasts from the trailing ones (a wrong help). The run records how
many trailing dimensions of the written tensor the mask lacks, and the mask gets them as size-1 axes
(`mask[..., None]`); a tensor value written through such a mask holds the selected rows only, and gets
the copy alone."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

ROWS_DROPPED_THROUGH_A_ROW_MASK = """
    import torch

    def keep_mask(n, rate, generator):
        return torch.rand(n, generator=generator) >= rate

    def hidden_units(x, w):
        h = torch.sigmoid(x @ w)
        keep = keep_mask(h.shape[0], 0.4, torch.Generator().manual_seed(1))
        h[~keep] = 0.0  # WRITE
        return h

    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(6, 3)
    out = hidden_units(x, w).sum()
    out.backward()
    grad = w.grad
"""

ROWS_DROPPED_OUT_OF_PLACE = ROWS_DROPPED_THROUGH_A_ROW_MASK.replace(
    "h[~keep] = 0.0  # WRITE", "h = h.masked_fill(~keep[:, None], 0.0)  # WRITE")


def test_a_row_mask_gets_the_trailing_axes_in_torch_where(tmp_path):
    outcome = run_as_script(tmp_path, ROWS_DROPPED_THROUGH_A_ROW_MASK)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, ROWS_DROPPED_OUT_OF_PLACE, "correct.py")
    assert torch.equal(fixed["out"], correct["out"])
    assert torch.allclose(fixed["grad"], correct["grad"])


def test_the_row_mask_written_out_of_place_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, ROWS_DROPPED_OUT_OF_PLACE)
    assert outcome.error is None and not outcome.diagnoses
