"""Deep_Reinforcement_Learning_SUT (a deep-RL course's assignments), CA06
`training_examples.py`, `PPOAgent`: `select_action` samples from `policy_old` and returns
`dist.log_prob(action)` with its graph; the training loop stores it in the transition, and
`update()` rebuilds `log_probs_old = torch.stack([t[2] for t in self.memory])` and, for each of
`k_epochs`, forms `ratios = torch.exp(log_probs - log_probs_old)` and backpropagates
`policy_loss + 0.5 * value_loss`.  The first epoch's backward also runs through `policy_old`'s
rollout graph and frees it; the second epoch's backward needs it again.
Re-created in my own words with the module's structure: `PolicyNetwork` (softmax head),
`PPOAgent` with `policy`, `policy_old`, `select_action`, `store_transition`, `update` (discounted
rewards reset at episode ends, normalised), and `train_ppo_agent`'s loop calling `update()` every
`update_every` steps, on a small stand-in environment instead of CartPole.  The module's
`state_values = self.policy(states)` (its comment: "should be a separate value network") is read
here as the policy's top probability so that the shapes agree; it plays no part in the bug.
Raises at the second epoch's `backward()` ("Trying to backward through the graph a second time").
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/Solutions/CA06_Policy_Gradient_Modular/training_examples.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class PolicyNetwork(nn.Module):
    def __init__(self, state_dim, action_dim, hidden_dim=32):
        super().__init__()
        self.fc1 = nn.Linear(state_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, action_dim)

    def forward(self, x):
        return F.softmax(self.fc2(F.relu(self.fc1(x))), dim=-1)


class StandInEnv:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def reset(self):
        self.t = 0
        return self.rng.normal(size=4).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        return self.rng.normal(size=4).astype(np.float32), float(action == 1), self.t >= 5, False, {}


class PPOAgent:
    def __init__(self, state_dim, action_dim, lr=3e-4, gamma=0.99, eps_clip=0.2, k_epochs=4):
        self.gamma = gamma
        self.eps_clip = eps_clip
        self.k_epochs = k_epochs
        self.policy = PolicyNetwork(state_dim, action_dim)
        self.policy_old = PolicyNetwork(state_dim, action_dim)
        self.policy_old.load_state_dict(self.policy.state_dict())
        self.optimizer = optim.Adam(self.policy.parameters(), lr=lr)
        self.mse_loss = nn.MSELoss()
        self.memory = []

    def select_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0)
        probs = self.policy_old(state)
        dist = Categorical(probs)
        action = dist.sample()
        log_prob = dist.log_prob(action)
        return action.item(), log_prob, state

    def store_transition(self, transition):
        self.memory.append(transition)

    def update(self):
        states = torch.FloatTensor(np.array([t[0] for t in self.memory]))
        actions = torch.LongTensor([t[1] for t in self.memory])
        log_probs_old = torch.stack([t[2] for t in self.memory]).squeeze(-1)
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

        for _ in range(self.k_epochs):
            probs = self.policy(states)
            dist = Categorical(probs)
            log_probs = dist.log_prob(actions)
            state_values = probs.max(dim=-1).values

            ratios = torch.exp(log_probs - log_probs_old)
            advantages = discounted_rewards - state_values.detach()
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            policy_loss = -torch.min(surr1, surr2).mean()
            value_loss = self.mse_loss(state_values, discounted_rewards)

            self.optimizer.zero_grad()
            (policy_loss + 0.5 * value_loss).backward()  # missed: ADL019, old log probs kept with their graph by select_action (another method) and reused in every epoch
            self.optimizer.step()

        self.policy_old.load_state_dict(self.policy.state_dict())
        self.memory = []


def run(episodes=3, update_every=10):
    torch.manual_seed(0)
    env = StandInEnv()
    agent = PPOAgent(4, 2)
    steps = 0
    for _ in range(episodes):
        state, _ = env.reset()
        done = False
        while not done:
            action, log_prob, _ = agent.select_action(state)
            next_state, reward, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            agent.store_transition((state, action, log_prob, reward, done))
            state = next_state
            steps += 1
            if steps % update_every == 0:
                agent.update()
    return agent
