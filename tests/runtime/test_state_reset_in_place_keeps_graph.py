"""AD302 whose old graph comes in through a reset made in place (set 20's sinabs#5): a stateful
layer keeps its state in a buffer, the forward stores each new state there (with its graph), and
`reset()` clears it with `state.zero_()` between sequences. The in-place zero is recorded on top of
the state's history, so the next sequence's backward() walks into the previous one's freed graph.
The line to change is the reset, not the buffer's registration (a constant there carries no graph);
the change detaches the state right after clearing it, which keeps values and gradients (the
reset's gradient with respect to the old state is zero)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

RESET_IN_PLACE = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Integrator(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("state", torch.zeros(0))

        def reset(self):
            self.state.zero_()  # RESET

        def forward(self, current):
            if self.state.shape != current.shape:
                self.state = torch.zeros_like(current)
            self.state = 0.5 * self.state + current
            return torch.tanh(self.state)


    layer = nn.Linear(3, 3)
    integrator = Integrator()
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    losses = []
    for sequence in range(3):
        integrator.reset()
        out = 0.0
        for t in range(4):
            out = out + integrator(layer(torch.randn(2, 3)))
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # BACKWARD
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in layer.parameters()]]
"""

# The hand-written version: the state is cleared and detached.
DETACHED_AFTER_RESET = RESET_IN_PLACE.replace("self.state.zero_()  # RESET", "self.state.zero_().detach_()")

# fill_() is a reset too.
FILLED_IN_PLACE = RESET_IN_PLACE.replace("self.state.zero_()  # RESET", "self.state.fill_(0.0)  # RESET")


def test_the_reset_is_the_line_to_change(tmp_path):
    outcome = run_program(tmp_path, RESET_IN_PLACE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("RESET")
    assert "zero_()" in diagnosis.primary.note
    assert any(location.line == outcome.line("BACKWARD") for location in diagnosis.related)
    assert diagnosis.help[0].replacement.strip() == "self.state.zero_().detach_()"


def test_the_detach_after_the_reset_keeps_values_and_gradients(tmp_path):
    outcome = run_program(tmp_path, RESET_IN_PLACE)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    expected = run_plain(tmp_path, DETACHED_AFTER_RESET, "expected.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, expected))


def test_fill_is_a_reset_too(tmp_path):
    outcome = run_program(tmp_path, FILLED_IN_PLACE)
    diagnosis = outcome.diagnosis
    assert diagnosis.primary.line == outcome.line("RESET")
    assert diagnosis.help[0].replacement.strip() == "self.state.fill_(0.0).detach_()"


def test_the_detached_version_runs_silently(tmp_path):
    outcome = run_program(tmp_path, DETACHED_AFTER_RESET)
    assert outcome.error is None and not outcome.diagnoses and not outcome.warnings
