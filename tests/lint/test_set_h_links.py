"""Set H's two false alarms (docs/lint.md, tenth check), each claim checked with
torch: a method of a held module that uses it only for sizes computes nothing
from its parameters (lint/held_methods.py), and `mask * grads` keeps `mask` only
for the gradient of `grads` (``kept_for`` in the saves table)."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint.engine import lint_file

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "set_h_links_without_evidence.py"

CRITIC = textwrap.dedent("""\
    import torch as th
    import torch.nn as nn


    class OffPGCritic(nn.Module):
        def __init__(self, n_agents, width):
            super().__init__()
            self.n_agents = n_agents
            self.fc = nn.Linear(width + n_agents, 1)

        def forward(self, inputs):
            return self.fc(inputs)

        def build_inputs(self, batch, bs):
            agents = th.eye(self.n_agents, device=batch.device).unsqueeze(0).expand(bs, -1, -1)
            return th.cat([batch.unsqueeze(1).repeat(1, self.n_agents, 1), agents], dim=-1)
    """)

LEARNER = textwrap.dedent("""\
    import torch
    from critics.offpg import OffPGCritic


    class Learner:
        def __init__(self, n_agents, width):
            self.critic = OffPGCritic(n_agents, width)
            self.critic_optimiser = torch.optim.SGD(self.critic.parameters(), lr=0.1)

        def train(self, batch, targets):
            inputs = self.critic.build_inputs(batch, batch.shape[0])
            for t in range(targets.shape[1]):
                loss = ((self.critic(inputs[:, t]).squeeze(-1) - targets[:, t]) ** 2).mean()
                self.critic_optimiser.zero_grad()
                loss.backward(retain_graph=True)
                self.critic_optimiser.step()
    """)


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _adl003_lines(path: Path) -> list[int]:
    return [f.line for f in lint_file(str(path))[0] if f.code == "ADL003"]


def _repository(root: Path, critic: str) -> Path:
    (root / "critics").mkdir(parents=True)
    (root / "setup.py").write_text("")
    (root / "critics" / "__init__.py").write_text("")
    (root / "critics" / "offpg.py").write_text(critic)
    (root / "learner.py").write_text(LEARNER)
    return root / "learner.py"


def test_method_of_a_held_module_in_another_file_that_uses_it_for_sizes(tmp_path, monkeypatch):
    learner_file = _repository(tmp_path / "sizes", CRITIC)
    assert _adl003_lines(learner_file) == []
    # torch agrees: the inputs carry no graph of the critic, every step's backward runs
    monkeypatch.syspath_prepend(str(tmp_path / "sizes"))
    learner = _load(learner_file, "set_h_learner").Learner(2, 3)
    learner.train(torch.randn(4, 3), torch.randn(4, 2))
    # the same method using a parameter is the critic's graph: the report stays
    uses_weight = CRITIC.replace("return th.cat([batch", "return self.fc.weight.sum() + th.cat([batch")
    assert _adl003_lines(_repository(tmp_path / "weight", uses_weight)) == [16]
    # a class the repository does not define keeps the link, as before
    unknown = "from elsewhere import OffPGCritic\n"
    assert _adl003_lines(_repository(tmp_path / "unknown", unknown)) == [16]


def test_fixture_claims_hold_with_torch():
    fixture = _load(FIXTURE, "set_h_fixture")
    torch.manual_seed(0)
    batch, targets = torch.randn(4, 3), torch.randn(4, 2)
    fixture.Learner(2, 3).train_critic(batch, targets)  # silent, and it runs
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fixture.Learner(2, 3).train_on_old_values(batch, targets)  # ADL003
    model = torch.nn.Linear(4, 1)
    image, mask = torch.rand(4), torch.ones(4, dtype=torch.float64).numpy()
    written, total = fixture.remove_low_impact_pixels(model, image, mask, 2)
    total.backward()  # silent: the mask was written after the product, and backward works
    assert written.sum() < 4
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fixture.mask_kept_for_a_graph(model, image, mask, 2.0)  # ADL001
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fixture.mask_kept_for_an_accumulated_graph(model, image, mask)  # ADL001


def test_saves_table_says_which_inputs_are_kept_for_the_other():
    import json

    from autograd_doctor.lint.names import SAVES_PATH
    ops = json.loads(SAVES_PATH.read_text())["ops"]
    assert ops["operator.mul"]["kept_for"] == {"0": 1, "1": 0}
    assert ops["operator.truediv"]["kept_for"] == {"0": 1}  # `a / b` always keeps b
    assert ops["torch.nn.functional.linear"]["kept_for"] == {"0": 1, "1": 0}
    assert "kept_for" not in ops["torch.nn.functional.conv2d"]  # keeps both, always
    # torch agrees for `a * b`: with `b` free of gradients, `a` is not saved
    a, b = torch.rand(3, requires_grad=True), torch.rand(3)
    assert (a * b).grad_fn._saved_self is None
