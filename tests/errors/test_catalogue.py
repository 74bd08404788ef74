"""Every catalogued error: the program fails the same way with and without the doctor, the
diagnosis has its code and points at the line to change, and the suggested change, applied
to the program text, makes it run with the right values (checked against hand-written ones)."""

from __future__ import annotations

import os
import runpy
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import apply_suggestion, marked_line, program_source, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def linear_weight_grad(features, weight, bias):
    """d/dW of mean((features @ W.T + b)^2) for an nn.Linear with one output, by hand."""
    out = features @ weight.T + bias
    return 2.0 / out.numel() * out.T @ features


def same_as_correct_version(name, *expressions):
    """A check: each expression (a name, `xs.grad`) has the same value in the fixed program as in
    the hand-written correct version `programs/correct/<name>.py`, the meaning oracle."""
    def check(ns):
        from catalogue import PROGRAMS

        reference = runpy.run_path(os.path.join(PROGRAMS, "correct", f"{name}.py"), run_name="__main__")
        for expression in expressions:
            ours, theirs = eval(expression, dict(ns)), eval(expression, dict(reference))
            if isinstance(theirs, dict):
                assert ours.keys() == theirs.keys(), expression
                pairs = [(ours[key], theirs[key]) for key in theirs]
            else:
                pairs = [(ours, theirs)]
            for got, expected in pairs:
                assert got is not None and got.shape == expected.shape, expression
                assert torch.allclose(got, expected, rtol=1e-6, atol=1e-7), (expression, got, expected)
    return check


def check_power_exponent_saved_as_tensor(ns):
    x = ns["x"].detach()
    assert torch.allclose(ns["x"].grad, 3 * x ** 2)


def check_backward_non_scalar(ns):
    x = torch.tensor([0.5, -1.0, 2.0])
    assert torch.equal(ns["x"].grad, 2 * x)


def check_numpy(ns):
    assert (ns["values"] == torch.sigmoid(torch.tensor([0.5, -1.0, 2.0])).numpy()).all()


def check_integer_factory(ns):
    w = ns["w"]
    assert w.dtype == torch.float32 and w.is_leaf and w.requires_grad
    assert torch.equal(w.detach(), torch.tensor([1.0, 2.0, 3.0]))


def check_non_leaf_flag(ns):
    assert not ns["y"].requires_grad
    assert torch.equal(ns["y"], torch.tensor([1.0, -2.0, 4.0]))


def check_hook_guard(ns):
    assert not ns["y"].requires_grad  # the guarded hook is skipped; nothing else changed


def check_out(ns):
    result = ns["result"]
    assert torch.equal(result.detach(), torch.tensor([1.0, -2.0, 4.0]))
    result.sum().backward()
    assert torch.equal(ns["x"].grad, torch.full((3,), 2.0))


def check_non_leaf_optimizer(ns):
    w = ns["w"]
    assert w.is_leaf and w.requires_grad
    assert ns["opt"].param_groups[0]["params"][0] is w


def check_gradient_count(ns):
    assert torch.equal(ns["x"].grad, torch.full((3,), 2.0))


def check_mark_dirty(ns):
    assert torch.equal(ns["x"].grad, torch.ones(3))


def check_unused_input(ns):
    assert torch.equal(ns["gx"], torch.full((3,), 2.0))
    assert torch.equal(ns["gz"], torch.zeros(3))


def check_input_without_grad(ns):
    assert torch.equal(ns["gx"], torch.tensor([3.0, 4.0, 5.0]))
    assert torch.equal(ns["gs"], torch.tensor([0.5, -1.0, 2.0]))


def check_grad_outputs(ns):
    assert torch.equal(ns["gx"], torch.full((3,), 2.0))


def check_expand(ns):
    assert torch.equal(ns["bias"], torch.arange(12.0).reshape(4, 3))


def check_reentrant(ns):
    x = ns["x"].detach()
    assert torch.equal(ns["gx"], torch.cos(x))


def check_inference_saved(ns):
    head, backbone = ns["head"], ns["backbone"]
    torch.manual_seed(0)  # the program's input, drawn again after the two layers
    torch.nn.Linear(4, 4), torch.nn.Linear(4, 1)
    x = torch.randn(8, 4)
    features = x @ backbone.weight.detach().T + backbone.bias.detach()
    expected = linear_weight_grad(features, head.weight.detach(), head.bias.detach())
    assert torch.allclose(head.weight.grad, expected, atol=1e-6)


def check_inference_written(ns):
    assert torch.equal(ns["running"], torch.ones(3))


def check_inference_requires_grad(ns):
    weights = ns["weights"]
    assert weights.is_leaf and weights.requires_grad and not weights.is_inference()
    assert torch.equal(weights.detach(), torch.ones(3))


def check_custom_view(ns):
    assert torch.equal(ns["x"].grad, torch.full((3,), 2.0))


def check_detach_view(ns):
    assert torch.equal(ns["x"].grad, torch.full((4, 3), 2.0))


def check_nan(ns):
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    b = torch.tensor([[1.0, 2.0], [0.0, 0.0]])
    expected = torch.stack([torch.zeros(2), (a[1] - b[1]) / (a[1] - b[1]).norm()])
    assert torch.allclose(ns["a"].grad, expected)
    assert not torch.isnan(ns["a"].grad).any()


def check_decorator(ns):
    model = ns["model"]
    torch.manual_seed(0)
    torch.nn.Linear(3, 1)
    batch = torch.randn(4, 3)
    expected = linear_weight_grad(batch, model.weight.detach(), model.bias.detach())
    assert torch.allclose(model.weight.grad, expected, atol=1e-6)


def check_create_graph(ns):
    x = ns["x"].detach()
    assert torch.allclose(ns["x"].grad, 36 * x ** 3)  # d/dx sum((3x^2)^2)


def check_saved_modified(ns):
    x = torch.tensor([0.5, -1.0, 2.0])
    expected = torch.sigmoid(x) * (1 - torch.sigmoid(x))
    expected[0] = 0.0  # the filled entry no longer depends on x
    assert torch.allclose(ns["x"].grad, expected)


def check_leaf_setitem(ns):
    assert ns["w"].is_leaf and ns["w"].requires_grad
    assert torch.equal(ns["w"].detach(), torch.tensor([1.0, 0.0, 0.0]))


def check_leaf_view(ns):
    assert ns["w"].is_leaf
    assert torch.equal(ns["w"].detach(), torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]))


def check_leaf_method(ns):
    assert ns["w"].is_leaf and torch.equal(ns["w"].detach(), torch.full((3,), 2.0))


def check_multi_output(ns):
    assert torch.equal(ns["x"].grad, torch.tensor([4.0, 4.0, 2.0, 2.0]))


def check_backward_twice(ns):
    x = torch.tensor([0.5, -1.0, 2.0])
    assert torch.allclose(ns["x"].grad, 3 * (1 - torch.tanh(x) ** 2))


def check_hook_with_gradients_on(ns):
    """The block's body, run with gradients on: the hook sees d(sum(scores^2))/d scores."""
    layer, x = ns["layer"], ns["x"]
    scores = x @ layer.weight.detach().T + layer.bias.detach()
    assert torch.allclose(ns["kept"]["gradient"], 2 * scores)
    assert torch.allclose(layer.weight.grad, (2 * scores).T @ x)


def check_recomputed_after_climb(ns):
    """The second loss's gradient at the weights as climb() left them (sharpness-aware step)."""
    model, x = ns["model"], ns["x"]
    weight = model.weight.detach().clone().requires_grad_()
    bias = model.bias.detach().clone().requires_grad_()
    (x @ weight.T + bias).abs().mean().backward()
    assert torch.allclose(model.weight.grad, weight.grad) and torch.allclose(model.bias.grad, bias.grad)


def check_vmap_new_zeros(ns):
    x = ns["x"]
    assert torch.equal(ns["batched"], torch.stack([x * 2, x.sin()], dim=1))


def check_per_sample_batch_of_one(ns):
    w, x = ns["w"], ns["x"]
    for row, got in zip(x, ns["per_sample"]):
        weight = w.clone().requires_grad_()
        torch.tanh(row * weight)[0].pow(2).backward()  # each example's own loss
        assert torch.allclose(got, weight.grad)


def check_both_gradients_returned(ns):
    assert torch.equal(ns["x"].grad, ns["w"].detach()) and torch.equal(ns["w"].grad, ns["x"].detach())


def check_hook_sees_output_gradient(ns):
    """The hook gets d loss / d (first layer's output); the model computes the same gradients."""
    model, x = ns["model"], ns["x"]
    hidden = (x @ model[0].weight.detach().T + model[0].bias.detach()).requires_grad_()
    out = torch.relu(hidden) @ model[2].weight.detach().T + model[2].bias.detach()
    out.pow(2).sum().backward()
    assert torch.allclose(ns["kept"]["gradient"], hidden.grad)
    assert torch.allclose(model[0].weight.grad, hidden.grad.T @ x)


def check_weighted_mean_of_losses(ns):
    losses, sizes = ns["losses"], ns["sizes"]
    expected = sum(n * loss.item() for n, loss in zip(sizes, losses)) / sum(sizes)
    assert abs(float(ns["weighted"]) - expected) < 1e-5
    assert all(loss.requires_grad for loss in losses)  # the losses keep their graph for training


def check_version_read(ns):
    assert torch.equal(ns["totals"], torch.arange(6).cumsum(0))
    assert not ns["labels"].is_inference()


def check_scaled_copy(ns):
    w = ns["w"]
    assert torch.allclose(ns["scaled"], 2 * w.detach().exp()[0])
    expected = torch.zeros(2, 3)
    expected[0] = 2 * 2 * w.detach().exp()[0]  # d/dw of 2 * (exp(w0).sum() + exp(w0).sum())
    assert torch.allclose(w.grad, expected)


def check_loss_with_gradients(ns):
    w = ns["w"]
    assert torch.allclose(ns["loss"], (w * w).sum())
    assert torch.allclose(w.grad, 2 * w)  # the loss, now computed outside the block, trains w


def check_penalty_with_gradients(ns):
    w, x = ns["w"], ns["x"]
    points = x.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad((points * w).tanh().sum(), points, create_graph=True)
    assert torch.allclose(ns["penalty"], grad.pow(2).mean())
    assert ns["penalty"].requires_grad  # it can train w


def check_deepcopy(ns):
    assert torch.equal(ns["clone"].cache, ns["model"].cache)
    assert ns["clone"].cache.grad_fn is None


def check_optimizer_list(ns):
    assert ns["opt"].param_groups[0]["params"] == [ns["model"].weight]


def check_optimizer_parameters(ns):
    model, opt = ns["model"], ns["opt"]
    assert [p is q for p, q in zip(opt.param_groups[0]["params"], model.parameters())] == [True, True]
    assert ns["count"] == 4


def check_overlap(ns):
    original = torch.arange(9.0).reshape(3, 3)
    assert torch.equal(ns["a"], original + original.T)


def check_leaky_relu(ns):
    block, x = ns["block"], ns["x"]
    out = x @ block.linear.weight.detach().T + block.linear.bias.detach()
    slope = torch.where(out > 0, torch.ones_like(out), torch.full_like(out, -0.1))
    assert torch.allclose(block.linear.weight.grad, slope.T @ x)
    assert torch.allclose(block.linear.bias.grad, slope.sum(0))


def check_overlapping_groups(ns):
    model, opt, net = ns["model"], ns["opt"], ns["Net"]
    head = [model.head.weight, model.head.bias]
    assert [p is q for p, q in zip(opt.param_groups[0]["params"], [model.body.weight, model.body.bias])] == [True, True]
    assert [p is q for p, q in zip(opt.param_groups[1]["params"], head)] == [True, True]
    torch.manual_seed(0)  # the program's initial weights and input, drawn again
    start = net()
    x = torch.randn(8, 3)
    w1, b1 = start.body.weight.detach(), start.body.bias.detach()
    w2, b2 = start.head.weight.detach(), start.head.bias.detach()
    h = torch.tanh(x @ w1.T + b1)
    out = h @ w2.T + b2
    d_out = 2 * out / out.numel()  # d mean(out^2) / d out
    d_pre = (d_out @ w2) * (1 - h ** 2)
    expected = {"body.weight": w1 - 0.1 * d_pre.T @ x, "body.bias": b1 - 0.1 * d_pre.sum(0),
                "head.weight": w2 - 0.01 * d_out.T @ h, "head.bias": b2 - 0.01 * d_out.sum(0)}
    for name, value in model.named_parameters():
        assert torch.allclose(value.detach(), expected[name], atol=1e-6), name


def check_resize(ns):
    assert ns["h"].shape == (2, 3)
    assert torch.equal(ns["x"].grad, torch.tensor([2.0, 2.0, 2.0, 4.0, 4.0, 4.0]))


def check_apply(ns):
    w = ns["w"]
    assert w.is_leaf and w.requires_grad
    assert torch.equal(w.detach(), torch.tensor([0.25, 0.0, 2.0]))
    assert torch.equal(w.grad, torch.tensor([1.0, 2.0, 3.0]))


def check_grad_inputs(ns):
    model = ns["model"]
    torch.manual_seed(0)
    torch.nn.Linear(3, 1)
    x = torch.randn(4, 3)
    weight, bias = model.weight.detach(), model.bias.detach()
    out = x @ weight.T + bias
    assert len(ns["grads"]) == 2
    assert torch.allclose(ns["grads"][0], linear_weight_grad(x, weight, bias), atol=1e-6)
    assert torch.allclose(ns["grads"][1], 2.0 / out.numel() * out.sum(0), atol=1e-6)


def check_saved_twice(ns):
    assert torch.equal(ns["x"].grad, 2 * (torch.tensor([0.5, -1.0, 2.0]) + 1.0))


def check_wrong_device(ns):
    assert ns["x"].grad.device.type == "meta" and ns["step"].grad.device.type == "meta"
    # Values do not exist on meta: the fixed Function is run again on CPU tensors.
    x = torch.tensor([0.4, 1.3, -2.6], requires_grad=True)
    step = torch.tensor([0.5], requires_grad=True)
    ns["Quantize"].apply(x, step).sum().backward()
    assert torch.equal(x.grad, torch.ones(3)) and torch.equal(step.grad, torch.zeros(1))


def check_mark_dirty_leaf(ns):
    w = torch.tensor([0.5, -1.0, 2.0])
    assert torch.equal(ns["w"].detach(), w)  # the leaf keeps its value
    assert ns["w"].is_leaf and torch.equal(ns["w"].grad, 8 * w)  # d/dw sum((2w)^2)


def check_split_base(ns):
    x = torch.tensor([0.5, -1.0, 2.0, 4.0])
    h = 2 * x
    assert torch.equal(ns["h"], 3 * h)
    assert torch.equal(ns["loss"].detach(), (h[:2] * h[2:]).sum())  # the pieces keep their values
    assert torch.equal(ns["x"].grad, 4 * torch.cat([x[2:], x[:2]]))


def check_detach_saved(ns):
    x = torch.tensor([0.5, -1.0, 2.0])
    assert torch.allclose(ns["x"].grad, x.exp() * (1 + x))  # d/dx sum(exp(x) * x)
    assert not ns["h"].requires_grad


def check_non_differentiable_weight(ns):
    model, weigher = ns["model"], ns["weigher"]
    torch.manual_seed(0)  # the program's input, drawn again after the two layers
    torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)
    x = torch.randn(4, 3)
    y = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
    w = torch.sigmoid(x @ weigher.weight.detach().T + weigher.bias.detach())
    p = torch.sigmoid(x @ model.weight.detach().T + model.bias.detach())
    d_logit = w * (p - y) / y.numel()  # d/dlogit of mean(-w (y log p + (1-y) log(1-p)))
    assert torch.allclose(model.weight.grad, d_logit.T @ x, atol=1e-6)
    assert weigher.weight.grad is None  # the weights are constants for the loss


def check_func_grad(ns):
    x = ns["x"].detach()
    assert torch.allclose(ns["grads"], 3 * x ** 2)
    ns["grads"].sum().backward()  # still differentiable with respect to x outside the transform
    assert torch.allclose(ns["x"].grad, 6 * x)


def check_leaf_trains(ns):
    w = ns["w"]
    assert w.is_leaf and w.requires_grad and w.dtype == torch.float64
    x, y = ns["x"], ns["y"]
    expected = torch.zeros(3, dtype=torch.float64)
    for _ in range(5):  # gradient descent on mean((x w - y)^2), by hand
        expected = expected - 0.1 * 2.0 / len(y) * x.T @ (x @ expected - y)
    assert torch.allclose(w.detach(), expected)
    assert not torch.equal(expected, torch.zeros(3, dtype=torch.float64))  # it trained


def check_weight_norm(ns):
    model, ema, x = ns["model"], ns["ema"], ns["x"]
    torch.manual_seed(0)  # the program's initial weights, drawn again
    first, last = torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)
    g = first.weight.detach().norm(dim=1, keepdim=True).requires_grad_()
    v = first.weight.detach().clone().requires_grad_()
    weight = g * v / v.norm(dim=1, keepdim=True)  # weight normalisation, written out
    loss = (torch.tanh(x @ weight.T + first.bias) @ last.weight.T + last.bias).pow(2).mean()
    loss.backward()
    assert torch.allclose(ns["loss"], loss)
    parametrized = model[0].parametrizations.weight
    assert torch.allclose(parametrized.original0.grad, g.grad, atol=1e-6)
    assert torch.allclose(parametrized.original1.grad, v.grad, atol=1e-6)
    assert torch.equal(ema(x), model(x))  # the copy computes what the model computes


def check_frozen_skipped(ns):
    """The reference is torch.optim.SGD, which skips parameters whose .grad is None."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(10, 4), torch.nn.Flatten(), torch.nn.Linear(8, 1))
    model[0].weight.requires_grad = False
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        optimizer.zero_grad()
        (model(ns["tokens"]) - ns["target"]).pow(2).mean().backward()
        optimizer.step()
    for ours, reference in zip(ns["model"].parameters(), model.parameters()):
        assert torch.allclose(ours, reference)
    assert not torch.equal(ns["model"][2].weight, torch.nn.Linear(8, 1).weight)  # it trained


def check_unpack_count(ns):
    assert torch.equal(ns["x"].grad, torch.tensor([3.0, 4.0, 5.0]))  # d(x * w)/dx = w
    assert torch.equal(ns["w"].grad, torch.tensor([0.5, -1.0, 2.0]))

def check_trace_parameter(ns):
    model, x = ns["model"], ns["x"]
    assert any(p is model.scale for p in model.parameters())  # now trained with the module
    assert torch.equal(model.scale.detach(), torch.ones(3))
    expected = (x @ model.linear.weight.T + model.linear.bias).sum(0)  # d/dscale of sum(linear(x) * scale)
    assert torch.allclose(model.scale.grad, expected.detach())

def check_unscale_once_per_step(ns):
    torch.manual_seed(0)  # the same model and data; SGD by hand: two micro-batches, clip the sum, step
    model = torch.nn.Linear(3, 1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
    params = [p.detach().clone() for p in model.parameters()]
    for first in (0, 2):
        leaves = [p.clone().requires_grad_() for p in params]
        loss = sum(torch.nn.functional.mse_loss(x @ leaves[0].T + leaves[1], y) / 2
                   for x, y in batches[first:first + 2])
        grads = torch.autograd.grad(loss, leaves)
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
        factor = torch.clamp(0.5 / (norm + 1e-6), max=1.0)
        params = [p - 0.1 * g * factor for p, g in zip(params, grads)]
    for trained, expected in zip(ns["model"].parameters(), params):
        assert torch.allclose(trained.detach(), expected, atol=1e-6)


def _sgd_by_hand(batches, clip: float | None):
    """The Linear(3, 1) of the AMP programs trained by hand: one SGD step (lr 0.1) per batch on
    the MSE loss, the gradients clipped to norm `clip` first when given."""
    torch.manual_seed(0)  # the same model and data as the program
    model = torch.nn.Linear(3, 1)
    data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(batches)]
    params = [p.detach().clone() for p in model.parameters()]
    for x, y in data:
        leaves = [p.clone().requires_grad_() for p in params]
        grads = torch.autograd.grad(torch.nn.functional.mse_loss(x @ leaves[0].T + leaves[1], y), leaves)
        if clip is not None:
            norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
            grads = [g * torch.clamp(clip / (norm + 1e-6), max=1.0) for g in grads]
        params = [p - 0.1 * g for p, g in zip(params, grads)]
    return params


def check_unscale_before_step(ns):
    for trained, expected in zip(ns["model"].parameters(), _sgd_by_hand(3, clip=0.5)):
        assert torch.allclose(trained.detach(), expected, atol=1e-6)


def check_update_after_step(ns):
    for trained, expected in zip(ns["model"].parameters(), _sgd_by_hand(3, clip=None)):
        assert torch.allclose(trained.detach(), expected, atol=1e-6)


def check_clip_lets_scaler_skip(ns):
    torch.manual_seed(0)  # the program's model before training
    initial = [p.detach().clone() for p in torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                                               torch.nn.Linear(4, 2)).parameters()]
    assert all(torch.isfinite(w).all() for w in ns["weights"])  # the overflowing steps were skipped
    assert ns["scaler"].get_scale() < 2.0 ** 16  # ... and the scale lowered
    assert not all(torch.equal(w, i) for w, i in zip(ns["weights"], initial))  # the other steps trained


def check_trained_head_in_float32(ns):
    torch.manual_seed(0)  # the program's models and data; the frozen encoder stays float16
    encoder, head = torch.nn.Linear(3, 3).half(), torch.nn.Linear(3, 1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for x, y in batches:
        optimizer.zero_grad()
        with torch.no_grad():
            features = encoder(x.half())
        torch.nn.functional.mse_loss(head(features.float()), y).backward()
        optimizer.step()
    assert ns["head"].weight.dtype == torch.float32
    for trained, expected in zip(ns["head"].parameters(), head.parameters()):
        assert torch.allclose(trained.detach(), expected.detach(), atol=1e-6)


def check_update_after_each_step(ns):
    torch.manual_seed(0)  # the same model and data; SGD by hand: a step on each half of every batch
    model = torch.nn.Linear(3, 1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
    params = [p.detach().clone() for p in model.parameters()]
    for x, y in batches:
        for rows in (slice(0, 2), slice(2, 4)):
            leaves = [p.clone().requires_grad_() for p in params]
            loss = torch.nn.functional.mse_loss(x[rows] @ leaves[0].T + leaves[1], y[rows])
            grads = torch.autograd.grad(loss, leaves)
            params = [p - 0.1 * g for p, g in zip(params, grads)]
    for trained, expected in zip(ns["model"].parameters(), params):
        assert torch.allclose(trained.detach(), expected, atol=1e-6)


def check_dense_gradient_with_noise(ns):
    torch.manual_seed(0)  # the same table, trained by hand on dense gradients plus the noise
    weight = torch.nn.Embedding(6, 2).weight.detach().clone()
    for ids in (torch.tensor([1, 2]), torch.tensor([2, 5])):
        leaf = weight.clone().requires_grad_()
        (gradient,) = torch.autograd.grad(leaf[ids].pow(2).sum(), [leaf])
        weight = weight - 0.1 * (gradient + 0.01)
    assert torch.allclose(ns["embedding"].weight.detach(), weight, atol=1e-6)


def check_view_made_with_gradients(ns):
    # h = 2x, its first two elements then multiplied by x in place, recorded: 4x there, 2 elsewhere.
    x = ns["x"].detach()
    expected = torch.full_like(x, 2.0)
    expected[:2] = 4 * x[:2]
    assert torch.allclose(ns["x"].grad, expected)


# program -> (code, index of the help that is a concrete change, check of the changed program)
CASES = {
    "backward_non_scalar": ("AD112", 0, check_backward_non_scalar),
    "numpy_requires_grad": ("AD113", 0, check_numpy),
    "requires_grad_integer_factory": ("AD114", 0, check_integer_factory),
    "requires_grad_integer": ("AD114", None, None),
    "requires_grad_non_leaf": ("AD115", 0, check_non_leaf_flag),
    "hook_no_grad": ("AD116", 1, check_hook_guard),
    "retain_grad_no_grad": ("AD116", 1, check_hook_guard),
    "hook_under_no_grad": ("AD116", 0, check_hook_with_gradients_on),
    "vmap_write_into_unbatched": ("AD144", 0, check_vmap_new_zeros),
    "vmap_batch_dimension_indexed": ("AD145", 0, check_per_sample_batch_of_one),
    "out_requires_grad": ("AD117", 0, check_out),
    "non_leaf_optimizer": ("AD119", 0, check_non_leaf_optimizer),
    "function_wrong_count": ("AD120", 0, check_gradient_count),
    "function_wrong_shape": ("AD120", None, None),
    "function_gradient_not_returned": ("AD120", 0, check_both_gradients_returned),
    "full_backward_hook_inplace": ("AD107", 0, check_hook_sees_output_gradient),
    "numpy_list_of_losses": ("AD113", 0, check_weighted_mean_of_losses),
    "inference_tensor_version": ("AD146", 0, check_version_read),
    "mark_dirty_view_two_outputs": ("AD147", 0, check_scaled_copy),
    "function_wrong_device": ("AD120", 0, check_wrong_device),
    "mark_dirty_not_returned": ("AD121", 0, check_mark_dirty),
    "save_for_backward_non_tensor": ("AD122", 0, check_power_exponent_saved_as_tensor),
    "grad_unused_input": ("AD305", 0, check_unused_input),
    "grad_input_no_grad": ("AD306", 0, check_input_without_grad),
    "grad_outputs_shape": ("AD123", 0, check_grad_outputs),
    "expand_inplace": ("AD124", 0, check_expand),
    "checkpoint_reentrant_grad": ("AD126", 0, check_reentrant),
    "checkpoint_recompute_mismatch": ("AD125", None, None),
    "inference_saved": ("AD109", 0, check_inference_saved),
    "inference_saved_decorator": ("AD109", 0, check_inference_saved),
    "inference_inplace_outside": ("AD110", 0, check_inference_written),
    "inference_requires_grad": ("AD111", 0, check_inference_requires_grad),
    "view_nograd_inplace": ("AD105", 0, check_view_made_with_gradients),  # the view of h, a graph tensor
    "view_inference_inplace": ("AD105", None, None),
    "view_nograd_base_modified": ("AD106", None, None),
    "custom_function_view_inplace": ("AD107", 0, check_custom_view),
    "detach_view_inplace": ("AD108", 0, check_detach_view),
    "anomaly_nan": ("AD118", 0, check_nan),
    "decorator_no_grad_cut": ("AD307", 0, check_decorator),
    "grad_missing_create_graph": ("AD301", 0, check_create_graph),
    "optimizer_single_tensor": ("AD128", 0, check_optimizer_list),
    "optimizer_empty_parameters": ("AD129", 0, check_optimizer_parameters),
    "leaky_relu_inplace_negative": ("AD130", 0, check_leaky_relu),
    "grad_assigned_wrong_size": ("AD131", None, None),
    "optimizer_overlapping_groups": ("AD132", 0, check_overlapping_groups),
    "resize_requires_grad": ("AD133", 0, check_resize),
    "apply_requires_grad": ("AD134", 0, check_apply),
    "grad_empty_inputs": ("AD135", 0, check_grad_inputs),
    "checkpoint_saved_tensors_twice": ("AD136", 0, check_saved_twice),
    "mark_dirty_leaf": ("AD137", 0, check_mark_dirty_leaf),
    "split_base_modified": ("AD138", 0, check_split_base),
    "detach_saved_inplace": ("AD139", 0, check_detach_saved),
    "non_differentiable_weight": ("AD140", 0, check_non_differentiable_weight),
    "cdist_second_derivative": ("AD184", 0, same_as_correct_version("cdist_second_derivative", "gw")),
    "func_autograd_grad_inside": ("AD141", 0, check_func_grad),
    "func_requires_grad_inside_grad": ("AD141", 0, same_as_correct_version("func_requires_grad_inside_grad", "gw")),
    "vmap_accumulate_into_unmapped_input": ("AD144", 0, same_as_correct_version(
        "vmap_accumulate_into_unmapped_input", "out", "start")),
    "function_without_setup_context": ("AD231", 0, same_as_correct_version("function_without_setup_context", "gx")),
    "function_without_vmap_rule": ("AD232", 0, same_as_correct_version("function_without_vmap_rule", "clipped",
                                                                       "xs.grad")),
    "checkpoint_inside_func_grad": ("AD233", 0, same_as_correct_version("checkpoint_inside_func_grad", "grads")),
    "func_grad_non_scalar_output": ("AD112", None, None),  # .sum() or .mean(): the gradient's scale is the user's
    "func_grad_aux_not_a_pair": ("AD234", 0, same_as_correct_version("func_grad_aux_not_a_pair", "gw", "logits",
                                                                   "accuracy")),
    "jacobian_strict_output_rebuilt_with_torch_tensor": ("AD235", 0, same_as_correct_version(
        "jacobian_strict_output_rebuilt_with_torch_tensor", "J")),
    "jvp_tangent_of_one_example": ("AD236", 0, same_as_correct_version("jvp_tangent_of_one_example", "out",
                                                                       "directional")),
    "function_without_jvp": ("AD237", None, None),  # advice: the Jacobian of a custom Function is its author's
    "make_dual_without_level": ("AD238", 0, same_as_correct_version("make_dual_without_level", "out",
                                                                    "directional")),
    "jvp_integer_tangent": ("AD239", 0, same_as_correct_version("jvp_integer_tangent", "out", "directional")),
    "func_grad_backward_inside": ("AD141", 0, same_as_correct_version("func_grad_backward_inside", "gw")),
    "grad_of_non_leaf": ("AD308", 0, check_leaf_trains),
    "grad_none_frozen_parameter": ("AD309", 0, check_frozen_skipped),
    "saved_tensors_unpack_count": ("AD142", 0, check_unpack_count),
    "trace_constant_requires_grad": ("AD143", 0, check_trace_parameter),
    "amp_unscale_every_micro_batch": ("AD148", 0, check_unscale_once_per_step),
    "amp_unscale_after_step": ("AD149", 0, check_unscale_before_step),
    "amp_step_without_update": ("AD150", 0, check_update_after_step),
    "amp_step_twice_in_one_iteration": ("AD150", 0, check_update_after_each_step),
    "amp_float16_parameters": ("AD151", 0, check_trained_head_in_float32),
    "amp_step_without_gradients": ("AD167", None, None),
    "amp_clip_refuses_overflow": ("AD183", 0, check_clip_lets_scaler_skip),  # advice: the loss to write in torch is the user's
    "sparse_gradient_noise": ("AD152", 0, check_dense_gradient_with_noise),
    "ddp_unused_parameters": None,  # AD127: tested in test_ddp.py (needs a process group)
    # Errors the recorder itself explains (diagnose.py, gradient_path.py, copies.py).
    "saved_tensor_modified": ("AD101", 0, check_saved_modified),
    "leaf_inplace": ("AD102", 0, check_leaf_setitem),
    "leaf_view_inplace": ("AD102", 0, check_leaf_view),
    "leaf_inplace_method": ("AD102", 0, check_leaf_method),
    "multi_output_view_inplace": ("AD104", 0, check_multi_output),
    "overlap_inplace": ("AD203", 0, check_overlap),
    "backward_twice": ("AD302", 0, check_backward_twice),
    "backward_twice_weights_written": ("AD302", 0, check_recomputed_after_climb),
    "deepcopy_non_leaf": ("AD303", 0, check_deepcopy),
    "deepcopy_weight_norm": ("AD303", 0, check_weight_norm),
    "no_grad_loss": ("AD301", 0, check_loss_with_gradients),
    "grad_inside_no_grad_block": ("AD301", 0, check_penalty_with_gradients),
}
CASES = {name: case for name, case in CASES.items() if case is not None}


@pytest.fixture(params=sorted(CASES))
def case(request, tmp_path):
    name = request.param
    source = program_source(name)
    path = write(tmp_path, source, name)
    return name, source, path, tmp_path


def test_fails_the_same_way_and_points_at_the_line_to_change(case):
    name, source, path, _ = case
    code = CASES[name][0]
    plain_error, _ = run_plain(path)
    error = run_watched(path)
    assert plain_error is not None and error is not None
    assert type(error) is type(plain_error)
    assert str(error) == str(plain_error)  # the diagnosis is a note; the message is PyTorch's
    diagnoses = [d for d in autograd_doctor.diagnoses_of(error) if d.code == code]
    assert diagnoses, (name, [d.code for d in autograd_doctor.diagnoses_of(error)])
    diagnosis = diagnoses[0]
    assert diagnosis.primary.file == path
    assert diagnosis.primary.line == marked_line(source, "PRIMARY")
    assert diagnosis.help
    rendered = str(diagnosis)
    assert rendered.startswith(f"error[{code}]")
    assert any(note.startswith("autograd-doctor:") for note in getattr(error, "__notes__", []))


def test_the_suggested_change_fixes_the_program(case):
    name, source, path, tmp_path = case
    code, help_index, check = CASES[name]
    if help_index is None:
        pytest.skip("no concrete change is suggested for this error (the help says what to look at)")
    error = run_watched(path)
    diagnosis = next(d for d in autograd_doctor.diagnoses_of(error) if d.code == code)
    suggestion = diagnosis.help[help_index]
    assert suggestion.location is not None
    fixed = apply_suggestion(source, suggestion)
    assert fixed != source
    fixed_error, namespace = run_plain(write(tmp_path, fixed, f"{name}_fixed"))
    assert fixed_error is None, f"{name}: {fixed_error!r}\n{fixed}"
    check(namespace)


def test_every_program_is_a_case():
    from catalogue import PROGRAMS

    programs = {name[:-3] for name in os.listdir(PROGRAMS) if name.endswith(".py")}
    assert programs == set(CASES) | {"ddp_unused_parameters"}
