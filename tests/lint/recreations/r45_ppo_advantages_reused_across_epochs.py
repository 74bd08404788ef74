"""A (MA)PPO learner computes the advantages from the critic once, outside
its PPO-epochs loop, without detaching them; the first epoch's backward()
frees the critic's graph and the second epoch's backward goes through it again
("Trying to backward through the graph a second time").
Source: https://github.com/hijkzzz/pymarl2/issues/46"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Critic(nn.Module):
    def __init__(self, obs_dim, hidden_dim=16):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, 1)

    def forward(self, obs):
        return self.fc2(torch.relu(self.fc1(obs))).squeeze(-1)


class Actor(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden_dim=16):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, n_actions)

    def forward(self, obs):
        return torch.softmax(self.fc2(torch.relu(self.fc1(obs))), dim=-1)


class PPOLearner:
    def __init__(self, obs_dim=4, n_actions=3, epochs=4, eps_clip=0.2, gamma=0.99, lr=5e-4):
        self.epochs = epochs
        self.eps_clip = eps_clip
        self.gamma = gamma
        self.mac = Actor(obs_dim, n_actions)
        self.critic = Critic(obs_dim)
        self.agent_optimiser = torch.optim.Adam(self.mac.parameters(), lr=lr)
        self.critic_optimiser = torch.optim.Adam(self.critic.parameters(), lr=lr)

    def train_critic(self, obs, rewards, next_obs, terminated):
        values = self.critic(obs)
        with torch.no_grad():
            target_returns = rewards + self.gamma * (1 - terminated) * self.critic(next_obs)
        critic_loss = ((values - target_returns) ** 2).mean()
        self.critic_optimiser.zero_grad()
        critic_loss.backward(retain_graph=True)
        self.critic_optimiser.step()
        advantages = target_returns - self.critic(obs)
        return advantages, critic_loss.item()

    def train(self, obs, actions, rewards, next_obs, terminated):
        with torch.no_grad():
            old_log_pi_taken = Categorical(self.mac(obs)).log_prob(actions)
        advantages, critic_loss = self.train_critic(obs, rewards, next_obs, terminated)

        for k in range(self.epochs):
            dist = Categorical(self.mac(obs))
            log_pi_taken = dist.log_prob(actions)
            ratios = torch.exp(log_pi_taken - old_log_pi_taken)
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            pg_loss = -(torch.min(surr1, surr2) + 0.01 * dist.entropy()).mean()
            self.agent_optimiser.zero_grad()
            pg_loss.backward()  # expect: ADL019
            self.agent_optimiser.step()


def run():
    torch.manual_seed(0)
    learner = PPOLearner()
    obs, next_obs = torch.randn(8, 4), torch.randn(8, 4)
    actions = torch.randint(0, 3, (8,))
    learner.train(obs, actions, torch.randn(8), next_obs, torch.zeros(8))
