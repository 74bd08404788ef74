"""Recall on the causes of misses in the r240-r259 re-creations: each case the
linter now reports really fails (or, for a silent bug, shows it), its corrected
twin stays silent and computes what a reference computes, and a similar
correct pattern stays silent (and really runs)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# A recurrent cell handed to the training function as an argument: `model` is the
# network `main()` builds, so the state it returns carries a graph into the next
# batch, whose backward goes through the freed graph of the previous one.
CARRIED_STATE_OF_A_GIVEN_MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x, state=None):
            if state is None:
                state = torch.zeros_like(x)
            state = torch.tanh(self.lin(x) + 0.5 * state)
            return state.sum(1), state

    def train(model, optimizer, batches):
        state = None
        for x in batches:
            out, state = model(x, state)
            loss = out.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return model.lin.weight.detach().clone()

    def main():
        torch.manual_seed(0)
        model = Cell()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return train(model, optimizer, [torch.ones(2, 3) for _ in range(3)])
    """)

CARRIED_STATE_DETACHED = CARRIED_STATE_OF_A_GIVEN_MODEL.replace(
    "out, state = model(x, state)", "out, state = model(x, None if state is None else state.detach())")

# The same function given a network built by a factory from another module: the
# parameter is no known network, and nothing is claimed.
CARRIED_STATE_OF_AN_UNKNOWN_CALLABLE = CARRIED_STATE_OF_A_GIVEN_MODEL.replace(
    "model = Cell()", "model = make_cell()").replace(
    "    def main():", "    def make_cell():\n        return Cell()\n\n    def main():")


def test_state_carried_by_a_network_given_as_argument_is_found_and_fails():
    line = _line(CARRIED_STATE_OF_A_GIVEN_MODEL, "loss.backward()")
    assert _findings(CARRIED_STATE_OF_A_GIVEN_MODEL) == [(line, "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(CARRIED_STATE_OF_A_GIVEN_MODEL)["main"]()


def test_detached_state_twin_is_silent_and_matches_a_reference():
    assert _findings(CARRIED_STATE_DETACHED) == []
    weight = _load(CARRIED_STATE_DETACHED)["main"]()
    torch.manual_seed(0)
    cell = _load(CARRIED_STATE_DETACHED)["Cell"]()
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
    state = None
    for _ in range(3):
        out, state = cell(torch.ones(2, 3), None if state is None else state.detach())
        optimizer.zero_grad()
        out.pow(2).mean().backward()
        optimizer.step()
    assert torch.equal(weight, cell.lin.weight.detach())


def test_network_from_a_factory_is_no_evidence():
    assert _findings(CARRIED_STATE_OF_AN_UNKNOWN_CALLABLE) == []


# A loss module built by the caller and handed in: its forward writes the `norm`
# it keeps; the call with a layer's output feeds that forward.
LOSS_MODULE_GIVEN_AS_ARGUMENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class MomentLoss(nn.Module):
        def forward(self, x, y):
            d = (x.mean(0) - y.mean(0)).norm(p=2)
            d += (x.var(0) - y.var(0)).norm(p=2)
            return d

    def step(model, loss_fn, optimizer, a, b):
        loss = loss_fn(model(a), model(b))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.item()

    def main():
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return step(model, MomentLoss(), optimizer, torch.randn(5, 4), torch.randn(5, 4) + 1)
    """)

LOSS_MODULE_OUT_OF_PLACE = LOSS_MODULE_GIVEN_AS_ARGUMENT.replace(
    "d += (x.var(0) - y.var(0)).norm(p=2)", "d = d + (x.var(0) - y.var(0)).norm(p=2)")

# The same loss module called only on data (no graph reaches its forward).
LOSS_MODULE_ON_DATA_ONLY = LOSS_MODULE_GIVEN_AS_ARGUMENT.replace(
    "loss = loss_fn(model(a), model(b))", "gap = loss_fn(a, b)\n    loss = model(a).pow(2).mean() * gap")


def test_write_in_a_loss_module_given_as_argument_is_found_and_fails():
    line = _line(LOSS_MODULE_GIVEN_AS_ARGUMENT, "d += ")
    assert _findings(LOSS_MODULE_GIVEN_AS_ARGUMENT) == [(line, "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(LOSS_MODULE_GIVEN_AS_ARGUMENT)["main"]()


def test_out_of_place_loss_module_is_silent_and_matches_a_reference():
    assert _findings(LOSS_MODULE_OUT_OF_PLACE) == []
    value = _load(LOSS_MODULE_OUT_OF_PLACE)["main"]()
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    a, b = torch.randn(5, 4), torch.randn(5, 4) + 1
    x, y = model(a), model(b)
    reference = (x.mean(0) - y.mean(0)).norm(p=2) + (x.var(0) - y.var(0)).norm(p=2)
    assert value == pytest.approx(reference.item())


def test_loss_module_on_data_only_is_silent_and_runs():
    assert _findings(LOSS_MODULE_ON_DATA_ONLY) == []
    _load(LOSS_MODULE_ON_DATA_ONLY)["main"]()


# Gradients cleared between the backward pass and the step that should use them.
CLEARED_BEFORE_STEP = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def fit(model, optimizer, data):
        for x, y in data:
            loss = (model(x) - y).pow(2).mean()
            loss.backward()
            optimizer.zero_grad()
            optimizer.step()
        return model.weight.detach().clone()

    def main():
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        before = model.weight.detach().clone()
        after = fit(model, optimizer, [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)])
        return before, after
    """)

CLEARED_FIRST = CLEARED_BEFORE_STEP.replace(
    "        loss.backward()\n        optimizer.zero_grad()\n",
    "        optimizer.zero_grad()\n        loss.backward()\n")
assert CLEARED_FIRST != CLEARED_BEFORE_STEP

# Two optimizers: the other one's gradients are cleared between this backward and
# this step (a GAN's generator cleared before the discriminator steps) - correct.
OTHER_OPTIMIZER_CLEARED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def main():
        torch.manual_seed(0)
        d, g = nn.Linear(3, 1), nn.Linear(2, 3)
        opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
        opt_g = torch.optim.SGD(g.parameters(), lr=0.1)
        for _ in range(2):
            opt_d.zero_grad()
            d_loss = d(g(torch.randn(4, 2)).detach()).mean()
            d_loss.backward()
            opt_g.zero_grad()
            opt_d.step()
        return d.weight.detach()
    """)


def test_zero_grad_between_backward_and_step_is_found_and_moves_nothing():
    line = _line(CLEARED_BEFORE_STEP, "optimizer.zero_grad()")
    assert _findings(CLEARED_BEFORE_STEP) == [(line, "ADL018")]
    before, after = _load(CLEARED_BEFORE_STEP)["main"]()
    assert torch.equal(before, after)


def test_zero_grad_before_backward_is_silent_and_trains_like_a_reference():
    assert _findings(CLEARED_FIRST) == []
    _, after = _load(CLEARED_FIRST)["main"]()
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]:
        optimizer.zero_grad()
        (model(x) - y).pow(2).mean().backward()
        optimizer.step()
    assert torch.equal(after, model.weight.detach())


def test_other_optimizer_cleared_between_is_silent_and_runs():
    assert _findings(OTHER_OPTIMIZER_CLEARED) == []
    _load(OTHER_OPTIMIZER_CLEARED)["main"]()


# A loss accumulated with += and not reset for a second pass: the second backward
# goes through the first pass's graph again.
LOSS_NOT_RESET = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def task_loss(output, target):
        return F.mse_loss(output, target)

    def two_passes(model, optimizer, x, targets):
        out = model(x)
        loss = 0
        for t in targets:
            loss += task_loss(out, t)
        loss.backward()
        out = model(x * 0.5)
        for t in targets:
            loss += task_loss(out, t)
        loss.backward()
        grad = model.weight.grad.clone()
        optimizer.step()
        return grad

    def main():
        torch.manual_seed(0)
        model = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        return two_passes(model, optimizer, torch.randn(4, 3), [torch.zeros(4, 2), torch.ones(4, 2)])
    """)

LOSS_RESET = LOSS_NOT_RESET.replace(
    "    out = model(x * 0.5)\n    for t in targets:",
    "    out = model(x * 0.5)\n    loss = 0\n    for t in targets:")
assert LOSS_RESET != LOSS_NOT_RESET


def test_loss_accumulated_across_passes_is_found_and_fails():
    line = max(i for i, text in enumerate(LOSS_NOT_RESET.splitlines(), 1) if "loss.backward()" in text)
    assert _findings(LOSS_NOT_RESET) == [(line, "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(LOSS_NOT_RESET)["main"]()


def test_reset_loss_is_silent_and_matches_a_reference():
    assert _findings(LOSS_RESET) == []
    grad = _load(LOSS_RESET)["main"]()
    torch.manual_seed(0)
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    targets = [torch.zeros(4, 2), torch.ones(4, 2)]
    for scale in (1.0, 0.5):
        out = model(x * scale)
        sum(torch.nn.functional.mse_loss(out, t) for t in targets).backward()
    assert torch.allclose(grad, model.weight.grad)


# Views split by torch.split from an untyped parameter, one scaled in place; the
# forward passes a layer's output there.
SPLIT_PARAMETER_SCALED_IN_PLACE = textwrap.dedent("""
    import math
    import torch
    import torch.nn as nn

    def to_angle_scale(params):
        angle, scale = torch.split(params, 1, -1)
        angle *= 2 * math.pi
        return torch.cat([torch.cos(angle), torch.sigmoid(scale)], -1)

    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x):
            return to_angle_scale(self.lin(x))

    def main():
        torch.manual_seed(0)
        head = Head()
        out = head(torch.randn(4, 3))
        out.sum().backward()
        return head.lin.weight.grad.clone()
    """)

SPLIT_PARAMETER_OUT_OF_PLACE = SPLIT_PARAMETER_SCALED_IN_PLACE.replace(
    "angle *= 2 * math.pi", "angle = angle * 2 * math.pi")

# The same helper only ever given data: no graph, no failure.
SPLIT_PARAMETER_ON_DATA = SPLIT_PARAMETER_SCALED_IN_PLACE.replace(
    "return to_angle_scale(self.lin(x))", "return self.lin(x) + to_angle_scale(x[:, :2].clone())")


def test_write_to_a_split_view_of_a_fed_parameter_is_found_and_fails():
    line = _line(SPLIT_PARAMETER_SCALED_IN_PLACE, "angle *= ")
    assert _findings(SPLIT_PARAMETER_SCALED_IN_PLACE) == [(line, "ADL015")]
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        _load(SPLIT_PARAMETER_SCALED_IN_PLACE)["main"]()


def test_out_of_place_split_twin_is_silent_and_matches_a_reference():
    assert _findings(SPLIT_PARAMETER_OUT_OF_PLACE) == []
    grad = _load(SPLIT_PARAMETER_OUT_OF_PLACE)["main"]()
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    p = lin(torch.randn(4, 3))
    torch.cat([torch.cos(p[:, :1] * 2 * torch.pi), torch.sigmoid(p[:, 1:])], -1).sum().backward()
    assert torch.allclose(grad, lin.weight.grad)


def test_split_of_a_parameter_given_only_data_is_silent_and_runs():
    assert _findings(SPLIT_PARAMETER_ON_DATA) == []
    _load(SPLIT_PARAMETER_ON_DATA)["main"]()


# An autograd Function whose forward writes its input in place and returns it
# without ctx.mark_dirty, applied to a sigmoid's output (which sigmoid keeps).
FUNCTION_WRITES_ITS_INPUT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class AddBias(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a += b
            return a

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, grad_output.sum(0, keepdim=True)

    class Gate(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.bias = nn.Parameter(torch.full((1, 3), 0.5))

        def forward(self, x):
            return AddBias.apply(torch.sigmoid(self.lin(x)), self.bias)

    def main():
        torch.manual_seed(0)
        gate = Gate()
        gate(torch.randn(4, 3)).pow(2).sum().backward()
        return gate.lin.weight.grad.clone(), gate.bias.grad.clone()
    """)

FUNCTION_WRITES_A_COPY = FUNCTION_WRITES_ITS_INPUT.replace("        a += b\n", "        a = a + b\n")

# The same Function marking its input dirty, as PyTorch asks: autograd knows.
FUNCTION_MARKS_DIRTY = FUNCTION_WRITES_ITS_INPUT.replace(
    "        a += b\n", "        a += b\n        ctx.mark_dirty(a)\n").replace(
    "AddBias.apply(torch.sigmoid(self.lin(x)), self.bias)", "AddBias.apply(self.lin(x), self.bias)")


def test_function_writing_its_returned_input_is_found_and_fails():
    line = _line(FUNCTION_WRITES_ITS_INPUT, "a += b")
    assert _findings(FUNCTION_WRITES_ITS_INPUT) == [(line, "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(FUNCTION_WRITES_ITS_INPUT)["main"]()


def test_function_writing_a_copy_is_silent_and_matches_a_reference():
    assert _findings(FUNCTION_WRITES_A_COPY) == []
    weight_grad, bias_grad = _load(FUNCTION_WRITES_A_COPY)["main"]()
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 3)
    bias = torch.nn.Parameter(torch.full((1, 3), 0.5))
    (torch.sigmoid(lin(torch.randn(4, 3))) + bias).pow(2).sum().backward()
    assert torch.allclose(weight_grad, lin.weight.grad) and torch.allclose(bias_grad, bias.grad)


def test_function_marking_its_input_dirty_is_silent_and_runs():
    assert _findings(FUNCTION_MARKS_DIRTY) == []
    _load(FUNCTION_MARKS_DIRTY)["main"]()
