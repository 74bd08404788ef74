"""Held-out set 39's cause: an old-style autograd.Function with no backward.

discuss.pytorch.org 1284 (a Graves mixture-density loss): the loss is written as a
`torch.autograd.Function` subclass with an `__init__`, an instance `forward` and no `backward`, and
called `Loss()(x, para)`. PyTorch refuses it ("Legacy autograd function with non-static forward
method"). AD174 named the call and advised `Loss.apply` with static `forward` and `backward`, a
backward the class never had. A Function exists to supply a hand-written backward; one that has
none and whose forward is written with differentiable PyTorch operations is a module: the line
named is now the class and the help rewrites it as an `nn.Module` (base class, `super().__init__()`,
`save_for_backward` dropped). Tested on the set-39 case and on another shape written before the
change was run on it (a Dice loss with no `__init__`, built once and called as `criterion(...)` in a
training loop); a Function with its own backward keeps the `.apply` help, and a new-style Function
runs silent."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET39 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set39")
LEGACY = "mixture_density_loss_written_as_legacy_function.py"

DICE = """
    import torch
    import torch.nn as nn

    torch.manual_seed(3)


    class DiceLoss(torch.autograd.Function):
        def forward(self, pred, target):
            probs = torch.sigmoid(pred)
            inter = (probs * target).sum()
            return 1 - (2 * inter + 1) / (probs.sum() + target.sum() + 1)


    net = nn.Conv2d(1, 1, 3, padding=1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    images = torch.rand(4, 1, 8, 8)
    masks = (torch.rand(4, 1, 8, 8) > 0.5).float()
    criterion = DiceLoss()
    losses = []
    for step in range(4):
        optimizer.zero_grad()
        loss = criterion(net(images), masks)
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

    result = {"losses": torch.stack(losses), "weight": net.weight.detach().clone()}
"""

DICE_BY_HAND = DICE.replace("class DiceLoss(torch.autograd.Function):", "class DiceLoss(nn.Module):")

STRAIGHT_THROUGH = """
    import torch

    torch.manual_seed(4)


    class BinActive(torch.autograd.Function):
        def forward(self, input):
            self.save_for_backward(input)
            return input.sign()

        def backward(self, grad_output):
            input, = self.saved_tensors
            return grad_output * (input.abs() <= 1).float()


    w = torch.randn(6, requires_grad=True)
    x = torch.randn(6)
    loss = (BinActive()(w) * x).sum()
    loss.backward()
"""

NEW_STYLE = """
    import torch

    torch.manual_seed(5)


    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 2 * x * grad


    w = torch.randn(5, requires_grad=True)
    Square.apply(w).sum().backward()
    result = {"grad": w.grad.clone()}
"""


def _fixed_equals_correct(tmp_path, outcome, correct_source):
    fixed = apply_help(outcome)
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    correct = run_plain(tmp_path, correct_source, "correct.py")["result"]
    for key in correct:
        left, right = fixed_result[key], correct[key]
        pairs = zip(left, right) if isinstance(left, list) else [(left, right)]
        for a, b in pairs:
            assert torch.equal(a, b), key
    fixed_outcome = run_program(tmp_path, fixed, "fixed_watched.py")
    assert fixed_outcome.error is None and not fixed_outcome.diagnoses
    return fixed


def test_the_set39_case_names_the_class_and_its_help_gives_the_correct_version(tmp_path):
    source = open(os.path.join(SET39, "cases", LEGACY)).read()
    outcome = run_as_script(tmp_path, source)
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD174"
    assert outcome.diagnosis.primary.line == 20
    help = outcome.diagnosis.help[0]
    assert "nn.Module" in help.message and help.replacement is not None
    fixed = _fixed_equals_correct(tmp_path, outcome, open(os.path.join(SET39, "correct", LEGACY)).read())
    assert "class Loss(nn.Module):" in fixed and "super().__init__()" in fixed and "self.save_for_backward(para)" not in fixed


def test_a_function_without_init_called_through_an_instance_becomes_a_module(tmp_path):
    outcome = run_as_script(tmp_path, textwrap.dedent(DICE))
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD174"
    assert outcome.diagnosis.primary.source.startswith("class DiceLoss")
    _fixed_equals_correct(tmp_path, outcome, textwrap.dedent(DICE_BY_HAND))


def test_a_function_with_its_own_backward_keeps_the_apply_help(tmp_path):
    outcome = run_as_script(tmp_path, textwrap.dedent(STRAIGHT_THROUGH))
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD174"
    assert all("nn.Module" not in h.message for h in outcome.diagnosis.help)
    assert "BinActive.apply" in apply_help(outcome)


def test_a_new_style_function_stays_silent(tmp_path):
    outcome = run_program(tmp_path, textwrap.dedent(NEW_STYLE), "square.py")
    assert outcome.error is None and not outcome.diagnoses
