"""AD301 for a derivative a function takes itself, `torch.autograd.grad(output, x,
create_graph=True)`, while it runs inside the user's torch.autograd.Function forward(), where
PyTorch turns gradients off (a simulator or an adjoint ODE solver written as a Function). The
function returns the derivative to the caller, so it is not decorated: the help wraps the
statements from the output to the derivative in `with torch.enable_grad():` and clones the
argument into a tensor that requires grad. Under the user's own no_grad block, that block stays
the line to change (tests/errors/programs/grad_inside_no_grad_block.py)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

HAMILTONIAN_ROLLOUT_UNDER_NO_GRAD = """
    import torch
    from torch import nn


    class HamiltonianField(nn.Module):
        def __init__(self):
            super().__init__()
            self.energy = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))

        def forward(self, state):
            energy = self.energy(state).sum()  # OUTPUT
            dh = torch.autograd.grad(energy, state, create_graph=True)[0]  # DERIVATIVE
            return torch.cat([dh[:, 1:], -dh[:, :1]], dim=1)


    class Rollout(torch.autograd.Function):
        @staticmethod
        def forward(ctx, state, field):  # SIMULATOR
            for _ in range(3):
                state = state + 0.1 * field(state)
            return state

        @staticmethod
        def backward(ctx, grad):
            return grad, None


    torch.manual_seed(0)
    field = HamiltonianField()
    final = Rollout.apply(torch.randn(4, 2), field)
"""

INTENDED = HAMILTONIAN_ROLLOUT_UNDER_NO_GRAD.replace(
    """            energy = self.energy(state).sum()  # OUTPUT
            dh = torch.autograd.grad(energy, state, create_graph=True)[0]  # DERIVATIVE
""", """            with torch.enable_grad():
                state = state.clone().requires_grad_(True)
                energy = self.energy(state).sum()
                dh = torch.autograd.grad(energy, state, create_graph=True)[0]
""")


def test_the_derivative_inside_a_function_forward_is_named_with_the_forward(tmp_path):
    outcome = run_as_script(tmp_path, HAMILTONIAN_ROLLOUT_UNDER_NO_GRAD)
    assert "does not require grad" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("OUTPUT")
    lines = {location.line for location in diagnosis.related}
    assert {outcome.line("SIMULATOR"), outcome.line("DERIVATIVE")} <= lines
    help = diagnosis.help[0]
    assert help.replacement.splitlines()[:2] == ["with torch.enable_grad():",
                                                 "    state = state.clone().requires_grad_(True)"]
    assert help.location.end_line == outcome.line("DERIVATIVE")


def test_the_block_applied_computes_what_the_intended_program_computes(tmp_path):
    outcome = run_as_script(tmp_path, HAMILTONIAN_ROLLOUT_UNDER_NO_GRAD)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert torch.equal(fixed["final"], intended["final"])
    assert not fixed["final"].requires_grad  # Function.forward's output: no history kept from inside


def test_under_the_users_own_no_grad_block_the_block_stays_the_line_to_change(tmp_path):
    outcome = run_as_script(tmp_path, HAMILTONIAN_ROLLOUT_UNDER_NO_GRAD.replace(
        "final = Rollout.apply(torch.randn(4, 2), field)",
        "with torch.no_grad():  # BLOCK\n        final = field(torch.randn(4, 2))"))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301" and diagnosis.primary.line == outcome.line("BLOCK")
