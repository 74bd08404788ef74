"""What torch.func refuses to run (analysis/errors/func_support.py): the diagnosis where a change
is provably right is in the catalogue (tests/errors/test_catalogue.py); these are the cases where
the doctor must stay silent or give advice only."""

from __future__ import annotations

import runpy
import textwrap

import autograd_doctor


def run_watched(tmp_path, source: str):
    """(exception, its diagnoses) of the program run under watch(), as in a user's script."""
    path = tmp_path / "program.py"
    path.write_text(textwrap.dedent(source))
    try:
        with autograd_doctor.watch():
            runpy.run_path(str(path), run_name="__main__")
    except Exception as error:  # the program's own failure is what we study
        return error, autograd_doctor.diagnoses_of(error)
    raise AssertionError("the program did not fail")


def test_a_broadcast_error_outside_vmap_passes_through_untouched(tmp_path):
    error, diagnoses = run_watched(tmp_path, """\
        import torch
        total = torch.zeros(2)
        total += torch.ones(6, 2)
        """)
    assert "doesn't match the broadcast shape [6, 2]" in str(error)
    assert diagnoses == []


def test_a_shape_mistake_of_one_example_under_vmap_is_not_called_a_missing_batch_dimension(tmp_path):
    error, diagnoses = run_watched(tmp_path, """\
        import torch
        from torch.func import vmap
        def shifted(x, offset):
            offset += x
            return offset
        vmap(shifted, in_dims=(0, None))(torch.ones(6, 3, 2), torch.zeros(2))
        """)
    assert "doesn't match the broadcast shape [6, 3, 2]" in str(error)
    assert diagnoses == []


def test_an_in_place_add_into_a_tensor_made_from_a_size_under_vmap_is_the_catalogues_vmap_write(tmp_path):
    error, diagnoses = run_watched(tmp_path, """\
        import torch
        from torch.func import vmap
        def features(x):
            total = torch.zeros(2)
            for term in (x, x.sin()):
                total += term
            return total
        vmap(features)(torch.ones(6, 2))
        """)
    assert [d.code for d in diagnoses] == ["AD144"]
    assert diagnoses[0].primary.line == 4  # where total is made from a size
    assert "x.new_zeros(2)" in diagnoses[0].help[0].replacement


def test_a_function_saving_an_intermediate_gets_advice_not_a_split(tmp_path):
    error, diagnoses = run_watched(tmp_path, """\
        import torch
        from torch.func import grad
        class Square(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                doubled = 2 * x
                ctx.save_for_backward(doubled)
                return x * x
            @staticmethod
            def backward(ctx, grad_output):
                doubled, = ctx.saved_tensors
                return doubled * grad_output
        grad(lambda x: Square.apply(x).sum())(torch.ones(3))
        """)
    assert [d.code for d in diagnoses] == ["AD231"]
    assert diagnoses[0].primary.line == 5
    assert all(h.replacement is None for h in diagnoses[0].help)


def test_a_function_that_leaves_pytorch_is_not_offered_a_generated_vmap_rule(tmp_path):
    error, diagnoses = run_watched(tmp_path, """\
        import numpy as np
        import torch
        from torch.func import vmap
        class NumpySin(torch.autograd.Function):
            @staticmethod
            def forward(x):
                return torch.from_numpy(np.sin(x.numpy()))
            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])
            @staticmethod
            def backward(ctx, grad_output):
                x, = ctx.saved_tensors
                return grad_output * x.cos()
        vmap(NumpySin.apply)(torch.ones(4, 3))
        """)
    assert [d.code for d in diagnoses] == ["AD232"]
    assert diagnoses[0].primary.line == 4
    assert all(h.replacement is None for h in diagnoses[0].help)


def test_a_function_saving_its_output_is_split_and_then_gives_the_gradient_by_hand(tmp_path):
    import torch

    from autograd_doctor.analysis.fixes import apply_replacement

    source = textwrap.dedent("""\
        import torch
        from torch.func import grad, vmap
        class Exp(torch.autograd.Function):
            @staticmethod
            def forward(context, x):
                out = x.exp()
                context.save_for_backward(out)
                return out
            @staticmethod
            def backward(context, grad_output):
                out, = context.saved_tensors
                return grad_output * out
        xs = torch.tensor([[0.5, -1.0], [2.0, 0.0]])
        per_sample = vmap(grad(lambda x: Exp.apply(x).pow(2).sum()))(xs)
        """)
    error, diagnoses = run_watched(tmp_path, source)
    assert [d.code for d in diagnoses] == ["AD231"]
    assert diagnoses[0].primary.line == 5
    first = diagnoses[0].help[0]
    fixed = apply_replacement(source, first.location, first.replacement)
    assert "def setup_context(ctx, inputs, output):" in fixed and "out = output" in fixed
    namespace = runpy.run_path(str(_written(tmp_path, fixed)), run_name="__main__")
    xs = namespace["xs"]
    assert torch.allclose(namespace["per_sample"], 2 * xs.exp() ** 2)  # d/dx of exp(x)^2


def _written(tmp_path, source: str):
    path = tmp_path / "fixed.py"
    path.write_text(source)
    return path
