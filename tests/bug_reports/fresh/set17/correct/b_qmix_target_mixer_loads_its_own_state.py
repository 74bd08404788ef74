"""QMIX with both target networks refreshed from the networks being trained.
Source: https://github.com/thesouther/MARL/issues/8."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

AGENTS, OBS, ACTIONS, STATE, EMBED, GAMMA, TARGET_EVERY = 3, 5, 4, 8, 16, 0.9, 3


class AgentQ(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS, 32), nn.ReLU(), nn.Linear(32, ACTIONS))

    def forward(self, obs):
        return self.net(obs)


class QMixer(nn.Module):
    def __init__(self):
        super().__init__()
        self.hyper_w1 = nn.Linear(STATE, AGENTS * EMBED)
        self.hyper_b1 = nn.Linear(STATE, EMBED)
        self.hyper_w2 = nn.Linear(STATE, EMBED)
        self.hyper_b2 = nn.Sequential(nn.Linear(STATE, EMBED), nn.ReLU(), nn.Linear(EMBED, 1))

    def forward(self, agent_qs, state):
        w1 = self.hyper_w1(state).abs().view(-1, AGENTS, EMBED)
        hidden = F.elu(torch.bmm(agent_qs.unsqueeze(1), w1).squeeze(1) + self.hyper_b1(state))
        w2 = self.hyper_w2(state).abs()
        return (hidden * w2).sum(-1, keepdim=True) + self.hyper_b2(state)


eval_rnn, eval_qmix_net = AgentQ(), QMixer()
target_rnn, target_qmix_net = copy.deepcopy(eval_rnn), copy.deepcopy(eval_qmix_net)
params = list(eval_rnn.parameters()) + list(eval_qmix_net.parameters())
optimizer = torch.optim.RMSprop(params, lr=5e-3)

losses = []
for train_step in range(12):
    obs, next_obs = torch.randn(32, AGENTS, OBS), torch.randn(32, AGENTS, OBS)
    state, next_state = torch.randn(32, STATE), torch.randn(32, STATE)
    actions = torch.randint(0, ACTIONS, (32, AGENTS))
    reward, terminated = torch.randn(32, 1), (torch.rand(32, 1) < 0.1).float()
    chosen_qs = eval_rnn(obs).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    q_total = eval_qmix_net(chosen_qs, state)
    with torch.no_grad():
        target_qs = target_rnn(next_obs).max(dim=-1).values
        targets = reward + GAMMA * (1 - terminated) * target_qmix_net(target_qs, next_state)
    loss = F.mse_loss(q_total, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    if (train_step + 1) % TARGET_EVERY == 0:
        target_rnn.load_state_dict(eval_rnn.state_dict())
        target_qmix_net.load_state_dict(eval_qmix_net.state_dict())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in params],
          "target_mixer": [p.detach().clone() for p in target_qmix_net.parameters()]}
