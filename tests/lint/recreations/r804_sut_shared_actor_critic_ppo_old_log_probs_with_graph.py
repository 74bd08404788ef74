"""Deep_Reinforcement_Learning_SUT, CA04 `agents/improved_pg_agents.py`, the PPO agent: one
`actor_critic` network whose last output is the value.  `train_episode` collects, for every step,
`get_action_and_value(state)`'s `log_prob` and `value` with their graphs, then calls
`update(states, actions, rewards, old_log_probs, values, dones)`, which stacks them
(`old_log_probs_tensor = torch.stack(old_log_probs)`, `old_values_tensor = torch.stack(values)`,
the latter detached for the advantages) and runs `ppo_epochs` updates of
`ratio = torch.exp(log_probs - old_log_probs_tensor)`.  The first epoch's `total_loss.backward()`
also goes back through the rollout's forward passes and frees them, and its `optimizer.step()`
changes the weights they saved; the second epoch's backward needs that graph again.
Re-created in my own words with the module's structure: the `nn.Sequential` actor-critic with
`action_size + 1` outputs, `get_action_and_value`, `evaluate_actions`, `update` (returns reset at
episode ends, normalised advantages, clipped surrogate, value and entropy terms, gradient clipping)
and `train_episode`, on a small stand-in environment.
Raises at the second epoch's `total_loss.backward()`.
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/Solutions/CA04_Policy_Gradient_Methods/agents/improved_pg_agents.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class StandInEnv:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def reset(self):
        self.t = 0
        return self.rng.normal(size=4).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        return self.rng.normal(size=4).astype(np.float32), float(action == 1), self.t >= 6, False, {}


class PPOAgent:
    def __init__(self, state_size, action_size, lr=3e-4, gamma=0.99, clip_ratio=0.2, entropy_coef=0.01,
                 value_coef=0.5, max_grad_norm=0.5, ppo_epochs=4):
        self.gamma = gamma
        self.clip_ratio = clip_ratio
        self.entropy_coef = entropy_coef
        self.value_coef = value_coef
        self.max_grad_norm = max_grad_norm
        self.ppo_epochs = ppo_epochs
        self.actor_critic = nn.Sequential(
            nn.Linear(state_size, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, action_size + 1))
        self.optimizer = optim.Adam(self.actor_critic.parameters(), lr=lr)

    def get_action_and_value(self, state):
        state_tensor = torch.FloatTensor(state).unsqueeze(0)
        output = self.actor_critic(state_tensor)
        action_logits = output[:, :-1]
        value = output[:, -1]
        probs = F.softmax(action_logits, dim=-1)
        dist = Categorical(probs)
        action = dist.sample()
        log_prob = dist.log_prob(action)
        return action.item(), log_prob, value.squeeze()

    def evaluate_actions(self, states, actions):
        output = self.actor_critic(states)
        probs = F.softmax(output[:, :-1], dim=-1)
        dist = Categorical(probs)
        return dist.log_prob(actions), output[:, -1], dist.entropy()

    def update(self, states, actions, rewards, old_log_probs, values, dones):
        states_tensor = torch.FloatTensor(np.array(states))
        actions_tensor = torch.LongTensor(actions)
        old_log_probs_tensor = torch.stack(old_log_probs).squeeze(-1)
        old_values_tensor = torch.stack(values)

        returns = []
        G = 0
        for i in reversed(range(len(rewards))):
            G = rewards[i] if dones[i] else rewards[i] + self.gamma * G
            returns.insert(0, G)
        returns = torch.FloatTensor(returns)
        advantages = returns - old_values_tensor.detach()
        advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

        for _ in range(self.ppo_epochs):
            log_probs, current_values, entropy = self.evaluate_actions(states_tensor, actions_tensor)
            ratio = torch.exp(log_probs - old_log_probs_tensor)
            surr1 = ratio * advantages
            surr2 = torch.clamp(ratio, 1.0 - self.clip_ratio, 1.0 + self.clip_ratio) * advantages
            actor_loss = -torch.min(surr1, surr2).mean()
            value_loss = F.mse_loss(current_values, returns)
            entropy_loss = -entropy.mean()
            total_loss = actor_loss + self.value_coef * value_loss + self.entropy_coef * entropy_loss
            self.optimizer.zero_grad()
            total_loss.backward()  # missed: ADL019, old log probs kept with their graph by another method and reused in every epoch
            if self.max_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(self.actor_critic.parameters(), self.max_grad_norm)
            self.optimizer.step()
        return {"actor_loss": actor_loss.item(), "critic_loss": value_loss.item()}

    def train_episode(self, env):
        state, _ = env.reset()
        states, actions, rewards, old_log_probs, values, dones = [], [], [], [], [], []
        total_reward = 0
        while True:
            action, log_prob, value = self.get_action_and_value(state)
            next_state, reward, done, truncated, _ = env.step(action)
            states.append(state)
            actions.append(action)
            rewards.append(reward)
            old_log_probs.append(log_prob)
            values.append(value)
            dones.append(done or truncated)
            state = next_state
            total_reward += reward
            if done or truncated:
                break
        self.update(states, actions, rewards, old_log_probs, values, dones)
        return total_reward


def run(episodes=2):
    torch.manual_seed(0)
    env = StandInEnv()
    agent = PPOAgent(4, 2)
    for _ in range(episodes):
        agent.train_episode(env)
