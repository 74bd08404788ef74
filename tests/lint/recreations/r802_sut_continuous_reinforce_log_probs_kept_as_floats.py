"""Deep_Reinforcement_Learning_SUT, CA09 notebook, `ContinuousREINFORCEAgent`: `select_action`
samples from the Gaussian actor (`get_action_and_log_prob`) and keeps
`self.log_probs.append(log_prob.item())`, a float.  `update()` computes the normalised returns,
rebuilds `log_probs = torch.FloatTensor(self.log_probs)` and calls `policy_loss.backward()` on
`-(log_probs * returns).mean()`, which has no graph.
Re-created in my own words with the notebook's structure: `ContinuousActorNetwork` (shared
trunk, `tanh` mean head scaled by `action_bound`, state-independent `log_std_head`),
`ContinuousREINFORCEAgent` with `select_action`, `update` and `train_episode`, on a small
stand-in continuous-control environment.
Raises at `policy_loss.backward()` ("element 0 of tensors does not require grad").
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/No%20Answer/CA9.ipynb"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

device = torch.device("cpu")


class ContinuousActorNetwork(nn.Module):
    def __init__(self, state_dim, action_dim, hidden_dim=32, action_bound=1.0):
        super().__init__()
        self.action_bound = action_bound
        self.shared = nn.Sequential(nn.Linear(state_dim, hidden_dim), nn.ReLU())
        self.mean_head = nn.Sequential(nn.Linear(hidden_dim, action_dim), nn.Tanh())
        self.log_std_head = nn.Parameter(torch.zeros(action_dim))

    def forward(self, state):
        shared_features = self.shared(state)
        mean = self.mean_head(shared_features) * self.action_bound
        std = torch.exp(self.log_std_head.expand_as(mean))
        std = torch.clamp(std, min=1e-6, max=1.0)
        return mean, std

    def get_action_and_log_prob(self, state):
        mean, std = self.forward(state)
        dist = torch.distributions.Normal(mean, std)
        action = dist.sample()
        log_prob = dist.log_prob(action).sum(dim=-1)
        entropy = dist.entropy().sum(dim=-1)
        return action, log_prob, entropy


class StandInPendulum:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def reset(self):
        self.t = 0
        return self.rng.normal(size=3).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        reward = -float(np.square(action).sum())
        return self.rng.normal(size=3).astype(np.float32), reward, self.t >= 10, False, {}


class ContinuousREINFORCEAgent:
    def __init__(self, state_dim, action_dim, lr=1e-3, gamma=0.99, action_bound=1.0):
        self.gamma = gamma
        self.actor = ContinuousActorNetwork(state_dim, action_dim, action_bound=action_bound).to(device)
        self.optimizer = optim.Adam(self.actor.parameters(), lr=lr)
        self.states = []
        self.actions = []
        self.rewards = []
        self.log_probs = []
        self.policy_losses = []

    def select_action(self, state):
        if not isinstance(state, torch.Tensor):
            state = torch.FloatTensor(state).unsqueeze(0).to(device)
        action, log_prob, entropy = self.actor.get_action_and_log_prob(state)
        self.states.append(state.cpu().numpy().squeeze())
        self.actions.append(action.cpu().numpy().squeeze())
        self.log_probs.append(log_prob.item())
        return action.cpu().numpy().squeeze()

    def update(self):
        if not self.rewards:
            return
        returns = []
        G = 0
        for reward in reversed(self.rewards):
            G = reward + self.gamma * G
            returns.insert(0, G)
        returns = torch.FloatTensor(returns).to(device)
        log_probs = torch.FloatTensor(self.log_probs).to(device)
        returns = (returns - returns.mean()) / (returns.std() + 1e-8)
        policy_loss = -(log_probs * returns).mean()
        self.optimizer.zero_grad()
        policy_loss.backward()  # missed: ADL034 across methods: log_prob.item() in select_action
        self.optimizer.step()
        self.policy_losses.append(policy_loss.item())
        self.states.clear()
        self.actions.clear()
        self.rewards.clear()
        self.log_probs.clear()

    def train_episode(self, env, max_steps=1000):
        state, _ = env.reset()
        total_reward = 0
        for _ in range(max_steps):
            action = self.select_action(state)
            next_state, reward, terminated, truncated, _ = env.step(action)
            self.rewards.append(reward)
            total_reward += reward
            state = next_state
            if terminated or truncated:
                break
        self.update()
        return total_reward


def run(episodes=2):
    torch.manual_seed(0)
    env = StandInPendulum()
    agent = ContinuousREINFORCEAgent(3, 1, action_bound=2.0)
    for _ in range(episodes):
        agent.train_episode(env)
