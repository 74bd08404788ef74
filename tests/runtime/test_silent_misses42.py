"""Sets 34-35's silent misses (session 42, third round).

practical-pytorch#9 (set 35, `b_char_rnn_optimizer_built_before_the_model_is_created_again`): the
optimizer is built from `rnn`'s parameters at the top level, `train()` reads the globals `rnn` and
`optimizer`, and `rnn = RNN(...)` is written again below `train()`: the optimizer steps the first
network, which gets no gradient (AD207). AD207 named the optimizer's line with advice only, because
the replacing assignment is in the frame that calls the training function, not in the function
of the step() call. Now the module that trains is looked for, by identity, in the frames further
out on the step's stack; where the frame that holds it under the same name is the scope that built
the optimizer, the last assignment to that name between the construction and the call on the way
to step() is named, and the help builds the optimizer again right after it. Tested on the set-35
case and on another shape written before the change was run on it (the model and optimizer are
locals of `main()`, a nested `step()` closure reads them); the hand-written versions run silent.
"""

from __future__ import annotations

import os

import torch

from helpers import apply_replacement, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET35 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set35")
CHAR_RNN = "b_char_rnn_optimizer_built_before_the_model_is_created_again.py"

# Another shape, written before the change was run on it: locals of main(), a closure steps.
CLOSURE = """
import torch
from torch import nn

torch.manual_seed(3)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 2))

    def forward(self, x):
        return self.body(x)


def main():
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    torch.manual_seed(4)
    model = Net()  # fresh weights for the real run
    data = torch.randn(12, 5)
    labels = torch.randint(0, 2, (12,))
    losses = [step(data, labels) for _ in range(4)]
    return model, losses


model, losses = main()
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""
CLOSURE_HAND = CLOSURE.replace(
    "    opt = torch.optim.Adam(model.parameters(), lr=0.01)\n", "").replace(
    "    model = Net()  # fresh weights for the real run\n",
    "    model = Net()  # fresh weights for the real run\n    opt = torch.optim.Adam(model.parameters(), lr=0.01)\n")


def _close(a, b):
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))


def _ad207(outcome):
    found = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert len(found) == 1, [d.code for d in outcome.diagnoses]
    return found[0]


def test_set35_char_rnn_builds_the_optimizer_after_the_second_rnn(tmp_path):
    source = open(os.path.join(SET35, "cases", CHAR_RNN)).read()
    outcome = run_program(tmp_path, source)
    found = _ad207(outcome)
    assert found.primary.line == 54
    assert any(r.line == 68 and r.role == "replaced" for r in found.related)
    suggestion = found.help[0]
    assert suggestion.location.line == 68
    assert suggestion.replacement.splitlines() == [
        "rnn = RNN(n_letters, n_hidden, n_categories)",
        "optimizer = torch.optim.SGD(rnn.parameters(), lr=learning_rate)"]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, suggestion.location, suggestion.replacement))
    correct = run_plain(tmp_path, open(os.path.join(SET35, "correct", CHAR_RNN)).read(), "hand.py")
    assert _close(fixed["result"], correct["result"])


def test_closure_reading_locals_of_main(tmp_path):
    outcome = run_program(tmp_path, CLOSURE)
    found = _ad207(outcome)
    lines = outcome.source.splitlines()
    assert found.primary.line == lines.index("    opt = torch.optim.Adam(model.parameters(), lr=0.01)") + 1
    suggestion = found.help[0]
    assert suggestion.location.line == lines.index("    model = Net()  # fresh weights for the real run") + 1
    assert suggestion.replacement.splitlines() == [
        "model = Net()",
        "opt = torch.optim.Adam(model.parameters(), lr=0.01)"]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, suggestion.location, suggestion.replacement))
    hand = run_plain(tmp_path, CLOSURE_HAND, "hand.py")
    assert _close(fixed["result"], hand["result"])


def test_hand_written_versions_are_silent(tmp_path):
    for source in (open(os.path.join(SET35, "correct", CHAR_RNN)).read(), CLOSURE_HAND):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert not outcome.diagnoses, [d.code for d in outcome.diagnoses]


# zsh523/3rgs#5 (set 35, `a_3dgs_pose_adjust_writes_adjusted_pose_into_cached_camera`, AD302): the
# adjusted pose is written into the cached camera object inside the loop, and the next epoch draws
# the same object again. Another shape, written before the change was run on it: agents kept in a
# list, each step writes the moved position back into the agent it drew.
AGENTS = """
import torch
from torch import nn

torch.manual_seed(5)


class Agent:
    def __init__(self, position):
        self.position = position
        self.name = "agent"


policy = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
opt = torch.optim.SGD(policy.parameters(), lr=0.05)
agents = [Agent(torch.randn(1, 2)) for _ in range(2)]
goal = torch.zeros(1, 2)
losses = []
for step in range(4):
    agent = agents[step % len(agents)]
    agent.position = agent.position + policy(agent.position)  # MOVE
    loss = (agent.position - goal).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses)}
"""
# Its correct near-twin: the move is computed, not written back into the agent kept in the list.
AGENTS_HAND = AGENTS.replace(
    "    agent.position = agent.position + policy(agent.position)  # MOVE\n"
    "    loss = (agent.position - goal).pow(2).sum()\n",
    "    moved = agent.position + policy(agent.position)  # MOVE\n"
    "    loss = (moved - goal).pow(2).sum()\n")
SET35_CAMERA = "a_3dgs_pose_adjust_writes_adjusted_pose_into_cached_camera.py"


def _ad302(outcome):
    assert outcome.error is not None
    found = [d for d in outcome.diagnoses if d.code == "AD302"]
    assert found, [d.code for d in outcome.diagnoses]
    return found[0]


def test_set35_camera_names_the_write_into_the_cached_camera(tmp_path):
    outcome = run_program(tmp_path, open(os.path.join(SET35, "cases", SET35_CAMERA)).read())
    found = _ad302(outcome)
    line = outcome.source.splitlines()[found.primary.line - 1].strip()
    assert line == "viewpoint_cam.world_view_transform = adjusted_c2w.inverse()"
    assert not any(s.replacement for s in found.help)  # advice only: a .detach() would change the values


def test_agents_kept_in_a_list_name_the_write_back(tmp_path):
    outcome = run_program(tmp_path, AGENTS)
    found = _ad302(outcome)
    assert "# MOVE" in outcome.source.splitlines()[found.primary.line - 1]
    assert not any(s.replacement for s in found.help)


def test_cached_object_near_twins_are_silent(tmp_path):
    for source in (open(os.path.join(SET35, "correct", SET35_CAMERA)).read(), AGENTS_HAND):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None, outcome.error
        assert not outcome.diagnoses, [d.code for d in outcome.diagnoses]
