"""ADL003 on a twin critic whose class another file of the project defines (stop 45,
docs/lint.md "Causes left open by stop 44, worked on (stop 45)").

`q1, q2 = self.critic(s, a)`, a clear, `q1_loss.backward()`, a step, then
`q2_loss.backward()`: `zero_grad()` sets the gradients to `None` and a step skips
such a parameter, so the first step changes only what `q1`'s position reached.
ADL003 read the critic's `forward` per position only for a class of the linted
file; set AO's four Rafael1s SAC copies import `QNetwork` from `model.py`
(https://github.com/Rafael1s/Deep-Reinforcement-Learning-Algorithms) and kept a
false claim for `qf2_loss`.  Now the forward is read in its own file
(project_forwards.py).  The programs here are written for the test, not copied:
the left shape (`from model import ...`, six numbered layers), another shape (a
package, `nn.Sequential` heads, `.to(device)`), and near twins whose positions
share a layer (a trunk, a method of the critic that uses one, one module handed
to both heads' constructors), which fail under torch and are still reported.
"""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_source

AGENT = '''
import torch
import torch.nn.functional as F
from IMPORT


class Agent:
    def __init__(self, obs_dim, act_dim):
        self.critic = CTOR
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def update(self, s, a, target):
        q1, q2 = self.critic(s, a)
        q1_loss = F.mse_loss(q1, target)
        q2_loss = F.mse_loss(q2, target)
        self.critic_opt.zero_grad()
        q1_loss.backward(RETAIN)
        self.critic_opt.step()
        self.critic_opt.zero_grad()
        q2_loss.backward()
        self.critic_opt.step()
        return q1_loss.item() + q2_loss.item()
'''

NUMBERED = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class QNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=16):
        super().__init__()
        self.linear1 = nn.Linear(obs_dim + act_dim, hidden)
        self.linear2 = nn.Linear(hidden, 1)
        self.linear3 = nn.Linear(obs_dim + act_dim, hidden)
        self.linear4 = nn.Linear(hidden, 1)

    def forward(self, state, action):
        xu = torch.cat([state, action], 1)
        x1 = F.relu(self.linear1(xu))
        x1 = self.linear2(x1)
        x2 = F.relu(self.linear3(xu))
        x2 = self.linear4(x2)
        return x1, x2
'''

HEADS = '''
import torch
from torch import nn


def mlp(n_in, n_out):
    return nn.Sequential(nn.Linear(n_in, 16), nn.Tanh(), nn.Linear(16, n_out))


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q_a = mlp(obs_dim + act_dim, 1)
        self.q_b = mlp(obs_dim + act_dim, 1)

    def forward(self, obs, act):
        sa = torch.cat([obs, act], dim=-1)
        return self.q_a(sa), self.q_b(sa)
'''

# near twins: both positions go through one layer (a trunk; a method of the critic)
TRUNK = '''
import torch
from torch import nn


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.q_a = nn.Linear(16, 1)
        self.q_b = nn.Linear(16, 1)

    def forward(self, obs, act):
        h = self.trunk(torch.cat([obs, act], dim=-1))
        return self.q_a(h), self.q_b(h)
'''

METHOD = '''
import torch
from torch import nn


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.embed = nn.Linear(obs_dim + act_dim, 16)
        self.mix = nn.Linear(16, 16)
        self.q_a = nn.Linear(16, 1)
        self.q_b = nn.Linear(16, 1)

    def features(self, obs, act):
        return torch.tanh(self.mix(torch.tanh(self.embed(torch.cat([obs, act], dim=-1)))))

    def forward(self, obs, act):
        return self.q_a(self.features(obs, act)), self.q_b(self.features(obs, act))
'''

# a near twin whose heads are built around one module bound to a local name of
# `__init__` (`nn.Sequential(trunk, ...)` twice): the two positions share it
HANDED = '''
import torch
from torch import nn


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        trunk = nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.q_a = nn.Sequential(trunk, nn.Linear(16, 1))
        self.q_b = nn.Sequential(trunk, nn.Linear(16, 1))

    def forward(self, obs, act):
        sa = torch.cat([obs, act], dim=-1)
        return self.q_a(sa), self.q_b(sa)
'''


def _project(tmp_path, critic_source, package, retain=""):
    """agent.py beside model.py (the left shape), or agent.py with nets/critics.py;
    ``retain``: the first backward's argument (the near twins keep the shared
    layers' graph, so that only the step can make the second backward fail)."""
    if package:
        (tmp_path / "nets").mkdir()
        (tmp_path / "nets" / "__init__.py").write_text("")
        (tmp_path / "nets" / "critics.py").write_text(critic_source)
        agent = AGENT.replace("IMPORT", "nets.critics import TwinQ").replace(
            "CTOR", 'TwinQ(obs_dim, act_dim).to("cpu")')
    else:
        (tmp_path / "model.py").write_text(critic_source)
        agent = AGENT.replace("IMPORT", "model import QNetwork").replace("CTOR", "QNetwork(obs_dim, act_dim)")
    path = tmp_path / "agent.py"
    path.write_text(agent.replace("RETAIN", retain))
    return path


def _findings(path):
    return [(f.code, f.line, f.message) for f in lint_source(path.read_text(), filename=str(path),
                                                            selection=Selection(select=("ADL003",)))]


def _update(tmp_path, module_names):
    sys.path.insert(0, str(tmp_path))
    try:
        for name in module_names:
            sys.modules.pop(name, None)
        namespace = {"__name__": "agent_under_test"}
        exec(compile((tmp_path / "agent.py").read_text(), str(tmp_path / "agent.py"), "exec"), namespace)
        torch.manual_seed(0)
        agent = namespace["Agent"](3, 2)
        s, a, target = torch.randn(8, 3), torch.randn(8, 2), torch.randn(8, 1)
        return agent.update(s, a, target)
    finally:
        sys.path.remove(str(tmp_path))
        for name in module_names:
            sys.modules.pop(name, None)


def _second_step_line(path):
    lines = path.read_text().splitlines()
    return [i for i, line in enumerate(lines, 1) if "self.critic_opt.step()" in line][0]


@pytest.mark.parametrize("source, package, modules", [
    (NUMBERED, False, ["model"]),                       # the left shape: `from model import QNetwork`
    (HEADS, True, ["nets", "nets.critics"]),           # another shape: a package, `.to(...)`, Sequential heads
])
def test_separate_positions_of_a_project_critic_are_silent(tmp_path, source, package, modules):
    path = _project(tmp_path, source, package)
    assert _findings(path) == []
    _update(tmp_path, modules)  # runs: the first step changed only what `q1` reached


@pytest.mark.parametrize("source", [TRUNK, METHOD, HANDED])
def test_positions_sharing_a_layer_are_still_found(tmp_path, source):
    path = _project(tmp_path, source, True, retain="retain_graph=True")
    found = _findings(path)
    assert [(code, line) for code, line, _ in found] == [("ADL003", _second_step_line(path))]
    assert "`q2_loss`" in found[0][2]
    with pytest.raises(RuntimeError, match="inplace"):
        _update(tmp_path, ["nets", "nets.critics"])


def test_critic_not_found_in_the_project_keeps_the_claim(tmp_path):
    # the imported module is not in the project (no file to read): the claim stays
    path = _project(tmp_path, HEADS, True)
    (tmp_path / "nets" / "critics.py").unlink()
    assert [code for code, _, _ in _findings(path)] == ["ADL003"]
