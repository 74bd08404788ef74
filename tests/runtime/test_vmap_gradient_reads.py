"""The doctor's own failure on gradients computed inside torch.func.vmap (docs/bug-reports.md, "The
doctor's own failures, swept (stop 43)", "Second round").

After each of the first backward()/autograd.grad() calls, AD220 (analysis/masked_nan.py) reads the
roots' values (`bool(isfinite(root).all())`). Inside vmap (per-sample gradients: vmap(grad(f)),
vmap(jacrev(f))) the roots are batched tensors, of type torch.Tensor, and bool() of one raises
"vmap: ... data-dependent control flow": an internal error on four correct programs of fresh sets
4 and 5 (vmap_jacobian_error_buffer_zeros, per_sample_grads_batch_indexing, ...). A torch.func
wrapper now counts as a tensor without values to read (silence), as a fake tensor already did.
Tested on another shape (vmap over grad of a square root, in_dims=(None, 0)).
"""

from __future__ import annotations

import pytest
import torch

from autograd_doctor.doctor import internal_error_count
from helpers import run_plain, run_program

PER_SAMPLE_NORM_GRADIENTS = """
    import torch
    from torch.func import grad, vmap
    torch.manual_seed(0)
    w = torch.randn(3)
    xs = torch.rand(5, 3) + 0.1

    def norm_loss(w, x):
        return torch.sqrt((w * x).square().sum() + 1.0)

    grads = vmap(grad(norm_loss), in_dims=(None, 0))(w, xs)
"""


@pytest.mark.parametrize("options", [dict(), dict(mode="full"), dict(strict=True)], ids=["default", "full", "strict"])
def test_per_sample_gradients_under_vmap_are_silent_and_unchanged(tmp_path, options):
    before = internal_error_count()
    outcome = run_program(tmp_path, PER_SAMPLE_NORM_GRADIENTS, **options)
    assert internal_error_count() == before
    assert outcome.error is None and outcome.diagnoses == [] and outcome.warnings == []
    plain = run_plain(tmp_path, __import__("textwrap").dedent(PER_SAMPLE_NORM_GRADIENTS))
    assert torch.equal(outcome.namespace["grads"], plain["grads"])
