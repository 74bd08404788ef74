"""Set AP (docs/lint.md, "A forty-fourth held-out check: set AP"): 10 default findings,
5 real, 3 debatable, 2 false.  The one false cause, fixed here with a false shape
(silent), another shape of the same cause (silent), real shapes of the same rule still
found, and torch checks.  None of the shapes is a copy of the set's code:

- ADL003 in agi-brain/xuance (https://github.com/agi-brain/xuance,
  `xuance/tensorflow/learners/policy_gradient/npg_learner.py` and its `mindspore` copy):
  `outputs, a_dist, v_pred = self.policy(obs)` with `critic_optimizer` over
  `self.policy.critic` only and the policy's class not read (a constructor argument):
  after `critic_optimizer.zero_grad(); c_loss.backward(retain_graph=True);
  critic_optimizer.step()`, `a_loss` (from `a_dist`) was taken as having saved the
  critic's parameters because `self.policy` contains `self.policy.critic`.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",), filename="<string>"):
    return [(f.code, f.line) for f in lint_source(source, filename=filename, selection=Selection(select=select))
            if f.code != "ADL000"]


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


class ActorCritic(nn.Module):
    """A policy with a shared trunk and separate heads, as the lint sources' imported
    class would be: `forward` returns (action distribution, value)."""

    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
        self.pi_head = nn.Linear(8, 3)
        self.v_head = nn.Linear(8, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return torch.distributions.Categorical(logits=self.pi_head(h)), self.v_head(h).squeeze(-1)


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
        self.main_head = nn.Linear(6, 3)
        self.aux_head = nn.Linear(6, 2)

    def forward(self, x):
        h = self.body(x)
        return self.main_head(h), self.aux_head(h)


IMPORT_POLICY = "from agents.nets import ActorCritic\n"

LEARNER = IMPORT_POLICY + '''
import torch
from torch import nn


class Learner:
    def __init__(self, net: nn.Module):
        self.net = net
        self.pi_opt = torch.optim.Adam(self.net.pi_head.parameters(), lr=1e-2)
        self.v_opt = torch.optim.Adam(self.net.v_head.parameters(), lr=1e-2)

    def update(self, obs, act, ret, adv):
        dist, value = self.net(obs)
        PI_LOSS
        v_loss = (value - ret).pow(2).mean()
        self.v_opt.zero_grad()
        v_loss.backward(retain_graph=True)
        self.v_opt.step()
        self.pi_opt.zero_grad()
        pi_loss.backward()
        self.pi_opt.step()


def make():
    return Learner(ActorCritic())
'''
# false: the policy loss comes from the distribution's position only
LEARNER_FALSE = LEARNER.replace("PI_LOSS", "pi_loss = -(dist.log_prob(act) * adv).mean()")
# real: the advantage is the value position, not detached: the policy loss saved `v_head`
LEARNER_REAL = LEARNER.replace("PI_LOSS", "pi_loss = -(dist.log_prob(act) * (ret - value)).mean()")

FIT = '''from models import MultiTask
import torch
import torch.nn.functional as F


def fit(model, batches):
    aux_opt = torch.optim.SGD(model.aux_head.parameters(), lr=0.1)
    main_opt = torch.optim.SGD(model.main_head.parameters(), lr=0.1)
    for x, y_main, y_aux in batches:
        main_out, aux_out = model(x)
        main_loss = F.cross_entropy(main_out, y_main)
        aux_loss = F.mse_loss(aux_out, y_aux)
        aux_opt.zero_grad()
        aux_loss.backward(retain_graph=True)
        aux_opt.step()
        main_opt.zero_grad()
        main_loss.backward()
        main_opt.step()


def run(batches):
    fit(MultiTask(), batches)
'''

# the optimizer holds the called module itself (not a part): the AO rule for positions
# applies, and an unread forward keeps the claim
WHOLE = LEARNER_FALSE.replace("self.net.v_head.parameters()", "self.net.parameters()")


def _load(source, name):
    namespace = {"__name__": name, "ActorCritic": ActorCritic, "MultiTask": MultiTask}
    body = "\n".join(line for line in source.splitlines() if not line.startswith("from agents.nets")
                     and not line.startswith("from models"))
    exec(compile(body, f"<{name}>", "exec"), namespace)
    return namespace


def _rollout():
    torch.manual_seed(0)
    obs = torch.randn(6, 4)
    return obs, torch.randint(0, 3, (6,)), torch.randn(6), torch.randn(6)


def test_adl003_part_of_unread_policy_other_position_is_silent():
    assert not _found(LEARNER_FALSE, ("ADL003",))


def test_adl003_part_of_unread_policy_other_position_runs():
    torch.manual_seed(0)
    learner = _load(LEARNER_FALSE, "learner_false_ap")["make"]()
    obs, act, ret, adv = _rollout()
    pi_before = [p.detach().clone() for p in learner.net.pi_head.parameters()]
    learner.update(obs, act, ret, adv)  # runs: the value step changed `v_head`, not saved by `pi_loss`
    assert all(not torch.equal(b, a.detach()) for b, a in zip(pi_before, learner.net.pi_head.parameters()))


def test_adl003_same_position_of_unread_policy_still_found():
    assert ("ADL003", _line(LEARNER_REAL, "self.v_opt.step()")) in _found(LEARNER_REAL, ("ADL003",))
    learner = _load(LEARNER_REAL, "learner_real_ap")["make"]()
    with pytest.raises(RuntimeError, match="inplace"):
        learner.update(*_rollout())


def test_adl003_whole_module_optimizer_keeps_the_claim():
    assert ("ADL003", _line(WHOLE, "self.v_opt.step()")) in _found(WHOLE, ("ADL003",))
    learner = _load(WHOLE, "learner_whole_ap")["make"]()
    with pytest.raises(RuntimeError, match="inplace"):
        learner.update(*_rollout())  # the step changed the trunk, which `pi_loss` saved


def test_adl003_head_optimizer_in_a_function_other_position_is_silent():
    assert not _found(FIT, ("ADL003",))
    torch.manual_seed(0)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,)), torch.randn(4, 2)) for _ in range(2)]
    _load(FIT, "fit_ap")["run"](batches)  # runs


def test_adl003_older_loss_through_the_stepped_position_still_found():
    both = FIT.replace("main_loss = F.cross_entropy(main_out, y_main)",
                       "main_loss = F.cross_entropy(main_out, y_main) + aux_out.pow(2).mean()")
    assert ("ADL003", _line(both, "aux_opt.step()")) in _found(both, ("ADL003",))
    torch.manual_seed(0)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,)), torch.randn(4, 2))]
    with pytest.raises(RuntimeError, match="inplace"):
        _load(both, "fit_real_ap")["run"](batches)  # `aux_head`'s weight, saved, was stepped


# a same-file module class whose forward returns two values: the called module may be
# one (the function's callers pass it), its forward is not read at the call, so the
# claim stays (r73, r92); here the main output also goes through `aux_head`
SAME_FILE_CLASS = FIT.replace("from models import MultiTask\n", "").replace("def fit(", '''
class Shared(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.ReLU())
        self.main_head = torch.nn.Linear(6, 3)
        self.aux_head = torch.nn.Linear(6, 2)

    def forward(self, x):
        h = self.body(x)
        aux = self.aux_head(h)
        return self.main_head(h) + aux.mean(-1, keepdim=True), aux


def fit(''').replace("fit(MultiTask(), batches)", "fit(Shared(), batches)")


def test_adl003_same_file_class_of_that_arity_keeps_the_claim():
    assert ("ADL003", _line(SAME_FILE_CLASS, "aux_opt.step()")) in _found(SAME_FILE_CLASS, ("ADL003",))
    torch.manual_seed(0)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,)), torch.randn(4, 2))]
    with pytest.raises(RuntimeError, match="inplace"):
        _load(SAME_FILE_CLASS, "fit_shared_ap")["run"](batches)
