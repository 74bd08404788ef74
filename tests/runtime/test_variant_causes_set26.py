"""Causes found by held-out variants set 26 (docs/errors.md, "Held-out variants", set 26), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD121: a Function that marks its input dirty and then rebinds the name to a copy of it
(`x = x.contiguous()`, `x = x.clone()`) writes into the copy and returns it; the help said "return x
itself" and changed nothing (`return x` already), so the changed program failed the same way (a wrong
help). The rebinding is now named, and deleted where nothing after it depends on the memory layout.

AD183: `torch.nn.utils.get_total_norm(..., error_if_nonfinite=True)`, the norm half of clip_grad_norm_'s
two-step spelling, refused the overflow a GradScaler expects and was not diagnosed.

AD103: a value computed only from weights their own optimizer stepped before the failing backward() (a
temperature, a multiplier), whose gradient from the failing loss is never applied, got "compute it again
after the step" first (other values: a wrong help); it is now detached in the failing loss."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# A hard-tanh Function that makes a defensive copy after marking its input dirty, applied to a hidden layer.
HARD_TANH_COPIED_AFTER_MARK = """
    import torch
    from torch import nn

    class InplaceHardTanh(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x = x.clone()  # REBIND
            inside = (x > -1) & (x < 1)
            x.clamp_(-1.0, 1.0)
            ctx.save_for_backward(inside)
            return x

        @staticmethod
        def backward(ctx, grad_output):
            (inside,) = ctx.saved_tensors
            return grad_output * inside

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(4, 6)
            self.out = nn.Linear(6, 1)

        def forward(self, x):
            return self.out(InplaceHardTanh.apply(self.hidden(x) * 2))

    torch.manual_seed(0)
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        loss = net(torch.randn(8, 4)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in net.parameters()]
"""

HARD_TANH_COPIED_AFTER_MARK_CORRECT = HARD_TANH_COPIED_AFTER_MARK.replace("            x = x.clone()  # REBIND\n", "")

# The same rebinding, but forward then flattens the copy with .view(-1), which needs contiguous memory (the
# input is a transpose): deleting the .contiguous() would make forward fail, so no change is offered.
CONTIGUOUS_THEN_VIEWED = """
    import torch

    class InplaceScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            x = x.contiguous()  # REBIND
            x.mul_(2.0)
            ctx.save_for_backward(x.view(-1))
            return x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * 2.0

    base = torch.randn(3, 4, requires_grad=True)
    out = InplaceScale.apply(base.t() * 1.0)
    out.sum().backward()
"""


def test_a_marked_input_rebound_to_a_copy_loses_the_rebinding(tmp_path):
    outcome = run_as_script(tmp_path, HARD_TANH_COPIED_AFTER_MARK)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD121", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("REBIND")
    assert diagnosis.help[0].location.line == outcome.line("REBIND") and not diagnosis.help[0].replacement
    lines = outcome.source.splitlines(keepends=True)
    del lines[diagnosis.help[0].location.line - 1]  # the help deletes the line
    fixed = run_plain(tmp_path, "".join(lines), "fixed.py")
    correct = run_plain(tmp_path, HARD_TANH_COPIED_AFTER_MARK_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_function_without_the_copy_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, HARD_TANH_COPIED_AFTER_MARK_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_copy_whose_layout_is_used_later_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, CONTIGUOUS_THEN_VIEWED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD121", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("REBIND")
    assert all(suggestion.location is None for suggestion in diagnosis.help), diagnosis.help


# A plain loop under a GradScaler that logs the gradient norm with get_total_norm, error_if_nonfinite given
# by position, and clips with clip_grads_with_norm_.
TOTAL_NORM_BY_POSITION = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
    norms = []
    for _ in range(6):
        x, y = torch.randn(8, 3) * 10, torch.randn(8, 2)
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            out = model(x)
        scaler.scale((out.float() - y).pow(2).mean()).backward()
        scaler.unscale_(optimizer)
        norm = nn.utils.get_total_norm([p.grad for p in model.parameters()], 2.0, True)  # REFUSES
        norms.append(norm)
        nn.utils.clip_grads_with_norm_(model.parameters(), 1.0, norm)
        scaler.step(optimizer)
        scaler.update()
    norms = torch.stack(norms)
    weights = [p.detach().clone() for p in model.parameters()]
"""

TOTAL_NORM_BY_POSITION_CORRECT = TOTAL_NORM_BY_POSITION.replace("2.0, True)  # REFUSES", "2.0, False)  # REFUSES")


def test_get_total_norm_refusing_the_overflow_is_diagnosed(tmp_path):
    outcome = run_as_script(tmp_path, TOTAL_NORM_BY_POSITION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD183", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("REFUSES")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, TOTAL_NORM_BY_POSITION_CORRECT, "correct.py")
    assert torch.equal(fixed["norms"], correct["norms"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_get_total_norm_allowing_the_overflow_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, TOTAL_NORM_BY_POSITION_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# AD103: a value computed from weights that their own optimizer steps before the failing backward() (a
# Lagrange multiplier, clamped to stay non-negative), read by the model's loss whose own optimizer does not
# hold them; the multiplier optimizer's zero_grad() runs before its backward(). The first help computed the
# loss again after the step (another value than the program computed, a wrong help). Now the loss is built
# from the value detached: the gradient it would give the multiplier is cleared before it is ever applied.
LAGRANGE_MULTIPLIER_STEPPED_FIRST = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    raw_multiplier = nn.Parameter(torch.tensor(0.5))
    model_opt = torch.optim.SGD(model.parameters(), lr=0.05)
    multiplier_opt = torch.optim.SGD([raw_multiplier], lr=0.1)
    budget = 0.2
    for _ in range(3):
        x, y = torch.randn(16, 4), torch.randn(16, 1)
        prediction = model(x)
        violation = prediction.abs().mean() - budget
        multiplier = raw_multiplier.clamp(min=0.0)
        model_loss = (prediction - y).pow(2).mean() + multiplier * violation  # LOSS
        multiplier_loss = -(multiplier * violation.detach())
        multiplier_opt.zero_grad()
        multiplier_loss.backward(retain_graph=True)
        multiplier_opt.step()
        model_opt.zero_grad()
        model_loss.backward()
        model_opt.step()
    weights = [p.detach().clone() for p in model.parameters()]
    final_multiplier = raw_multiplier.detach().clone()
"""

LAGRANGE_MULTIPLIER_STEPPED_FIRST_CORRECT = LAGRANGE_MULTIPLIER_STEPPED_FIRST.replace(
    "+ multiplier * violation  # LOSS", "+ multiplier.detach() * violation  # LOSS")

# Without the multiplier optimizer's zero_grad(), the gradient the model's loss gives the multiplier would be
# applied by its next step: detaching would change what it trains, so that help is not offered.
LAGRANGE_MULTIPLIER_ACCUMULATING = LAGRANGE_MULTIPLIER_STEPPED_FIRST.replace(
    "        multiplier_opt.zero_grad()\n", "")


def test_a_value_of_weights_stepped_by_their_own_optimizer_is_detached_in_the_later_loss(tmp_path):
    outcome = run_as_script(tmp_path, LAGRANGE_MULTIPLIER_STEPPED_FIRST)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert "multiplier.detach()" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, LAGRANGE_MULTIPLIER_STEPPED_FIRST_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))
    assert torch.equal(fixed["final_multiplier"], correct["final_multiplier"])


def test_the_detached_multiplier_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, LAGRANGE_MULTIPLIER_STEPPED_FIRST_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_multiplier_whose_gradient_accumulates_is_not_detached(tmp_path):
    outcome = run_as_script(tmp_path, LAGRANGE_MULTIPLIER_ACCUMULATING)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103", [d.code for d in outcome.diagnoses]
    assert all(".detach()" not in (suggestion.replacement or "") for suggestion in diagnosis.help)
