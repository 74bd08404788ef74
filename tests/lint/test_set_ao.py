"""Set AO (docs/lint.md, "A forty-third held-out check: set AO"): 24 default findings,
6 real, 1 debatable, 17 false.  The causes fixed here, each with a false shape
(silent), a real shape still found, and a torch check.  None of the shapes is a
copy of the set's code:

- ADL024 in zhihanyang2022/off-policy-continuous-control
  (https://github.com/zhihanyang2022/off-policy-continuous-control,
  `offpcc/algorithms/convolutional_sac.py`): `Q1_optimizer.zero_grad(); Q1_loss.backward();
  Q1_optimizer.step()` with `Q1` on a shared encoder's output is `Q1`'s own loss;
  the actor's `Q1(embedding.detach(), a)` was taken as evidence that `Q1`'s loss
  and the encoder's are separate.
- ADL003 in Rafael1s/Deep-Reinforcement-Learning-Algorithms
  (https://github.com/Rafael1s/Deep-Reinforcement-Learning-Algorithms, `*/sac_agent.py`):
  `q1, q2 = critic(s, a)`, a clear, `q1_loss.backward()`, a step: the step changes
  only what `q1`'s position reached (`zero_grad()` sets gradients to `None`), so
  `q2_loss`'s backward is not shown to fail.
- ADL003 in PaddlePaddle/PARL (https://github.com/PaddlePaddle/PARL,
  `parl/algorithms/torch/cql.py`, `mappo.py`): an optimizer over `[log_alpha]` steps
  that leaf alone; `model.value(obs)` (a method of the parent) is not evidence that
  the stepped part `model.actor` runs.
- ADL028 in lukecavabarrett/pna (https://github.com/lukecavabarrett/pna,
  `multitask_benchmark/util/train.py`): a project helper in another module returning
  `sum(... .item() ...) / n` gives a float.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",), filename="<string>"):
    return [(f.code, f.line) for f in lint_source(source, filename=filename, selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# --- ADL024: a network's own loss right after its optimizer's clear -------------------

HEADS = '''
import torch
from torch import nn


class Agent:
    def __init__(self):
        self.trunk = nn.Linear(4, 8)
        self.value_head = nn.Linear(8, 1)
        self.policy_head = nn.Linear(8, 2)
        self.trunk_opt = torch.optim.SGD(self.trunk.parameters(), lr=0.1)
        self.value_opt = torch.optim.SGD(self.value_head.parameters(), lr=0.1)
        self.policy_opt = torch.optim.SGD(self.policy_head.parameters(), lr=0.1)

    def update(self, obs, ret):
        feats = self.trunk(obs)
        value = self.value_head(feats)
        value_loss = (value - ret).pow(2).mean()
        self.value_opt.zero_grad()
        self.trunk_opt.zero_grad()
        value_loss.backward()
        self.value_opt.step()
        self.trunk_opt.step()
        logits = self.policy_head(feats.detach())
        baseline = self.value_head(feats.detach())
        policy_loss = -(logits.log_softmax(-1)[:, 0] * (ret - baseline).squeeze(-1)).mean()
        self.policy_opt.zero_grad()
        policy_loss.backward()
        self.policy_opt.step()
'''

GAN = '''
import torch
from torch import nn


def train(gen, disc, g_opt, d_opt, z, real):
    fake = gen(z)
    d_opt.zero_grad()
    d_loss = disc(real).mean() - disc(fake.detach()).mean()
    d_loss.backward()
    g_opt.zero_grad()
    g_loss = -disc(fake).mean()
    g_loss.backward()
    g_opt.step()
    d_opt.step()


gen = nn.Linear(3, 4)
disc = nn.Linear(4, 1)
g_opt = torch.optim.Adam(gen.parameters())
d_opt = torch.optim.Adam(disc.parameters())
'''


def test_adl024_own_loss_after_its_clear_is_silent():
    assert not [f for f in _found(HEADS, ("ADL024",))]


def test_adl024_generator_loss_reaching_discriminator_step_still_found():
    assert ("ADL024", _line(GAN, "g_loss.backward()")) in _found(GAN, ("ADL024",))


def test_adl024_own_loss_steps_only_its_own_gradients():
    torch.manual_seed(0)
    agent = _load(HEADS, "heads_ao")["Agent"]()
    obs, ret = torch.randn(5, 4), torch.randn(5, 1)
    feats = agent.trunk(obs)
    expected = torch.autograd.grad((agent.value_head(feats) - ret).pow(2).mean(),
                                   list(agent.value_head.parameters()))
    before = [p.detach().clone() for p in agent.value_head.parameters()]
    agent.update(obs, ret)
    after = list(agent.value_head.parameters())
    # SGD without momentum: the value head moved by exactly its own loss's gradient
    for b, a, g in zip(before, after, expected):
        assert torch.allclose(a.detach(), b - 0.1 * g)


# --- ADL003: positions of an unpacked result, a named-tensor optimizer, a method -------

TWIN = '''
import torch
from torch import nn


class Twin(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
        self.b = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))

    def forward(self, x):
        return self.a(x), self.b(x)


class Trainer:
    def __init__(self):
        self.twin = Twin()
        self.opt = torch.optim.SGD(self.twin.parameters(), lr=0.1)

    def fit(self, batches):
        for x, y in batches:
            self.step(x, y)

    def step(self, x, y):
        twin, opt = self.twin, self.opt
        left, right = self.twin(x)
        loss_right = (right - y).abs().mean()
        FIRST
        self.opt.zero_grad()
        FIRST_BACKWARD
        self.opt.step()
        self.opt.zero_grad()
        loss_right.backward()
        self.opt.step()


def fit(batches):
    Trainer().fit(batches)
'''
TWIN_FALSE = TWIN.replace("FIRST_BACKWARD", "loss_left.backward()").replace(
    "FIRST", "loss_left = (left - y).pow(2).mean()")
TWIN_REAL = TWIN.replace("FIRST_BACKWARD", "both.backward(retain_graph=True)").replace(
    "FIRST", "both = (left + right - y).abs().mean()")


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(2)]


def test_adl003_other_position_of_unpacked_result_is_silent():
    assert not _found(TWIN_FALSE, ("ADL003",))
    _load(TWIN_FALSE, "twin_false_ao")["fit"](_batches())  # runs: the step changed `a` only


def test_adl003_whole_result_backward_then_position_still_found():
    assert ("ADL003", _line(TWIN_REAL, "self.opt.step()")) in _found(TWIN_REAL, ("ADL003",))
    with pytest.raises(RuntimeError, match="inplace"):
        _load(TWIN_REAL, "twin_real_ao")["fit"](_batches())


def test_adl003_fix_of_real_twin_runs():
    fixed = TWIN_REAL.replace("        loss_right.backward()\n", "        (self.twin(x)[1] - y).abs().mean().backward()\n")
    assert not _found(fixed, ("ADL003",))
    _load(fixed, "twin_fixed_ao")["fit"](_batches())


TEMPERATURE = '''
import torch
from torch import nn


def fit(batches):
    net = nn.Linear(4, 2)
    log_temp = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam(net.parameters())
    temp_opt = torch.optim.Adam([log_temp], lr=1e-3)
    for x in batches:
        logits = net(x)
        ent = -(logits.softmax(-1) * logits.log_softmax(-1)).sum(-1).mean()
        temp = log_temp.exp()
        reg = temp * (ent - 0.5)
        temp_opt.zero_grad()
        t_loss = -reg
        t_loss.backward(retain_graph=True)
        temp_opt.step()
        loss = logits.pow(2).mean() + reg
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def test_adl003_optimizer_over_named_leaf_is_silent():
    assert not _found(TEMPERATURE, ("ADL003",))
    torch.manual_seed(0)
    _load(TEMPERATURE, "temperature_ao")["fit"]([torch.randn(5, 4) for _ in range(2)])


METHOD = '''
import torch


def update(net, obs, ret, adv, old_logp, act):
    pi_opt = torch.optim.Adam(net.policy_net.parameters(), lr=3e-4)
    v_opt = torch.optim.Adam(net.value_net.parameters(), lr=1e-3)
    logp = net.log_prob(obs, act)
    baseline = VALUE
    pi_loss = -(torch.exp(logp - old_logp) * adv).mean()
    pi_opt.zero_grad()
    pi_loss.backward(retain_graph=True)
    pi_opt.step()
    v_loss = (baseline - ret).pow(2).mean()
    v_opt.zero_grad()
    v_loss.backward()
    v_opt.step()
'''


def test_adl003_method_of_parent_is_no_evidence_of_the_stepped_part():
    assert not _found(METHOD.replace("VALUE", "net.evaluate(obs)"), ("ADL003",))


def test_adl003_stepped_part_called_before_step_still_found():
    source = METHOD.replace("VALUE", "net.value_net(net.policy_net(obs))")
    assert ("ADL003", _line(source, "pi_opt.step()")) in _found(source, ("ADL003",))


# --- ADL028: a project helper in another module returning `.item()` sums ---------------

HELPERS = '''
def mean_loss(outputs, targets, loss_fn):
    return sum(loss_fn(o, t).item() for o, t in zip(outputs, targets)) / len(outputs)


def mean_loss_tensor(outputs, targets, loss_fn):
    return sum(loss_fn(o, t) for o, t in zip(outputs, targets)) / len(outputs)
'''

TRAINING = '''
import torch
from torch import nn

from pkg.metrics import HELPER


def epoch(model, opt, batches, val):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    outs = [model(x) for x, _ in val]
    return HELPER(outs, [y for _, y in val], nn.functional.mse_loss)


def main():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    batches = [(torch.randn(4, 3), torch.randn(4, 1))]
    history = []
    for _ in range(3):
        history.append(epoch(model, opt, batches, batches))
    return history
'''


def _project(tmp_path, helper):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "metrics.py").write_text(HELPERS)
    train = tmp_path / "train.py"
    train.write_text(TRAINING.replace("HELPER", helper))
    return train


def test_adl028_project_helper_returning_numbers_is_silent(tmp_path, monkeypatch):
    train = _project(tmp_path, "mean_loss")
    assert not _found(train.read_text(), ("ADL028",), filename=str(train))
    monkeypatch.syspath_prepend(str(tmp_path))
    history = _load(train.read_text(), "train_ao")["main"]()
    assert all(isinstance(h, float) for h in history)


def test_adl028_project_helper_returning_tensors_still_found(tmp_path):
    train = _project(tmp_path, "mean_loss_tensor")
    assert ("ADL028", _line(train.read_text(), "history.append")) in \
        _found(train.read_text(), ("ADL028",), filename=str(train))
