"""AD217: a state_dict() kept as a snapshot, loaded back after the steps changed it. The
snapshot is known by its entries, so a shallow copy of it is reported too; the doctor keeps only
weak references to it."""

import gc
import weakref

import torch

import autograd_doctor
from helpers import apply_help, run_plain, run_program

SHALLOW = """
import torch
import torch.nn as nn
torch.manual_seed(0)
model = nn.Linear(3, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
start = dict(model.state_dict())  # SNAPSHOT
for _ in range(3):
    loss = model(torch.randn(4, 3)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
model.load_state_dict(start)  # LOAD
result = [p.detach().clone() for p in model.parameters()]
"""


def test_a_shallow_copy_of_the_snapshot_is_reported_and_the_help_restores(tmp_path):
    outcome = run_program(tmp_path, SHALLOW)
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD217"
    assert diagnosis.primary.line == outcome.line("SNAPSHOT")
    assert [r.line for r in diagnosis.related] == [outcome.line("LOAD")]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    torch.manual_seed(0)
    initial = [p.detach().clone() for p in torch.nn.Linear(3, 2).parameters()]
    assert all(torch.equal(a, b) for a, b in zip(fixed, initial))  # the start restored
    assert not all(torch.equal(a, b) for a, b in zip(outcome.namespace["result"], initial))


def test_the_snapshot_is_not_kept_alive():
    model = torch.nn.Linear(3, 2)
    with autograd_doctor.watch():
        state = model.state_dict()
        entry = weakref.ref(state["weight"])
        dict_ref = weakref.ref(state)
        del state
        gc.collect()
        assert entry() is None and dict_ref() is None
