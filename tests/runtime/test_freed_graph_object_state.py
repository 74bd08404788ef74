"""AD302 on state kept by a plain object (not a module): its starting state is set once before the
loop, and each iteration replaces it with the iteration's own output, so the next iteration starts
from a graph the previous backward() freed (held-out set 8, dgl#33, where the report named only
the backward() line). The report names the line that set the state; the help sets it at the start
of each iteration, and the changed program computes what the program written that way computes."""

import textwrap

import torch

from helpers import apply_help, run_plain, run_program

ROLLOUT = """
    import torch
    torch.manual_seed(0)


    class Rollout:
        def __init__(self):
            self.state = None

        def reset(self, state):
            self.state = state

        def advance(self, cell):
            self.state = torch.tanh(cell(self.state))
            return self.state


    cell = torch.nn.Linear(3, 3)
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
    start = torch.randn(2, 3)
    rollout = Rollout()
    rollout.reset(start)  # SET
    for step in range(3):
        out = rollout.advance(cell)  # FIRST
        loss = out.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # BACKWARD
        optimizer.step()
"""


def test_state_set_once_before_the_loop_is_named_and_set_again_in_each_iteration(tmp_path):
    outcome = run_program(tmp_path, ROLLOUT)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert diagnosis.primary.line == outcome.line("SET")
    assert diagnosis.primary.note == "rollout's state is set here once, before the loop"
    assert any(location.line == outcome.line("BACKWARD") for location in diagnosis.related)
    assert diagnosis.help[0].message.startswith("set rollout's state at the start of each iteration instead")
    assert diagnosis.help[0].replacement == "rollout.reset(start)\nout = rollout.advance(cell)"
    assert diagnosis.help[0].location.line == outcome.line("FIRST")
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, textwrap.dedent(ROLLOUT).replace(
        "    out = rollout.advance(cell)", "    rollout.reset(start)\n    out = rollout.advance(cell)"), "reference.py")
    assert torch.equal(fixed["cell"].weight, reference["cell"].weight)
    assert torch.equal(fixed["cell"].bias, reference["cell"].bias)


def test_state_set_again_inside_the_loop_is_not_blamed_on_the_object(tmp_path):
    """The object is reset in every iteration: what fails is something else (here the loss is
    kept from the first iteration), so the object's line is not named."""
    outcome = run_program(tmp_path, """
        import torch
        torch.manual_seed(0)


        class Holder:
            def reset(self, state):
                self.state = state


        cell = torch.nn.Linear(3, 3)
        holder = Holder()
        holder.reset(torch.randn(2, 3))
        loss = cell(holder.state).sum()
        for step in range(2):
            holder.reset(torch.randn(2, 3))
            loss.backward()
    """)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert "state is set here once" not in (diagnosis.primary.note or "")
