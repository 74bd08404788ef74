"""The catalogue on variations of its programs: the error raised in another file, inside a
module's forward, through a different spelling of the same call."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
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


def test_inference_mode_block_in_another_file(tmp_path):
    helper = textwrap.dedent("""
        import torch


        def embed(model, batch):
            with torch.inference_mode():  # BLOCK
                return model(batch)
    """)
    write(tmp_path, helper, "features_helper")
    source, path, diagnoses = diagnose(tmp_path, """
        import sys
        import torch
        from torch import nn
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from features_helper import embed

        torch.manual_seed(0)
        backbone, head = nn.Linear(4, 4), nn.Linear(4, 1)
        features = embed(backbone, torch.randn(8, 4))
        loss = head(features).pow(2).mean()
        loss.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD109"
    assert diagnosis.primary.file == str(tmp_path / "features_helper.py")
    assert diagnosis.primary.line == marked_line(helper, "BLOCK")
    assert diagnosis.help[0].replacement == "with torch.no_grad():"


def test_inference_tensor_saved_inside_a_modules_forward(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(4, 1)

            def forward(self, x):
                return self.linear(x).pow(2).mean()


        with torch.inference_mode():  # BLOCK
            features = torch.randn(8, 4) * 2
        Head()(features).backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD109"
    assert diagnosis.primary.line == marked_line(source, "BLOCK")


def test_non_scalar_loss_from_reduction_none(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        criterion = nn.MSELoss(reduction="none")
        loss = criterion(model(torch.randn(5, 3)), torch.zeros(5, 1))
        loss.backward()  # RAISES
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD112" and diagnosis.primary.line == marked_line(source, "RAISES")
    # Losses kept per element: the mean or the sum is the user's choice (set 45), so advice.
    assert all(suggestion.replacement is None for suggestion in diagnosis.help)
    assert "loss.mean()" in diagnosis.help[0].message and "loss.sum()" in diagnosis.help[0].message


def test_non_scalar_through_torch_autograd_backward_gets_no_broken_rewrite(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(3, requires_grad=True)
        torch.autograd.backward(x * 2)  # RAISES
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD112"
    assert all(suggestion.replacement is None for suggestion in diagnosis.help)


def test_numpy_through_np_array(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import numpy as np
        import torch

        x = torch.randn(3, requires_grad=True)
        values = np.array(torch.sigmoid(x))  # RAISES
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD113" and diagnosis.primary.line == marked_line(source, "RAISES")
    assert "detach()" in diagnosis.help[0].message and diagnosis.help[0].replacement is None


def test_non_leaf_from_to_device(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        device = "cpu"
        w = torch.ones(3, requires_grad=True).to(device, torch.float64)  # MADE
        opt = torch.optim.Adam([w], lr=0.1)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD119" and diagnosis.primary.line == marked_line(source, "MADE")
    assert diagnosis.help[0].replacement == "w = (torch.ones(3).to(device, torch.float64)).requires_grad_()"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and namespace["w"].is_leaf and namespace["w"].dtype == torch.float64


def test_missing_gradient_for_an_input_that_needs_one_is_not_filled_with_none(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class Mul(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                ctx.save_for_backward(a, b)
                return a * b

            @staticmethod
            def backward(ctx, grad):
                a, b = ctx.saved_tensors
                return grad * b  # RETURN


        a = torch.randn(3, requires_grad=True)
        b = torch.randn(3, requires_grad=True)
        Mul.apply(a, b).sum().backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD120" and diagnosis.primary.line == marked_line(source, "RETURN")
    assert all(suggestion.replacement is None for suggestion in diagnosis.help)  # b needs its gradient


def test_unused_input_with_keyword_arguments(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.tensor([1.0, 2.0], requires_grad=True)
        z = torch.tensor([3.0, 4.0], requires_grad=True)
        y = (x * x).sum() + z.detach().sum()
        gx, gz = torch.autograd.grad(outputs=y, inputs=[x, z])  # RAISES
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD305" and "z" in diagnosis.primary.note
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.equal(namespace["gx"], torch.tensor([2.0, 4.0])) and torch.equal(namespace["gz"], torch.zeros(2))


def test_nan_from_log_of_zero(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        p = torch.tensor([0.0, 0.5, 1.0], requires_grad=True)
        with torch.autograd.detect_anomaly():
            entropy = -(p * torch.log(p)).sum()  # FORWARD
            entropy.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD118" and diagnosis.primary.line == marked_line(source, "FORWARD")
    assert diagnosis.help[0].replacement == "entropy = -(p * torch.log(p.clamp_min(1e-12))).sum()"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    p = torch.tensor([0.0, 0.5, 1.0])
    # d/dp of -p * log(max(p, eps)): -log(max(p, eps)) - p / p where not clamped, the first term alone where clamped
    expected = -(torch.log(p.clamp_min(1e-12)) + (p > 1e-12).float())
    assert torch.allclose(namespace["p"].grad, expected)


def test_model_built_under_inference_mode_then_trained(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        with torch.inference_mode():  # BLOCK
            model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
            model.eval()
        model.train()
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD109" and diagnosis.primary.line == marked_line(source, "BLOCK")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and all(p.grad is not None for p in namespace["model"].parameters())


def test_optimizer_step_on_parameters_loaded_under_inference_mode(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        with torch.inference_mode():  # BLOCK
            weights = torch.ones(3) * 0.5
        weights.add_(torch.ones(3))  # WRITE
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD110" and diagnosis.primary.line == marked_line(source, "WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["inference_mode"] == marked_line(source, "BLOCK")
    assert diagnosis.help[0].replacement == "weights = weights.add(torch.ones(3))"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and torch.equal(namespace["weights"], torch.full((3,), 1.5))


def test_empty_grad_inputs_from_a_filter_that_matched_nothing(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        decay = [p for n, p in model.named_parameters() if "weights" in n]  # MADE
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward(inputs=decay)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD135"
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert any('"weights" in n' in note for note in diagnosis.notes)
    assert diagnosis.help[0].location is None  # advice: the right filter is the user's to choose


def test_parameter_group_added_later_names_the_shared_parameters(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)  # MADE
        opt.add_param_group({"params": model[1].parameters(), "lr": 0.01})  # ADDED
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD132"
    # The line to change is the constructor's group (it skips model[1]'s parameters); the added
    # group's line says which parameters both groups hold.
    assert diagnosis.primary.line == marked_line(source, "MADE")
    added = next(r for r in diagnosis.related if r.line == marked_line(source, "ADDED"))
    assert "model.1.weight, model.1.bias" in added.note
    assert 'if not name.startswith("1.")' in diagnosis.help[0].replacement


def test_resize_of_a_leaf_suggests_a_new_leaf(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.zeros(3, requires_grad=True)
        w.resize_(6)  # RESIZE
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD133"
    assert diagnosis.primary.line == marked_line(source, "RESIZE")
    assert "w.detach().new_zeros(3)" in diagnosis.help[0].message


def test_resize_that_shrinks_keeps_the_first_elements(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        h = x * 3
        h.resize_(2)  # RESIZE
        h.sum().backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD133"
    fixed = apply_suggestion(source, diagnosis.help[0])
    error, namespace = run_plain(write(tmp_path, fixed, "fixed"))
    assert error is None, fixed
    assert torch.equal(namespace["x"].grad, torch.tensor([3.0, 3.0, 0.0, 0.0]))


def test_apply_on_a_computed_tensor_is_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.ones(3, requires_grad=True)
        y = (x * 2).map_(torch.ones(3), lambda a, b: a + b)  # MAP
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD134"
    assert diagnosis.primary.line == marked_line(source, "MAP")
    assert diagnosis.help[0].location is None


# ---- the catalogue's newer entries on other spellings -------------------------------------------


def test_grad_of_a_tensor_made_non_leaf_by_arithmetic(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        x = torch.randn(6, 2)
        y = x.sum(1)
        w = torch.randn(2, requires_grad=True) * 0.01  # MADE
        for _ in range(3):
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w.sub_(0.5 * w.grad.clone())
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert diagnosis.help[0].replacement == "w = (torch.randn(2) * 0.01).requires_grad_()"
    fixed = apply_suggestion(source, diagnosis.help[0])
    error, namespace = run_plain(write(tmp_path, fixed, "fixed"))
    assert error is None and namespace["w"].is_leaf and namespace["w"].grad is not None


def test_grad_of_a_tensor_moved_with_to_then_zeroed(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.ones(3, requires_grad=True)
        w = w.to("cpu", torch.float64)  # MADE
        (w * w).sum().backward()
        w.grad.zero_()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert diagnosis.help[0].replacement == 'w = w.to("cpu", torch.float64).detach().requires_grad_()'
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and torch.equal(namespace["w"].grad, torch.zeros(3, dtype=torch.float64))


def test_grad_of_an_activation_stored_on_the_module_gets_retain_grad_where_it_is_made(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.query = nn.Linear(4, 4)

            def forward(self, x):
                self.scores = (self.query(x) @ x.T).softmax(-1)  # MADE
                return self.scores @ x


        torch.manual_seed(0)
        model = Attention()
        x = torch.randn(5, 4)
        loss = model(x).pow(2).sum()
        loss.backward()
        saliency = model.scores.grad.abs().sum(0)  # READ
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert [loc.line for loc in diagnosis.related] == [marked_line(source, "READ")]
    assert diagnosis.help[0].replacement.endswith("\nself.scores.retain_grad()")
    fixed = apply_suggestion(source, diagnosis.help[0])
    error, namespace = run_plain(write(tmp_path, fixed, "fixed"))
    assert error is None
    # The oracle: the gradient of the same loss with respect to the same intermediate result.
    torch.manual_seed(0)
    model = namespace["Attention"]()
    x = torch.randn(5, 4)
    out = model(x)
    expected = torch.autograd.grad(out.pow(2).sum(), model.scores)[0]
    assert torch.equal(namespace["saliency"], expected.abs().sum(0))
    assert torch.equal(namespace["model"].query.weight.grad,
                       torch.autograd.grad(model(x).pow(2).sum(), model.query.weight)[0])


def test_grad_of_a_named_hidden_state_gets_retain_grad_after_its_assignment(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(1)
        encoder, head = nn.Linear(3, 6), nn.Linear(6, 1)
        x = torch.randn(8, 3)
        hidden = torch.tanh(encoder(x))  # MADE
        loss = head(hidden).mean()
        loss.backward()
        norm = hidden.grad.norm(dim=1)  # READ
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert diagnosis.help[0].replacement == "hidden = torch.tanh(encoder(x))\nhidden.retain_grad()"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    hidden = torch.tanh(namespace["encoder"](namespace["x"]))
    expected = torch.autograd.grad(namespace["head"](hidden).mean(), hidden)[0]
    assert torch.equal(namespace["norm"], expected.norm(dim=1))


def test_grad_of_a_copy_of_a_named_leaf_keeps_the_make_it_a_leaf_help(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w0 = torch.ones(3, requires_grad=True)
        w = w0.double()  # MADE
        (w * w).sum().backward()
        step = 0.1 * w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    assert "retain_grad" not in (diagnosis.help[0].replacement or "")
    assert diagnosis.help[0].replacement == "w = w0.double().detach().requires_grad_()"


COMPLEX_SQUARED_ERROR = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    net = nn.Linear(6, 12)
    x = torch.randn(5, 6)
    target = torch.randn(5, 6, dtype=torch.complex64)
    out = net(x)
    spectrum = torch.complex(out[:, :6], out[:, 6:])
    loss = ((spectrum - target) ** 2).sum()  # MADE
    loss.backward()  # BACKWARD
    grads = [p.grad.clone() for p in net.parameters()]
"""


def test_a_complex_loss_is_named_complex_and_its_square_becomes_a_squared_magnitude(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, COMPLEX_SQUARED_ERROR)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD112"]
    assert diagnosis.title == "backward() was called on a complex tensor: a loss must be real"
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert [loc.line for loc in diagnosis.related] == [marked_line(source, "BACKWARD")]
    assert diagnosis.help[0].replacement == "loss = ((spectrum - target).abs() ** 2).sum()"
    assert diagnosis.help[0].changes_failing_value
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    # The reference: the squared error of complex values written out on real and imaginary parts.
    torch.manual_seed(0)
    net = torch.nn.Linear(6, 12)
    x = torch.randn(5, 6)
    target = torch.randn(5, 6, dtype=torch.complex64)
    out = net(x)
    difference = torch.complex(out[:, :6], out[:, 6:]) - target
    (difference.real ** 2 + difference.imag ** 2).sum().backward()
    for got, expected in zip(namespace["grads"], [p.grad for p in net.parameters()]):
        assert torch.allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_a_complex_loss_without_a_square_gets_advice_only(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, COMPLEX_SQUARED_ERROR.replace(
        "((spectrum - target) ** 2).sum()", "(spectrum * target.conj()).sum()"))
    (diagnosis,) = [d for d in diagnoses if d.code == "AD112"]
    assert "complex" in diagnosis.title
    assert [s.replacement for s in diagnosis.help] == [None]
    assert "which one you minimise is yours to choose" in diagnosis.help[0].message


def test_autograd_grad_of_a_vector_is_worded_for_autograd_grad(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(4, requires_grad=True)
        y = x.sin()
        (slope,) = torch.autograd.grad(y, x)  # GRAD
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD112"]
    assert diagnosis.title.startswith("torch.autograd.grad() was called")
    assert "backward()" not in diagnosis.primary.note + " ".join(diagnosis.notes)
    # y has the shape of x (one output per input element): the slope of each element is asked for,
    # which grad_outputs=torch.ones_like(y) gives (a mean would divide it by 4).
    assert diagnosis.help[0].replacement == "(slope,) = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y))"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.allclose(namespace["slope"], namespace["x"].detach().cos())


def test_autograd_grad_of_a_vector_shaped_unlike_its_input_stays_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(4, requires_grad=True)
        y = torch.stack([x.sum(), x.prod(), x.max()])
        (slope,) = torch.autograd.grad(y, x)  # GRAD
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD112"]
    # Three outputs of four inputs: which combination of their gradients is meant (sum, mean, one
    # of them) only the user can tell, so the help changes nothing.
    assert [s.replacement for s in diagnosis.help] == [None]
    assert "y.sum()" in diagnosis.help[0].message and "grad_outputs=torch.ones_like(y)" in diagnosis.help[0].message


def test_optimizing_a_slice_of_a_leaf_gets_a_leaf_copy_of_the_slice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        table = torch.randn(5, 3, requires_grad=True)
        rows = table[1:4]  # MADE
        optimizer = torch.optim.SGD([rows], lr=0.1)
        for _ in range(3):
            loss = (rows.sum(1) - 1.0).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        trained = rows.detach().clone()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD119"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert diagnosis.help[0].replacement == "rows = table[1:4].detach().clone().requires_grad_()"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    torch.manual_seed(0)
    rows = torch.randn(5, 3)[1:4].clone().requires_grad_()
    optimizer = torch.optim.SGD([rows], lr=0.1)
    for _ in range(3):
        loss = (rows.sum(1) - 1.0).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert torch.equal(namespace["trained"], rows.detach())


def test_optimizing_another_computation_of_a_leaf_keeps_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        log_scale = torch.zeros(3, requires_grad=True)
        scale = log_scale.exp()
        optimizer = torch.optim.SGD([scale], lr=0.1)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD119"]
    assert not any(s.replacement for s in diagnosis.help)


def test_requires_grad_copied_from_another_tensor_onto_a_computed_one(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        def to_device(tensor, device):
            moved = tensor.to(device)
            moved.requires_grad = tensor.requires_grad  # FLAG
            return moved


        torch.manual_seed(0)
        layer, head = nn.Linear(3, 4), nn.Linear(4, 1)
        x = torch.randn(5, 3)
        loss = head(to_device(layer(x), "cpu")).pow(2).mean()
        loss.backward()
        grads = [p.grad.clone() for p in layer.parameters()]
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD115"]
    assert diagnosis.primary.line == marked_line(source, "FLAG")
    assert "switch it off" not in " ".join(diagnosis.notes)  # the value was True when it failed
    assert diagnosis.help[0].replacement == "moved.requires_grad_(tensor.requires_grad)"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    torch.manual_seed(0)
    layer, head = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)
    x = torch.randn(5, 3)
    head(layer(x)).pow(2).mean().backward()
    assert all(torch.equal(a, p.grad) for a, p in zip(namespace["grads"], layer.parameters()))
    # On a leaf (a tensor that does not require grad), the changed line does what the original did.
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0])
                                       + "leaf = to_device(x, 'cpu')\n", "leaf"))
    assert error is None and not namespace["leaf"].requires_grad and namespace["leaf"].is_leaf


def test_none_grad_of_a_leaf_and_other_none_errors_get_no_leaf_diagnosis(tmp_path):
    for body in ("w = torch.ones(3, requires_grad=True)\nprint(0.1 * w.grad)",
                 "settings = None\nprint(settings.lr)"):
        source = "import torch\n" + body + "\n"
        error = run_watched(write(tmp_path, source, "program"))
        assert isinstance(error, (TypeError, AttributeError))
        assert not [d for d in autograd_doctor.diagnoses_of(error) if d.code == "AD308"]


def test_backward_inside_vmap_is_explained(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import vmap

        x = torch.randn(2, 3, requires_grad=True)


        def per_sample(sample):
            loss = (sample ** 2).sum()
            loss.backward()  # RAISES
            return sample.grad


        vmap(per_sample)(x)
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD141" and diagnosis.primary.line == marked_line(source, "RAISES")
    assert "torch.func.grad" in diagnosis.help[0].message and "vmap" in diagnosis.primary.note


def test_requires_grad_inside_grad_transform_is_explained(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import grad


        def loss_fn(w):
            w.requires_grad_()  # RAISES
            return (w ** 2).sum()


        grad(loss_fn)(torch.ones(3))
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD141" and diagnosis.primary.line == marked_line(source, "RAISES")


def test_autograd_grad_of_a_loss_from_intermediate_values_gets_no_rewrite(tmp_path):
    """torch.func.grad(lambda x: loss)(x) would see a loss that no longer depends on x."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import vmap

        x = torch.randn(2, 3, requires_grad=True)


        def per_sample(sample):
            h = sample.tanh()
            loss = (h ** 2).sum()
            return torch.autograd.grad(loss, sample)[0]  # RAISES


        vmap(per_sample)(x)
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD141" and diagnosis.primary.line == marked_line(source, "RAISES")
    assert all(s.replacement is None for s in diagnosis.help)


def test_non_differentiable_target_given_by_position(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        scores = torch.randn(4, 3, requires_grad=True)
        teacher = torch.randn(4, 3, requires_grad=True)
        loss = F.soft_margin_loss(scores, teacher.sign())  # RAISES
        loss.backward()
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD140" and diagnosis.primary.line == marked_line(source, "RAISES")
    assert diagnosis.help[0].replacement == "loss = F.soft_margin_loss(scores, teacher.sign().detach())"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and namespace["teacher"].grad is None
    y = namespace["teacher"].detach().sign()
    s = namespace["scores"].detach()
    expected = -y * torch.sigmoid(-y * s) / s.numel()  # d/ds mean(log(1 + exp(-y s)))
    assert torch.allclose(namespace["scores"].grad, expected, atol=1e-6)


def test_cross_entropy_class_weights_that_require_grad(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        logits = torch.randn(5, 3, requires_grad=True)
        class_weight = torch.ones(3, requires_grad=True)
        loss = F.cross_entropy(logits, torch.tensor([0, 1, 2, 1, 0]), weight=class_weight)  # RAISES
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD140" and diagnosis.primary.line == marked_line(source, "RAISES")
    assert diagnosis.help[0].replacement.endswith("weight=class_weight.detach())")


def test_chunk_piece_written_through_a_sibling_then_used(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(4, 2, requires_grad=True)
        h = x.exp()
        rows = h.unbind(0)
        top = rows[0]
        h[1:] *= 2  # WRITE
        top.sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD138"]
    assert diagnosis.primary.line == marked_line(source, "WRITE")


def test_detach_in_place_inside_a_modules_forward(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Gate(nn.Module):
            def forward(self, x):
                g = torch.sigmoid(x)
                out = g * x
                g.detach_()  # DETACH
                return out


        x = torch.randn(3, requires_grad=True)
        Gate()(x).sum().backward()
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD139" and diagnosis.primary.line == marked_line(source, "DETACH")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    x = namespace["x"].detach()
    assert error is None
    assert torch.allclose(namespace["x"].grad, torch.sigmoid(x) * (1 + x * (1 - torch.sigmoid(x))))


def test_mark_dirty_function_applied_to_a_parameter(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Clip(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x.clamp_(-1, 1)

            @staticmethod
            def backward(ctx, grad):
                return grad


        layer = nn.Linear(2, 2)
        out = Clip.apply(layer.weight)  # APPLY
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD137" and diagnosis.primary.line == marked_line(source, "APPLY")
    assert diagnosis.help[0].replacement == "out = Clip.apply(layer.weight.clone())"


def test_requires_grad_set_true_on_a_computed_tensor_becomes_requires_grad_(tmp_path):
    # A feature encoder that turns the flag on for its input: a leaf when it is fed raw audio, a
    # computed tensor (which requires grad already) behind a trainable front end.
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        torch.manual_seed(0)

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv1d(1, 2, 3)

            def forward(self, audio):
                hidden = audio[:, None]
                hidden.requires_grad = True  # FLAG
                return self.conv(hidden)

        front_end, encoder = nn.Linear(8, 8), Encoder()
        raw = torch.randn(2, 8)
        loss = encoder(front_end(raw)).pow(2).mean() + encoder(raw).mean()
        loss.backward()
        result = [loss.detach(), front_end.weight.grad, encoder.conv.weight.grad]
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD115" and diagnosis.primary.line == marked_line(source, "FLAG")
    assert "already requires grad" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement == "hidden.requires_grad_(True)"
    fixed = write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed")
    reference = write(tmp_path, source.replace("hidden.requires_grad = True  # FLAG",
                                               "if hidden.is_leaf:\n            hidden.requires_grad = True"),
                      "reference")
    (error, got), (reference_error, want) = run_plain(fixed), run_plain(reference)
    assert error is None and reference_error is None
    assert all(torch.equal(a, b) for a, b in zip(got["result"], want["result"]))


def test_a_shape_change_in_place_on_unbind_outputs_in_a_comprehension_becomes_out_of_place(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        w = torch.randn(3, 1, 4, requires_grad=True)
        rows = [row.squeeze_(0) for row in (w * 2).unbind(0)]  # WRITE
        loss = sum((r ** 2).sum() for r in rows)
        loss.backward()
        grad = w.grad.clone()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD104"]
    assert diagnosis.primary.line == marked_line(source, "WRITE")
    assert diagnosis.help[0].replacement == "rows = [row.squeeze(0) for row in (w * 2).unbind(0)]"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.equal(namespace["grad"], 8 * namespace["w"].detach())  # d/dw sum((2w)^2) = 8w


def test_a_shape_change_in_place_on_a_chunk_output_statement_rebinds_the_name(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        x = torch.randn(4, 6, requires_grad=True)
        left, right = (x + 1).chunk(2, dim=1)
        left.t_()  # WRITE
        loss = (left @ right).sum()
        loss.backward()
        grad = x.grad.clone()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD104"]
    assert diagnosis.primary.line == marked_line(source, "WRITE")
    assert diagnosis.help[0].replacement == "left = left.t()"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    x = namespace["x"].detach().clone().requires_grad_()
    left, right = (x + 1).chunk(2, dim=1)
    (left.t() @ right).sum().backward()
    assert torch.equal(namespace["grad"], x.grad)


def test_a_shape_change_in_place_on_a_view_read_again_elsewhere_is_not_rewritten(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(2, 1, 3, requires_grad=True)
        parts = (x * 1).unbind(0)
        first = parts[0].squeeze_(0)
        print(parts[0].shape)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD104"]
    assert all(s.replacement is None for s in diagnosis.help)


def test_a_batch_norm_module_mapped_by_vmap_gets_a_batch_of_one(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        from torch.func import vmap

        torch.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).eval()
        images = torch.randn(5, 2, 7, 7)
        features = vmap(net)(images)  # MAP
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD145"]
    assert diagnosis.primary.line == marked_line(source, "MAP")
    assert "module written for a batch" in diagnosis.title
    assert diagnosis.help[0].replacement == "features = vmap(lambda sample: net(sample[None])[0])(images)"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    # In eval mode nothing couples the examples: mapping over them gives the batched forward's values.
    with torch.no_grad():
        expected = namespace["net"](namespace["images"])
    assert torch.allclose(namespace["features"], expected, rtol=1e-5, atol=1e-6)


def test_per_example_jacobians_of_a_batch_norm_model_under_vmap(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        from torch.func import jacrev, vmap

        torch.manual_seed(1)
        net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2, track_running_stats=False))
        x = torch.randn(3, 1, 5, 5)
        jac = vmap(jacrev(net))(x)  # MAP
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD145"]
    assert diagnosis.help[0].replacement == "jac = vmap(jacrev(lambda sample: net(sample[None])[0]))(x)"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    net, x = namespace["net"], namespace["x"]
    for i in range(3):
        expected = torch.autograd.functional.jacobian(lambda sample: net(sample[None])[0], x[i])
        assert torch.allclose(namespace["jac"][i], expected, rtol=1e-5, atol=1e-6)


def test_grad_scaler_update_that_does_not_run_every_iteration_is_named(tmp_path):
    """AD150 when the loop does call update(), but not after every step: no line is added
    (the update is there), the update that did not run is named, and the help is advice."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        model = torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        for i in range(4):
            optimizer.zero_grad()
            scaler.scale(F.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))).backward()
            scaler.step(optimizer)  # STEP
            if i % 2 == 1:
                scaler.update()  # UPDATE
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD150"
    assert diagnosis.primary.line == marked_line(source, "STEP")
    assert [location.line for location in diagnosis.related] == [marked_line(source, "UPDATE")]
    assert diagnosis.help[0].replacement is None
    assert "after every scaler.step()" in diagnosis.help[0].message


def test_grad_scaler_unscale_after_step_inside_a_training_function(tmp_path):
    """AD149 in a function, with two clipping calls after the unscale_: all three move before
    the step, and the changed program trains."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F


        def train(model, optimizer, scaler, batches):
            for x, y in batches:
                optimizer.zero_grad()
                scaler.scale(F.mse_loss(model(x), y)).backward()
                scaler.step(optimizer)
                scaler.unscale_(optimizer)  # UNSCALE
                torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
                scaler.update()


        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        train(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.amp.GradScaler("cpu"),
              [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)])
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD149"
    assert diagnosis.primary.line == marked_line(source, "UNSCALE")
    help_ = diagnosis.help[0]
    assert help_.replacement.splitlines() == [
        "scaler.unscale_(optimizer)  # UNSCALE",
        "torch.nn.utils.clip_grad_value_(model.parameters(), 1.0)",
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)",
        "scaler.step(optimizer)",
    ]
    changed = apply_suggestion(source, help_)



def test_backward_of_per_element_losses_names_both_reductions_and_chooses_none(tmp_path):
    """AD112 on losses made with reduction="none": the mean (the loss function's default) and the
    sum (gradients, and an SGD step, N times larger) train differently, and the program does not
    show which one is meant (set 45's report reduced with .sum(), sets 8 and 17 with .mean()): the
    help is advice naming both."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(3, 2)
        criterion = nn.CrossEntropyLoss(reduction="none")
        x, labels = torch.randn(8, 3), torch.randint(0, 2, (8,))
        loss = criterion(model(x), labels)
        loss.backward()  # BACKWARD
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD112"
    help_ = diagnosis.help[0]
    assert help_.replacement is None
    assert "loss.mean()" in help_.message and "loss.sum()" in help_.message and "8 times larger" in help_.message


def test_backward_of_losses_made_with_reduction_none_in_a_functional_call(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        w = torch.ones(3, requires_grad=True)
        x, y = torch.randn(5, 3), torch.randn(5)
        errors = F.l1_loss(x @ w, y, reduction="none")
        errors.backward()
    """)
    help_ = diagnoses[0].help[0]
    assert help_.replacement is None and "errors.mean()" in help_.message and "errors.sum()" in help_.message


def test_backward_of_a_non_scalar_that_is_no_loss_still_sums(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.linspace(0, 1, 5, requires_grad=True)
        u = torch.sin(x)
        u.backward()
    """)
    assert diagnoses[0].help[0].replacement == "u.sum().backward()"


def test_empty_parameters_with_a_plain_list_of_modules_without_parameters_keeps_the_advice(tmp_path):
    # The activations in the plain list hold no parameters: wrapping them would change nothing, so
    # the list is not named as the cause.
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.activations = [nn.ReLU(), nn.Tanh()]


        net = Net()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)  # RAISES
    """)
    (diagnosis,) = diagnoses
    assert diagnosis.code == "AD129" and diagnosis.primary.line == marked_line(source, "RAISES")
    assert all(suggestion.replacement is None for suggestion in diagnosis.help)


SPARSE_GRADIENT_PROGRAM = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    embedding = nn.Embedding(6, 2, sparse=True)
    optimizer = torch.optim.SGD(embedding.parameters(), lr=0.1)
    noise = torch.full((6, 2), 0.01)
    for ids in (torch.tensor([1, 2]), torch.tensor([2, 5])):
        optimizer.zero_grad()
        embedding(ids).pow(2).sum().backward()
        for p in embedding.parameters():
            {combine}  # PRIMARY
        optimizer.step()
"""


@pytest.mark.parametrize("combine, replacement", [
    ("p.grad.add_(noise)", "p.grad = p.grad.to_dense().add_(noise)"),
    ("p.grad += noise", "p.grad = p.grad.to_dense() + noise"),
    ("p.grad = torch.add(p.grad, noise)", "p.grad = torch.add(p.grad.to_dense(), noise)"),
])
def test_noise_added_to_a_sparse_gradient_in_every_spelling_reaches_the_gradient(tmp_path, combine, replacement):
    source, path, diagnoses = diagnose(tmp_path, SPARSE_GRADIENT_PROGRAM.format(combine=combine))
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD152"
    assert diagnosis.primary.line == marked_line(source, "PRIMARY")
    assert diagnosis.help[0].replacement == replacement
    error, fixed = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    # The reference: the noise added to the dense gradient, by hand.
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(6, 2, sparse=True)
    for ids in (torch.tensor([1, 2]), torch.tensor([2, 5])):
        embedding.zero_grad()
        embedding(ids).pow(2).sum().backward()
        with torch.no_grad():
            embedding.weight -= 0.1 * (embedding.weight.grad.to_dense() + 0.01)
    assert torch.equal(fixed["embedding"].weight.detach(), embedding.weight.detach())


def test_a_bce_weight_that_nothing_trains_is_detached_first(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        model, weigher = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(4, 3), torch.tensor([[1.0], [0.0], [1.0], [0.0]])
        loss = F.binary_cross_entropy(torch.sigmoid(model(x)), y, weight=torch.sigmoid(weigher(x)))
        loss.backward()
    """)
    assert diagnoses[0].code == "AD140"
    assert diagnoses[0].help[0].replacement.endswith("weight=torch.sigmoid(weigher(x)).detach())")


def test_a_bce_weight_made_by_trained_parameters_is_multiplied_out(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F

        torch.manual_seed(0)
        model, weigher = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
        optimizer = torch.optim.SGD([*model.parameters(), *weigher.parameters()], lr=0.1)
        x, y = torch.randn(4, 3), torch.tensor([[1.0], [0.0], [1.0], [0.0]])
        w = torch.sigmoid(weigher(x))
        loss = F.binary_cross_entropy(torch.sigmoid(model(x)), y, weight=w, reduction="sum")
        loss.backward()
        optimizer.step()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD140"
    assert diagnosis.help[0].replacement == \
        "loss = (F.binary_cross_entropy(torch.sigmoid(model(x)), y, reduction='none') * w).sum()"
    error, fixed = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    # The same value as the weighted loss, and the weigher now learns: its gradient by hand.
    torch.manual_seed(0)
    model, weigher = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
    x, y = torch.randn(4, 3), torch.tensor([[1.0], [0.0], [1.0], [0.0]])
    p, w = torch.sigmoid(model(x)), torch.sigmoid(weigher(x))
    unreduced = -(y * p.log() + (1 - y) * (1 - p).log())
    assert torch.allclose(fixed["loss"], (unreduced * w.detach()).sum())
    expected_weigher_grad = ((unreduced * w * (1 - w)).detach().T @ x)
    assert torch.allclose(fixed["weigher"].weight.detach(), weigher.weight.detach() - 0.1 * expected_weigher_grad,
                          atol=1e-6)


def test_scaler_update_in_another_method_is_named_not_doubled(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F


        class Loop:
            def __init__(self):
                self.model = torch.nn.Linear(3, 1)
                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
                self.scaler = torch.amp.GradScaler("cpu")

            def step(self, x, y):
                self.optimizer.zero_grad()
                self.scaler.scale(F.mse_loss(self.model(x), y)).backward()
                self.scaler.step(self.optimizer)  # PRIMARY

            def end_of_epoch(self):
                self.scaler.update()  # UPDATE


        loop = Loop()
        for _ in range(2):
            loop.step(torch.randn(4, 3), torch.randn(4, 1))
        loop.end_of_epoch()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD150"
    assert diagnosis.primary.line == marked_line(source, "PRIMARY")
    assert [location.line for location in diagnosis.related if location.role == "update"] == \
        [marked_line(source, "UPDATE")]
    assert [help.location for help in diagnosis.help] == [None]


def test_a_gradient_of_another_shape_with_the_same_count_is_not_reshaped(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.randn(2, 3, requires_grad=True)
        g = torch.ones(3, 2)
        w.grad = g
    """)
    assert diagnoses[0].code == "AD131"
    assert all(help.replacement is None for help in diagnoses[0].help)


def test_no_grad_method_of_a_model_held_by_a_trainer_is_the_cut(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 3)

            @torch.no_grad()  # PRIMARY
            def features(self, x):
                return torch.tanh(self.proj(x))

            def forward(self, x):
                return self.features(x).sum(dim=1)


        class Trainer:
            def __init__(self, model):
                self.model = model
                self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

            def training_step(self, x, y):
                self.optimizer.zero_grad()
                loss = F.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()


        torch.manual_seed(0)
        model = Encoder()
        x, y = torch.randn(4, 4), torch.randn(4)
        Trainer(model).training_step(x, y)
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD307")
    assert diagnosis.primary.line == marked_line(source, "PRIMARY")
    error, fixed = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    torch.manual_seed(0)
    reference = torch.nn.Linear(4, 3)
    x, y = torch.randn(4, 4), torch.randn(4)
    torch.nn.functional.mse_loss(torch.tanh(reference(x)).sum(dim=1), y).backward()
    assert torch.allclose(fixed["model"].proj.weight.detach(), reference.weight.detach() - 0.1 * reference.weight.grad)


def test_deepcopy_of_an_object_whose_list_holds_appended_losses(tmp_path):
    """AD303: the loss is put into `self.history` by append(); the append is detached (the empty
    list has no detach()), and the copy then holds the same value."""
    source, path, diagnoses = diagnose(tmp_path, """
        import copy
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Tracker:
            def __init__(self):
                self.history = []

            def log(self, loss):
                self.history.append(loss)  # APPEND


        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        tracker = Tracker()
        loss = F.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))
        loss.backward()
        tracker.log(loss)
        snapshot = copy.deepcopy(tracker)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD303"
    first = diagnosis.help[0]
    assert first.location.line == marked_line(source, "APPEND")
    assert first.replacement == "self.history.append(loss.detach())"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, first), "fixed"))
    assert error is None
    assert torch.equal(namespace["snapshot"].history[0], namespace["loss"].detach())
    assert not any(".detach()" in (h.replacement or "") and "[]" in (h.replacement or "") for h in diagnosis.help)


def test_per_sample_losses_given_to_torch_autograd_backward(tmp_path):
    """AD112 for torch.autograd.backward(losses): losses kept per element, as for
    losses.backward(): advice naming the mean and the sum."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
        losses = F.cross_entropy(model(x), y, reduction="none")
        torch.autograd.backward(losses)  # RAISES
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD112"
    assert diagnosis.primary.line == marked_line(source, "RAISES")
    assert diagnosis.help[0].replacement is None
    assert "losses.mean()" in diagnosis.help[0].message and "losses.sum()" in diagnosis.help[0].message


def test_labels_written_as_numbers_are_not_where_the_path_was_cut(tmp_path):
    """A no_grad helper reached through a lambda: AD307 names its decorator, and AD301 does not
    blame `torch.tensor([0, 2])` (labels written in the code never had a graph; torch.stack of
    numbers would not even run)."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F


        @torch.no_grad()  # DECORATOR
        def logits_of(model, x):
            return model(x)


        model = nn.Linear(3, 2)
        score = lambda batch: logits_of(model, batch)
        x, y = torch.randn(2, 3), torch.tensor([0, 1])
        loss = F.cross_entropy(score(x), y)
        loss.backward()
    """)
    by_code = {d.code: d for d in diagnoses}
    assert by_code["AD307"].primary.line == marked_line(source, "DECORATOR")
    assert not any("torch.stack" in (h.replacement or "") for d in diagnoses for h in d.help)


def test_numpy_mean_of_a_list_of_losses(tmp_path):
    """AD113 for np.mean(history), history a list of losses that require grad: NumPy gets the
    detached elements (the same mean), the list itself is left alone."""
    source, path, diagnoses = diagnose(tmp_path, """
        import numpy as np
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        history = []
        for _ in range(2):
            loss = F.mse_loss(model(torch.randn(3, 4)), torch.randn(3, 1))
            history.append(loss)
        mean = np.mean(history)  # RAISES
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD113"
    assert diagnosis.primary.line == marked_line(source, "RAISES")
    assert diagnosis.help[0].replacement == "mean = np.mean([t.detach() for t in history])"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    expected = sum(loss.item() for loss in namespace["history"]) / 2
    assert abs(float(namespace["mean"]) - expected) < 1e-6
    assert all(loss.requires_grad for loss in namespace["history"])


def test_grad_of_an_argument_the_caller_made_without_requires_grad(tmp_path):
    """AD306 for an attack that asks for the gradient of its `images` argument: a copy that
    requires grad is made before its first use; the adversarial batch equals FGSM written out."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Attack:
            def __init__(self, model, eps):
                self.model, self.eps = model, eps

            def __call__(self, images, labels):
                loss = F.cross_entropy(self.model(images), labels)  # FIRST USE
                grad, = torch.autograd.grad(loss, images)
                return images + self.eps * grad.sign()


        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        images, labels = torch.rand(2, 4), torch.tensor([0, 2])
        adversarial = Attack(model, 0.1)(images, labels)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD306"
    first = diagnosis.help[0]
    assert first.location.line == marked_line(source, "FIRST USE")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, first), "fixed"))
    assert error is None
    model, images = namespace["model"], namespace["images"]
    x = images.clone().requires_grad_()
    torch.nn.functional.cross_entropy(model(x), namespace["labels"]).backward()
    assert torch.allclose(namespace["adversarial"].detach(), images + 0.1 * x.grad.sign())
    assert not images.requires_grad


def test_nan_from_a_root_written_as_a_power(tmp_path):
    """AD118 when the square root is spelled .pow(0.5) (pairwise distances, zero on the diagonal):
    the base is clamped as for sqrt, and the gradients are finite and equal to the clamped sqrt's."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        torch.autograd.set_detect_anomaly(True)
        model = nn.Linear(3, 2)
        emb = model(torch.randn(4, 3))
        dist = (emb.unsqueeze(0) - emb.unsqueeze(1)).pow(2).sum(-1).pow(0.5)  # ROOT
        dist.mean().backward()
    """)
    torch.autograd.set_detect_anomaly(False)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD118"
    assert diagnosis.primary.line == marked_line(source, "ROOT")
    assert ".sum(-1).clamp_min(1e-12).pow(0.5)" in diagnosis.help[0].replacement
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    torch.autograd.set_detect_anomaly(False)
    assert error is None
    torch.manual_seed(0)
    reference = torch.nn.Linear(3, 2)
    emb = reference(torch.randn(4, 3))
    (emb.unsqueeze(0) - emb.unsqueeze(1)).pow(2).sum(-1).clamp_min(1e-12).sqrt().mean().backward()
    assert torch.isfinite(namespace["model"].weight.grad).all()
    assert torch.allclose(namespace["model"].weight.grad, reference.weight.grad)


def test_filter_of_parameters_kept_on_self_and_counted_before_the_optimizer(tmp_path):
    """AD129 for self.trainable = filter(...) used up by a count before the optimizer reads it:
    the class's assignment becomes a list, and the optimizer then trains the parameters."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Trainer:
            def __init__(self, model):
                self.trainable = filter(lambda p: p.requires_grad, model.parameters())  # MADE
                self.count = sum(1 for _ in self.trainable)
                self.optimizer = torch.optim.SGD(self.trainable, lr=0.1)


        model = nn.Linear(3, 1)
        trainer = Trainer(model)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD129"
    assert diagnosis.primary.line == marked_line(source, "MADE")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    trainer, model = namespace["trainer"], namespace["model"]
    assert trainer.count == 2
    assert trainer.optimizer.param_groups[0]["params"] == list(model.parameters())


def test_resize_with_sizes_read_from_the_tensor_reshapes_with_the_sizes_as_written(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        w = torch.randn(2, 3, 2, requires_grad=True)
        h = w * 2
        h.resize_(h.shape[0], h.numel() // h.shape[0])  # RESIZE
        h.sum().backward()
        grad = w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD133"]
    assert diagnosis.primary.line == marked_line(source, "RESIZE")
    # The sizes as the user wrote them, so the change holds for another batch size too.
    assert diagnosis.help[0].replacement == "h = h.reshape(h.shape[0], h.numel() // h.shape[0])"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and namespace["h"].shape == (2, 6)
    assert torch.equal(namespace["grad"], torch.full((2, 3, 2), 2.0))


def test_backward_gradient_one_unit_dimension_apart_is_reshaped_like_the_output(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        scores = (torch.randn(5, 3) @ w).unsqueeze(1)
        weights = torch.linspace(0.0, 1.0, 5)
        scores.backward(gradient=weights * 2)  # BACKWARD
        grad = w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD123"]
    assert diagnosis.help[0].replacement == "scores.backward(gradient=(weights * 2).reshape_as(scores))"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    features = torch.randn(5, 3)
    assert torch.allclose(namespace["grad"], features.T @ (torch.linspace(0.0, 1.0, 5) * 2))


def test_backward_gradient_of_the_same_count_in_another_arrangement_stays_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.randn(2, 3, requires_grad=True)
        out = w * 2
        out.backward(gradient=torch.randn(3, 2))
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD123"]
    # [3, 2] for a [2, 3] output: which gradient element goes with which output element is not known.
    assert [s.replacement for s in diagnosis.help] == [None]


def test_unscale_in_a_while_loop_over_parameter_chunks_moves_before_it(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        params = list(model.parameters())
        loss = model(torch.randn(5, 3)).pow(2).mean()
        scaler.scale(loss).backward()
        start = 0
        while start < len(params):
            scaler.unscale_(optimizer)  # UNSCALE
            torch.nn.utils.clip_grad_norm_(params[start:start + 2], 0.1)
            start += 2
        scaler.step(optimizer)
        scaler.update()
        weight = model[0].weight.detach().clone()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD148"]
    assert diagnosis.primary.line == marked_line(source, "UNSCALE")
    assert diagnosis.help[0].replacement.splitlines()[:2] == ["scaler.unscale_(optimizer)", "while start < len(params):"]
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 1))
    model(torch.randn(5, 3)).pow(2).mean().backward()
    params = list(model.parameters())
    torch.nn.utils.clip_grad_norm_(params[0:2], 0.1)
    torch.nn.utils.clip_grad_norm_(params[2:4], 0.1)
    torch.optim.SGD(model.parameters(), lr=0.1).step()
    assert torch.allclose(namespace["weight"], model[0].weight.detach())


def test_unscale_in_a_loop_that_also_backpropagates_is_not_moved_before_it(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        for i in range(4):
            loss = model(torch.randn(2, 3)).pow(2).mean()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD148"]
    # Each pass adds gradients: the unscale_ belongs after the last backward(), not before the loop.
    assert not any(s.replacement and s.replacement.startswith("scaler.unscale_(optimizer)\nfor")
                   for s in diagnosis.help)


def test_step_outside_an_update_condition_without_zero_grad_is_not_moved(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        for i in range(4):
            optimizer.zero_grad()
            scaler.scale(model(torch.randn(2, 3)).pow(2).mean()).backward()
            scaler.step(optimizer)
            if i % 2 == 1:
                scaler.update()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD150"]
    # No gradient accumulation under the condition: stepping less often is not known to be meant.
    assert all(s.replacement is None for s in diagnosis.help)


def test_unscale_of_the_stepped_optimizer_is_kept_when_its_own_parameters_are_clipped(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model, other = nn.Linear(3, 1), nn.Linear(3, 1)
        opt, opt_other = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(other.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        x = torch.randn(2, 3)
        scaler.scale(model(x).pow(2).mean() + other(x).pow(2).mean()).backward()
        scaler.step(opt)
        scaler.unscale_(opt)  # UNSCALE
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt_other)
        scaler.update()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD149"]
    # The clipping is of opt's own parameters: a clip after its step, moved before it as in the catalogue.
    assert "opt_other" not in (diagnosis.help[0].replacement or "").splitlines()[0]


def test_save_for_backward_of_a_float_used_outside_arithmetic_keeps_the_ctx_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        class Repeat(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, times):
                ctx.save_for_backward(x, times)
                return x * times

            @staticmethod
            def backward(ctx, grad):
                x, times = ctx.saved_tensors
                return sum(grad for _ in range(times)), None

        x = torch.randn(3, requires_grad=True)
        Repeat.apply(x, 2).sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD122"]
    # range(times) needs a Python int: a tensor would not do, so nothing is rewritten.
    assert all(s.replacement is None for s in diagnosis.help)


def test_save_for_backward_of_a_float_scale_is_saved_as_a_float64_tensor(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, factor):
                ctx.save_for_backward(x, factor)  # SAVE
                return x * factor

            @staticmethod
            def backward(ctx, grad):
                x, factor = ctx.saved_tensors
                return grad * factor, None

        x = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        Scale.apply(x, 0.1).sum().backward()
        grad = x.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD122"]
    assert diagnosis.primary.line == marked_line(source, "SAVE")
    assert diagnosis.help[0].replacement == "ctx.save_for_backward(x, torch.tensor(factor, dtype=torch.float64))"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.equal(namespace["grad"], torch.ones(3) * 0.1)


def test_dirty_function_given_a_transposed_view_whose_base_is_read_later_is_not_copied(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        class ReluMask(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                mask = x > 0
                x.mul_(mask)
                ctx.mark_dirty(x)
                ctx.mark_non_differentiable(mask)
                ctx.save_for_backward(mask)
                return x, mask

            @staticmethod
            def backward(ctx, grad, grad_mask):
                mask, = ctx.saved_tensors
                return grad * mask

        w = torch.randn(2, 3, requires_grad=True)
        h = w * 1.5
        out, mask = ReluMask.apply(h.t())
        total = out.sum() + h.sum()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD147"]
    # h's values are read after the call (h.sum()): with a copy they would not be rectified.
    assert all(s.replacement is None for s in diagnosis.help)


def test_dirty_function_given_a_slice_made_in_the_call_gets_a_copy(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        class ReluMask(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                mask = x > 0
                x.mul_(mask)
                ctx.mark_dirty(x)
                ctx.mark_non_differentiable(mask)
                ctx.save_for_backward(mask)
                return x, mask

            @staticmethod
            def backward(ctx, grad, grad_mask):
                mask, = ctx.saved_tensors
                return grad * mask

        w = torch.tensor([[1.0, -2.0, 3.0], [-1.0, 2.0, -3.0]], requires_grad=True)
        h = w * 1.5
        out, mask = ReluMask.apply(h[:, 1:])  # APPLY
        out.sum().backward()
        grad = w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD147"]
    assert diagnosis.help[0].replacement == "out, mask = ReluMask.apply(h[:, 1:].clone())"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.equal(namespace["grad"], torch.tensor([[0.0, 0.0, 1.5], [0.0, 1.5, 0.0]]))


def test_traced_function_calling_a_module_through_an_attribute_is_named_at_the_trace(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Holder:
            def __init__(self):
                self.net = nn.Linear(3, 1)

            def score(self, x):
                return torch.sigmoid(self.net(x))


        holder = Holder()
        traced = torch.jit.trace(holder.score, torch.randn(2, 3))  # TRACE
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD143"]
    assert diagnosis.primary.line == marked_line(source, "TRACE")
    assert "torch.jit.trace(self.net" in diagnosis.help[0].message


def test_checkpointed_forward_counting_its_calls_is_named_at_the_branch_without_a_change(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        from torch.utils.checkpoint import checkpoint


        class Warmup(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)
                self.calls = 0

            def forward(self, x):
                self.calls += 1
                if self.calls == 1:  # BRANCH
                    return torch.tanh(self.lin(x)) * 2
                return self.lin(x)


        block = Warmup()
        checkpoint(block, torch.randn(2, 3), use_reentrant=False).sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD125"]
    assert diagnosis.primary.line == marked_line(source, "BRANCH")
    # A counter, not a cache: what the block should do on later calls is the user's to say.
    assert all(s.replacement is None for s in diagnosis.help)


def test_traced_function_that_only_calls_a_module_traces_the_module(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)


        def predict(x):
            return model(x)


        x = torch.randn(2, 3)
        traced = torch.jit.trace(predict, x)  # TRACE
        traced(x).sum().backward()
        grad = model.weight.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD143"]
    assert diagnosis.primary.line == marked_line(source, "TRACE")
    assert diagnosis.help[0].replacement == "traced = torch.jit.trace(model, x)"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.equal(namespace["grad"], namespace["x"].sum(0, keepdim=True))


@pytest.mark.parametrize("wrap", ["nn.DataParallel(Encoder())", "Wrapper(Encoder())", "Encoder()"])
def test_no_grad_on_the_forward_of_a_wrapped_module_is_the_decorator_cut(tmp_path, wrap):
    source, path, diagnoses = diagnose(tmp_path, f"""
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 2)

            @torch.no_grad()  # DECORATOR
            def forward(self, x):
                return self.lin(x)


        class Wrapper(nn.Module):
            def __init__(self, module):
                super().__init__()
                self.module = module

            def forward(self, *args):
                return self.module(*args)


        torch.manual_seed(0)
        model = {wrap}
        x, y = torch.randn(4, 3), torch.randn(4, 2)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        grad = next(model.parameters()).grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD307"]
    assert diagnosis.primary.line == marked_line(source, "DECORATOR")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    x, y, weight, bias = namespace["x"], namespace["y"], *[p.detach() for p in namespace["model"].parameters()]
    expected = 2.0 / y.numel() * ((x @ weight.T + bias) - y).T @ x
    assert torch.allclose(namespace["grad"], expected, atol=1e-6)


def test_no_grad_forward_of_a_teacher_is_not_blamed_when_a_trained_student_feeds_the_loss(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F


        class Teacher(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 2)

            @torch.no_grad()
            def forward(self, x):
                return self.lin(x)


        student, teacher = nn.Linear(3, 2), Teacher()
        x = torch.randn(4, 3)
        loss = F.mse_loss(student(x).detach(), teacher(x))
        loss.backward()
    """)
    # The student's output is cut by detach(): the teacher's decorator is not the cause.
    assert "AD307" not in [d.code for d in diagnoses]


# Set 6's rules (tests/errors/variants, `# set: 6`) on other spellings, and the cases each must leave alone.

def test_grad_norms_summed_over_a_generator_expression_skip_frozen_parameters(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
        model[0].weight.requires_grad_(False)
        model(torch.randn(5, 3)).pow(2).mean().backward()
        total = sum(p.grad.pow(2).sum() for p in model.parameters()) ** 0.5  # READ
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD309"]
    assert diagnosis.primary.line == marked_line(source, "READ")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    trained = [p for p in namespace["model"].parameters() if p.requires_grad]
    assert torch.allclose(namespace["total"], sum(p.grad.pow(2).sum() for p in trained) ** 0.5)


def test_grad_of_activation_stored_by_a_lambda_hook_is_not_moved_to_a_clearing_store(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        kept = {}
        model[0].register_forward_hook(lambda m, i, o: kept.__setitem__("a", o))
        kept["a"] = None
        model(torch.randn(2, 3)).sum().backward()
        features = kept["a"]
        print(features.grad * 2)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    # The tensor is stored by a hook written as a lambda (no `kept["a"] = ...` statement for it)
    # and `kept["a"] = None` is not where it came from: the help stays where it is read.
    assert "kept[\"a\"] = None" not in (diagnosis.primary.source or "")


def test_leaky_relu_with_two_computed_inplace_flags_is_left_to_the_user(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        config = {"a": True, "b": False}
        torch.manual_seed(0)
        first = nn.LeakyReLU(-0.2, inplace=config["a"])
        second = nn.LeakyReLU(-0.2, inplace=config["b"])
        x = torch.randn(4, requires_grad=True)
        second(first(x * 2)).sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD130"]
    # Which of the two ran in place is not written in the code: no line is changed.
    assert all(suggestion.location is None for suggestion in diagnosis.help)


def test_list_given_to_save_for_backward_is_not_starred_when_backward_unpacks_another_count(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward([x, w])
                return x * w

            @staticmethod
            def backward(ctx, grad):
                x, w, extra = ctx.saved_tensors
                return grad * w, grad * x


        x = torch.randn(3, requires_grad=True)
        Scale.apply(x, torch.tensor(2.0)).sum().backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD122"]
    assert not any(suggestion.replacement and "*" in suggestion.replacement for suggestion in diagnosis.help)


def test_optimizer_helper_given_one_tensor_by_keyword_is_changed_at_the_caller(tmp_path):
    helper = textwrap.dedent("""
        import torch


        def make_optimizer(parameters, lr):
            return torch.optim.SGD(parameters, lr=lr)
    """)
    write(tmp_path, helper, "optim_helper")
    source, path, diagnoses = diagnose(tmp_path, """
        import sys
        import torch
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from optim_helper import make_optimizer

        w = torch.zeros(3, requires_grad=True)
        optimizer = make_optimizer(parameters=w, lr=0.5)  # CALL
        (w - 1).pow(2).sum().backward()
        optimizer.step()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD128"]
    assert diagnosis.primary.file == path and diagnosis.primary.line == marked_line(source, "CALL")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.allclose(namespace["w"], torch.ones(3))  # one step of lr 0.5 on (w - 1)^2 from 0


def test_backward_in_a_transformed_function_returning_something_else_is_not_deleted(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import grad


        def loss_fn(x):
            loss = (x ** 2).sum()
            loss.backward()
            return loss * 2


        grad(loss_fn)(torch.randn(3))
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD141"]
    assert diagnosis.help[0].location is None


def test_loss_module_weight_computed_by_a_trained_head_is_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model, weigher = nn.Linear(3, 1), nn.Linear(3, 1)
        optimizer = torch.optim.SGD([*model.parameters(), *weigher.parameters()], lr=0.1)
        x, y = torch.randn(4, 3), torch.ones(4, 1)
        criterion = nn.BCELoss(weight=torch.sigmoid(weigher(x)))
        loss = criterion(torch.sigmoid(model(x)), y)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD140"]
    # The optimizer trains what computes the weight: detaching it would change what is learned.
    assert all(suggestion.location is None for suggestion in diagnosis.help)


def test_empty_inputs_of_autograd_grad_through_tuple_of_a_used_up_generator(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        params = model.parameters()  # MADE
        x = torch.randn(4, 3)
        first = torch.autograd.grad(model(x).sum(), tuple(params))
        second = torch.autograd.grad(model(x).pow(2).sum(), tuple(params))
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD135"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert len(namespace["second"]) == 2


def test_detach_in_place_of_a_named_view_used_as_a_value_is_not_rewritten(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.randn(4, 3, requires_grad=True)
        y = x * 2
        row = y[0]
        kept = row.detach_()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD108"]
    # `row` itself would be detached by detach_(): detach() would leave row attached, another meaning.
    assert all(suggestion.location is None for suggestion in diagnosis.help)


def test_hook_on_a_result_of_two_tensors_you_made_does_not_pick_one(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        a, b = torch.randn(3), torch.randn(3)
        product = a * b
        product.register_hook(print)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD116"]
    # Which of a and b should require grad is the user's choice: no input is changed first.
    assert diagnosis.help[0].location is None


def test_loss_module_on_self_given_an_untrained_weight_is_detached_in_its_class(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        prior = nn.Linear(1, 3)


        class Trainer:
            def __init__(self, model):
                self.model = model
                self.criterion = nn.CrossEntropyLoss(weight=torch.softmax(prior(torch.ones(1, 1)), 1)[0])  # MADE
                self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

            def step(self, x, y):
                self.optimizer.zero_grad()
                loss = self.criterion(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                return loss


        trainer = Trainer(nn.Linear(4, 3))
        loss = trainer.step(torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]))
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD140"]
    assert diagnosis.primary.line == marked_line(source, "MADE")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert namespace["prior"].weight.grad is None  # the prior is constant for the loss, as the help says


def test_hook_registered_in_a_forward_hook_of_a_frozen_model_asks_for_the_input_gradient(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        model.requires_grad_(False)
        grads = {}


        def keep(module, inputs, output):
            output.register_hook(lambda g: grads.update(features=g))


        model[1].register_forward_hook(keep)
        image = torch.randn(1, 6)
        score = model(image)[0, 1]  # CALL
        score.backward()
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD116"]
    assert diagnosis.help[0].location.line == marked_line(source, "CALL")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    # The gradient of the score with respect to the ReLU's output is the last layer's weight row.
    assert torch.allclose(namespace["grads"]["features"], namespace["model"][2].weight[1:2])


def test_grad_of_an_attribute_cleared_in_init_is_kept_where_the_hook_stores_it(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class GradCam:
            def __init__(self, layer):
                self.activations = None
                layer.register_forward_hook(self.save)

            def save(self, module, inputs, output):
                self.activations = output  # STORE


        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        cam = GradCam(model[1])
        model(torch.randn(1, 6))[0, 1].backward()
        weights = cam.activations.grad.mean(0)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD308"]
    assert diagnosis.primary.line == marked_line(source, "STORE")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    assert torch.allclose(namespace["weights"], namespace["model"][2].weight[1].detach())


# ---- set 7's causes, on other spellings, and the cases each change must leave alone ----------


def _fixed_namespace(tmp_path, source, suggestion):
    fixed = apply_suggestion(source, suggestion)
    error, namespace = run_plain(write(tmp_path, fixed, "fixed"))
    assert error is None, fixed
    return namespace


def test_mark_dirty_function_returning_torch_clamp_of_its_input_writes_it_in_place(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class ClampInPlace(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return torch.clamp(x, min=0.0)  # RETURN

            @staticmethod
            def backward(ctx, grad):
                return grad


        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        out = ClampInPlace.apply(w * 2)
        out.sum().backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD121" and diagnosis.primary.line == marked_line(source, "RETURN")
    assert diagnosis.help[0].replacement == "return x.clamp_(min=0.0)"
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["out"].detach(), torch.tensor([1.0, 0.0, 4.0]))
    assert torch.equal(namespace["w"].grad, torch.full((3,), 2.0))


def test_grad_of_a_detached_copy_in_a_list_differentiates_the_tensor_itself(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        a = torch.tensor([1.0, 2.0], requires_grad=True)
        b = torch.tensor([3.0, 4.0], requires_grad=True)
        loss = (a * b).sum()
        ga, gb = torch.autograd.grad(loss, [a, b.detach().requires_grad_()])  # GRAD
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD305" and diagnosis.primary.line == marked_line(source, "GRAD")
    assert diagnosis.help[0].replacement == "ga, gb = torch.autograd.grad(loss, [a, b])"
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["ga"], torch.tensor([3.0, 4.0]))
    assert torch.equal(namespace["gb"], torch.tensor([1.0, 2.0]))


def test_grad_of_a_fresh_tensor_gets_no_copy_help(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        a = torch.tensor([1.0, 2.0], requires_grad=True)
        loss = (a * 2).sum()
        g, = torch.autograd.grad(loss, [torch.ones(2, requires_grad=True).clone()])
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD305"
    assert not any("itself" in h.message for h in diagnosis.help)


def test_optional_saved_tensor_unpacked_when_forward_saved_it_in_one_branch(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class Affine(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale, shift=None):
                if shift is None:
                    ctx.save_for_backward(x, scale)
                    return x * scale
                ctx.save_for_backward(x, scale, shift)
                return x * scale + shift

            @staticmethod
            def backward(ctx, grad):
                x, scale, shift = ctx.saved_tensors  # UNPACK
                return grad * scale, (grad * x).sum(), grad.sum() if shift is not None else None


        x = torch.tensor([1.0, 2.0])
        scale = torch.tensor(3.0, requires_grad=True)
        shift = torch.tensor(0.5, requires_grad=True)
        Affine.apply(x, scale, shift).sum().backward()
        Affine.apply(x, scale).sum().backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD142" and diagnosis.primary.line == marked_line(source, "UNPACK")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["scale"].grad, torch.tensor(6.0))
    assert torch.equal(namespace["shift"].grad, torch.tensor(2.0))


def test_hand_written_gradient_from_torch_mm_in_the_transposed_layout_is_transposed(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        weight = torch.randn(2, 3, requires_grad=True)
        x = torch.randn(4, 3)
        out = x @ weight.T
        reference, = torch.autograd.grad(out.sum(), weight, retain_graph=True)
        weight.grad = torch.mm(x.t(), torch.ones_like(out))  # ASSIGN
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD131" and diagnosis.primary.line == marked_line(source, "ASSIGN")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.allclose(namespace["weight"].grad, namespace["reference"])


def test_gradient_of_reversed_sizes_that_is_not_a_product_is_not_transposed(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        weight = torch.randn(2, 3, requires_grad=True)
        weight.grad = torch.zeros(3, 2)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD131"
    assert all(h.replacement is None for h in diagnosis.help)


def test_overlapping_operand_of_an_in_place_multiply_is_cloned(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.arange(1.0, 5.0)
        x[1:].mul_(x[:-1])  # WRITE
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD203")
    assert diagnosis.primary.line == marked_line(source, "WRITE")
    clone = next(h for h in diagnosis.help if h.replacement and ".clone()" in h.replacement)
    assert clone.replacement == "x[1:].mul_(x[:-1].clone())"
    namespace = _fixed_namespace(tmp_path, source, clone)
    assert torch.equal(namespace["x"], torch.tensor([1.0, 2.0, 6.0, 12.0]))


def test_item_writes_under_vmap_after_a_constant_item_find_the_factory(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import vmap


        def features(x):
            out = torch.zeros(2)  # MADE
            out[0] = 1.0
            out[1] = x.sum()
            return out


        batched = vmap(features)(torch.arange(6.0).reshape(3, 2))
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD144" and diagnosis.primary.line == marked_line(source, "MADE")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["batched"], torch.tensor([[1.0, 1.0], [1.0, 5.0], [1.0, 9.0]]))


def test_grad_over_list_of_partly_frozen_parameters_asks_for_the_trained_ones(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
        model[1].bias.requires_grad_(False)
        x = torch.randn(4, 3)
        loss = model(x).pow(2).mean()
        grads = torch.autograd.grad(loss, list(model.parameters()))  # GRAD
        norm = sum(g.pow(2).sum() for g in grads)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD306" and diagnosis.primary.line == marked_line(source, "GRAD")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    model = namespace["model"]
    trained = [p for p in model.parameters() if p.requires_grad]
    reference = torch.autograd.grad(model(namespace["x"]).pow(2).mean(), trained)
    assert len(namespace["grads"]) == 3
    assert all(torch.allclose(a, b) for a, b in zip(namespace["grads"], reference))


def test_grad_over_frozen_parameters_zipped_with_them_gets_no_filter(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        model.bias.requires_grad_(False)
        loss = model(torch.randn(4, 3)).sum()
        grads = torch.autograd.grad(loss, model.parameters())
        fast = [p - 0.1 * g for p, g in zip(model.parameters(), grads)]
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD306"
    assert not any(h.replacement and "requires_grad]" in h.replacement for h in diagnosis.help)


def test_resize_bound_to_a_new_name_while_the_old_one_is_read_later_is_not_rewritten(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.ones(2, 3, requires_grad=True)
        h = x * 2
        flat = h.resize_(6)
        total = flat.sum() + h.sum()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD133"
    assert not any(h.replacement and h.replacement.startswith("flat =") for h in diagnosis.help)


def test_vmap_code_indexing_a_row_first_is_not_rewritten_from_the_end(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch.func import vmap


        def first_pair(x):
            return x[0, 1] * 2


        values = vmap(first_pair)(torch.ones(3, 2))
    """)
    diagnosis = next((d for d in diagnoses if d.code == "AD145"), None)
    assert diagnosis is None or not any(h.replacement and "..." in h.replacement for h in diagnosis.help)


def test_scaler_update_under_a_verbose_flag_moves_out_of_the_condition(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        verbose = False
        printed = []
        for step in range(3):
            optimizer.zero_grad()
            loss = F.mse_loss(model(torch.ones(2, 3) * step), torch.ones(2, 1))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            if verbose or step == 0:
                printed.append(loss.item())
                scaler.update()  # UPDATE
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD150" and diagnosis.primary.line == marked_line(source, "UPDATE")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert namespace["printed"] and len(namespace["printed"]) == 1
    assert namespace["scaler"]._scale is None or namespace["scaler"].get_scale() > 0


def test_dataclass_field_given_positionally_is_detached_at_the_constructor(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import copy
        from dataclasses import dataclass

        import torch


        @dataclass
        class Record:
            value: torch.Tensor
            step: int


        w = torch.tensor([1.0, 2.0], requires_grad=True)
        loss = (w * 3).sum()
        record = Record(loss, 0)  # STORED
        saved = copy.deepcopy(record)
        loss.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD303"
    assert diagnosis.help[0].location.line == marked_line(source, "STORED")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert namespace["saved"].value.item() == 9.0 and torch.equal(namespace["w"].grad, torch.full((2,), 3.0))


def test_dataclass_field_that_is_backpropagated_is_not_detached(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import copy
        from dataclasses import dataclass

        import torch


        @dataclass
        class Output:
            loss: torch.Tensor


        w = torch.tensor([1.0, 2.0], requires_grad=True)
        out = Output(loss=(w * 3).sum())
        saved = copy.deepcopy(out)
        out.loss.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD303"
    assert not any(h.replacement and ".detach()" in h.replacement and "Output(" in h.replacement
                   for h in diagnosis.help)


def test_model_left_in_eval_mode_by_an_evaluation_function_is_put_back_in_training(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 1)

            def forward(self, x):
                with torch.set_grad_enabled(self.training):
                    return self.lin(x)


        def evaluate(model, x):
            model.eval()  # EVAL
            return model(x).sum().item()


        torch.manual_seed(0)
        model = Net()
        x = torch.randn(4, 3)
        score = evaluate(model, x)
        loss = model(x).pow(2).mean()
        loss.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD301" and diagnosis.primary.line == marked_line(source, "EVAL")
    assert diagnosis.help[0].replacement == "model.train()\nreturn model(x).sum().item()"
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    model = namespace["model"]
    expected = 2 * (model(namespace["x"]).detach()).T @ namespace["x"] / 4
    assert torch.allclose(model.lin.weight.grad, expected)


def test_unscale_after_the_first_of_two_backward_calls_is_deleted(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        x = torch.randn(4, 3)
        optimizer.zero_grad()
        scaler.scale(model(x).pow(2).mean()).backward()
        scaler.unscale_(optimizer)  # FIRST
        scaler.scale(model(x).abs().mean()).backward()
        scaler.unscale_(optimizer)
        grads = [p.grad.clone() for p in model.parameters()]
        scaler.step(optimizer)
        scaler.update()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD148" and diagnosis.primary.line == marked_line(source, "FIRST")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    torch.manual_seed(0)
    reference = nn_linear = torch.nn.Linear(3, 1)
    x = torch.randn(4, 3)
    (nn_linear(x).pow(2).mean() + nn_linear(x).abs().mean()).backward()
    assert all(torch.allclose(a, p.grad) for a, p in zip(namespace["grads"], reference.parameters()))


def test_frozen_parameters_in_a_named_list_zipped_with_the_gradients_are_filtered_where_listed(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
        model[0].weight.requires_grad_(False)
        x = torch.randn(4, 3)
        params = list(model.parameters())  # LISTED
        loss = model(x).pow(2).mean()
        grads = torch.autograd.grad(loss, params)
        fast = [p - 0.1 * g for p, g in zip(params, grads)]
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD306" and diagnosis.primary.line == marked_line(source, "LISTED")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    model, x = namespace["model"], namespace["x"]
    trained = [p for p in model.parameters() if p.requires_grad]
    reference = torch.autograd.grad(model(x).pow(2).mean(), trained)
    assert all(torch.allclose(f, p - 0.1 * g) for f, p, g in zip(namespace["fast"], trained, reference))


def test_grad_of_a_detached_copy_made_earlier_asks_for_the_tensor_itself(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        x = torch.randn(4, 3)
        loss = model(x).sum()
        w = model.weight.detach()
        g, = torch.autograd.grad(loss, [w])  # GRAD
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD306" and diagnosis.primary.line == marked_line(source, "GRAD")
    assert diagnosis.help[0].replacement == "g, = torch.autograd.grad(loss, [model.weight])"
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.allclose(namespace["g"], namespace["x"].sum(0, keepdim=True))


def test_overlapping_augmented_assignment_clones_its_value(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        x = torch.arange(5.0)
        x[1:] += x[:-1]  # WRITE
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD203")
    clone = next(h for h in diagnosis.help if h.replacement and ".clone()" in h.replacement)
    assert clone.replacement == "x[1:] += x[:-1].clone()"
    namespace = _fixed_namespace(tmp_path, source, clone)
    assert torch.equal(namespace["x"], torch.tensor([0.0, 1.0, 3.0, 5.0, 7.0]))


def test_model_put_in_eval_mode_at_the_top_of_a_script_is_put_back_before_the_step(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 1)

            def forward(self, x):
                with torch.set_grad_enabled(self.training):
                    return self.lin(x)


        torch.manual_seed(0)
        model = Model()
        x = torch.randn(2, 3)
        model.eval()  # EVAL
        baseline = model(x).sum().item()
        loss = model(x).sum()
        loss.backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD301" and diagnosis.primary.line == marked_line(source, "EVAL")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.allclose(namespace["model"].lin.weight.grad, namespace["x"].sum(0, keepdim=True))


def test_mark_dirty_of_an_input_forward_only_copies_is_deleted(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class AddOne(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)  # MARK
                y = x.clone()
                y.add_(1)
                return y

            @staticmethod
            def backward(ctx, grad):
                return grad


        w = torch.ones(3, requires_grad=True)
        out = AddOne.apply(w * 2)
        out.sum().backward()
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD121" and diagnosis.primary.line == marked_line(source, "MARK")
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    assert torch.equal(namespace["out"].detach(), torch.full((3,), 3.0))
    assert torch.equal(namespace["w"].grad, torch.full((3,), 2.0))


def test_dimension_out_of_range_under_vmap_is_counted_from_the_end(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        import torch.nn.functional as F
        from torch.func import jacrev, vmap


        def probabilities(logits):
            return F.softmax(logits, dim=1)  # DIM


        logits = torch.randn(4, 3)
        jacobians = vmap(jacrev(probabilities))(logits)
    """)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD145"
    assert diagnosis.help[0].replacement == "return F.softmax(logits, dim=-1)"
    namespace = _fixed_namespace(tmp_path, source, diagnosis.help[0])
    first = torch.autograd.functional.jacobian(lambda v: torch.softmax(v, dim=0), namespace["logits"][0])
    assert torch.allclose(namespace["jacobians"][0], first)


def test_overlapping_slice_assignment_clones_its_value(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        buf = torch.arange(6.0)
        buf[:-1] = buf[1:]
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD203")
    clone = next(h for h in diagnosis.help if h.replacement and ".clone()" in h.replacement)
    assert clone.replacement == "buf[:-1] = buf[1:].clone()"
    namespace = _fixed_namespace(tmp_path, source, clone)
    assert torch.equal(namespace["buf"], torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 5.0]))


# Set 8's causes, on other spellings (the held-out variants themselves are in test_held_out_variants.py).

def _first_change_runs_like(tmp_path, source, diagnosis, reference_source, names):
    """The diagnosis's first concrete change applied: the program runs and its values named in
    `names` equal those of the reference program written by hand."""
    concrete = [h for h in diagnosis.help if h.location is not None]
    assert concrete, diagnosis.help
    error, fixed = run_plain(write(tmp_path, apply_suggestion(source, concrete[0]), "fixed"))
    assert error is None, error
    reference_error, reference = run_plain(write(tmp_path, textwrap.dedent(reference_source), "reference"))
    assert reference_error is None
    for name in names:
        ours, theirs = fixed[name], reference[name]
        pairs = zip(ours, theirs) if isinstance(theirs, list) else [(ours, theirs)]
        assert len(ours) == len(theirs) if isinstance(theirs, list) else True, name
        assert all(torch.allclose(torch.as_tensor(a), torch.as_tensor(b)) for a, b in pairs), name


def test_retain_grad_on_a_list_item_of_split_pieces_is_rewritten_into_the_list(tmp_path):
    # AD104 through a list (the container is known from the live frame, not from a string key).
    body = """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)
        out = torch.randn(5, 3) @ w
        pieces = list(out.split(2, dim=-1))
        {write}
        loss = (pieces[0] * pieces[1]).sum()
        loss.backward()
        grad = w.grad
    """
    source, path, diagnoses = diagnose(tmp_path, body.format(write="pieces[1].sigmoid_()  # WRITE"))
    diagnosis = next(d for d in diagnoses if d.code == "AD104")
    assert diagnosis.help[0].replacement == "pieces[1] = pieces[1].sigmoid()"
    _first_change_runs_like(tmp_path, source, diagnosis, body.format(write="pieces[1] = pieces[1].sigmoid()"),
                            ["loss", "grad"])


def test_context_binding_with_both_branches_off_is_not_swapped(tmp_path):
    # AD301: swapping is only offered when exactly one branch turns gradients off.
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        model = torch.nn.Linear(3, 1)
        fast = True
        context = torch.no_grad() if fast else torch.inference_mode()
        with context:
            loss = model(torch.randn(2, 3)).sum()
            loss.backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD301")
    assert not any(h.replacement and " if fast else " in h.replacement for h in diagnosis.help)


def test_context_binding_with_a_negated_condition_is_swapped(tmp_path):
    body = """
        import contextlib
        import torch
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        x = torch.randn(4, 3)


        def run(evaluating):
            {binding}
            with context:
                loss = model(x).pow(2).mean()
                if not evaluating:
                    model.zero_grad()
                    loss.backward()
            return loss.item()


        values = [run(False), run(True)]
        grad = model.weight.grad
    """
    wrong = "context = contextlib.nullcontext() if evaluating else torch.no_grad()  # BINDING"
    source, path, diagnoses = diagnose(tmp_path, body.format(binding=wrong))
    diagnosis = next(d for d in diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == marked_line(source, "BINDING")
    assert diagnosis.help[0].replacement == "context = torch.no_grad() if evaluating else contextlib.nullcontext()"
    right = "context = torch.no_grad() if evaluating else contextlib.nullcontext()"
    _first_change_runs_like(tmp_path, source, diagnosis, body.format(binding=right), ["values", "grad"])


def test_object_storing_a_detached_value_is_not_named_as_the_carry(tmp_path):
    # AD302: a method that reads self.previous and stores a detached value carries no graph; the
    # freed graph is the loss's own second backward().
    source, path, diagnoses = diagnose(tmp_path, """
        import torch


        class Ratio:
            def __init__(self):
                self.previous = None

            def __call__(self, loss):
                ratio = loss if self.previous is None else loss / self.previous
                self.previous = loss.detach()
                return ratio


        w = torch.ones(2, requires_grad=True)
        ratio = Ratio()
        loss = ratio((w * 3).sum())
        loss.backward()
        loss.backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD302")
    assert "self.previous" not in (diagnosis.primary.source or "")


def test_gradients_zipped_with_a_reversed_parameter_list(tmp_path):
    # AD131: the inputs of grad() are a list built in reverse; the loop zips model.parameters().
    body = """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        params = list(reversed(list(model.parameters())))
        loss = model(torch.randn(4, 3)).pow(2).sum()
        grads = torch.autograd.grad(loss, params)
        {loop}
            p.grad = g
        weight_grad, bias_grad = model.weight.grad, model.bias.grad
    """
    wrong = "for p, g in zip(model.parameters(), grads):  # LOOP"
    source, path, diagnoses = diagnose(tmp_path, body.format(loop=wrong))
    diagnosis = next(d for d in diagnoses if d.code == "AD131")
    assert diagnosis.primary.line == marked_line(source, "LOOP")
    _first_change_runs_like(tmp_path, source, diagnosis, body.format(loop="for p, g in zip(params, grads):"),
                            ["weight_grad", "bias_grad"])


def test_added_group_with_params_keyword_in_the_constructor(tmp_path):
    # AD132: the constructor's group given as params=model.parameters().
    body = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        {made}
        optimizer.add_param_group({{"params": model[2].parameters(), "lr": 0.5}})
        loss = model(torch.randn(5, 3)).pow(2).mean()
        loss.backward()
        optimizer.step()
        weights = [p.detach().clone() for p in model.parameters()]
    """
    wrong = "optimizer = torch.optim.SGD(params=model.parameters(), lr=0.1)  # MADE"
    source, path, diagnoses = diagnose(tmp_path, body.format(made=wrong))
    diagnosis = next(d for d in diagnoses if d.code == "AD132")
    assert diagnosis.primary.line == marked_line(source, "MADE")
    right = "optimizer = torch.optim.SGD(params=list(model[0].parameters()), lr=0.1)"
    _first_change_runs_like(tmp_path, source, diagnosis, body.format(made=right), ["weights"])


def test_parametrized_weight_unfrozen_with_the_method_spelling(tmp_path):
    # AD115: requires_grad_(False) on a weight made by torch.nn.utils.parametrize.
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn
        from torch.nn.utils import parametrize


        class Positive(nn.Module):
            def forward(self, w):
                return w.abs()


        layer = nn.Linear(3, 2)
        parametrize.register_parametrization(layer, "weight", Positive())
        layer.weight.requires_grad_(False)  # FREEZE
        layer(torch.randn(4, 3)).sum().backward()
        frozen = layer.parametrizations.weight.original.grad is None
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD115")
    assert diagnosis.primary.line == marked_line(source, "FREEZE")
    assert diagnosis.help[0].replacement == "layer.parametrizations.weight.requires_grad_(False)"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None and namespace["frozen"] and namespace["layer"].bias.grad is not None


def test_model_cast_with_to_float16_in_a_helper_of_the_same_file(tmp_path):
    # AD151: the helper casts with .to(torch.float16) and returns the module.
    body = """
        import torch
        from torch import nn


        def compact(module):
            {cast}
            return module


        torch.manual_seed(0)
        model = compact(nn.Linear(3, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        x = torch.randn(4, 3)
        loss = model(x.to(model.weight.dtype)).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        weight = model.weight.detach().clone()
    """
    source, path, diagnoses = diagnose(tmp_path, body.format(cast="module.to(torch.float16)  # CAST"))
    diagnosis = next(d for d in diagnoses if d.code == "AD151")
    assert diagnosis.primary.line == marked_line(source, "CAST")
    _first_change_runs_like(tmp_path, source, diagnosis, body.format(cast="pass"), ["weight"])


def test_checkpoint_bound_in_a_partial_of_the_module_path(tmp_path):
    # AD126: functools.partial(torch.utils.checkpoint.checkpoint, use_reentrant=True).
    source, path, diagnoses = diagnose(tmp_path, """
        import functools
        import torch
        import torch.utils.checkpoint

        run = functools.partial(torch.utils.checkpoint.checkpoint, use_reentrant=True)  # PARTIAL
        layer = torch.nn.Linear(3, 3)
        x = torch.randn(2, 3, requires_grad=True)
        (gx,) = torch.autograd.grad(run(layer, x).sum(), x)
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD126")
    assert diagnosis.primary.line == marked_line(source, "PARTIAL")
    assert "use_reentrant=False" in diagnosis.help[0].replacement


def test_hook_in_a_forward_hook_on_a_frozen_embedding_of_token_ids(tmp_path):
    # AD116: the module's output is computed from integer ids (which cannot require grad); the
    # output itself, a leaf, is asked for its gradient inside the hook.
    source, path, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        torch.manual_seed(0)
        emb = nn.Embedding(5, 3).requires_grad_(False)
        head = nn.Linear(3, 1)
        grads = []


        def keep_gradient(module, inputs, output):
            output.register_hook(grads.append)  # HOOK


        emb.register_forward_hook(keep_gradient)
        tokens = torch.tensor([1, 2, 3])
        score = head(emb(tokens)).sum()
        score.backward()
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD116")
    assert diagnosis.primary.line == marked_line(source, "HOOK")
    assert diagnosis.help[0].replacement.startswith("output.requires_grad_()\n")
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    # d score / d output = head's weight, for every token's row.
    assert torch.equal(namespace["grads"][0], namespace["head"].weight.detach().expand(3, 3))


def test_scaler_update_after_a_while_loop_that_steps(tmp_path):
    # AD150: the loop that steps in every pass is a while loop.
    body = """
        import torch
        from torch import nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        batches = [torch.randn(2, 3) for _ in range(4)]
        for epoch in range(2):
            remaining = 2
            while remaining:
                optimizer.zero_grad()
                scaler.scale(model(batches[epoch * 2 + remaining - 1]).pow(2).mean()).backward()
                scaler.step(optimizer){inner}
                remaining -= 1
            {outer}
        weight = model.weight.detach().clone()
    """
    source, path, diagnoses = diagnose(tmp_path, body.format(inner="", outer="scaler.update()  # UPDATE"))
    diagnosis = next(d for d in diagnoses if d.code == "AD150")
    assert diagnosis.primary.line == marked_line(source, "UPDATE")
    _first_change_runs_like(tmp_path, source, diagnosis, body.format(inner="\n                scaler.update()", outer=""),
                            ["weight"])


def test_helper_whose_unscaled_result_is_kept_is_not_moved(tmp_path):
    # AD148: `norm = clip(...)` is read on every pass after the step's block; moving the call under
    # the step's condition would leave `norm` unbound, so no change is offered.
    helper = textwrap.dedent("""
        import torch


        def clip(scaler, optimizer, model):
            scaler.unscale_(optimizer)
            return torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    """)
    write(tmp_path, helper, "lib_clip")
    source, path, diagnoses = diagnose(tmp_path, """
        import sys
        import torch
        from torch import nn
        sys.path.insert(0, __file__.rsplit("/", 1)[0])
        from lib_clip import clip

        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        norms = []
        for i in range(4):
            scaler.scale(model(torch.randn(2, 3)).pow(2).mean()).backward()
            norm = clip(scaler, optimizer, model)
            if i % 2 == 1:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
            norms.append(float(norm))
    """)
    diagnosis = next(d for d in diagnoses if d.code == "AD148")
    assert all(h.location is None for h in diagnosis.help)


def test_backward_of_a_tuple_of_losses_with_one_element_seeds_reshapes_each_seed(tmp_path):
    """Set 30's deep-head-pose#124 cause in another shape: the losses and their seeds are tuples
    bound to names (not the case's lists), the seeds are [1, 1] for 0-dim losses. The earlier help
    wrote `seeds.reshape_as(terms)`, which fails on a tuple."""
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        x = torch.randn(6, 4)
        terms = ((x @ w).pow(2).mean(), (x @ w).abs().sum())
        seeds = (torch.ones(1, 1), torch.full((1,), 0.5))
        torch.autograd.backward(terms, seeds)  # BACKWARD
        grad = w.grad
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD123"]
    assert diagnosis.help[0].replacement == \
        "torch.autograd.backward(terms, [g.reshape_as(o) for g, o in zip(seeds, terms)])"
    error, namespace = run_plain(write(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed"))
    assert error is None
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    x = torch.randn(6, 4)
    ((x @ w).pow(2).mean() + 0.5 * (x @ w).abs().sum()).backward()
    assert torch.allclose(namespace["grad"], w.grad)


def test_backward_of_a_list_of_losses_with_seeds_of_other_counts_stays_advice(tmp_path):
    source, path, diagnoses = diagnose(tmp_path, """
        import torch

        w = torch.randn(4, requires_grad=True)
        losses = [w.sum(), w.mean()]
        seeds = [torch.ones(2), torch.ones(2)]
        torch.autograd.backward(losses, seeds)
    """)
    (diagnosis,) = [d for d in diagnoses if d.code == "AD123"]
    # Two elements given for a 0-dim loss: no reshape keeps the elements, and no list is reshaped.
    assert all(s.replacement is None or "reshape_as" not in s.replacement for s in diagnosis.help)


def test_backward_of_a_list_of_losses_with_0_dim_seeds_stays_silent(tmp_path):
    path = write(tmp_path, textwrap.dedent("""
        import torch

        w = torch.randn(4, requires_grad=True)
        losses = [w.sum(), w.mean()]
        seeds = [torch.tensor(1.0), torch.tensor(2.0)]
        torch.autograd.backward(losses, seeds)
        grad = w.grad
    """), "program")
    assert run_watched(path) is None
