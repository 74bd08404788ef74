"""Deep_Reinforcement_Learning_SUT, CA06 `training_examples.py`, `ContinuousPPOAgent` (a second
program of r797's module, for continuous actions): `select_action` calls `self.policy.sample(state)`
on the policy being trained (not a frozen copy) and returns `action.detach().numpy()` but the
`log_prob` with its graph; the loop stores it, and `update()` rebuilds
`log_probs_old = torch.stack([t[2] for t in self.memory])` and reuses it in each of `k_epochs`
(`ratios = torch.exp(log_probs - log_probs_old)`).  The first epoch's backward goes back through
the rollout's forwards of `self.policy` and frees them, and its `optimizer.step()` changes the
weights they saved; the second epoch's backward needs that graph again.
Re-created in my own words with the module's structure: `ContinuousPolicyNetwork` (mean and
clamped log-std heads, `sample` returning the action and the summed log probability),
`ContinuousPPOAgent` with `select_action`, `store_transition`, `update` (returns reset at episode
ends and normalised, used directly as advantages) and `train_continuous_ppo_agent`'s loop, on a
small stand-in environment instead of Pendulum.
Raises at the second epoch's `loss.backward()`.
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/Solutions/CA06_Policy_Gradient_Modular/training_examples.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Normal


class ContinuousPolicyNetwork(nn.Module):
    def __init__(self, state_dim, action_dim, hidden_dim=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, hidden_dim)
        self.mean_head = nn.Linear(hidden_dim, action_dim)
        self.log_std_head = nn.Linear(hidden_dim, action_dim)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.mean_head(x)
        log_std = torch.clamp(self.log_std_head(x), min=-20, max=2)
        return mean, log_std

    def sample(self, state):
        mean, log_std = self.forward(state)
        dist = Normal(mean, log_std.exp())
        action = dist.sample()
        log_prob = dist.log_prob(action).sum(dim=-1, keepdim=True)
        return action, log_prob


class StandInPendulum:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def reset(self):
        self.t = 0
        return self.rng.normal(size=3).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        return self.rng.normal(size=3).astype(np.float32), -float(np.square(action).sum()), False, self.t >= 8, {}


class ContinuousPPOAgent:
    def __init__(self, state_dim, action_dim, lr=3e-4, gamma=0.99, eps_clip=0.2, k_epochs=4):
        self.gamma = gamma
        self.eps_clip = eps_clip
        self.k_epochs = k_epochs
        self.policy = ContinuousPolicyNetwork(state_dim, action_dim)
        self.policy_old = ContinuousPolicyNetwork(state_dim, action_dim)
        self.policy_old.load_state_dict(self.policy.state_dict())
        self.optimizer = optim.Adam(self.policy.parameters(), lr=lr)
        self.memory = []

    def select_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        action, log_prob = self.policy.sample(state)
        return action.detach().numpy().flatten(), log_prob

    def store_transition(self, transition):
        self.memory.append(transition)

    def update(self):
        states = torch.FloatTensor(np.array([t[0] for t in self.memory]))
        actions = torch.FloatTensor(np.array([t[1] for t in self.memory]))
        log_probs_old = torch.stack([t[2] for t in self.memory]).squeeze(1)
        rewards = [t[3] for t in self.memory]
        dones = [t[4] for t in self.memory]

        discounted_rewards = []
        reward = 0
        for reward_t, done in zip(reversed(rewards), reversed(dones)):
            if done:
                reward = 0
            reward = reward_t + self.gamma * reward
            discounted_rewards.insert(0, reward)
        discounted_rewards = torch.FloatTensor(discounted_rewards)
        discounted_rewards = (discounted_rewards - discounted_rewards.mean()) / (discounted_rewards.std() + 1e-8)

        total_loss = 0
        for _ in range(self.k_epochs):
            mean, log_std = self.policy(states)
            dist = Normal(mean, log_std.exp())
            log_probs = dist.log_prob(actions).sum(dim=-1, keepdim=True)
            ratios = torch.exp(log_probs - log_probs_old)
            advantages = discounted_rewards.unsqueeze(-1)
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            loss = -torch.min(surr1, surr2).mean()
            self.optimizer.zero_grad()
            loss.backward()  # missed: ADL019, log probs kept with their graph by select_action (another method) and reused in every epoch
            self.optimizer.step()
            total_loss += loss.item()

        self.policy_old.load_state_dict(self.policy.state_dict())
        self.memory = []
        return total_loss / self.k_epochs


def run(episodes=2, update_every=8):
    torch.manual_seed(0)
    env = StandInPendulum()
    agent = ContinuousPPOAgent(3, 1)
    steps = 0
    for _ in range(episodes):
        state, _ = env.reset()
        done = False
        while not done:
            action, log_prob = agent.select_action(state)
            next_state, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            agent.store_transition((state, action, log_prob, reward, done))
            state = next_state
            steps += 1
            if steps % update_every == 0:
                agent.update()
