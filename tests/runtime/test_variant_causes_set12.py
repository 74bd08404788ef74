"""The general forms behind held-out set 12's misses (tests/errors/variants, `# set: 12`), each on a
program of its own: the diagnosis names the marked line, and its help, applied, makes the program
compute what a hand-written version computes; and the cases each change must leave alone."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


@pytest.fixture
def library_modules():
    """The helper modules a program imports from its own folder are imported again by each run."""
    names = []
    yield names
    for name in names:
        sys.modules.pop(name, None)


def diagnose(tmp_path, source, name="program", libraries=None, library_modules=None):
    """(source, diagnoses) of the program run under the doctor; `libraries` are written next to it."""
    for library, text in (libraries or {}).items():
        write(tmp_path, textwrap.dedent(text), library)
        if library_modules is not None:
            library_modules.append(library)
            sys.modules.pop(library, None)
    source = textwrap.dedent(source)
    error = run_watched(write(tmp_path, source, name))
    assert error is not None
    return source, autograd_doctor.diagnoses_of(error)


def only(diagnoses, code):
    (found,) = [d for d in diagnoses if d.code == code]
    return found


def run_fixed(tmp_path, suggestion, name="program", library_modules=()):
    """The namespace of the program after the suggestion is applied to the file it names."""
    target = tmp_path / os.path.basename(suggestion.location.file)
    target.write_text(apply_suggestion(target.read_text(), suggestion))
    for library in library_modules:
        sys.modules.pop(library, None)
    error, namespace = run_plain(str(tmp_path / f"{name}.py"))
    assert error is None, error
    return namespace



def test_scatter_add_into_zeros_under_vmap_is_made_from_the_input(tmp_path):
    # vmap names the op itself ("vmap: scatter_add_(self, *extra_args) is not possible") for writes
    # that are not arithmetic; it is the same mistake as `+=` into torch.zeros (AD144).
    source, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import vmap

        SLOTS = torch.tensor([0, 2, 2])


        def pooled(values):
            totals = torch.zeros(3)  # MADE
            totals.scatter_add_(0, SLOTS, values)
            return totals


        values = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        out = vmap(pooled)(values)
        out.pow(2).sum().backward()
        """)
    found = only(diagnoses, "AD144")
    assert found.primary.line == marked_line(source, "MADE")
    namespace = run_fixed(tmp_path, found.help[0])
    values = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    expected = torch.stack([values[:, 0], torch.zeros(2), values[:, 1] + values[:, 2]], dim=1)
    assert torch.equal(namespace["out"], expected)
    assert torch.equal(namespace["values"].grad, 2 * expected[:, [0, 2, 2]])


def test_a_write_outside_vmap_is_not_diagnosed_as_a_vmap_write(tmp_path):
    # A plain index_add_ with a source larger than the target fails on its own check, not vmap's.
    source = textwrap.dedent("""
        import torch

        totals = torch.zeros(2)
        totals.index_add_(0, torch.tensor([0, 1, 2]), torch.ones(3))
        """)
    error = run_watched(write(tmp_path, source, "program"))
    assert error is not None
    assert "AD144" not in [d.code for d in autograd_doctor.diagnoses_of(error)]


def test_temporary_view_detached_in_place_as_a_value_is_detached_out_of_place(tmp_path):
    source, diagnoses = diagnose(tmp_path, """
        import torch

        weights = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        kept = []
        h = weights * 3
        kept.append(h[0].unsqueeze(0).detach_())  # DETACH
        h.sum().backward()
        """)
    found = only(diagnoses, "AD108")
    assert found.primary.line == marked_line(source, "DETACH")
    namespace = run_fixed(tmp_path, found.help[0])
    assert torch.equal(namespace["kept"][0], torch.tensor([[3.0, 6.0]]))
    assert not namespace["kept"][0].requires_grad
    assert torch.equal(namespace["weights"].grad, torch.full((2, 2), 3.0))


def test_bare_detach_in_place_of_a_temporary_view_keeps_the_advice(tmp_path):
    # `h.t().detach_()` as a statement of its own: detach() there would do nothing.
    _source, diagnoses = diagnose(tmp_path, """
        import torch

        h = torch.ones(2, 2, requires_grad=True) * 2
        h.t().detach_()
        """)
    found = only(diagnoses, "AD108")
    assert all(suggestion.location is None for suggestion in found.help)


def test_broadcast_tensors_output_written_in_place_is_copied_where_it_is_made(tmp_path):
    source, diagnoses = diagnose(tmp_path, """
        import torch


        def shifted(scores, offsets):
            scores, offsets = torch.broadcast_tensors(scores, offsets)  # MADE
            offsets.add_(1.0).mul_(2.0)
            return scores + offsets


        scores = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        out = shifted(scores, torch.tensor([[0.5], [1.5]]))
        out.sum().backward()
        """)
    found = only(diagnoses, "AD124")
    assert found.primary.line == marked_line(source, "MADE")
    namespace = run_fixed(tmp_path, found.help[0])
    scores = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert torch.equal(namespace["out"], scores + torch.tensor([[3.0], [5.0]]))
    assert torch.equal(namespace["scores"].grad, torch.ones(2, 3))


def test_hook_after_accumulation_on_a_frozen_parameter_is_guarded_first(tmp_path):
    source, diagnoses = diagnose(tmp_path, """
        import torch

        layers = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
        torch.nn.init.constant_(layers[0].weight, 0.5)
        torch.nn.init.constant_(layers[1].weight, -1.0)
        layers[0].requires_grad_(False)
        seen = []
        for parameter in layers.parameters():
            parameter.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.sum().item()))  # HOOK
        layers(torch.ones(1, 2)).sum().backward()
        """)
    found = only(diagnoses, "AD116")
    assert found.primary.line == marked_line(source, "HOOK")
    assert "requires_grad_()" not in (found.help[0].replacement or "")
    namespace = run_fixed(tmp_path, found.help[0])
    assert namespace["layers"][0].weight.grad is None and len(namespace["seen"]) == 2


def test_optimizer_given_parameters_to_vector_gets_the_parameters(tmp_path):
    source, diagnoses = diagnose(tmp_path, """
        import torch

        layer = torch.nn.Linear(2, 1)
        torch.nn.init.constant_(layer.weight, 1.0)
        torch.nn.init.constant_(layer.bias, 0.0)
        flat = torch.nn.utils.parameters_to_vector(layer.parameters())
        optimizer = torch.optim.SGD([flat], lr=0.5)  # OPTIMIZER
        loss = layer(torch.tensor([[1.0, 2.0]])).sum()
        loss.backward()
        optimizer.step()
        """)
    found = only(diagnoses, "AD119")
    assert found.primary.line == marked_line(source, "OPTIMIZER")
    namespace = run_fixed(tmp_path, found.help[0])
    assert torch.equal(namespace["layer"].weight, torch.tensor([[0.5, 0.0]]))
    assert torch.equal(namespace["layer"].bias, torch.tensor([-0.5]))


def test_parameters_to_vector_of_an_exhausted_generator_is_not_rewritten(tmp_path):
    # `params` is a generator parameters_to_vector already read: given again, it would be empty.
    _source, diagnoses = diagnose(tmp_path, """
        import torch

        layer = torch.nn.Linear(2, 1)
        params = layer.parameters()
        flat = torch.nn.utils.parameters_to_vector(params)
        optimizer = torch.optim.SGD([flat], lr=0.5)
        """)
    found = only(diagnoses, "AD119")
    assert "params" not in (found.help[0].replacement or "")


def test_vector_given_to_backward_is_reduced_as_the_program_reports_it(tmp_path):
    source, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor([1.0, -2.0], requires_grad=True)
        x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        log = []
        distances = (x @ w - 1.0).abs()
        distances.backward()  # BACKWARD
        log.append(distances.mean().item())
        """)
    found = only(diagnoses, "AD112")
    assert found.primary.line == marked_line(source, "BACKWARD")
    namespace = run_fixed(tmp_path, found.help[0])
    x, w = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), torch.tensor([1.0, -2.0])
    assert torch.allclose(namespace["w"].grad, (torch.sign(x @ w - 1.0) @ x) / 3)
    assert namespace["log"] == [pytest.approx((x @ w - 1.0).abs().mean().item())]


def test_out_into_a_row_of_a_buffer_the_computation_reads_gets_advice(tmp_path):
    # `buffer[i + 1] = torch.tanh(...)` would still write in place into a tensor autograd saved.
    _source, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor(0.5, requires_grad=True)
        states = torch.zeros(3)
        for i in range(2):
            torch.tanh(w * states[i] + 1.0, out=states[i + 1])
        """)
    found = only(diagnoses, "AD117")
    assert all(suggestion.location is None for suggestion in found.help)
    assert "torch.stack" in found.help[0].message


def test_out_into_a_buffer_row_not_read_keeps_the_out_of_place_change(tmp_path):
    _source, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.tensor(0.5, requires_grad=True)
        rows = torch.zeros(2)
        torch.tanh(w * 2.0, out=rows[0])
        """)
    found = only(diagnoses, "AD117")
    assert found.help[0].replacement == "rows[0] = torch.tanh(w * 2.0)"


@pytest.mark.parametrize("freeze, index", [("weight[:, 1].requires_grad = False", (slice(None), 1)),
                                           ("weight[1:].requires_grad_(False)", (slice(1, None),))])
def test_part_of_a_parameter_frozen_through_an_index_gets_a_gradient_hook(tmp_path, freeze, index):
    source, diagnoses = diagnose(tmp_path, f"""
        import torch

        weight = torch.nn.Parameter(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        {freeze}  # FREEZE
        optimizer = torch.optim.SGD([weight], lr=0.1)
        (weight * torch.tensor([[1.0, -1.0], [2.0, 0.5]])).sum().backward()
        optimizer.step()
        """)
    found = only(diagnoses, "AD115")
    assert found.primary.line == marked_line(source, "FREEZE")
    namespace = run_fixed(tmp_path, found.help[0])
    start = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    expected = start - 0.1 * torch.tensor([[1.0, -1.0], [2.0, 0.5]])
    expected[index] = start[index]
    assert torch.allclose(namespace["weight"].detach(), expected)


FUNCTION_GRADIENT_LAYOUT = """
    import torch


    class Product(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return torch.mm(x, w)

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return grad.mm(w.t()), grad.t().mm(x)  # RETURN


    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    w = torch.tensor(WEIGHT, requires_grad=True)
    Product.apply(x, w).pow(2).sum().backward()
    """


def test_matrix_gradient_in_the_transposed_layout_is_transposed(tmp_path):
    weight = [[1.0, 0.0], [0.5, -1.0], [2.0, 1.0]]
    source, diagnoses = diagnose(tmp_path, FUNCTION_GRADIENT_LAYOUT.replace("WEIGHT", repr(weight)))
    found = only(diagnoses, "AD120")
    assert found.primary.line == marked_line(source, "RETURN")
    namespace = run_fixed(tmp_path, found.help[0])
    x, w = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True), torch.tensor(weight, requires_grad=True)
    (x @ w).pow(2).sum().backward()
    assert torch.allclose(namespace["w"].grad, w.grad) and torch.allclose(namespace["x"].grad, x.grad)


def test_gradient_of_another_shape_that_is_not_transposed_keeps_the_advice(tmp_path):
    # w is [3, 4] and the gradient [4, 3] would be its transpose, but forward multiplies nothing by w.
    _source, diagnoses = diagnose(tmp_path, """
        import torch


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                return x * w.sum()

            @staticmethod
            def backward(ctx, grad):
                return grad, torch.ones(4, 3)


        Scale.apply(torch.ones(2, requires_grad=True), torch.ones(3, 4, requires_grad=True)).sum().backward()
        """)
    found = only(diagnoses, "AD120")
    assert all(suggestion.location is None for suggestion in found.help)
