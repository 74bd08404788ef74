"""Causes left by stops 48 and 49, worked on in stop 50 (docs/bug-reports.md, "Causes left by stops
48 and 49, worked on (stop 50)"). The other shapes below were written, and run under torch and the
frozen copy of main, before the change was run on them.

- AD327, a term of the loss that a loss module or function of the user's returned, computed from a
  copy cut from the graph, beside terms that train (set 49's
  `rf_separation_soft_demod_loss_through_numpy`: a soft-demodulation term computed from
  `sig_pred.detach().cpu()` through NumPy, `torch.tensor(...)` again, and `loss.requires_grad_(True)`
  on the sum). The loss is `criterion(...)` where backward() is called, so AD206, which reads the
  terms in that function, saw one term with a graph. The loss function is now read: the cut is
  named, the term said to train nothing, and the help is advice (the term must be written in torch).
"""

from __future__ import annotations

import os

import torch

from autograd_doctor.diagnosis import codes
from helpers import run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET49 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set49")
RF = "rf_separation_soft_demod_loss_through_numpy"


def _source(kind: str, name: str) -> str:
    with open(os.path.join(SET49, kind, name + ".py"), encoding="utf-8") as stream:
        return stream.read()


# an nn.Module loss (image denoising): an edge term from `denoised.detach().cpu().numpy()` through
# np.gradient, made a tensor again, scaled and added to the L1 loss
EDGE_TERM_THROUGH_NUMPY = '''
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def edge_map(images):
    gy, gx = np.gradient(images, axis=(-2, -1))
    return np.sqrt(gx ** 2 + gy ** 2)


class EdgeAwareLoss(nn.Module):
    def __init__(self, edge_weight=0.5):
        super().__init__()
        self.edge_weight = edge_weight

    def forward(self, denoised, clean):
        out_np = denoised.detach().cpu().numpy()
        edges_out = edge_map(out_np)
        edges_clean = edge_map(clean.cpu().numpy())
        edge_loss = torch.tensor(np.abs(edges_out - edges_clean).mean(), dtype=torch.float32)
        pixel_loss = F.l1_loss(denoised, clean)
        return pixel_loss + self.edge_weight * edge_loss


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
criterion = EdgeAwareLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
clean = torch.rand(4, 1, 16, 16)
for step in range(3):
    noisy = clean + 0.1 * torch.randn_like(clean)
    optimizer.zero_grad()
    loss = criterion(model(noisy), clean)
    loss.backward()
    optimizer.step()
result = {"weights": [p.detach().clone() for p in model.parameters()]}
'''

# a plain loss function (segmentation): 1 - Dice, the Dice a NumPy metric of
# `torch.sigmoid(logits).detach().numpy()`, added by `loss = loss + dice_term`
DICE_TERM_THROUGH_NUMPY_METRIC = '''
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def dice_score(probabilities, masks, eps=1e-6):
    intersection = (probabilities * masks).sum()
    return (2 * intersection + eps) / (probabilities.sum() + masks.sum() + eps)


def bce_dice_loss(logits, masks):
    bce = F.binary_cross_entropy_with_logits(logits, masks)
    probabilities = torch.sigmoid(logits).detach().numpy()
    dice = dice_score(probabilities, masks.numpy())
    dice_term = torch.tensor(1.0 - dice)
    loss = bce
    loss = loss + dice_term
    return loss


def train(net, images, masks, optimizer):
    for step in range(3):
        optimizer.zero_grad()
        logits = net(images)
        loss = bce_dice_loss(logits, masks)
        loss.backward()
        optimizer.step()


net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
images = torch.randn(2, 3, 12, 12)
masks = (torch.rand(2, 1, 12, 12) > 0.5).float()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
train(net, images, masks, optimizer)
result = {"weights": [p.detach().clone() for p in net.parameters()]}
'''

# a callable class, not a module (motion forecasting): a jerk penalty read with `.item()`,
# made a tensor again and added to the MSE
SMOOTHNESS_TERM_THROUGH_ITEM = '''
import torch
from torch import nn

torch.manual_seed(0)


class ForecastLoss:
    def __init__(self, smooth_weight):
        self.smooth_weight = smooth_weight

    def __call__(self, waypoints, target):
        jerk = waypoints.diff(dim=1).diff(dim=1).pow(2).mean().item()
        smooth = torch.tensor(jerk)
        return nn.functional.mse_loss(waypoints, target) + self.smooth_weight * smooth


model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 10))
loss_fn = ForecastLoss(0.3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
history, future = torch.randn(16, 6), torch.randn(16, 5, 2)
for step in range(3):
    optimizer.zero_grad()
    loss = loss_fn(model(history).view(16, 5, 2), future)
    loss.backward()
    optimizer.step()
result = {"weights": [p.detach().clone() for p in model.parameters()]}
'''

# silent: a target smoothed in NumPy from the detached prediction, compared with the live
# prediction (a stop-gradient target)
TARGET_FROM_DETACHED_PREDICTION = '''
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class SmoothTargetLoss(nn.Module):
    def forward(self, pred, label):
        smoothed = np.convolve(pred.detach().numpy().ravel(), np.ones(3) / 3, mode="same")
        target = torch.tensor(smoothed.reshape(pred.shape), dtype=torch.float32)
        return F.mse_loss(pred, label) + 0.1 * F.mse_loss(pred, target)


model = nn.Linear(4, 3)
criterion = SmoothTargetLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 3)
for step in range(3):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
result = {"weights": [p.detach().clone() for p in model.parameters()]}
'''

# silent: a NumPy Dice kept on the module for logging, not added to the loss
METRIC_LOGGED_NOT_ADDED = '''
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


class BceWithDiceLog(nn.Module):
    def forward(self, logits, masks):
        probabilities = torch.sigmoid(logits).detach().numpy()
        self.last_dice = torch.tensor((2 * (probabilities * masks.numpy()).sum() + 1e-6)
                                      / (probabilities.sum() + masks.numpy().sum() + 1e-6))
        loss = F.binary_cross_entropy_with_logits(logits, masks)
        return loss


net = nn.Conv2d(3, 1, 3, padding=1)
criterion = BceWithDiceLog()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
images, masks = torch.randn(2, 3, 8, 8), (torch.rand(2, 1, 8, 8) > 0.5).float()
for step in range(3):
    optimizer.zero_grad()
    loss = criterion(net(images), masks)
    loss.backward()
    optimizer.step()
result = {"weights": [p.detach().clone() for p in net.parameters()]}
'''

# silent: a deliberate constant (np.log of the class count) subtracted; it comes from no cut
CONSTANT_OFFSET = '''
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def kl_to_uniform_loss(logits, labels, classes):
    offset = torch.tensor(np.log(classes), dtype=torch.float32)
    return F.cross_entropy(logits, labels) - offset


model = nn.Linear(5, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 5), torch.randint(0, 4, (8,))
for step in range(3):
    optimizer.zero_grad()
    loss = kl_to_uniform_loss(model(x), y, 4)
    loss.backward()
    optimizer.step()
result = {"weights": [p.detach().clone() for p in model.parameters()]}
'''

# silent: the denoiser's edge term written in torch
EDGE_TERM_IN_TORCH = '''
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)


def edge_map(images):
    gx = images[..., :, 1:] - images[..., :, :-1]
    gy = images[..., 1:, :] - images[..., :-1, :]
    return gx[..., :-1, :].pow(2).add(gy[..., :, :-1].pow(2)).add(1e-12).sqrt()


class EdgeAwareLoss(nn.Module):
    def forward(self, denoised, clean):
        edge_loss = (edge_map(denoised) - edge_map(clean)).abs().mean()
        return F.l1_loss(denoised, clean) + 0.5 * edge_loss


model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 3, padding=1))
criterion = EdgeAwareLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
clean = torch.rand(4, 1, 16, 16)
for step in range(3):
    noisy = clean + 0.1 * torch.randn_like(clean)
    optimizer.zero_grad()
    loss = criterion(model(noisy), clean)
    loss.backward()
    optimizer.step()
result = {"weights": [p.detach().clone() for p in model.parameters()]}
'''


def _line_of(outcome, text: str) -> int:
    """The one line of the program that starts with `text`."""
    (number,) = [n for n, line in enumerate(outcome.source.splitlines(), start=1) if line.strip().startswith(text)]
    return number


def _cut_terms(outcome) -> list:
    return [d for d in outcome.diagnoses if d.code == codes.CUT_TERM_IN_CALLED_LOSS]


def test_the_set49_soft_demodulation_term_is_named_at_its_detach(tmp_path):
    outcome = run_program(tmp_path, _source("cases", RF))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == codes.CUT_TERM_IN_CALLED_LOSS
    assert diagnosis.primary.line == _line_of(outcome, "pred_tf = split_to_complex_batch(sig_pred.detach().cpu())")
    assert "sig_pred.detach()" in diagnosis.primary.note
    roles = {location.role: location.line for location in diagnosis.related}
    assert roles["term"] == _line_of(outcome, "soft_loss = self.criterion(")
    assert roles["no effect"] == _line_of(outcome, "loss.requires_grad_(True)")
    assert roles["loss"] == _line_of(outcome, "loss = criterion(sig_pred, sig_target.to(device))")
    assert "trains nothing" in diagnosis.notes[0] and "soft_loss" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement is None  # advice: the demodulator must be written in torch
    assert "torch operations on sig_pred itself" in diagnosis.help[0].message


def test_the_set49_change_demodulating_in_torch_is_silent_and_trains_the_soft_term(tmp_path):
    outcome = run_program(tmp_path, _source("correct", RF))
    assert outcome.error is None and not outcome.diagnoses
    buggy = run_plain(tmp_path, _source("cases", RF), "buggy.py")["result"]["weights"]
    correct = run_plain(tmp_path, _source("correct", RF), "correct.py")["result"]["weights"]
    assert not all(torch.allclose(a, b) for a, b in zip(buggy, correct))  # the soft term now moves weights


def test_an_edge_term_of_a_loss_module_through_numpy_is_named(tmp_path):
    outcome = run_program(tmp_path, EDGE_TERM_THROUGH_NUMPY)
    (diagnosis,) = _cut_terms(outcome)
    assert diagnosis.primary.line == _line_of(outcome, "out_np = denoised.detach().cpu().numpy()")
    assert {location.role: location.line for location in diagnosis.related}["term"] == \
        _line_of(outcome, "edge_loss = torch.tensor(")
    assert "edge_loss" in diagnosis.notes[0] and diagnosis.help[0].replacement is None


def test_a_dice_term_of_a_loss_function_through_a_numpy_metric_is_named(tmp_path):
    outcome = run_program(tmp_path, DICE_TERM_THROUGH_NUMPY_METRIC)
    (diagnosis,) = _cut_terms(outcome)
    assert diagnosis.primary.line == _line_of(outcome, "probabilities = torch.sigmoid(logits).detach().numpy()")
    assert "dice_term" in diagnosis.notes[0] and "bce_dice_loss()" in diagnosis.notes[0]


def test_a_penalty_of_a_callable_class_read_with_item_is_named(tmp_path):
    outcome = run_program(tmp_path, SMOOTHNESS_TERM_THROUGH_ITEM)
    (diagnosis,) = _cut_terms(outcome)
    assert diagnosis.primary.line == _line_of(outcome, "jerk = waypoints.diff(dim=1)")
    assert "ForecastLoss.__call__()" in diagnosis.notes[0]


def test_constant_values_that_are_meant_stay_silent(tmp_path):
    for source in (TARGET_FROM_DETACHED_PREDICTION, METRIC_LOGGED_NOT_ADDED, CONSTANT_OFFSET, EDGE_TERM_IN_TORCH):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses, [str(d) for d in outcome.diagnoses]


# silent: a discriminator's loss function, given the discriminator and the generator's output; the
# fake term reads `fake.detach()` (meant: the generator is not trained by this loss), and the
# discriminator's own call carries the graph
DISCRIMINATOR_LOSS_ON_DETACHED_FAKES = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    def discriminator_loss(discriminator, real, fake):
        real_term = F.binary_cross_entropy_with_logits(discriminator(real), torch.ones(real.shape[0], 1))
        fake_scores = discriminator.forward(fake.detach())
        fake_term = F.binary_cross_entropy_with_logits(fake_scores, torch.zeros(fake.shape[0], 1))
        return real_term + fake_term + torch.tensor(0.01)


    generator, discriminator = nn.Linear(3, 4), nn.Linear(4, 1)
    optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.1)
    for step in range(2):
        optimizer.zero_grad()
        loss = discriminator_loss(discriminator, torch.randn(8, 4), generator(torch.randn(8, 3)))
        loss.backward()
        optimizer.step()
"""


def test_a_discriminator_loss_on_detached_fakes_stays_silent(tmp_path):
    outcome = run_program(tmp_path, DISCRIMINATOR_LOSS_ON_DETACHED_FAKES)
    assert outcome.error is None and not _cut_terms(outcome)


EDGE_LOSS_IN_TORCH = """
    import torch
    from torch import nn
    import torch.nn.functional as F


    def edge_map(images):
        gy, gx = torch.gradient(images, dim=(-2, -1))
        return torch.sqrt(gx ** 2 + gy ** 2)


    class EdgeAwareLoss(nn.Module):
        def forward(self, denoised, clean):
            edge_loss = (edge_map(denoised) - edge_map(clean)).abs().mean()
            return F.l1_loss(denoised, clean) + 0.5 * edge_loss
"""


def test_the_edge_term_written_in_torch_as_the_help_says_keeps_the_value_and_trains(tmp_path):
    buggy = run_plain(tmp_path, EDGE_TERM_THROUGH_NUMPY.replace("for step in range(3)", "for step in range(0)"),
                      "buggy.py")
    fixed = run_plain(tmp_path, EDGE_LOSS_IN_TORCH, "fixed.py")
    torch.manual_seed(1)
    model = torch.nn.Conv2d(1, 1, 3, padding=1)
    noisy, clean = torch.rand(2, 1, 12, 12), torch.rand(2, 1, 12, 12)
    gradients = {}
    for label, criterion in (("buggy", buggy["EdgeAwareLoss"]()), ("fixed", fixed["EdgeAwareLoss"]()),
                             ("l1", lambda out, target: torch.nn.functional.l1_loss(out, target))):
        model.zero_grad()
        loss = criterion(model(noisy), clean)
        loss.backward()
        gradients[label] = (loss.detach(), model.weight.grad.clone())
    assert torch.allclose(gradients["buggy"][0], gradients["fixed"][0])  # the same loss value
    assert torch.equal(gradients["buggy"][1], gradients["l1"][1])  # the NumPy term adds no gradient
    assert not torch.allclose(gradients["fixed"][1], gradients["l1"][1])  # written in torch, it trains
    assert not run_program(tmp_path, EDGE_TERM_IN_TORCH).diagnoses
