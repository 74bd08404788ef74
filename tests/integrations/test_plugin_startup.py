"""What the pytest plugin costs a session: no torch while it is off, the doctor's modules loaded
as plain Python loads them, and watch() reusing its wrappers (docs/integrations.md, "Plugin
start-up cost, 8 December")."""

from __future__ import annotations

import textwrap

import torch

import autograd_doctor
from autograd_doctor.recording import patches

pytest_plugins = ["pytester"]


def test_the_plugin_off_imports_no_torch(pytester):
    pytester.makepyfile(test_plain=textwrap.dedent("""\
        import sys


        def test_no_torch_here():
            assert "torch" not in sys.modules
    """))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_the_doctors_modules_are_not_assertion_rewritten(pytester):
    pytester.makepyfile(test_watched=textwrap.dedent("""\
        import sys

        import torch


        def test_step():
            x = torch.ones(3, requires_grad=True)
            torch.sigmoid(x).sum().backward()
            loader = sys.modules["autograd_doctor.doctor"].__loader__
            assert type(loader).__name__ != "AssertionRewritingHook", loader
    """))
    result = pytester.runpytest_subprocess("--autograd-doctor", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_watch_reuses_its_wrappers_and_puts_torch_back():
    original = torch.Tensor.add_
    with autograd_doctor.watch():
        first = torch.Tensor.add_
    assert torch.Tensor.add_ is original
    with autograd_doctor.watch():
        second = torch.Tensor.add_
    assert first is second and first is not original
    assert first.__autograd_doctor_wrapped__ is original
    assert torch.Tensor.add_ is original


def test_a_write_method_added_after_a_watch_is_wrapped_at_the_next(monkeypatch):
    with autograd_doctor.watch():
        pass

    def scale_(self, factor):  # a library's own in-place method, added to Tensor later
        return self.mul_(factor)

    monkeypatch.setattr(torch.Tensor, "scale_", scale_, raising=False)
    with autograd_doctor.watch() as doctor:
        assert getattr(torch.Tensor.scale_, "__autograd_doctor_wrapped__", None) is scale_
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        y.scale_(2.0)
        try:
            y.sum().backward()
        except RuntimeError:
            pass
    assert torch.Tensor.scale_ is scale_
    assert patches._active == []
    assert any(d.code == "AD101" for d in doctor.diagnoses)
