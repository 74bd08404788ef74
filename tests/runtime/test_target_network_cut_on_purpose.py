"""A target network (or a teacher) evaluated under `no_grad` as a submodule of the model that holds
the online network: no optimizer holds its parameters while one steps what the loss reached, so the
cut is on purpose and AD301 stays silent. Held-out set 23 (stable-baselines3 PR #132): the correct
DQN, the target under `policy.q_net_target`, got "the gradient path from the loss was cut". The
same cut on the network the optimizer does hold is still reported."""

from helpers import marked_line, run_program

DQN = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.q_net_target = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.q_net_target.load_state_dict(self.q_net.state_dict())


policy = Policy()
optimizer = torch.optim.Adam(policy.q_net.parameters(), lr=1e-2)
obs, next_obs = torch.randn(32, 4), torch.randn(32, 4)
actions, rewards = torch.randint(0, 2, (32,)), torch.randn(32)
for step in range(4):
    with torch.no_grad():  # TARGET
        target = rewards + 0.9 * ONLINE_OR_TARGET(next_obs).max(dim=1).values
    current = policy.q_net(obs).gather(1, actions.unsqueeze(1)).squeeze(1)
    loss = F.smooth_l1_loss(current, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_target_network_under_no_grad_that_no_optimizer_holds_is_silent(tmp_path):
    outcome = run_program(tmp_path, DQN.replace("ONLINE_OR_TARGET", "policy.q_net_target"))
    assert outcome.error is None
    assert "AD301" not in [d.code for d in outcome.diagnoses]


CRITIC = """
import torch
import torch.nn as nn

torch.manual_seed(0)


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.value = nn.Linear(8, 1)


model = ActorCritic()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, returns = torch.randn(16, 4), torch.randn(16, 1)
for step in range(3):
    with torch.no_grad():
        features = model.encoder(x)  # CUT
    loss = ((model.value(features) - returns) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_the_same_cut_on_parameters_an_optimizer_holds_is_still_reported(tmp_path):
    outcome = run_program(tmp_path, CRITIC)
    found = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert found, outcome.diagnoses
    assert found[0].primary.line == marked_line(outcome.source, "CUT")
