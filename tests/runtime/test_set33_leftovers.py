"""Sets 29-33's leftovers (docs/bug-reports.md, "Sets 29-33: leftovers worked on").

AD214 names the user's `detach()` that cut the optimizer's parameters off every loss (set 29's
flow_matching: `return ut.detach(), div.detach()` inside ODE dynamics). The programs here are other
shapes of that cause, written before the change was run on them: a projector whose embedding is
detached in a helper before a prototype loss trains only the prototypes, and an Euler rollout whose
dynamics detach the network's output while the loss still has a graph through the initial state.
Near-twins: the same programs without the detach (they train: silent), a detach for logging next to
a loss that trains (silent), and two detach lines that both reach the parameters (AD214 stays at
step(): which one to drop is not known).
"""

import os
import runpy
import sys
import textwrap
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import run_plain, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnoses_of(tmp_path, source, name="program"):
    path = write(tmp_path, textwrap.dedent(source), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch() as doctor:
            runpy.run_path(path, run_name="__main__")
    return doctor.diagnoses


def result_of(tmp_path, source, name):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), name))
    assert error is None, error
    return namespace["result"]


def line_of(source, marker):
    return next(i for i, text in enumerate(textwrap.dedent(source).splitlines(), 1) if marker in text)


PROTOTYPES = """
import torch
import torch.nn as nn
torch.manual_seed(0)

encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
prototypes = nn.Parameter(torch.randn(3, 8))
enc_opt = torch.optim.SGD(encoder.parameters(), lr=0.1)
proto_opt = torch.optim.SGD([prototypes], lr=0.1)


def embed(batch):
    z = encoder(batch)
    return nn.functional.normalize(z, dim=-1).detach()  # CUT


for it in range(4):
    x = torch.randn(10, 6)
    scores = embed(x) @ prototypes.t()
    loss = -torch.log_softmax(scores, -1).max(-1).values.mean()
    enc_opt.zero_grad()
    proto_opt.zero_grad()
    loss.backward()
    enc_opt.step()
    proto_opt.step()
result = [p.detach().clone() for p in encoder.parameters()] + [prototypes.detach().clone()]
"""
PROTOTYPES_TRAINED = PROTOTYPES.replace(".detach()  # CUT", "  # CUT")

ROLLOUT = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Dynamics(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(2, 12), nn.Tanh(), nn.Linear(12, 2))

    def step(self, state, dt):
        change = self.f(state)
        return state + dt * change.detach()  # CUT


model = Dynamics()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
target = torch.tensor([1.0, -1.0])
for epoch in range(3):
    x0 = torch.randn(5, 2, requires_grad=True)
    state = x0
    for k in range(4):
        state = model.step(state, 0.25)
    loss = ((state - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
"""
ROLLOUT_TRAINED = ROLLOUT.replace("dt * change.detach()  # CUT", "dt * change  # CUT")

LOGGED = """
import torch
import torch.nn as nn
torch.manual_seed(0)
net = nn.Linear(4, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
history = []
for it in range(3):
    out = net(torch.randn(8, 4))
    history.append(out.detach())
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in net.parameters()]
"""

TWO_CUTS = ROLLOUT.replace("        change = self.f(state)\n",
                            "        change = self.f(state)\n        shown.append(change.detach())  # FIRST\n").replace(
    "model = Dynamics()", "shown = []\nmodel = Dynamics()").replace("# CUT", "# SECOND")


def test_prototype_embedding_detached_in_a_helper_is_named(tmp_path):
    found = [d for d in diagnoses_of(tmp_path, PROTOTYPES) if d.code == "AD214"]
    assert found, "AD214 expected"
    diagnosis = found[0]
    assert diagnosis.primary.line == line_of(PROTOTYPES, "# CUT")
    assert "detach()" in diagnosis.help[0].message
    assert diagnosis.help[0].replacement is None  # advice: nothing raised, no oracle re-runs it


def test_rollout_dynamics_detached_output_is_named(tmp_path):
    found = [d for d in diagnoses_of(tmp_path, ROLLOUT) if d.code == "AD214"]
    assert found, "AD214 expected"
    assert found[0].primary.line == line_of(ROLLOUT, "# CUT")


def test_without_the_detach_the_parameters_train_and_nothing_is_reported(tmp_path):
    for source, name in ((PROTOTYPES_TRAINED, "protos"), (ROLLOUT_TRAINED, "rollout")):
        assert not diagnoses_of(tmp_path, source, name)
        before = result_of(tmp_path, source.replace("range(4)", "range(0)").replace("range(3)", "range(0)"),
                           name + "_untrained")
        after = result_of(tmp_path, source, name + "_trained")
        # the advice applied trains the module the detach had cut off
        assert any(not torch.equal(a, b) for a, b in zip(before, after))


def test_a_detach_for_logging_next_to_a_training_loss_stays_silent(tmp_path):
    assert not diagnoses_of(tmp_path, LOGGED)


def test_two_detach_lines_reaching_the_parameters_leave_ad214_at_step(tmp_path):
    found = [d for d in diagnoses_of(tmp_path, TWO_CUTS) if d.code == "AD214"]
    assert found
    assert found[0].primary.line not in (line_of(TWO_CUTS, "# FIRST"), line_of(TWO_CUTS, "# SECOND"))
