"""Forward-mode AD's refusals (analysis/errors/function_io.py, func_support.py: AD237-AD239) in
forms other than the catalogue's programs (tests/errors/programs): names imported from
forward_ad, make_dual's tangent, a dual tensor reaching a custom Function, and the cases where
the doctor gives advice only."""

from __future__ import annotations

import runpy
import textwrap

import torch

import autograd_doctor
from autograd_doctor.analysis.fixes import apply_replacement


def run_watched(tmp_path, source: str):
    """(program path, exception, its diagnoses) of the program run under watch()."""
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(source))
    try:
        with autograd_doctor.watch():
            runpy.run_path(str(path), run_name="__main__")
    except Exception as error:  # the program's own failure is what we study
        return path, error, autograd_doctor.diagnoses_of(error)
    raise AssertionError("the program did not fail")


def run_fixed(tmp_path, path, suggestion) -> dict:
    """The program's globals after the suggestion is applied to its text (it must run)."""
    fixed = tmp_path / "fixed.py"
    fixed.write_text(apply_replacement(path.read_text(), suggestion.location, suggestion.replacement))
    return runpy.run_path(str(fixed), run_name="__main__")


def test_make_dual_imported_by_name_is_wrapped_in_the_imported_dual_level(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, """\
        import torch
        from torch.autograd.forward_ad import dual_level, make_dual, unpack_dual
        x = torch.tensor([0.5, -1.0, 2.0])
        v = torch.tensor([1.0, 2.0, 0.0])
        d = make_dual(x, v)
        y = d.sin() * d
        value, tangent = unpack_dual(y)
        """)
    assert "no level exists" in str(error)
    assert [d.code for d in diagnoses] == ["AD238"]
    assert diagnoses[0].primary.line == 5
    help = diagnoses[0].help[0]
    assert help.replacement.splitlines()[0] == "with dual_level():"
    fixed = run_fixed(tmp_path, path, help)
    x, v = torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.0, 2.0, 0.0])
    assert torch.allclose(fixed["value"], x.sin() * x)
    assert torch.allclose(fixed["tangent"], (x.cos() * x + x.sin()) * v)  # d/dx (x sin x) along v


def test_make_dual_whose_tangent_is_read_elsewhere_gets_advice_only(tmp_path):
    _, error, diagnoses = run_watched(tmp_path, """\
        import torch
        import torch.autograd.forward_ad as fwAD
        def dual_of(x):
            return fwAD.make_dual(x, torch.ones_like(x))
        d = dual_of(torch.ones(3))
        """)
    assert "no level exists" in str(error)
    assert [d.code for d in diagnoses] == ["AD238"]
    assert diagnoses[0].primary.line == 4
    assert all(h.replacement is None for h in diagnoses[0].help)


def test_an_integer_tangent_of_make_dual_is_given_the_primal_dtype(tmp_path):
    path, error, diagnoses = run_watched(tmp_path, """\
        import torch
        import torch.autograd.forward_ad as fwAD
        x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
        mask = x > 0
        with fwAD.dual_level():
            d = fwAD.make_dual(x, mask)
            tangent = fwAD.unpack_dual(d.exp()).tangent
        """)
    assert "Expected tangent to be floating point" in str(error)
    assert [d.code for d in diagnoses] == ["AD239"]
    assert diagnoses[0].primary.line == 6
    help = diagnoses[0].help[0]
    assert help.replacement == "d = fwAD.make_dual(x, mask.to(x.dtype))"
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    assert torch.equal(run_fixed(tmp_path, path, help)["tangent"], x.exp() * (x > 0).to(x.dtype))


def test_a_dual_tensor_reaching_a_function_without_jvp_names_the_class(tmp_path):
    _, error, diagnoses = run_watched(tmp_path, """\
        import torch
        import torch.autograd.forward_ad as fwAD
        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clamp(-1, 1)
            @staticmethod
            def backward(ctx, grad_output):
                return grad_output
        with fwAD.dual_level():
            y = Clip.apply(fwAD.make_dual(torch.ones(3), torch.ones(3)))
        """)
    assert isinstance(error, NotImplementedError)
    assert [d.code for d in diagnoses] == ["AD237"]
    assert diagnoses[0].primary.line == 3
    assert all(h.replacement is None for h in diagnoses[0].help)
