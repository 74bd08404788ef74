"""The report names the tensor that was saved, not a neighbour on the same line."""

from __future__ import annotations

import pytest

from helpers import run_program

# `h1 = torch.tanh(x) * mask` saves `mask`; the write into `mask` is one the default
# capture does not see (out=), so the name cannot come from the write line.
OUT_WRITE = """
    import torch
    torch.manual_seed(0)
    x = torch.randn(4, requires_grad=True)
    mask = (torch.rand(4) > 0.5).float()
    h1 = torch.tanh(x) * mask
    torch.mul(torch.ones(4), 2, out=mask)
    h1.sum().backward()
"""

# The write is inside a helper, where the tensor has another name.
HELPER_WRITE = """
    import torch
    torch.manual_seed(0)
    x = torch.randn(4, requires_grad=True)
    mask = (torch.rand(4) > 0.5).float()
    h1 = torch.tanh(x) * mask
    def scale(t):
        t.mul_(2)
    scale(mask)
    h1.sum().backward()
"""


@pytest.mark.parametrize("options", [{}, {"mode": "full"}, {"capture": "mode"}], ids=["default", "full", "capture"])
@pytest.mark.parametrize("source", [OUT_WRITE, HELPER_WRITE], ids=["out_write", "helper_write"])
def test_the_saved_operand_is_named(tmp_path, source, options):
    import inspect

    import autograd_doctor

    if "mode" in options and "mode" not in inspect.signature(autograd_doctor.watch).parameters:
        pytest.skip("no full mode in this build")
    outcome = run_program(tmp_path, source, **options)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.tensor.name == "mask"


def test_the_written_name_is_kept_when_it_is_the_saved_tensor(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        h = w.sigmoid()
        h.mul_(2)
        h.sum().backward()
    """)
    assert outcome.diagnosis.tensor.name == "h"
