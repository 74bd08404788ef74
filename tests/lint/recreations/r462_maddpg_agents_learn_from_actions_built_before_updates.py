"""Multi-Agent-Deep-Deterministic-Policy-Gradients' `MADDPG.learn` runs every
agent's target actor and actor first, concatenating the results into
`new_actions` and `mu`, and then, per agent, backpropagates the critic's loss
(its target goes through `new_actions`) and the actor's loss (through `mu`),
steps both and soft-updates the agent's target networks with
`load_state_dict`.  From the second agent on, these backwards go through the
first agent's target actor and actor, whose weights the first agent's update
and step have already changed in place: PyTorch >= 1.5 raises "one of the
variables needed for gradient computation has been modified by an inplace
operation" at `critic_loss.backward(retain_graph=True)` (the report's
traceback).  The fix computes the target actions under `torch.no_grad()`
and the actor's `mu` per agent, after the earlier agents' updates.
Buggy line: `agent.update_network_parameters()` (and `agent.actor_optimizer.step()`)
before the next agent's backwards, in `MADDPG.learn`.
Source: https://github.com/philtabor/Multi-Agent-Deep-Deterministic-Policy-Gradients/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Agent:
    def __init__(self, obs_dims, state_dims, n_actions, n_agents, tau=0.01, gamma=0.95):
        self.gamma = gamma
        self.tau = tau
        self.actor = nn.Sequential(nn.Linear(obs_dims, 8), nn.ReLU(), nn.Linear(8, n_actions), nn.Softmax(dim=-1))
        self.target_actor = nn.Sequential(nn.Linear(obs_dims, 8), nn.ReLU(), nn.Linear(8, n_actions), nn.Softmax(dim=-1))
        self.critic = nn.Sequential(nn.Linear(state_dims + n_agents * n_actions, 8), nn.ReLU(), nn.Linear(8, 1))
        self.target_critic = nn.Sequential(nn.Linear(state_dims + n_agents * n_actions, 8), nn.ReLU(), nn.Linear(8, 1))
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-2)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-2)

    def update_network_parameters(self):
        for target, online in ((self.target_actor, self.actor), (self.target_critic, self.critic)):
            online_state = online.state_dict()
            target_state = target.state_dict()
            for name in target_state:
                target_state[name] = self.tau * online_state[name].clone() + (1 - self.tau) * target_state[name].clone()
            target.load_state_dict(target_state)


class MADDPG:
    def __init__(self, n_agents=2, obs_dims=3, n_actions=2):
        torch.manual_seed(0)
        self.agents = [Agent(obs_dims, n_agents * obs_dims, n_actions, n_agents) for _ in range(n_agents)]

    def learn(self, actor_states, states, actions, rewards, actor_new_states, states_):
        all_agents_new_actions = []
        all_agents_new_mu_actions = []
        for agent_idx, agent in enumerate(self.agents):
            all_agents_new_actions.append(agent.target_actor(actor_new_states[agent_idx]))
            all_agents_new_mu_actions.append(agent.actor(actor_states[agent_idx]))
        new_actions = torch.cat(all_agents_new_actions, dim=1)
        mu = torch.cat(all_agents_new_mu_actions, dim=1)
        old_actions = torch.cat(actions, dim=1)
        for agent_idx, agent in enumerate(self.agents):
            critic_value_ = agent.target_critic(torch.cat([states_, new_actions], dim=1)).flatten()
            critic_value = agent.critic(torch.cat([states, old_actions], dim=1)).flatten()
            target = rewards[:, agent_idx] + agent.gamma * critic_value_
            critic_loss = F.mse_loss(target, critic_value)
            agent.critic_optimizer.zero_grad()
            critic_loss.backward(retain_graph=True)
            agent.critic_optimizer.step()
            actor_loss = -agent.critic(torch.cat([states, mu], dim=1)).flatten().mean()
            agent.actor_optimizer.zero_grad()
            actor_loss.backward(retain_graph=True)
            agent.actor_optimizer.step()  # expect: ADL003
            agent.update_network_parameters()  # expect: ADL003


def run():
    torch.manual_seed(1)
    batch = 4
    actor_states = [torch.randn(batch, 3) for _ in range(2)]
    actor_new_states = [torch.randn(batch, 3) for _ in range(2)]
    actions = [torch.softmax(torch.randn(batch, 2), dim=-1) for _ in range(2)]
    MADDPG().learn(actor_states, torch.cat(actor_states, dim=1), actions, torch.randn(batch, 2),
                   actor_new_states, torch.cat(actor_new_states, dim=1))
