"""AD159: a custom autograd.Function's backward returns a gradient larger than its input, in a
shape that is neither the input's nor an output's; the engine sums it down silently (set 14's
NODE sparsemax was the held-out case; the program below is another of the same cause, a
normalisation whose backward squeezes every size-1 axis). Named at the bare `.squeeze()`; the
help squeezes only the reduced axis, and the program then computes the true gradient. A Function
whose forward broadcasts an input and returns the output-shaped gradient is legitimate and stays
silent."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

NORMALISATION = """
    import torch

    torch.manual_seed(0)


    class Normalise(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x / x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            total = x.sum(0, keepdim=True)
            inner = (g * x).sum(0) / total.squeeze()  # SQUEEZE
            return (g - inner.unsqueeze(0)) / total


    weights = (torch.rand(4, 3, 1) + 0.5).requires_grad_()
    target = torch.rand(4, 3, 1)
    optimizer = torch.optim.SGD([weights], lr=0.5)
    for step in range(3):
        optimizer.zero_grad()
        loss = (Normalise.apply(weights) - target).pow(2).sum()
        loss.backward()
        optimizer.step()
    result = [weights.detach().clone()]
"""

INTENDED = NORMALISATION.replace("total.squeeze()  # SQUEEZE", "total.squeeze(0)  # SQUEEZE")


def test_the_bare_squeeze_is_named_and_the_help_squeezes_the_reduced_axis(tmp_path):
    outcome = run_program(tmp_path, NORMALISATION)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD159", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("SQUEEZE")
    assert "[4, 3, 3]" in diagnosis.notes[0] and "[4, 3, 1]" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement == "inner = (g * x).sum(0) / total.squeeze(0)"


def test_the_help_applied_gives_the_true_gradient(tmp_path):
    outcome = run_program(tmp_path, NORMALISATION)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    x = (torch.rand(4, 3, 1, dtype=torch.double) + 0.5).requires_grad_()
    assert torch.autograd.gradcheck(intended["Normalise"].apply, (x,))
    original = run_plain(tmp_path, outcome.source, "original.py")
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], intended["result"]))


def test_a_forward_that_broadcasts_its_input_may_return_the_output_shaped_gradient(tmp_path):
    outcome = run_program(tmp_path, """
        import torch


        class AddBias(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, bias):
                return x + bias

            @staticmethod
            def backward(ctx, g):
                return g, g          # bias (1, 3) gets the (5, 3) gradient, summed down by the engine


        x = torch.randn(5, 3, requires_grad=True)
        bias = torch.zeros(1, 3, requires_grad=True)
        AddBias.apply(x, bias).pow(2).sum().backward()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []


def test_non_tensor_arguments_and_inputs_without_grad_keep_each_gradient_matched_to_its_input(tmp_path):
    # An adjoint solver's Function: apply(func, y0, t, *params), a module first and a time grid
    # without grad; the gradients it returns are each its input's shape (set 9's neural ODE drew
    # AD159 before the returned values were matched through needs_input_grad).
    outcome = run_program(tmp_path, """
        import torch
        from torch import nn


        class Solve(torch.autograd.Function):
            @staticmethod
            def forward(ctx, func, y0, t, *params):
                ctx.func, ctx.t = func, t
                ctx.save_for_backward(y0)
                return y0 + t[-1] * func(y0)

            @staticmethod
            def backward(ctx, grad):
                (y0,) = ctx.saved_tensors
                params = list(ctx.func.parameters())
                with torch.enable_grad():
                    y0 = y0.detach().requires_grad_(True)
                    out = y0 + ctx.t[-1] * ctx.func(y0)
                    grads = torch.autograd.grad(out, [y0, *params], grad)
                return (None, grads[0], None, *grads[1:])


        func = nn.Linear(2, 2)
        y0 = torch.randn(16, 2, requires_grad=True)
        Solve.apply(func, y0, torch.linspace(0, 1, 5), *func.parameters()).pow(2).sum().backward()
    """)
    assert outcome.error is None
    assert outcome.diagnoses == []


# The twenty-second set of docs/real-code.md: torchphysics' DeepONet trunk layer, a Function whose
# weight is shared across the batch and whose backward returns per-sample weight gradients
# (`grad_output.transpose(-1, -2) @ input`); the engine sums them over the batch axes, which is
# the true gradient. Below, that shape and another (a bilinear per-sample outer product), each
# checked against autograd's own gradient, and a near-twin broadcast over the output's last axis
# too, which is still diagnosed.
SHARED_WEIGHT_FUNCTIONS = """
    import torch

    torch.manual_seed(0)


    class BatchedLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight):
            ctx.save_for_backward(x, weight)
            return x @ weight.transpose(-1, -2)

        @staticmethod
        def backward(ctx, g):
            x, weight = ctx.saved_tensors
            return g @ weight, g.transpose(-1, -2) @ x   # weight: [3, 2, 5, 4] per sample


    class OuterScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight):
            ctx.save_for_backward(x, weight)
            return x @ weight.t()

        @staticmethod
        def backward(ctx, g):
            x, weight = ctx.saved_tensors
            return g @ weight, g[:, :, None] * x[:, None, :]   # weight: [6, 5, 4] per sample


    x3 = torch.randn(3, 2, 7, 4, requires_grad=True)
    x2 = torch.randn(6, 4, requires_grad=True)
    w1, w2 = torch.randn(5, 4, requires_grad=True), torch.randn(5, 4, requires_grad=True)
    (BatchedLinear.apply(x3, w1).sin().sum() + OuterScale.apply(x2, w2).cos().sum()).backward()
    custom = [t.grad.clone() for t in (x3, w1, x2, w2)]
    for t in (x3, w1, x2, w2):
        t.grad = None
    ((x3 @ w1.t()).sin().sum() + (x2 @ w2.t()).cos().sum()).backward()
    reference = [t.grad.clone() for t in (x3, w1, x2, w2)]
"""


def test_per_sample_gradients_of_a_weight_shared_across_the_batch_say_nothing(tmp_path):
    outcome = run_program(tmp_path, SHARED_WEIGHT_FUNCTIONS)
    assert outcome.error is None
    assert outcome.diagnoses == []
    namespace = outcome.namespace
    assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(namespace["custom"], namespace["reference"]))


def test_a_gradient_broadcast_over_the_outputs_last_axis_too_is_still_diagnosed(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        class Shift(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, bias):
                return x + bias

            @staticmethod
            def backward(ctx, g):
                return g, g[:, :, None] * torch.ones(g.shape[-1])   # bias [4] gets [6, 4, 4]: wrong

        x, bias = torch.randn(6, 4, requires_grad=True), torch.zeros(4, requires_grad=True)
        Shift.apply(x, bias).pow(2).sum().backward()  # BACKWARD
    """)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD159", [d.code for d in outcome.diagnoses]
    assert "[6, 4, 4]" in diagnosis.notes[0]
