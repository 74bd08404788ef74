"""AD138 raised inside backward(): a piece of split/chunk/unbind that autograd saved, whose base
a later write modified (a trajectory buffer whose rows the dynamics unpack). The write is the
line named; its out-of-place form gives the hand-written version's losses and parameters."""

import torch

from helpers import apply_help, run_plain, run_program

PROGRAM = """
import torch
torch.manual_seed(0)
STEPS, DT = 12, 0.1


def step(state, stiffness):
    position, velocity = state.chunk(2)
    force = -stiffness * torch.sin(position)
    return torch.cat([position + DT * velocity, velocity + DT * force])


def rollout(stiffness):
BODY
    return states


target = torch.linspace(0.0, 1.0, STEPS)
stiffness = torch.tensor(2.0, requires_grad=True)
optimizer = torch.optim.SGD([stiffness], lr=0.05)
losses = []
for _ in range(3):
    states = rollout(stiffness)
    loss = (states[:, 0] - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "stiffness": stiffness.detach().clone()}
"""

BUFFER = """    states = torch.zeros(STEPS, 2)
    states[0] = torch.tensor([0.5, 0.0])
    for t in range(STEPS - 1):
        states[t + 1] = step(states[t], stiffness)  # WRITE"""

LIST = """    rows = [torch.tensor([0.5, 0.0])]
    for t in range(STEPS - 1):
        rows.append(step(rows[t], stiffness))
    states = torch.stack(rows)"""


def test_the_write_into_the_buffer_is_named_and_its_out_of_place_form_trains_as_written_by_hand(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("BODY", BUFFER))
    assert outcome.error is not None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD138"]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert "select_scatter" in diagnosis.help[0].replacement
    assert "newest write" in " ".join(diagnosis.notes)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    reference = run_plain(tmp_path, PROGRAM.replace("BODY", LIST), "reference.py")["result"]
    assert torch.allclose(fixed["losses"], reference["losses"])
    assert torch.allclose(fixed["stiffness"], reference["stiffness"])


def test_the_rollout_that_stacks_its_rows_is_silent(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("BODY", LIST))
    assert outcome.error is None
    assert outcome.diagnoses == []
