"""AD302 on a state a module keeps for its next call: start it again each iteration, or detach it?

The reset is right where the state moves several times within one iteration (a spiking layer
stepped over time steps inside forward, a model called once per snapshot of a sequence): a new
iteration is a new pass. Where the model is called once per iteration and stores the state once
per call (a Transformer-XL memory of the previous segment), a reset would leave the state at its
starting value at every read: the code means to carry it, and the help detaches it (truncated
backpropagation). Set 16's variant `attention_memory_carried_across_segments`."""

import pytest
import torch

from helpers import apply_help, grads_equal, run_plain, run_program

MEMORY = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class SegmentEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.mix = nn.Linear(8, 4)
        self.previous = None

    def forward(self, x):
        past = torch.zeros_like(x) if self.previous is None else self.previous
        h = torch.tanh(self.mix(torch.cat([x, past], dim=1)))
        self.previous = h  # STORED
        return h


encoder = SegmentEncoder()
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
losses = []
for chunk in torch.randn(3, 2, 4):
    loss = encoder(chunk).pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
result = [torch.tensor(losses)] + [p.detach().clone() for p in encoder.parameters()]
"""

MEMORY_CORRECT = MEMORY.replace("self.previous = h  # STORED", "self.previous = h.detach()  # STORED")

STEPPED = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class Integrator(nn.Module):
    def __init__(self):
        super().__init__()
        self.level = None

    def reset(self):
        self.level = None

    def forward(self, current):
        self.level = current if self.level is None else 0.8 * self.level + current  # STORED
        return torch.sigmoid(self.level)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.cell = Integrator()

    def forward(self, x):
        outputs = []
        for _ in range(3):
            outputs.append(self.cell(self.fc(x)))
        return torch.stack(outputs)


net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
losses = []
for batch in torch.randn(3, 2, 4):
    loss = net(batch).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
result = [torch.tensor(losses)] + [p.detach().clone() for p in net.parameters()]
"""

STEPPED_CORRECT = STEPPED.replace("for batch in torch.randn(3, 2, 4):\n",
                                  "for batch in torch.randn(3, 2, 4):\n    net.cell.reset()\n")


def test_a_memory_stored_once_per_call_is_detached_not_started_again(tmp_path):
    outcome = run_program(tmp_path, MEMORY)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302" and diagnosis.primary.line == outcome.line("STORED")
    assert diagnosis.help[0].replacement.endswith("self.previous = self.previous.detach()")
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, MEMORY_CORRECT, name="correct.py")
    assert grads_equal(fixed["result"], correct["result"])


def test_a_state_stepped_in_a_loop_of_its_parent_is_started_again(tmp_path):
    outcome = run_program(tmp_path, STEPPED)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert "net.cell.reset()" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, STEPPED_CORRECT, name="correct.py")
    assert grads_equal(fixed["result"], correct["result"])


@pytest.mark.parametrize("program", [MEMORY_CORRECT, STEPPED_CORRECT], ids=["memory", "stepped"])
def test_the_correct_versions_are_silent(tmp_path, program):
    outcome = run_program(tmp_path, program)
    assert outcome.error is None and outcome.diagnoses == []
