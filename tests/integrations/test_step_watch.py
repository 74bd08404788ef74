"""The per-step doctor the training-framework callbacks share, without any framework."""

from __future__ import annotations

import doctest
import inspect
import logging

import pytest
import torch

import autograd_doctor.integrations.step_watch as step_watch
from autograd_doctor import diagnoses_of, watch
from autograd_doctor.integrations.step_watch import StepWatch


def test_docstring_example():
    result = doctest.testmod(step_watch)
    assert result.failed == 0 and result.attempted > 0


def test_a_bug_in_every_step_is_logged_once(caplog):
    full_mode = {"mode": "full"} if "mode" in inspect.signature(watch).parameters else {}
    steps = StepWatch(logging.getLogger("test.step_watch"), full_mode)
    with caplog.at_level(logging.WARNING, logger="test.step_watch"):
        for step in range(3):
            steps.begin()
            x = torch.ones(3, requires_grad=True)
            y = torch.sigmoid(x)
            y.data[0] = 2.0  # a silent write, every step
            y.sum().backward()
            steps.end(f"step {step}")
    assert [d.code for d in steps.diagnoses] == ["AD201"]
    assert len(caplog.records) == 1 and "in step 0" in caplog.records[0].getMessage()


def test_begin_again_ends_a_step_that_never_ended():
    steps = StepWatch(logging.getLogger("test.step_watch"), {})
    steps.begin()
    steps.begin()  # e.g. a framework without a failure event
    steps.end()
    assert not steps.active
    x = torch.ones(3, requires_grad=True)
    y = torch.sigmoid(x)
    y[0] = 0.0
    with pytest.raises(RuntimeError) as failure:
        y.sum().backward()
    assert diagnoses_of(failure.value) == []  # no doctor left running


@pytest.mark.internal_error  # the doctor made to fail on purpose
def test_a_failing_report_leaves_the_step_and_its_error_alone(monkeypatch):
    steps = StepWatch(logging.getLogger("test.step_watch"), {})

    def broken_log(*args):
        raise ValueError("the doctor's own bug")

    monkeypatch.setattr(steps, "_log", broken_log)
    steps.begin()
    x = torch.ones(3, requires_grad=True)
    y = torch.sigmoid(x)
    y[0] = 0.0
    with pytest.raises(RuntimeError) as failure:
        y.sum().backward()
    steps.end("step 0", failure.value)  # does not raise
    assert not steps.active and "modified by an inplace operation" in str(failure.value)
