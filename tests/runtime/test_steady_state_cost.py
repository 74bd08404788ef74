"""The per-step work kept cheap (README, "Steady-state cost, worked on (stop 42)").

An in-place method on a tensor in the graph (`h.relu_()`, `out += x` in a forward, every step)
may write into an entry of a Python container (`batch["reward"].copy_(v)`), so the kinds of the
containers its line names are read for AD101's help. Those kinds serve only a name subscripted on
the line (fixes._container_entry): a line without a subscript no longer copies the frame's locals.
What the help says for a container entry is tested in test_container_entry_method_writes.py."""

import sys

import torch

from autograd_doctor.recording.recorder import _locals_on_line


def test_container_kinds_are_read_on_a_line_with_a_subscript():
    c = [torch.zeros(1)]
    kinds = _locals_on_line(sys._getframe(), scalars=False, containers=True)[1] if c[0] is not None else None
    assert kinds == {"c": "list"}


def test_a_line_without_a_subscript_reads_no_container_kind():
    c = {"k": torch.zeros(1)}
    _, kinds = _locals_on_line(sys._getframe(), scalars=False, containers=True) if c else ({}, {})
    assert kinds == {}


def test_scalars_are_still_read_on_a_line_without_a_subscript():
    step = 3
    values, _ = _locals_on_line(sys._getframe(), scalars=True, containers=True) if step else ({}, {})
    assert values == {"step": "3"}
