"""Deep_Reinforcement_Learning_SUT, CA06 `agents/advanced_pg.py`, `A3CWorker.run`: the worker's
`select_action` computes the logits under `torch.no_grad()` and returns `log_prob.item()`, and
`get_value` returns `self.local_critic(state).item()` from under `no_grad` too.  After the
rollout, `run()` rebuilds `log_probs = torch.FloatTensor(log_probs)` and
`values = torch.FloatTensor(values)`, forms `actor_loss = -(log_probs * advantages.detach()).mean()`
and `critic_loss = F.mse_loss(values, returns)`, and calls `total_loss.backward()` on a loss that
has no graph at all.
Re-created in my own words with the module's structure: local actor and critic networks,
`select_action`, `get_value`, the `t_max` rollout, the bootstrapped returns and the update
(`push_to_global` and the global networks left out), on a small stand-in environment.
Raises at `total_loss.backward()` ("element 0 of tensors does not require grad").
Source: https://github.com/tahamajs/Deep_Reinforcement_Learning_SUT/blob/fcde31352f67821be64ed366b6a1a159bccefa57/CAs/Solutions/CA06_Policy_Gradient_Modular/agents/advanced_pg.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

device = torch.device("cpu")


class StandInEnv:
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)
        self.t = 0

    def reset(self):
        self.t = 0
        return self.rng.normal(size=4).astype(np.float32), {}

    def step(self, action):
        self.t += 1
        return self.rng.normal(size=4).astype(np.float32), float(action == 0), self.t >= 6, False, {}


class A3CWorker:
    def __init__(self, state_dim=4, action_dim=2, hidden_dim=32, lr=1e-3, gamma=0.99, t_max=5):
        self.gamma = gamma
        self.t_max = t_max
        self.local_actor = nn.Sequential(nn.Linear(state_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, action_dim))
        self.local_critic = nn.Sequential(nn.Linear(state_dim, hidden_dim), nn.ReLU(), nn.Linear(hidden_dim, 1))
        self.optimizer = optim.Adam(list(self.local_actor.parameters()) + list(self.local_critic.parameters()), lr=lr)

    def select_action(self, state):
        state = torch.FloatTensor(state).unsqueeze(0).to(device)
        with torch.no_grad():
            logits = self.local_actor(state)
            probs = F.softmax(logits, dim=1)
        dist = Categorical(probs)
        action = dist.sample()
        log_prob = dist.log_prob(action)
        return action.item(), log_prob.item()

    def get_value(self, state):
        state = torch.FloatTensor(state).unsqueeze(0).to(device)
        with torch.no_grad():
            value = self.local_critic(state)
        return value.item()

    def run(self, env, episodes=2):
        for _ in range(episodes):
            states, actions, rewards, log_probs, values = [], [], [], [], []
            state, _ = env.reset()
            done = False
            t = 0
            while not done and t < self.t_max:
                action, log_prob = self.select_action(state)
                value = self.get_value(state)
                next_state, reward, terminated, truncated, _ = env.step(action)
                states.append(state)
                actions.append(action)
                rewards.append(reward)
                log_probs.append(log_prob)
                values.append(value)
                state = next_state
                done = terminated or truncated
                t += 1

            R = 0 if done else self.get_value(state)
            returns = []
            for r in reversed(rewards):
                R = r + self.gamma * R
                returns.insert(0, R)

            returns = torch.FloatTensor(returns).to(device)
            log_probs = torch.FloatTensor(log_probs).to(device)
            values = torch.FloatTensor(values).to(device)

            advantages = returns - values
            actor_loss = -(log_probs * advantages.detach()).mean()
            critic_loss = F.mse_loss(values, returns)
            total_loss = actor_loss + 0.5 * critic_loss

            self.optimizer.zero_grad()
            total_loss.backward()  # missed: ADL034 across methods: log_prob.item() and value.item() in select_action/get_value
            self.optimizer.step()


def run():
    torch.manual_seed(0)
    A3CWorker().run(StandInEnv())
