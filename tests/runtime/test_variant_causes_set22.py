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


# AD231: a classic `forward(ctx, x)` Function under a forward-mode transform (hessian is
# jacfwd(jacrev), or jvp, jacfwd) got the split into forward + setup_context as its change; the split
# Function then fails for want of a jvp staticmethod (a wrong help). Under forward mode, and when the
# class has no jvp, the split is advice that names the jvp (whose Jacobian is the author's) and
# jacrev(jacrev(f)) for a Hessian.
CLASSIC_CUBE_UNDER_JACFWD = """
    import torch
    from torch.func import jacfwd, jacrev

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):  # FORWARD
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x ** 2

    x = torch.randn(3, dtype=torch.float64)
    second = jacfwd(jacrev(lambda v: Cube.apply(v).sum()))(x)
"""

CUBE_WITH_JVP_UNDER_JACFWD = """
    import torch
    from torch.func import jacfwd, jacrev

    class Cube(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x ** 2

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * t * x ** 2

    x = torch.randn(3, dtype=torch.float64)
    second = jacfwd(jacrev(lambda v: Cube.apply(v).sum()))(x)
"""


def test_a_classic_function_under_forward_mode_gets_advice_naming_the_jvp(tmp_path):
    outcome = run_as_script(tmp_path, CLASSIC_CUBE_UNDER_JACFWD)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD231", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FORWARD")
    assert not any(h.replacement for h in diagnosis.help)
    assert "jvp(ctx, *tangents)" in diagnosis.help[0].message and "jacrev(jacrev(f))" in diagnosis.help[0].message


def test_a_function_with_setup_context_and_jvp_under_forward_mode_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, CUBE_WITH_JVP_UNDER_JACFWD)
    assert outcome.error is None and not outcome.diagnoses
    plain = run_plain(tmp_path, CUBE_WITH_JVP_UNDER_JACFWD)
    assert torch.allclose(plain["second"], torch.diag(6 * plain["x"]))


# AD105: a view of a parameter taken inside `with torch.no_grad():` and written in place by the
# statement right after the block got advice only ("decide whether the write should be recorded").
# Grad mode can never write a leaf that requires grad in place, so the write is not meant to be
# recorded: the write moves into the block (the view's base, read from the frame, decides).
PADDING_ROW_RESET_AFTER_THE_BLOCK = """
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(5, 3)
            self.head = nn.Linear(3, 2)

        def reset_padding(self):
            with torch.no_grad():
                row = self.emb.weight[0]
            row.zero_()  # WRITE

        def forward(self, tokens):
            return self.head(self.emb(tokens).mean(1))

    torch.manual_seed(0)
    model = Tagger()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        loss = model(torch.tensor([[0, 1, 2], [3, 4, 0]])).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        model.reset_padding()
    weights = [p.detach().clone() for p in model.parameters()]
"""

PADDING_ROW_RESET_IN_THE_BLOCK = PADDING_ROW_RESET_AFTER_THE_BLOCK.replace(
    "            row.zero_()  # WRITE", "                row.zero_()  # WRITE")

COMPUTED_ROW_SCALED_AFTER_THE_BLOCK = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    h = torch.randn(2, 3) @ w
    with torch.no_grad():
        first = h[0]
    first.mul_(2.0)  # WRITE
    h.sum().backward()
"""


def test_a_parameter_view_written_after_the_block_moves_into_it(tmp_path):
    outcome = run_as_script(tmp_path, PADDING_ROW_RESET_AFTER_THE_BLOCK)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD105", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["weights"]
    correct = run_plain(tmp_path, PADDING_ROW_RESET_IN_THE_BLOCK, "correct.py")["weights"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, correct))


def test_the_parameter_view_written_in_the_block_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, PADDING_ROW_RESET_IN_THE_BLOCK)
    assert outcome.error is None and not outcome.diagnoses


def test_a_view_of_a_computed_tensor_is_made_with_gradients_on(tmp_path):
    # Advice until stop 44. The write goes into h's memory whichever way the view is made, and backward
    # reads h: only the recorded write keeps w's gradient consistent with h's values, so the view is made
    # with gradients on (tests/runtime/test_catalogue_advice_causes.py).
    outcome = run_as_script(tmp_path, COMPUTED_ROW_SCALED_AFTER_THE_BLOCK)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD105", [d.code for d in outcome.diagnoses]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, COMPUTED_ROW_SCALED_AFTER_THE_BLOCK.replace(
        "    with torch.no_grad():\n        first = h[0]", "    first = h[0]"), "correct.py")
    assert torch.equal(fixed["w"].grad, correct["w"].grad)
