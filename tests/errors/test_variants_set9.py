"""The general forms behind held-out set 9's misses (tests/errors/variants, `# set: 9`), each on a
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


def apply_first_concrete(path: str, diagnosis):
    """Apply the diagnosis' first help that changes code, in the file it changes."""
    suggestion = next(s for s in diagnosis.help if s.location is not None)
    with open(suggestion.location.file, encoding="utf-8") as stream:
        changed = apply_suggestion(stream.read(), suggestion)
    with open(suggestion.location.file, "w", encoding="utf-8") as stream:
        stream.write(changed)
    # A helper module changed on disk is imported afresh by the next run.
    sys.modules.pop(os.path.basename(suggestion.location.file)[:-3], None)
    return suggestion


MAIN_WITH_HELPER = """
    import sys
    import torch
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    from {helper} import shift

    weights = [torch.ones(3, requires_grad=True), torch.zeros(2, requires_grad=True)]
    shift(weights, 0.5)
"""


def test_help_in_a_file_that_does_not_import_torch_imports_it(tmp_path):
    # The helper only receives tensors: `with torch.no_grad():` written there needs the import.
    write(tmp_path, textwrap.dedent("""
        def shift(tensors, amount):
            for t in tensors:
                t.add_(amount)
    """), "shift_plain")
    _source, path, diagnoses = diagnose(tmp_path, MAIN_WITH_HELPER.format(helper="shift_plain"))
    diagnosis = next(d for d in diagnoses if d.code == "AD102")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement.splitlines()[:2] == ["import torch", "with torch.no_grad():"]
    error, namespace = run_plain(path)
    assert error is None
    assert torch.equal(namespace["weights"][0], torch.full((3,), 1.5))
    assert torch.equal(namespace["weights"][1], torch.full((2,), 0.5))
    assert all(w.is_leaf and w.requires_grad for w in namespace["weights"])


def test_help_in_a_file_that_imports_torch_under_an_alias_uses_the_alias(tmp_path):
    write(tmp_path, textwrap.dedent("""
        import torch as th


        def shift(tensors, amount):
            for t in tensors:
                t.add_(amount)
    """), "shift_alias")
    _source, path, diagnoses = diagnose(tmp_path, MAIN_WITH_HELPER.format(helper="shift_alias"))
    diagnosis = next(d for d in diagnoses if d.code == "AD102")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement.splitlines()[0] == "with th.no_grad():"
    error, namespace = run_plain(path)
    assert error is None
    assert torch.equal(namespace["weights"][0], torch.full((3,), 1.5))


def test_help_in_a_file_that_imports_torch_is_unchanged(tmp_path):
    write(tmp_path, textwrap.dedent("""
        import torch


        def shift(tensors, amount):
            for t in tensors:
                t.add_(amount)
    """), "shift_torch")
    _source, _path, diagnoses = diagnose(tmp_path, MAIN_WITH_HELPER.format(helper="shift_torch"))
    diagnosis = next(d for d in diagnoses if d.code == "AD102")
    suggestion = next(s for s in diagnosis.help if s.location is not None)
    assert suggestion.replacement.splitlines()[0] == "with torch.no_grad():"


STACKED_LOSSES = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(4, 3)
    losses = torch.stack([(x @ w).pow(2).mean(), (x @ w).abs().mean()])
    losses.backward()
    {after}
"""


def test_stacked_losses_read_by_element_afterwards_are_reduced_only_in_the_backward_call(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, STACKED_LOSSES.format(after="logged = losses.tolist()"))
    diagnosis = next(d for d in diagnoses if d.code == "AD112")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "losses.sum().backward()"
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    x = torch.randn(4, 3)
    first, second = (x @ w).pow(2).mean(), (x @ w).abs().mean()
    (first + second).backward()
    assert torch.allclose(namespace["w"].grad, w.grad)
    assert namespace["logged"] == [first.item(), second.item()]


def test_stacked_losses_read_as_one_number_afterwards_are_reduced_themselves(tmp_path):
    # `.item()` needs one number: the tensor itself is reduced (the rule before set 9, kept).
    _source, path, diagnoses = diagnose(tmp_path, STACKED_LOSSES.format(after="logged = losses.item()"))
    diagnosis = next(d for d in diagnoses if d.code == "AD112")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement.splitlines()[0] == "losses = losses.sum()"
    error, _namespace = run_plain(path)
    assert error is None


FOCAL = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 1), nn.Sigmoid())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 3), torch.tensor([[1.0], [0.0], [1.0], [0.0], [1.0], [1.0]])
    p = model(x)
    {weight_line}
    loss = F.binary_cross_entropy(p, y, weight={weight})
    loss.backward()
"""


def test_a_weight_expression_computed_from_the_trained_model_is_multiplied_in(tmp_path):
    # `(1 - p) ** 2` is no name: the values it reads (p, from the model the optimizer trains) decide.
    _source, path, diagnoses = diagnose(tmp_path, FOCAL.format(weight_line="", weight="(1 - p) ** 2"))
    diagnosis = next(d for d in diagnoses if d.code == "AD140")
    suggestion = apply_first_concrete(path, diagnosis)
    assert "reduction='none'" in suggestion.replacement and ".detach()" not in suggestion.replacement
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Sigmoid())
    x, y = torch.randn(6, 3), torch.tensor([[1.0], [0.0], [1.0], [0.0], [1.0], [1.0]])
    p = model(x)
    (-(1 - p) ** 2 * (y * p.log() + (1 - y) * (1 - p).log())).mean().backward()
    for mine, reference in zip(namespace["model"].parameters(), model.parameters()):
        assert torch.allclose(mine.grad, reference.grad, atol=1e-6)


def test_a_weight_expression_of_untrained_tensors_is_still_detached(tmp_path):
    # Nothing the weight reads is trained by an optimizer: the detached copy stays the first help.
    _source, _path, diagnoses = diagnose(tmp_path, FOCAL.format(
        weight_line="scale = torch.rand(6, 1, requires_grad=True)", weight="scale * 2"))
    diagnosis = next(d for d in diagnoses if d.code == "AD140")
    suggestion = next(s for s in diagnosis.help if s.location is not None)
    assert ".detach()" in suggestion.replacement


DETACH_ROWS = """
    import torch


    def keep_rows(out, kept):
        for row in out:
            kept.append(row.detach_())
            {after}


    torch.manual_seed(0)
    w = torch.randn(3, 2, requires_grad=True)
    out = torch.randn(4, 3) @ w
    kept = []
    keep_rows(out, kept)
    out.sum().backward()
"""


def test_detach_in_place_of_a_view_inside_an_expression_is_made_out_of_place(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, DETACH_ROWS.format(after="pass"))
    diagnosis = next(d for d in diagnoses if d.code == "AD108")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "kept.append(row.detach())"
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(3, 2, requires_grad=True)
    out = torch.randn(4, 3) @ w
    out.sum().backward()
    assert torch.equal(namespace["w"].grad, w.grad)
    assert all(not row.requires_grad for row in namespace["kept"])
    assert torch.equal(torch.stack(namespace["kept"]), out.detach())


def test_detach_in_place_of_a_view_read_again_afterwards_stays_advice(tmp_path):
    # `row` is read after the call: detach() in the expression would leave it attached there.
    _source, _path, diagnoses = diagnose(tmp_path, DETACH_ROWS.format(after="print(row.requires_grad)"))
    diagnosis = next(d for d in diagnoses if d.code == "AD108")
    assert all(s.location is None for s in diagnosis.help)


TWO_OUTPUTS = """
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(4, 3)
    h = x @ w
    first, second = h[:, :2], h[:, 2:]
    grad_first, grad_second = torch.randn(4, 2), torch.randn({rows}, 1)
    torch.autograd.backward([first, second], grad_tensors=[grad_second, grad_first])
"""


def test_gradients_listed_in_another_order_than_their_outputs_are_reordered(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, TWO_OUTPUTS.format(rows=4))
    diagnosis = next(d for d in diagnoses if d.code == "AD123")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement.endswith("grad_tensors=[grad_first, grad_second])")
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(3, 3, requires_grad=True)
    x = torch.randn(4, 3)
    grad_first, grad_second = torch.randn(4, 2), torch.randn(4, 1)
    ((x @ w)[:, :2] * grad_first).sum().backward(retain_graph=True)
    ((x @ w)[:, 2:] * grad_second).sum().backward()
    assert torch.allclose(namespace["w"].grad, w.grad)


def test_gradients_that_fit_in_no_order_are_not_reordered(tmp_path):
    # grad_second has 5 rows: no order of the gradients fits the outputs.
    _source, _path, diagnoses = diagnose(tmp_path, TWO_OUTPUTS.format(rows=5))
    diagnosis = next(d for d in diagnoses if d.code == "AD123")
    assert not any("order of the outputs" in s.message for s in diagnosis.help)


def test_in_place_leaky_relu_function_with_a_negative_slope_is_made_out_of_place(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)
        h = torch.randn(5, 3) @ w
        out = F.leaky_relu_(h, -0.5)  # ACTIVATION
        out.sum().backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD130")
    assert diagnosis.primary.line == marked_line(source, "ACTIVATION")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "out = F.leaky_relu(h, -0.5)"
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(5, 3)
    h = x @ w
    torch.where(h > 0, h, -0.5 * h).sum().backward()
    assert torch.allclose(namespace["w"].grad, w.grad)


def test_deepcopy_after_legacy_spectral_norm_uses_the_parametrization(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import copy
        import torch
        from torch import nn

        torch.manual_seed(0)
        critic = nn.Sequential(nn.utils.spectral_norm(nn.Linear(3, 4)), nn.Tanh(), nn.Linear(4, 1))  # LEGACY
        critic(torch.randn(5, 3)).sum().backward()
        average = copy.deepcopy(critic)
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD303")
    assert diagnosis.primary.line == marked_line(source, "LEGACY")
    suggestion = apply_first_concrete(path, diagnosis)
    assert "nn.utils.parametrizations.spectral_norm(nn.Linear(3, 4))" in suggestion.replacement
    error, namespace = run_plain(path)
    assert error is None
    # The copy holds the same parameters as the original, leaves only.
    original, copied = dict(namespace["critic"].named_parameters()), dict(namespace["average"].named_parameters())
    assert original.keys() == copied.keys() and "0.parametrizations.weight.original" in copied
    assert all(torch.equal(original[name], copied[name]) for name in original)
    # The weight is the original divided by its largest singular value (power iteration, one step per
    # forward: close to the exact value).
    layer = namespace["critic"][0]
    exact = torch.linalg.matrix_norm(layer.parametrizations.weight.original.detach(), ord=2)
    assert torch.allclose(layer.weight.detach(), layer.parametrizations.weight.original.detach() / exact, atol=1e-2)


def test_a_number_saved_for_a_comparison_in_backward_is_saved_as_a_tensor(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class Hinge(torch.autograd.Function):
            @staticmethod
            def forward(ctx, scores, margin):
                ctx.save_for_backward(scores, margin)
                return (margin - scores).clamp_min(0).sum()

            @staticmethod
            def backward(ctx, grad):
                scores, margin = ctx.saved_tensors
                return -grad * (scores < margin).to(scores.dtype), None


        scores = torch.tensor([0.5, 1.5, -0.2], requires_grad=True)
        Hinge.apply(scores, 1.0).backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD122")
    suggestion = apply_first_concrete(path, diagnosis)
    assert "torch.tensor(margin, dtype=torch.float64)" in suggestion.replacement
    error, namespace = run_plain(path)
    assert error is None
    assert torch.equal(namespace["scores"].grad, torch.tensor([-1.0, 0.0, -1.0]))


MESHGRID = """
    import torch

    offset = torch.tensor(0.5, requires_grad=True)
    rows, columns = torch.meshgrid(torch.arange(3.0), torch.arange(4.0), indexing="ij")
    {keep}
    rows += offset
    (rows * columns).sum().backward()
"""


def test_augmented_write_into_a_meshgrid_output_is_rebound_out_of_place(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, MESHGRID.format(keep=""))
    diagnosis = next(d for d in diagnoses if d.code == "AD124")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "rows = rows + offset"
    error, namespace = run_plain(path)
    assert error is None
    rows, columns = torch.meshgrid(torch.arange(3.0), torch.arange(4.0), indexing="ij")
    assert torch.equal(namespace["rows"], rows + 0.5)
    assert namespace["offset"].grad.item() == columns.sum().item()


def test_augmented_write_into_an_expanded_tensor_whose_memory_another_name_holds_stays_advice(tmp_path):
    # `base` holds the memory rows was expanded from: a rebound `rows` would not reach it.
    source = MESHGRID.replace('rows, columns = torch.meshgrid(torch.arange(3.0), torch.arange(4.0), indexing="ij")',
                              "base = torch.arange(3.0)[:, None]\n    rows, columns = torch.broadcast_tensors("
                              "base, torch.ones(3, 4))")
    _source, _path, diagnoses = diagnose(tmp_path, source.format(keep=""))
    diagnosis = next(d for d in diagnoses if d.code == "AD124")
    assert all(s.location is None for s in diagnosis.help)


STATE_DICT_INPUTS = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), {middle}, nn.Linear(4, 1))
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    weights = list(model.state_dict().values())
    loss = F.mse_loss(model(x), y)
    gradients = torch.autograd.grad(loss, weights)
"""


def test_gradients_asked_of_state_dict_values_are_asked_of_the_parameters(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, STATE_DICT_INPUTS.format(middle="nn.Tanh()"))
    diagnosis = next(d for d in diagnoses if d.code == "AD306")
    assert diagnosis.primary.line == source.splitlines().index(
        "weights = list(model.state_dict().values())") + 1
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "weights = list(model.parameters())"
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    x, y = torch.randn(6, 3), torch.randn(6, 1)
    loss = ((model(x) - y) ** 2).mean()
    expected = torch.autograd.grad(loss, list(model.parameters()))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(namespace["gradients"], expected))


def test_state_dict_values_of_a_module_with_buffers_are_not_swapped_for_its_parameters(tmp_path):
    # BatchNorm's running statistics are in state_dict() too: parameters() would pair differently.
    _source, _path, diagnoses = diagnose(tmp_path, STATE_DICT_INPUTS.format(middle="nn.BatchNorm1d(4)"))
    diagnosis = next(d for d in diagnoses if d.code == "AD306")
    assert not any(s.replacement and "parameters()" in s.replacement for s in diagnosis.help)


def test_a_tensor_made_like_a_closed_over_tensor_under_vmap_is_made_like_the_input(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, """
        import torch

        scale = torch.tensor([2.0, 3.0, 4.0])


        def scaled(x):
            out = torch.ones_like(scale)
            out[1:] = x[1:] * scale[1:]
            return out


        result = torch.func.vmap(scaled)(torch.arange(6.0).reshape(2, 3))
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD144")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "out = torch.ones_like(x)"
    error, namespace = run_plain(path)
    assert error is None
    assert torch.equal(namespace["result"], torch.tensor([[1.0, 3.0, 8.0], [1.0, 12.0, 20.0]]))


def test_a_tensor_made_like_a_closed_over_tensor_of_another_shape_is_not_changed(tmp_path):
    # No input has the closed-over tensor's shape: made like the input, the result would change shape.
    _source, _path, diagnoses = diagnose(tmp_path, """
        import torch

        table = torch.zeros(4)


        def scattered(x):
            out = torch.zeros_like(table)
            out[:3] = x
            return out


        result = torch.func.vmap(scattered)(torch.arange(6.0).reshape(2, 3))
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD144")
    assert not any(s.replacement and "zeros_like(x)" in s.replacement for s in diagnosis.help)


def test_a_global_full_backward_hook_registered_in_another_file_before_an_in_place_relu(tmp_path):
    write(tmp_path, textwrap.dedent("""
        from torch.nn.modules.module import register_module_full_backward_hook


        def watch(seen):
            return register_module_full_backward_hook(lambda module, grad_in, grad_out: seen.append(module))  # HOOK
    """), "global_watch")
    source, path, diagnoses = diagnose(tmp_path, """
        import sys
        import torch
        from torch import nn
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from global_watch import watch

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
        seen = []
        handle = watch(seen)
        try:
            model(torch.randn(5, 3)).sum().backward()
        finally:
            handle.remove()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD107")
    assert diagnosis.primary.file == str(tmp_path / "global_watch.py")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))"
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    model(torch.randn(5, 3)).sum().backward()
    for mine, reference in zip(namespace["model"].parameters(), model.parameters()):
        assert torch.equal(mine.grad, reference.grad)
    assert len(namespace["seen"]) == 4  # the hook still sees every module, the Sequential included


SCALE_FUNCTION = """
    import torch


    class ChannelScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x, scale)
            return x * scale{placement}

        @staticmethod
        def backward(ctx, grad):
            x, scale = ctx.saved_tensors
            return grad * scale{placement}, grad * x


    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, requires_grad=True)
    scale = torch.randn({scale_shape}, requires_grad=True)
    ChannelScale.apply(x, scale).pow(2).sum().backward()
"""


def test_the_gradient_of_a_broadcast_input_is_summed_over_the_broadcast_dimensions(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, SCALE_FUNCTION.format(placement="[:, None]", scale_shape="3"))
    diagnosis = next(d for d in diagnoses if d.code == "AD120")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement == "return grad * scale[:, None], (grad * x).sum((0, 2))"
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    x = torch.randn(2, 3, 4, requires_grad=True)
    scale = torch.randn(3, requires_grad=True)
    (x * scale[:, None]).pow(2).sum().backward()
    assert torch.allclose(namespace["scale"].grad, scale.grad, atol=1e-5)
    assert torch.allclose(namespace["x"].grad, x.grad, atol=1e-5)


def test_a_gradient_whose_dimensions_match_the_input_in_two_ways_is_not_summed(tmp_path):
    # scale (4 elements) is broadcast over a [4, 4, 3, 5] result: its size matches dimension 0 and
    # dimension 1, so which ones to sum over is not known and no sum is offered.
    source = SCALE_FUNCTION.replace("torch.randn(2, 3, 4, requires_grad=True)",
                                    "torch.randn(4, 4, 3, 5, requires_grad=True)")
    _source, _path, diagnoses = diagnose(tmp_path, source.format(placement="[:, None, None]", scale_shape="4"))
    diagnosis = next(d for d in diagnoses if d.code == "AD120")
    assert all(s.location is None for s in diagnosis.help)


UNFROZEN_LATER = """
    import torch
    from torch import nn


    def build(model):
        model.requires_grad_(False)
        optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.5)
        {between}
        for p in model[1].parameters():
            p.requires_grad = True
        return optimizer


    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    optimizer = build(model)
    model(torch.ones(4, 3)).sum().backward()
    optimizer.step()
"""


def test_an_optimizer_made_before_its_parameters_are_unfrozen_is_made_after(tmp_path):
    _source, path, diagnoses = diagnose(tmp_path, UNFROZEN_LATER.format(between="pass"))
    diagnosis = next(d for d in diagnoses if d.code == "AD129")
    suggestion = apply_first_concrete(path, diagnosis)
    assert suggestion.replacement.splitlines()[-1].startswith("optimizer = torch.optim.SGD(")
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    first = model[0].weight.detach().clone()
    head = model[1].weight.detach().clone()
    hidden = model[0](torch.ones(4, 3)).detach()
    assert torch.equal(namespace["model"][0].weight, first)  # still frozen
    assert torch.allclose(namespace["model"][1].weight, head - 0.5 * hidden.sum(0, keepdim=True))


def test_an_optimizer_read_before_the_unfreezing_is_not_moved(tmp_path):
    _source, _path, diagnoses = diagnose(tmp_path, UNFROZEN_LATER.format(between="print(optimizer)"))
    diagnosis = next(d for d in diagnoses if d.code == "AD129")
    assert all(s.location is None for s in diagnosis.help)


CACHED_FEATURE = """
    import functools
    import torch

    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    table = torch.randn(4, 3)


    @functools.cache  # CACHE
    def features():
        return torch.tanh(table @ w)


    for _ in range(2):
        loss = features().pow(2).sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad = None
"""


def test_a_tensor_returned_again_by_a_memoised_function_names_the_cache(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, CACHED_FEATURE)
    diagnosis = next(d for d in diagnoses if d.code == "AD302")
    assert diagnosis.primary.line == marked_line(source, "CACHE")
    apply_first_concrete(path, diagnosis)
    error, namespace = run_plain(path)
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    table = torch.randn(4, 3)
    for _ in range(2):
        torch.tanh(table @ w).pow(2).sum().backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad = None
    assert torch.allclose(namespace["w"], w)


def test_a_memoised_function_whose_cache_never_answered_is_not_named(tmp_path):
    # The cache is on another function, called once: the freed graph is the loss's own.
    _source, _path, diagnoses = diagnose(tmp_path, """
        import functools
        import torch

        w = torch.ones(3, requires_grad=True)


        @functools.lru_cache(maxsize=None)
        def size():
            return 3


        loss = (w * size()).exp().sum()
        loss.backward()
        loss.backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD302")
    assert "cache" not in diagnosis.primary.note


def test_a_memoised_function_holding_no_tensor_of_the_freed_graph_is_not_named(tmp_path):
    # The cache answers calls, but what it holds is a number: the freed graph is the loss's own.
    _source, _path, diagnoses = diagnose(tmp_path, """
        import functools
        import torch

        w = torch.ones(3, requires_grad=True)


        @functools.lru_cache(maxsize=None)
        def scale():
            return 2.0


        loss = (w * scale() * scale()).exp().sum()
        loss.backward()
        loss.backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD302")
    assert "cache" not in diagnosis.primary.note
