"""Set AN (docs/lint.md, "A forty-second held-out check: set AN"): 15 default findings,
1 real, 8 debatable, 6 false.  The causes fixed here, each with its false shape
(silent), a real shape still found, and a torch check:

- ADL023 in DBNet.pytorch (https://github.com/WenmuZhou/DBNet.pytorch,
  `trainer/trainer.py`): after `loss_dict['loss'].backward()`, a loop over the
  dictionary's own items re-binds each entry to `value.item()`, and only then
  `train_loss += loss_dict['loss']` adds a float.  A dictionary whose entry (or every
  entry, by a loop over its own keys or items, on every iteration) is replaced by
  `.item()` / `float()` / `.detach()` between the backward and the sum no longer
  holds the graph there.  The shapes below are not DBNet's: a `.keys()` loop with
  `float(...)`, and a single entry re-bound; the loop that skips the summed entry
  and the loop that fills another dictionary are still found.
"""

from __future__ import annotations

import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename="<string>", selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# --- ADL023: dictionary entries replaced by numbers before the sum ---------------------

TRAIN = '''
import torch


def criterion(out, y):
    main = ((out - y) ** 2).mean()
    reg = out.abs().mean()
    return {"total": main + 0.1 * reg, "main": main, "reg": reg}


def train(model, batches, optimizer):
    running = 0.0
    for x, y in batches:
        losses = criterion(model(x), y)
        optimizer.zero_grad()
        losses["total"].backward()
        optimizer.step()
RELEASE
        running += losses["total"]
    return running
'''

ALL_KEYS = TRAIN.replace("RELEASE", '''        for name in losses.keys():
            losses[name] = float(losses[name])''')
ONE_ENTRY = TRAIN.replace("RELEASE", '''        losses["total"] = losses["total"].item()''')
SKIPS_TOTAL = TRAIN.replace("RELEASE", '''        for name in losses:
            if name != "total":
                losses[name] = losses[name].item()''')
OTHER_DICT = TRAIN.replace("RELEASE", '''        logged = {}
        for name, value in losses.items():
            logged[name] = value.item()''')


def test_entries_released_before_the_sum_are_silent():
    assert [c for c in _found(ALL_KEYS) if c[0] == "ADL023"] == []
    assert [c for c in _found(ONE_ENTRY) if c[0] == "ADL023"] == []


def test_the_summed_entry_kept_is_still_found():
    line = _line(SKIPS_TOTAL, 'running += losses["total"]')
    assert ("ADL023", line) in _found(SKIPS_TOTAL)
    line = _line(OTHER_DICT, 'running += losses["total"]')
    assert ("ADL023", line) in _found(OTHER_DICT)


def _run(source, name):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    return _load(source, name)["train"](model, batches, optimizer)


def test_torch_released_sum_is_a_number_and_kept_sum_holds_the_graph():
    assert isinstance(_run(ALL_KEYS, "an_all_keys"), float)
    assert isinstance(_run(ONE_ENTRY, "an_one_entry"), float)
    kept = _run(SKIPS_TOTAL, "an_skips")
    assert isinstance(kept, torch.Tensor) and kept.grad_fn is not None
    kept = _run(OTHER_DICT, "an_other")
    assert isinstance(kept, torch.Tensor) and kept.grad_fn is not None


# --- ADL032: a documented blend of the semi-gradient and the residual gradient ---------
# ILSwiss (https://github.com/Ericonaldo/ILSwiss, `rlkit/torch/algorithms/ddpg/ddpg.py`):
# `residual_gradient_weight` c mixes `(1-c) * normal td gradient + c * residual gradient`;
# the same prediction is set against a detached target too.  Re-written here as a
# state-value critic with an explicit mix, not DDPG's code.

CRITIC = '''
import torch
import torch.nn.functional as F


class Critic:
    def __init__(self, value_net, gamma=0.9, mix=0.3):
        self.value_net, self.gamma, self.mix = value_net, gamma, mix
        self.optimizer = torch.optim.SGD(self.value_net.parameters(), lr=0.1)

    def update(self, states, rewards, next_states):
        prediction = self.value_net(states)
BODY
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
'''

BLEND = CRITIC.replace("BODY", '''        semi_target = rewards + self.gamma * self.value_net(next_states)
        semi_target = semi_target.detach()
        residual_target = rewards + self.gamma * self.value_net(next_states)
        semi_loss = F.mse_loss(prediction, semi_target)
        residual_loss = F.mse_loss(prediction, residual_target)
        loss = (1 - self.mix) * semi_loss + self.mix * residual_loss''')
FORGOT = CRITIC.replace("BODY", '''        target = rewards + self.gamma * self.value_net(next_states)
        loss = F.mse_loss(prediction, target)''')


def test_residual_blend_is_silent_and_a_forgotten_detach_is_found():
    assert [c for c in _found(BLEND) if c[0] == "ADL032"] == []
    line = _line(FORGOT, "loss = F.mse_loss(prediction, target)")
    assert ("ADL032", line) in _found(FORGOT)


def _grad(source, name):
    torch.manual_seed(1)
    net = nn.Linear(2, 1)
    critic = _load(source, name)["Critic"](net)
    states, next_states, rewards = torch.randn(5, 2), torch.randn(5, 2), torch.randn(5, 1)
    before = net.weight.detach().clone()
    critic.update(states, rewards, next_states)
    return (before - net.weight.detach()) / 0.1, before, states, rewards, next_states


def _hand_grad(weight, bias, states, rewards, next_states, full: bool):
    w = weight.clone().requires_grad_(True)
    pred = states @ w.t() + bias
    nxt = next_states @ w.t() + bias
    target = rewards + 0.9 * (nxt if full else nxt.detach())
    ((pred - target) ** 2).mean().backward()
    return w.grad


def test_torch_blend_is_the_documented_mix_and_forgot_is_not_the_td_update():
    grad, before, s, r, n = _grad(BLEND, "an_blend")
    torch.manual_seed(1)
    bias = nn.Linear(2, 1).bias.detach()
    semi = _hand_grad(before, bias, s, r, n, full=False)
    full = _hand_grad(before, bias, s, r, n, full=True)
    assert torch.allclose(grad, 0.7 * semi + 0.3 * full, atol=1e-5)
    grad, before, s, r, n = _grad(FORGOT, "an_forgot")
    assert torch.allclose(grad, _hand_grad(before, bias, s, r, n, full=True), atol=1e-5)
    assert not torch.allclose(grad, _hand_grad(before, bias, s, r, n, full=False), atol=1e-4)
