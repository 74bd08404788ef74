"""AD169: a module loading its own state_dict() (a target network refreshed from itself instead
of from the network being trained). Reported where the module is in no optimizer that stepped
and a module of its class in the caller's frame is; a round trip with nothing trained, a target
refreshed from the online network and a trained model reloading its own state are silent."""

import torch

from helpers import apply_help, run_plain, run_program

PROGRAM = """
import copy
import torch
import torch.nn as nn
torch.manual_seed(0)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, x):
        return self.net(x)


class Agent:
    def __init__(self):
        self.critic = Critic()
        self.target_critic = copy.deepcopy(self.critic)
        self.optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)

    def update(self, step, states, rewards, next_states):
        with torch.no_grad():
            targets = rewards + 0.9 * self.target_critic(next_states)
        loss = (self.critic(states) - targets).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        if step % 2 == 1:
            self.target_critic.load_state_dict(SOURCE.state_dict())  # LOAD
        return loss.detach()


agent = Agent()
losses = [agent.update(step, torch.randn(8, 4), torch.randn(8, 1), torch.randn(8, 4)) for step in range(6)]
result = {"losses": torch.stack(losses), "target": [p.detach().clone() for p in agent.target_critic.parameters()]}
"""


def program(source_of_the_load: str) -> str:
    return PROGRAM.replace("SOURCE", source_of_the_load)


def test_a_target_network_loading_its_own_state_is_reported_with_the_trained_twin(tmp_path):
    outcome = run_program(tmp_path, program("self.target_critic"))
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD169"]
    assert diagnosis.primary.line == outcome.line("LOAD")
    assert "`self.target_critic`" in diagnosis.primary.note
    assert any("self.critic" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement.strip() == \
        "self.target_critic.load_state_dict(self.critic.state_dict())"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    reference = run_plain(tmp_path, program("self.critic"), "reference.py")["result"]
    assert torch.equal(fixed["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["target"], reference["target"]))
    assert not torch.equal(outcome.namespace["result"]["losses"], reference["losses"])


def test_a_target_refreshed_from_the_online_network_is_silent(tmp_path):
    outcome = run_program(tmp_path, program("self.critic"))
    assert [d.code for d in outcome.diagnoses] == []


def test_a_round_trip_with_nothing_trained_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch.nn as nn
        model = nn.Linear(3, 2)
        other = nn.Linear(3, 2)
        model.load_state_dict(model.state_dict())
        result = None
    """)
    assert [d.code for d in outcome.diagnoses] == []


def test_a_trained_model_reloading_its_own_state_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        model, twin = nn.Linear(3, 2), nn.Linear(3, 2)
        optimizer = torch.optim.SGD(list(model.parameters()) + list(twin.parameters()), lr=0.1)
        loss = (model(torch.randn(4, 3)) + twin(torch.randn(4, 3))).pow(2).mean()
        loss.backward()
        optimizer.step()
        model.load_state_dict(model.state_dict())
        result = None
    """)
    assert [d.code for d in outcome.diagnoses] == []


def test_several_trained_twins_give_advice_only(tmp_path):
    outcome = run_program(tmp_path, """
        import copy
        import torch
        import torch.nn as nn
        first, second = nn.Linear(3, 1), nn.Linear(3, 1)
        target = copy.deepcopy(first)
        optimizer = torch.optim.SGD(list(first.parameters()) + list(second.parameters()), lr=0.1)
        loss = (first(torch.randn(4, 3)) + second(torch.randn(4, 3))).pow(2).mean()
        loss.backward()
        optimizer.step()
        target.load_state_dict(target.state_dict())  # LOAD
        result = None
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD169"]
    assert diagnosis.primary.line == outcome.line("LOAD")
    assert diagnosis.help[0].replacement is None
