"""cares_reinforcement_learning (UoA-CARES, a library of RL algorithms): the
target networks of TD3/SAC-style agents are kept up to date with a soft
(Polyak) update, `hlp.soft_update_params(net, target_net, tau)`, which walks
`zip(net.parameters(), target_net.parameters())`.  When a network has
`BatchNorm` layers, their running mean and variance are buffers, not
parameters, so a target critic evaluated in eval mode keeps the running
statistics it was built with for the whole run while the online critic's
move with the data: the target values are computed with stale
normalization.  Nothing raises.  The
pull request "Soft update BatchNorm params to target as well" adds the
buffers to the update.  Re-created as the library's helper, a critic with a
`BatchNorm1d` layer, and the agent's `train_policy` step (critic update,
then the soft update of the target).  `bug_shows()` reports that the target
critic's running mean never moved.
Buggy line: `for target_param, param in zip(target_net.parameters(),
net.parameters()):` in `soft_update_params` (buffers are left out).
Source: https://github.com/UoA-CARES/cares_reinforcement_learning/pull/242"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


def soft_update_params(net, target_net, tau):
    for target_param, param in zip(target_net.parameters(), net.parameters()):  # missed: ADL030
        target_param.data.copy_(tau * param.data + (1 - tau) * target_param.data)


class Critic(nn.Module):
    def __init__(self, observation_size, num_actions, hidden=32):
        super().__init__()
        self.Q = nn.Sequential(nn.Linear(observation_size + num_actions, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                               nn.Linear(hidden, 1))

    def forward(self, state, action):
        return self.Q(torch.cat([state, action], dim=1))


class Agent:
    def __init__(self, critic, gamma=0.99, tau=0.005):
        self.critic_net = critic
        self.target_critic_net = copy.deepcopy(critic)
        self.critic_optimiser = torch.optim.Adam(self.critic_net.parameters(), lr=1e-3)
        self.gamma, self.tau = gamma, tau

    def train_policy(self, states, actions, rewards, next_states, next_actions, dones):
        with torch.no_grad():
            target_q = self.target_critic_net(next_states, next_actions)
            q_target = rewards + self.gamma * (1 - dones) * target_q
        q_values = self.critic_net(states, actions)
        critic_loss = F.mse_loss(q_values, q_target)
        self.critic_optimiser.zero_grad()
        critic_loss.backward()
        self.critic_optimiser.step()
        soft_update_params(self.critic_net, self.target_critic_net, self.tau)


def bug_shows():
    """After many updates the target critic's BatchNorm running mean is still its initial value."""
    torch.manual_seed(0)
    agent = Agent(Critic(observation_size=4, num_actions=2))
    for _ in range(50):
        s, a, s2, a2 = torch.randn(16, 4) + 3.0, torch.randn(16, 2), torch.randn(16, 4) + 3.0, torch.randn(16, 2)
        r, d = torch.randn(16, 1), torch.zeros(16, 1)
        agent.target_critic_net.eval()
        agent.train_policy(s, a, r, s2, a2, d)
    online = agent.critic_net.Q[1].running_mean
    target = agent.target_critic_net.Q[1].running_mean
    return bool(torch.all(target == 0)) and not bool(torch.all(online == 0))
