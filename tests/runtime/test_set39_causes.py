"""Held-out set 39's causes: an old-style autograd.Function with no backward; a module built with a
tensor that keeps the graph it was computed in.

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
runs silent.

fangdahan's style-transfer post: a content-loss module is built with the CNN's features of the
content image and keeps them, `self.target = target`; the CNN's weights require grad, so the target
carries the graph that the first backward() in the LBFGS closure frees. AD302 named the closure's
backward() and offered `retain_graph=True`. The tensor is the module's: the line named is now the
statement that stores it in `__init__` and the help detaches it there, when the weights behind it
also get gradients another way (nothing is cut off that nothing else trains). Tested on the set-39
case and on a perceptual-loss denoiser trained in a function that receives the loss module, written
before the change was run on it; the detached versions run silent."""

from __future__ import annotations

import os
import textwrap

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET39 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set39")
LEGACY = "mixture_density_loss_written_as_legacy_function.py"
STYLE = "style_transfer_content_target_keeps_cnn_graph.py"

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


def _fixed_equals_correct(tmp_path, outcome, correct_source, allowed=()):
    fixed = apply_help(outcome)
    fixed_result = run_plain(tmp_path, fixed, "fixed.py")["result"]
    correct = run_plain(tmp_path, correct_source, "correct.py")["result"]
    for key in correct:
        left, right = fixed_result[key], correct[key]
        pairs = zip(left, right) if isinstance(left, list) else [(left, right)]
        for a, b in pairs:
            assert torch.equal(a, b), key
    fixed_outcome = run_program(tmp_path, fixed, "fixed_watched.py")
    assert fixed_outcome.error is None
    assert {d.code for d in fixed_outcome.diagnoses} <= set(allowed)
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


PERCEPTUAL = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(6)


    class PerceptualLoss(nn.Module):
        def __init__(self, features, target):
            super().__init__()
            self.features = features
            self.target = target

        def forward(self, output):
            return F.mse_loss(self.features(output), self.target)


    def train(criterion, denoiser, noisy, steps):
        optimizer = torch.optim.SGD(denoiser.parameters(), lr=0.1)
        losses = []
        for step in range(steps):
            optimizer.zero_grad()
            loss = criterion(denoiser(noisy))
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return torch.stack(losses)


    features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Tanh())
    denoiser = nn.Conv2d(1, 1, 3, padding=1)
    clean = torch.rand(2, 1, 10, 10)
    noisy = clean + 0.1 * torch.randn(2, 1, 10, 10)
    criterion = PerceptualLoss(features, features(clean))
    losses = train(criterion, denoiser, noisy, 4)
    result = {"losses": losses, "weight": denoiser.weight.detach().clone()}
"""

PERCEPTUAL_BY_HAND = PERCEPTUAL.replace("self.target = target\n", "self.target = target.detach()\n")


def test_the_set39_style_transfer_names_the_stored_target_and_detaches_it(tmp_path):
    source = open(os.path.join(SET39, "cases", STYLE)).read()
    outcome = run_as_script(tmp_path, source)
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD302"
    assert outcome.diagnosis.primary.line == 20
    assert "target.detach()" in (outcome.diagnosis.help[0].replacement or "")
    _fixed_equals_correct(tmp_path, outcome, open(os.path.join(SET39, "correct", STYLE)).read())


def test_a_loss_module_built_with_a_target_inside_a_training_function(tmp_path):
    outcome = run_as_script(tmp_path, textwrap.dedent(PERCEPTUAL))
    assert outcome.error is not None
    assert outcome.diagnosis.code == "AD302"
    assert outcome.diagnosis.primary.source == "self.target = target"
    # The feature network is frozen by leaving it out of the optimizer: AD213 says so, rightly, in
    # the hand-written correct version as well.
    _fixed_equals_correct(tmp_path, outcome, textwrap.dedent(PERCEPTUAL_BY_HAND), allowed={"AD213"})


def test_the_detached_target_runs_silent(tmp_path):
    outcome = run_program(tmp_path, textwrap.dedent(PERCEPTUAL_BY_HAND), "perceptual.py")
    assert outcome.error is None and {d.code for d in outcome.diagnoses} <= {"AD213"}
