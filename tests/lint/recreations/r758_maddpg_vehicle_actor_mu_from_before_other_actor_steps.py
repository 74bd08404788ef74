"""MADDPG_Vehicle (multi-agent DDPG for vehicular resource allocation), `maddpg.py`: `learn`
first runs every agent's actor on its own sampled observations and concatenates the results
into `mu`; then, per agent, it updates the critic and the actor, the actor loss being
`-agent.critic.forward(states, mu)` followed by `agent.actor.optimizer.step()`.  For the second
agent, `mu` still holds the first agent's actor output, computed with the weights the first
agent's actor step has just changed in place: the backward raises "one of the variables needed
for gradient computation has been modified by an inplace operation".
Re-created in my own words with the repository's structure: the actor and critic networks that
own their optimizers, the `Agent` with target networks and soft updates, the multi-agent replay
buffer's `sample_buffer`, and `MADDPG.learn`.
Raises at the second agent's `actor_loss.backward(retain_graph = True)`; buggy line: the first
agent's `agent.actor.optimizer.step()` before it.
Source: https://github.com/ChuJacky0327/MADDPG_Vehicle/blob/dd202d08766d4f64c83b014aabddd2db0448fcd0/maddpg.py"""
import numpy as np
import torch as T
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class CriticNetwork(nn.Module):
    def __init__(self, beta, input_dims, fc1_dims, fc2_dims, n_agents, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims + n_agents * n_actions, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.q = nn.Linear(fc2_dims, 1)
        self.optimizer = optim.Adam(self.parameters(), lr=beta)
        self.device = T.device("cpu")

    def forward(self, state, action):
        x = F.relu(self.fc1(T.cat([state, action], dim=1)))
        x = F.relu(self.fc2(x))
        return self.q(x)


class ActorNetwork(nn.Module):
    def __init__(self, alpha, input_dims, fc1_dims, fc2_dims, n_actions):
        super().__init__()
        self.fc1 = nn.Linear(input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, fc2_dims)
        self.pi = nn.Linear(fc2_dims, n_actions)
        self.optimizer = optim.Adam(self.parameters(), lr=alpha)
        self.device = T.device("cpu")

    def forward(self, state):
        x = F.relu(self.fc1(state))
        x = F.relu(self.fc2(x))
        return T.softmax(self.pi(x), dim=1)


class Agent:
    def __init__(self, actor_dims, critic_dims, n_actions, n_agents, agent_idx,
                 alpha=0.01, beta=0.01, fc1=16, fc2=16, gamma=0.95, tau=0.01):
        self.gamma = gamma
        self.tau = tau
        self.n_actions = n_actions
        self.agent_name = "agent_%s" % agent_idx
        self.actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.target_actor = ActorNetwork(alpha, actor_dims, fc1, fc2, n_actions)
        self.target_critic = CriticNetwork(beta, critic_dims, fc1, fc2, n_agents, n_actions)
        self.update_network_parameters(tau=1)

    def update_network_parameters(self, tau=None):
        tau = self.tau if tau is None else tau
        for target, source in ((self.target_actor, self.actor), (self.target_critic, self.critic)):
            target_state = target.state_dict()
            for name, value in source.state_dict().items():
                target_state[name] = tau * value.clone() + (1 - tau) * target_state[name].clone()
            target.load_state_dict(target_state)

    def choose_action(self, observation):
        state = T.tensor(np.array([observation]), dtype=T.float)
        return self.actor.forward(state).detach().numpy()[0]


class MultiAgentReplayBuffer:
    def __init__(self, critic_dims, actor_dims, n_actions, n_agents, batch_size, size=8):
        rng = np.random.default_rng(0)
        self.batch_size = batch_size
        self.state_memory = rng.random((size, critic_dims))
        self.new_state_memory = rng.random((size, critic_dims))
        self.reward_memory = rng.random((size, n_agents))
        self.terminal_memory = np.zeros((size, n_agents), dtype=bool)
        self.actor_state_memory = [rng.random((size, actor_dims[i])) for i in range(n_agents)]
        self.actor_new_state_memory = [rng.random((size, actor_dims[i])) for i in range(n_agents)]
        self.actor_action_memory = [rng.random((size, n_actions)) for i in range(n_agents)]

    def ready(self):
        return True

    def sample_buffer(self):
        batch = np.arange(self.batch_size)
        actor_states = [m[batch] for m in self.actor_state_memory]
        actor_new_states = [m[batch] for m in self.actor_new_state_memory]
        actions = [m[batch] for m in self.actor_action_memory]
        return (actor_states, self.state_memory[batch], actions, self.reward_memory[batch],
                actor_new_states, self.new_state_memory[batch], self.terminal_memory[batch])


class MADDPG:
    def __init__(self, actor_dims, critic_dims, n_agents, n_actions, alpha=0.01, beta=0.01):
        self.agents = []
        self.n_agents = n_agents
        self.n_actions = n_actions
        for agent_idx in range(self.n_agents):
            self.agents.append(Agent(actor_dims[agent_idx], critic_dims, n_actions, n_agents, agent_idx,
                                     alpha=alpha, beta=beta))

    def learn(self, memory):
        if not memory.ready():
            return

        actor_states, states, actions, rewards, actor_new_states, states_, dones = memory.sample_buffer()

        device = self.agents[0].actor.device
        states = T.tensor(states, dtype=T.float).to(device)
        actions = T.tensor(np.array(actions), dtype=T.float).to(device)
        rewards = T.tensor(rewards, dtype=T.float).to(device)
        states_ = T.tensor(states_, dtype=T.float).to(device)
        dones = T.tensor(dones).to(device)

        all_agents_new_actions = []
        all_agents_new_mu_actions = []
        old_agents_actions = []

        for agent_idx, agent in enumerate(self.agents):
            new_states = T.tensor(actor_new_states[agent_idx], dtype=T.float).to(device)
            new_pi = agent.target_actor.forward(new_states)
            all_agents_new_actions.append(new_pi)

            mu_states = T.tensor(actor_states[agent_idx], dtype=T.float).to(device)
            pi = agent.actor.forward(mu_states)
            all_agents_new_mu_actions.append(pi)

            old_agents_actions.append(actions[agent_idx])

        new_actions = T.cat([acts for acts in all_agents_new_actions], dim=1)
        mu = T.cat([acts for acts in all_agents_new_mu_actions], dim=1)
        old_actions = T.cat([acts for acts in old_agents_actions], dim=1)

        for agent_idx, agent in enumerate(self.agents):
            critic_value_ = agent.target_critic.forward(states_, new_actions).flatten()
            critic_value_[dones[:, 0]] = 0.0
            critic_value = agent.critic.forward(states, old_actions).flatten()

            target = rewards[:, agent_idx] + agent.gamma * critic_value_

            critic_loss = F.mse_loss(target, critic_value)
            agent.critic.optimizer.zero_grad()
            critic_loss.backward(retain_graph = True)
            agent.critic.optimizer.step()

            actor_loss = agent.critic.forward(states, mu).flatten()
            actor_loss = -T.mean(actor_loss)
            agent.actor.optimizer.zero_grad()
            actor_loss.backward(retain_graph = True)
            agent.actor.optimizer.step()  # expect: ADL003 (mu is built from every agent's actor before the loop; a later iteration backpropagates through an actor this iteration steps)

            agent.update_network_parameters()  # expect: ADL003 (new_actions is built from every target actor before the loop; the soft update writes them in place under a later critic backward)


def run():
    T.manual_seed(0)
    n_agents, n_actions = 3, 2
    actor_dims = [4, 4, 4]
    critic_dims = sum(actor_dims)
    maddpg_agents = MADDPG(actor_dims, critic_dims, n_agents, n_actions)
    memory = MultiAgentReplayBuffer(critic_dims, actor_dims, n_actions, n_agents, batch_size=4)
    maddpg_agents.learn(memory)
