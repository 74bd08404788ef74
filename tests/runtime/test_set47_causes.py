"""Held-out set 47's causes (docs/bug-reports.md, "Set 47"). The other shapes below were written
before the change was run on them.

- AD304, a gate matrix built with `torch.as_tensor([[c, -s], [s, c]], dtype=self.dtype)` from
  tensors that require grad (github.com/qiboteam/qibo issue 1449, the torch backend's rotation
  gates): the help was `torch.stack([[c, -s], [s, c]])`, which torch.stack refuses ("expected
  Tensor as element 0 in argument 0, but got list") and which dropped the dtype. A nested list
  written out now gets one torch.stack per level, and `dtype=` / `device=` move to `.to(...)`; a
  list holding a number next to a tensor, or tensors of different shapes, gets advice only."""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import apply_help, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET47 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set47")
QUANTUM = "quantum_circuit_gate_matrix_built_with_as_tensor"


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET47, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


def test_the_set47_gate_matrix_is_stacked_per_row_keeping_the_dtype(tmp_path):
    outcome = run_program(tmp_path, _source("cases", QUANTUM))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.TENSOR_COPY_CUTS_GRAPH
    assert diagnosis.help[0].replacement == \
        "return torch.stack([torch.stack([c, -s]), torch.stack([s, c])]).to(dtype=self.dtype)"
    changed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, _source("correct", QUANTUM), "c.py")
    assert torch.allclose(changed["result"]["circuit_parameters"], correct["result"]["circuit_parameters"])
    assert torch.allclose(changed["result"]["losses"], correct["result"]["losses"])


def test_the_correct_gate_matrix_is_silent(tmp_path):
    outcome = run_program(tmp_path, _source("correct", QUANTUM))
    assert outcome.error is None and not outcome.diagnoses


# Another shape: a 2-D rotation fitted to rotated points, the matrix written with calls inside.
POSE_FIT = """
    import torch

    torch.manual_seed(0)
    points = torch.randn(20, 2, dtype=torch.float64)
    truth = torch.tensor(0.7, dtype=torch.float64)
    target = points @ torch.tensor([[truth.cos(), -truth.sin()], [truth.sin(), truth.cos()]]).T
    angle = torch.zeros((), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([angle], lr=0.05)
    for step in range(30):
        optimizer.zero_grad()
        rotation = torch.tensor([[torch.cos(angle), -torch.sin(angle)], [torch.sin(angle), torch.cos(angle)]], dtype=torch.float64)  # COPY
        loss = ((points @ rotation.T - target) ** 2).mean()
        loss.backward()
        optimizer.step()
    result = angle.detach().clone()
"""


def test_a_rotation_matrix_with_calls_inside_is_stacked_per_row(tmp_path):
    outcome = run_program(tmp_path, POSE_FIT)
    # The cut backward() meets (AD301) and the copy itself (AD304) give the same change.
    assert [d.code for d in outcome.diagnoses] == [codes.GRADIENT_PATH_CUT, codes.TENSOR_COPY_CUTS_GRAPH]
    for diagnosis in outcome.diagnoses:
        assert diagnosis.help[0].replacement == (
            "rotation = torch.stack([torch.stack([torch.cos(angle), -torch.sin(angle)]), "
            "torch.stack([torch.sin(angle), torch.cos(angle)])]).to(dtype=torch.float64)")
    changed = run_plain(tmp_path, apply_help(outcome))
    assert abs(changed["result"].item() - 0.7) < 0.05  # the fit now moves the angle


# Another shape: a flat list of two losses put on a device with `device=`.
TWO_LOSSES_ON_A_DEVICE = """
    import torch

    w = torch.ones(3, requires_grad=True)
    l1, l2 = (w * 2).sum(), (w * 3).sum()
    total = (w ** 2).sum() + torch.tensor([l1, l2], device=w.device).sum()  # COPY
    total.backward()
    result = w.grad.clone()
"""


def test_a_flat_list_keeps_its_device(tmp_path):
    outcome = run_program(tmp_path, TWO_LOSSES_ON_A_DEVICE)
    assert outcome.diagnosis.code == codes.TENSOR_COPY_CUTS_GRAPH
    assert outcome.diagnosis.help[0].replacement == \
        "total = (w ** 2).sum() + torch.stack([l1, l2]).to(device=w.device).sum()"
    changed = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(changed["result"], torch.full((3,), 7.0))


# Near twins: the same matrix from plain numbers, or from tensors already detached, copies nothing
# that trains; a number next to a tensor (torch.stack would refuse it) gets advice only.
def test_a_matrix_of_numbers_or_detached_values_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        angle = torch.tensor(0.3, requires_grad=True)
        c, s = torch.cos(angle).detach(), torch.sin(angle).detach()
        fixed = torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64)
        frozen = torch.tensor([[c, -s], [s, c]], dtype=torch.float64)
        loss = (fixed @ frozen).sum() + angle
        loss.backward()
    """)
    assert outcome.error is None and not outcome.diagnoses


def test_a_number_next_to_a_tensor_gets_advice_only(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        scale = torch.tensor(2.0, requires_grad=True)
        other = torch.ones((), requires_grad=True)
        matrix = torch.tensor([[scale, 0.0], [0.0, scale]])  # COPY
        loss = matrix.sum() * other
        loss.backward()
    """)
    assert outcome.diagnosis.code == codes.TENSOR_COPY_CUTS_GRAPH
    assert all(not h.replacement for h in outcome.diagnosis.help)


def test_a_nested_list_held_by_a_variable_gets_advice_only(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        angle = torch.tensor(0.3, requires_grad=True)
        c, s = torch.cos(angle), torch.sin(angle)
        rows = [[c, -s], [s, c]]
        other = torch.ones((), requires_grad=True)
        matrix = torch.tensor(rows)  # COPY
        loss = matrix.sum() * other
        loss.backward()
    """)
    assert outcome.diagnosis.code == codes.TENSOR_COPY_CUTS_GRAPH
    assert all(not h.replacement for h in outcome.diagnosis.help)
