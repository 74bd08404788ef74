"""AD302 on state a module carries to the next call, when the class also starts that state with a
tensor factory (`self.memory = torch.zeros(...)` on the first call): the statement named is the one
that stored the value with the graph (`self.memory = rec_memory`), not the factory's, which holds
no graph; its help (detach after storing) makes the program equal to the detached correct version.
Found in set 26, part A (StreamPETR#63, tests/bug_reports/fresh/set26)."""

import os
import runpy

import pytest
import torch

from helpers import apply_help, grads_equal, run_plain, run_program

PROGRAM = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.memory = None

    def reset_memory(self):
        self.memory = None

    def forward(self, x):
        if self.memory is None:
            self.memory = torch.zeros(x.shape[0], 4)  # FACTORY
        out = self.proj(x + self.memory)
        kept = out.topk(2, dim=1).values.repeat(1, 2)
        self.memory = kept  # STORED
        return out


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = Head()

    def forward(self, x):
        return self.head(self.backbone(x))


model = Detector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for clip in range(2):
    model.head.reset_memory()
    for x in [torch.randn(3, 4) for _ in range(3)]:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()  # BACKWARD
        optimizer.step()
        losses.append(loss.item())
result = [torch.tensor(losses)] + [p.detach().clone() for p in model.parameters()]
"""

CORRECT = PROGRAM.replace("self.memory = kept  # STORED", "self.memory = kept.detach()  # STORED")


def test_the_assignment_that_stored_the_graph_is_named_not_the_factory(tmp_path):
    outcome = run_program(tmp_path, PROGRAM)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("STORED")
    assert outcome.line("FACTORY") not in [diagnosis.primary.line] + [r.line for r in diagnosis.related]
    assert all(h.location is None or h.location.line != outcome.line("FACTORY") for h in diagnosis.help)


STREAMPETR = os.path.join(os.path.dirname(__file__), "..", "bug_reports", "fresh", "set26", "{}",
                          "a_streampetr_propagated_query_memory_kept_in_graph.py")


def test_streampetr_detach_help_applied_equals_the_maintainers_fix(tmp_path):
    with open(STREAMPETR.format("cases"), encoding="utf-8") as stream:
        buggy = stream.read()
    outcome = run_program(tmp_path, buggy)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302" and "self.memory_embedding = rec_memory" in outcome.source.splitlines()[
        diagnosis.primary.line - 1]
    assert diagnosis.help[0].replacement.endswith("self.memory_embedding = self.memory_embedding.detach()")
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = runpy.run_path(STREAMPETR.format("correct"), run_name="__main__")
    assert torch.allclose(fixed["result"]["losses"], correct["result"]["losses"])
    assert all(torch.allclose(a, b) for a, b in zip(fixed["result"]["params"], correct["result"]["params"]))


@pytest.mark.parametrize("mode", ["light", "full"])
def test_the_detached_version_is_silent(tmp_path, mode):
    outcome = run_program(tmp_path, CORRECT, mode=mode)
    assert outcome.error is None and outcome.diagnoses == []
    plain = run_plain(tmp_path, CORRECT, name="plain.py")
    assert grads_equal(outcome.namespace["result"], plain["result"])


def test_a_recurrent_state_started_by_zeros_like_in_a_helper_is_found_at_its_store(tmp_path):
    outcome = run_program(tmp_path, """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 3)
        self.state = None

    def init_state(self, x):
        self.state = torch.zeros_like(x)

    def forward(self, x):
        if self.state is None:
            self.init_state(x)
        new_state = self.cell(x, self.state)
        self.state = new_state  # STORED
        return new_state


tracker = Tracker()
optimizer = torch.optim.Adam(tracker.parameters(), lr=1e-2)
for clip in range(2):
    tracker.state = None
    for frame in [torch.randn(2, 3) for _ in range(3)]:
        loss = tracker(frame).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""")
    assert isinstance(outcome.error, RuntimeError)
    assert outcome.diagnosis.code == "AD302" and outcome.diagnosis.primary.line == outcome.line("STORED")
