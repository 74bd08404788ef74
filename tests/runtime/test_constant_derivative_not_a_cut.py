"""AD301 when torch.autograd.grad(..., create_graph=True) returns a derivative without grad history:
the differentiated term is linear in the input, so its derivative is a constant (set 19's
pytorch#32304, a PINN's second derivative of a linear boundary lift). Nothing was cut: the report
says the derivative is constant and its own derivative zero, not that the gradient path was cut
by a detach(), .data or no_grad. The advice's first way, differentiating the sum of the terms once,
is the report's accepted fix; it gives the second derivative with the linear term's zero in it."""

from __future__ import annotations

import torch

from helpers import run_plain, run_program

LINEAR_TERM_DIFFERENTIATED_TWICE = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    def second_derivative(y, x):
        first = torch.autograd.grad(y.sum(), x, create_graph=True)[0]  # FIRST
        return torch.autograd.grad(first.sum(), x, create_graph=True)[0]


    network = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.rand(16, 1, requires_grad=True)
    trend = 3.0 * x + 1.0
    curve = x * (1 - x) * network(x)
    u_xx = second_derivative(trend, x) + second_derivative(curve, x)
    u_xx.pow(2).mean().backward()
    result = [u_xx.detach(), *[p.grad.clone() for p in network.parameters()]]
"""

SUM_DIFFERENTIATED_ONCE = LINEAR_TERM_DIFFERENTIATED_TWICE.replace(
    "second_derivative(trend, x) + second_derivative(curve, x)", "second_derivative(trend + curve, x)")

# The term that is not linear alone: the same second derivative, the linear term's being zero.
CURVE_ONLY = LINEAR_TERM_DIFFERENTIATED_TWICE.replace(
    "second_derivative(trend, x) + second_derivative(curve, x)", "second_derivative(curve, x)")


def test_the_constant_derivative_is_named_not_a_cut(tmp_path):
    outcome = run_program(tmp_path, LINEAR_TERM_DIFFERENTIATED_TWICE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("FIRST")
    assert "constant" in diagnosis.title and "cut" not in diagnosis.title
    assert "constant" in diagnosis.primary.note
    assert not any("was cut" in note for note in diagnosis.notes)
    assert diagnosis.help[0].message.startswith("nothing was cut")
    assert diagnosis.help[0].replacement is None  # advice: the program chooses where the zero goes


def test_the_advised_sum_gives_the_curve_second_derivative(tmp_path):
    summed = run_plain(tmp_path, SUM_DIFFERENTIATED_ONCE, "summed.py")["result"]
    curve = run_plain(tmp_path, CURVE_ONLY, "curve.py")["result"]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(summed, curve))
