"""The general forms behind held-out set 10's misses (tests/errors/variants, `# set: 10`), each on a
program of its own: the help, applied, makes the program compute what a hand-written version
computes; and the cases each change must leave alone."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnose(tmp_path, source, name="program"):
    source = textwrap.dedent(source)
    path = write(tmp_path, source, name)
    error = run_watched(path)
    assert error is not None
    return source, path, autograd_doctor.diagnoses_of(error)


def fixed_namespace(tmp_path, source, suggestion, name="fixed"):
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, suggestion), name))
    assert error is None, error
    return namespace


def test_function_decorated_with_set_grad_enabled_false_is_named_at_its_decorator(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, 2.0], requires_grad=True)


        @torch.set_grad_enabled(False)  # DECORATOR
        def score(x):
            return (w * x).sum()


        loss = score(torch.tensor([3.0, 4.0]))
        loss.backward()
        grad = w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD307"]
    assert diagnosis.primary.line == marked_line(source, "DECORATOR")
    assert "@torch.set_grad_enabled(False)" in diagnosis.help[0].message
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["grad"], torch.tensor([3.0, 4.0]))


def test_set_grad_enabled_false_called_as_a_function_is_not_taken_for_a_decorator(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, 2.0], requires_grad=True)


        def score(x):
            torch.set_grad_enabled(False)
            value = (w * x).sum()
            torch.set_grad_enabled(True)
            return value


        loss = score(torch.tensor([3.0, 4.0]))
        loss.backward()
    """)
    assert "AD307" not in [d.code for d in diagnoses]


def test_mark_dirty_function_that_writes_its_input_then_returns_an_out_of_place_call_writes_that_call_in_place(
        tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class CentreAndScale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.sub_(x.mean())
                ctx.mark_dirty(x)
                return x.mul(2.0)  # RETURN

            @staticmethod
            def backward(ctx, grad):
                return grad * 2.0


        w = torch.tensor([1.0, 2.0, 6.0], requires_grad=True)
        out = CentreAndScale.apply(w * 1.0)
        out.sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD121"]
    assert diagnosis.primary.line == marked_line(source, "RETURN")
    assert diagnosis.help[0].replacement == "return x.mul_(2.0)"
    namespace = fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["out"].detach(), torch.tensor([-4.0, -2.0, 6.0]))
    assert torch.equal(namespace["w"].grad, torch.full((3,), 2.0))


def test_mark_dirty_function_that_writes_its_input_then_returns_a_copy_still_returns_the_input(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class ClampInPlace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.clamp_(min=0.0)
                ctx.mark_dirty(x)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad


        out = ClampInPlace.apply(torch.tensor([1.0, -2.0], requires_grad=True) * 1.0)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD121"]
    assert diagnosis.help[0].replacement == "return x"
