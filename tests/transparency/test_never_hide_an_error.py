"""Hand-written cases where the doctor once differed from plain PyTorch."""

from __future__ import annotations

import sys

import torch

from autograd_doctor.analysis.diagnose import stale_view_diagnosis
from autograd_doctor.recording.frames import Site
from transparency import differences, run


def _saved_input_detached_in_place():
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = w.sigmoid()
    y = h.pow(2)  # PowBackward0 saves h as an input
    h.detach_()
    return y, [w]


def _saved_output_detached_in_place():
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = w.sigmoid()  # SigmoidBackward0 saves its own output h
    y = h + 0
    h.detach_()
    return y, [w]


def _saved_leaf_detached_in_place():
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0])
    y = (x * 2).requires_grad_()
    z = y * w
    y.detach_()
    return z, [w]


def _view_detached_in_place():
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    h = (w * 2)[1:]
    h.detach_()
    return h, [w]


def test_a_saved_input_detached_in_place_fails_as_in_pytorch():
    assert run(_saved_input_detached_in_place, None).error == "RuntimeError"
    assert differences(_saved_input_detached_in_place) == []


def test_a_saved_output_detached_in_place_runs_as_in_pytorch():
    assert run(_saved_output_detached_in_place, None).error is None
    assert differences(_saved_output_detached_in_place) == []


def test_other_detach_in_place_cases_match_pytorch():
    assert differences(_saved_leaf_detached_in_place) == []
    assert differences(_view_detached_in_place) == []


def test_a_library_call_that_views_and_writes_its_own_buffer_is_not_a_stale_view():
    """One call on one user line made the view and wrote its base: the library's business."""
    frame = sys._getframe()
    site = Site(frame.f_code, frame.f_lasti, frame.f_lineno)
    view = torch.zeros(4)[:2]
    assert stale_view_diagnosis(view, site, (site,), "a list") is None
    other = Site(frame.f_code, frame.f_lasti + 2, frame.f_lineno)
    assert stale_view_diagnosis(view, other, (site,), "a list") is not None
