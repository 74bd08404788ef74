"""ltl2teambot, `experimental/multiagent_ddpg/maddpg.py` (with its `networks.py` and `agent.py`):
a multi-agent DDPG learner for a team of robots.  `MADDPG.learn` first runs every agent's actor on
its own observations and concatenates the actions into `mu`, then loops over the agents: each one
updates its critic (`critic_loss.backward(retain_graph=True)`, `agent.critic.optimiser.step()`),
computes `actor_loss = -agent.critic.forward(states, mu).mean()` and steps its own actor.  `mu`
was built before the loop, so the second agent's `actor_loss.backward(...)` goes back through the
first agent's actor, whose weights the first iteration's `agent.actor.optimiser.step()` changed in
place.
Re-created in my own words with the repository's structure: `ActorNetwork` and `CriticNetwork`
that own their optimisers (`self.optimiser`), an `Agent` with target networks and
`update_network_parameters`, a `MultiAgentReplayBuffer`, and `MADDPG.learn(memory)`.
The same holds one step earlier for the targets: `new_actions` (every agent's target actor) is
also built before the loop, and the first agent's `update_network_parameters()` writes the
target networks in place, so it is the second agent's `critic_loss.backward(retain_graph=True)`
that raises first ("one of the variables needed for gradient computation has been modified by an
inplace operation"); with that fixed, the second agent's `actor_loss.backward(...)` raises for
`mu`.  Both lines are marked.
Source: https://github.com/tmrob2/ltl2teambot/blob/5d1b662327fd802446725695541f27efac04bb0f/experimental/multiagent_ddpg/maddpg.py"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, n_agents, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims + n_agents * n_actions, 16)
        self.fc2 = nn.Linear(16, 16)
        self.q = nn.Linear(16, 1)
        self.optimiser = torch.optim.Adam(self.parameters(), lr=beta)

    def forward(self, state, action):
        x = F.relu(self.fc1(torch.cat([state, action], dim=1)))
        x = F.relu(self.fc2(x))
        return self.q(x)


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims, 16)
        self.fc2 = nn.Linear(16, 16)
        self.pi = nn.Linear(16, n_actions)
        self.optimiser = torch.optim.Adam(self.parameters(), lr=alpha)

    def forward(self, state):
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return torch.softmax(self.pi(x), dim=1)


class Agent:
    def __init__(self, actor_dims, critic_dims, n_actions, n_agents, gamma=0.95, tau=0.01):
        self.gamma = gamma
        self.tau = tau
        self.actor = ActorNetwork(0.01, actor_dims, n_actions)
        self.critic = CriticNetwork(0.01, critic_dims, n_agents, n_actions)
        self.target_actor = copy.deepcopy(self.actor)
        self.target_critic = copy.deepcopy(self.critic)

    def update_network_parameters(self):
        with torch.no_grad():
            for target, online in ((self.target_actor, self.actor), (self.target_critic, self.critic)):
                for t, p in zip(target.parameters(), online.parameters()):
                    t.mul_(1 - self.tau).add_(self.tau * p)


class MultiAgentReplayBuffer:
    def __init__(self, n_agents, actor_dims, critic_dims, n_actions, batch_size=4):
        generator = torch.Generator().manual_seed(0)
        self.actor_states = [torch.rand(batch_size, actor_dims, generator=generator) for _ in range(n_agents)]
        self.actor_new_states = [torch.rand(batch_size, actor_dims, generator=generator) for _ in range(n_agents)]
        self.states = torch.rand(batch_size, critic_dims, generator=generator)
        self.states_ = torch.rand(batch_size, critic_dims, generator=generator)
        self.actions = [torch.rand(batch_size, n_actions, generator=generator) for _ in range(n_agents)]
        self.rewards = torch.rand(batch_size, n_agents, generator=generator)
        self.dones = torch.zeros(batch_size, n_agents, dtype=torch.bool)

    def sample_buffer(self):
        return (self.actor_states, self.states, self.actions, self.rewards,
                self.actor_new_states, self.states_, self.dones)


class MADDPG:
    def __init__(self, actor_dims, critic_dims, n_agents, n_actions):
        self.agents = [Agent(actor_dims, critic_dims, n_actions, n_agents) for _ in range(n_agents)]

    def learn(self, memory):
        actor_states, states, actions, rewards, actor_new_states, states_, dones = memory.sample_buffer()

        all_agents_new_actions = []
        all_agents_new_mu_actions = []
        old_agents_actions = []
        for agent_idx, agent in enumerate(self.agents):
            new_pi = agent.target_actor.forward(actor_new_states[agent_idx])
            all_agents_new_actions.append(new_pi)
            pi = agent.actor.forward(actor_states[agent_idx])
            all_agents_new_mu_actions.append(pi)
            old_agents_actions.append(actions[agent_idx])

        new_actions = torch.cat([acts for acts in all_agents_new_actions], dim=1)
        mu = torch.cat([acts for acts in all_agents_new_mu_actions], dim=1)
        old_actions = torch.cat([acts for acts in old_agents_actions], dim=1)

        for agent_idx, agent in enumerate(self.agents):
            critic_value_ = agent.target_critic.forward(states_, new_actions).flatten()
            critic_value_[dones[:, 0]] = 0.0
            critic_value = agent.critic.forward(states, old_actions).flatten()

            target = rewards[:, agent_idx] + agent.gamma * critic_value_
            critic_loss = F.mse_loss(target, critic_value)
            agent.critic.optimiser.zero_grad()
            critic_loss.backward(retain_graph=True)
            agent.critic.optimiser.step()

            actor_loss = agent.critic.forward(states, mu).flatten()
            actor_loss = -torch.mean(actor_loss)
            agent.actor.optimiser.zero_grad()
            actor_loss.backward(retain_graph=True)
            agent.actor.optimiser.step()  # expect: ADL003, mu built before the per-agent loop, a later iteration backpropagates through this actor

            agent.update_network_parameters()  # expect: ADL003, the target networks written in place under a later iteration's critic_loss.backward


def run():
    torch.manual_seed(0)
    n_agents, actor_dims, n_actions = 2, 3, 2
    critic_dims = actor_dims * n_agents
    maddpg_agents = MADDPG(actor_dims, critic_dims, n_agents, n_actions)
    memory = MultiAgentReplayBuffer(n_agents, actor_dims, critic_dims, n_actions)
    maddpg_agents.learn(memory)
