"""Causes of held-out variants that got advice and no concrete change (docs/errors.md, "Advice turned
into checked changes (stop 44)"), each tested on another program of the same cause (not a variant),
its hand-written correct version, and correct near-twins that must get no change.

AD105: a view made with gradients off (a `with torch.no_grad()` / `set_grad_enabled(False)` block, or a
helper decorated with `@torch.no_grad()` that only returns the view), then written in place with
gradients on. The help said "decide whether the write should be recorded". Where the view's base is a
tensor of the graph (computed with gradients: not a leaf, requires grad), the write goes into the base's
memory whichever way the user decides, and later readers of the base see it; only a recorded write keeps
the gradient consistent with those values. So the first help now makes the view with gradients on: the
view's statement moved above the block (a view reads its base's memory, so where it is made changes no
value), or the decorator removed from a helper whose whole body returns a view of its argument. A base
that is a leaf (a parameter) or a tensor without gradient keeps the advice: there the write reaching the
base is itself in question."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# A training function (no module) that logs a column of the features under no_grad inside the loop
# and then scales that column in place with a learned gain.
COLUMN_LOGGED_THEN_GAINED = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    gain = torch.ones(1, requires_grad=True)
    x, y = torch.randn(6, 3), torch.randn(6, 4)
    optimizer = torch.optim.SGD([w, gain], lr=0.1)
    peaks, losses = [], []
    for step in range(3):
        feats = x @ w
        if step >= 0:
            with torch.no_grad():
                peaks.append(float(feats.abs().max()))
                column = feats.select(1, 2)  # VIEW
                peaks.append(float(column.sum()))
        column.mul_(gain)  # WRITE
        loss = (feats - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    losses = torch.stack(losses)
    w_final, gain_final = w.detach().clone(), gain.detach().clone()
"""

COLUMN_LOGGED_THEN_GAINED_CORRECT = COLUMN_LOGGED_THEN_GAINED.replace(
    "            with torch.no_grad():\n"
    "                peaks.append(float(feats.abs().max()))\n"
    "                column = feats.select(1, 2)  # VIEW\n",
    "            column = feats.select(1, 2)  # VIEW\n"
    "            with torch.no_grad():\n"
    "                peaks.append(float(feats.abs().max()))\n")

# The view is the block's only statement: the block goes, the view stays.
ONLY_STATEMENT_IN_BLOCK = """
    import torch
    from torch import nn

    class Scaler(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 6)
            self.scale = nn.Parameter(torch.full((3,), 0.5))

        def forward(self, x):
            h = self.lin(x)
            with torch.set_grad_enabled(False):
                first = h.unflatten(1, (2, 3))[:, 0]  # VIEW
            first *= self.scale  # WRITE
            return h.sum(dim=1)

    torch.manual_seed(0)
    model = Scaler()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(5, 4)
    losses = []
    for _ in range(2):
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    losses = torch.stack(losses)
    weight, scale = model.lin.weight.detach().clone(), model.scale.detach().clone()
"""

ONLY_STATEMENT_IN_BLOCK_CORRECT = ONLY_STATEMENT_IN_BLOCK.replace(
    "            with torch.set_grad_enabled(False):\n"
    "                first = h.unflatten(1, (2, 3))[:, 0]  # VIEW\n",
    "            first = h.unflatten(1, (2, 3))[:, 0]  # VIEW\n")

# A helper decorated with @torch.no_grad() whose whole body returns a view of its argument.
HELPER_RETURNS_VIEW = """
    import torch
    from torch import nn

    @torch.no_grad()
    def as_pairs(t):
        \"\"\"Rows of two, without copying.\"\"\"
        return t.reshape(t.shape[0], -1, 2)

    class PairNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.offset = nn.Parameter(torch.zeros(2))

        def forward(self, x):
            pairs = as_pairs(self.lin(x))
            pairs.sub_(self.offset)  # WRITE
            return pairs.pow(2).sum(dim=(1, 2))

    torch.manual_seed(0)
    model = PairNorm()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(5, 3)
    losses = []
    for _ in range(2):
        loss = model(x).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    losses = torch.stack(losses)
    weight, offset = model.lin.weight.detach().clone(), model.offset.detach().clone()
"""

HELPER_RETURNS_VIEW_CORRECT = HELPER_RETURNS_VIEW.replace("    @torch.no_grad()\n    def as_pairs", "    def as_pairs")

# Near-twins that keep the advice: the base is an input without gradient (moving the view would make the
# write change the data the next step reads), and a helper that does more than return the view.
VIEW_OF_INPUT_WITHOUT_GRADIENT = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    data = torch.randn(5, 4)
    for _ in range(2):
        with torch.no_grad():
            head = data[:2]  # VIEW
        head.mul_(w)  # WRITE
        loss = data.sum()
        loss.backward()
"""

HELPER_DOES_MORE = """
    import torch
    from torch import nn

    seen = []

    @torch.no_grad()
    def as_pairs(t):
        seen.append(t.norm())
        return t.reshape(t.shape[0], -1, 2)

    lin = nn.Linear(3, 4)
    offset = nn.Parameter(torch.zeros(2))
    pairs = as_pairs(lin(torch.randn(5, 3)))
    pairs.sub_(offset)  # WRITE
    pairs.sum().backward()
"""


def _check_fixed(tmp_path, buggy: str, correct: str, names: tuple[str, ...]):
    outcome = run_as_script(tmp_path, buggy)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD105", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    reference = run_plain(tmp_path, correct, "correct.py")
    for name in names:
        assert torch.equal(fixed[name], reference[name]), name
    return diagnosis


def test_a_view_of_a_graph_tensor_taken_in_a_no_grad_block_is_made_before_the_block(tmp_path):
    diagnosis = _check_fixed(tmp_path, COLUMN_LOGGED_THEN_GAINED, COLUMN_LOGGED_THEN_GAINED_CORRECT,
                             ("losses", "w_final", "gain_final"))
    assert "feats" in diagnosis.help[0].message and "above" in diagnosis.help[0].message


def test_a_block_that_only_made_the_view_is_dropped(tmp_path):
    diagnosis = _check_fixed(tmp_path, ONLY_STATEMENT_IN_BLOCK, ONLY_STATEMENT_IN_BLOCK_CORRECT,
                             ("losses", "weight", "scale"))
    assert "set_grad_enabled" not in diagnosis.help[0].replacement


def test_a_no_grad_helper_that_only_returns_a_view_loses_its_decorator(tmp_path):
    diagnosis = _check_fixed(tmp_path, HELPER_RETURNS_VIEW, HELPER_RETURNS_VIEW_CORRECT, ("losses", "weight", "offset"))
    assert "as_pairs" in diagnosis.help[0].message


def test_the_correct_versions_stay_silent(tmp_path):
    for correct in (COLUMN_LOGGED_THEN_GAINED_CORRECT, ONLY_STATEMENT_IN_BLOCK_CORRECT, HELPER_RETURNS_VIEW_CORRECT):
        outcome = run_as_script(tmp_path, correct)
        assert outcome.error is None and not outcome.diagnoses


def test_a_view_of_a_tensor_without_gradient_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, VIEW_OF_INPUT_WITHOUT_GRADIENT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD105", [d.code for d in outcome.diagnoses]
    assert all(help.replacement is None for help in diagnosis.help), diagnosis.help


def test_a_helper_that_does_more_than_return_the_view_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, HELPER_DOES_MORE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD105", [d.code for d in outcome.diagnoses]
    assert all(help.replacement is None for help in diagnosis.help), diagnosis.help


# AD237: a custom Function with backward but no jvp, under torch.func.jacfwd or torch.func.hessian
# (forward mode outside). The help said to write the jvp from backward's derivative, or "if reverse mode
# is enough" to use jacrev. jacrev computes the same Jacobian from the Function's own backward (the one a
# jvp written from it gives), so where the call is written as `jacfwd(f, ...)(...)` / `hessian(f, ...)(...)`
# in the user's statement, the first help is that call in reverse mode: `jacrev(f, ...)` and
# `jacrev(jacrev(f, ...), ...)`. The Function must be usable by the transforms (setup_context and a vmap
# rule); for the Hessian its backward must be differentiable (not @once_differentiable, PyTorch ops only).
CUBE_ROOT_UNDER_JACFWD = """
    import torch

    class SignedCubeRoot(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x.sign() * x.abs().pow(1.0 / 3.0)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)

        @staticmethod
        def backward(ctx, grad):
            (out,) = ctx.saved_tensors
            return grad / (3 * out.pow(2) + 1e-6)
    # JVP

    def features(scale, x):
        return SignedCubeRoot.apply(scale * x).sum() * torch.stack([scale, scale ** 2])

    scale, x = torch.tensor(1.5), torch.tensor([0.8, -2.0, 3.0])
    jac = torch.func.jacfwd(features, argnums=1)(scale, x)  # CALL
"""

CUBE_ROOT_WITH_JVP = CUBE_ROOT_UNDER_JACFWD.replace("    # JVP\n", """
        @staticmethod
        def jvp(ctx, x_t):
            (out,) = ctx.saved_tensors
            return x_t / (3 * out.pow(2) + 1e-6)
""").replace("            ctx.save_for_backward(output)", "            ctx.save_for_backward(output)\n            ctx.save_for_forward(output)")

BARRIER_UNDER_HESSIAN = """
    import torch
    from torch.func import hessian

    class LogBarrier(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return -torch.log(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return -grad / x
    # JVP

    def objective(w, t):
        return (w - t).pow(2).sum() + LogBarrier.apply(w).sum()

    w, t = torch.tensor([0.5, 1.5]), torch.tensor([1.0, 0.2])
    h = hessian(objective)(w, t)  # CALL
"""

BARRIER_WITH_JVP = BARRIER_UNDER_HESSIAN.replace("    # JVP\n", """
        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return -x_t / x
""").replace("            ctx.save_for_backward(inputs[0])",
             "            ctx.save_for_backward(inputs[0])\n            ctx.save_for_forward(inputs[0])")

# Near-twins that keep the advice: a backward that is not differentiable (once_differentiable) under
# hessian, and forward mode asked for by name (torch.func.jvp), where reverse mode is another quantity.
BARRIER_ONCE_DIFFERENTIABLE = BARRIER_UNDER_HESSIAN.replace(
    "        @staticmethod\n        def backward", "        @staticmethod\n        @torch.autograd.function.once_differentiable\n        def backward")

CUBE_ROOT_UNDER_JVP = CUBE_ROOT_UNDER_JACFWD.replace(
    "jac = torch.func.jacfwd(features, argnums=1)(scale, x)",
    "jac = torch.func.jvp(lambda v: features(scale, v), (x,), (torch.ones(3),))[1]")


def _check_reverse_mode(tmp_path, buggy: str, correct: str, name: str):
    outcome = run_as_script(tmp_path, buggy)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD237", [d.code for d in outcome.diagnoses]
    assert diagnosis.help[0].location.line == outcome.line("CALL")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    reference = run_plain(tmp_path, correct, "correct.py")
    assert torch.allclose(fixed[name], reference[name], atol=1e-6), (fixed[name], reference[name])
    return diagnosis


def test_jacfwd_through_a_function_without_jvp_becomes_jacrev(tmp_path):
    diagnosis = _check_reverse_mode(tmp_path, CUBE_ROOT_UNDER_JACFWD, CUBE_ROOT_WITH_JVP, "jac")
    assert "torch.func.jacrev(features, argnums=1)" in diagnosis.help[0].replacement


def test_hessian_through_a_function_without_jvp_becomes_jacrev_of_jacrev(tmp_path):
    diagnosis = _check_reverse_mode(tmp_path, BARRIER_UNDER_HESSIAN, BARRIER_WITH_JVP, "h")
    assert "jacrev(torch.func.jacrev(objective" in diagnosis.help[0].replacement


def test_the_functions_with_jvp_stay_silent(tmp_path):
    for correct in (CUBE_ROOT_WITH_JVP, BARRIER_WITH_JVP):
        outcome = run_as_script(tmp_path, correct)
        assert outcome.error is None and not outcome.diagnoses


def test_a_once_differentiable_backward_under_hessian_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, BARRIER_ONCE_DIFFERENTIABLE)
    assert outcome.diagnosis.code == "AD237", [d.code for d in outcome.diagnoses]
    assert all(help.replacement is None for help in outcome.diagnosis.help), outcome.diagnosis.help


def test_forward_mode_asked_by_name_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, CUBE_ROOT_UNDER_JVP)
    assert outcome.diagnosis.code == "AD237", [d.code for d in outcome.diagnoses]
    assert all(help.replacement is None for help in outcome.diagnosis.help), outcome.diagnosis.help
