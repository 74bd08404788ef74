"""A forum user adapts an actor-critic agent (from a YouTube tutorial) to a
continuous action space: the actor's outputs go through a sigmoid, are scaled
to angle ranges and become the means of a 2-D Gaussian policy.  "My code will
run just fine for any number of episodes, but neither of the network weights
ever seem to be updated."  `choose_action` builds the means from
`policy_thetas.detach().numpy()` and wraps them in new tensors, so the stored
`log_probs` has no path to the actor: the actor never gets a gradient.  The
agent's `learn` also never clears `.grad` before `(actor_loss +
critic_loss).backward()`, so every critic step uses the sum of all gradients
so far.  Nothing raises.
Buggy lines: `mu, cov = params_from_thetas(policy_thetas.detach().numpy())`
(the actor's graph is cut) and `self.critic.optimizer.step()` (no
`zero_grad()` anywhere in the agent).
Source: https://discuss.pytorch.org/t/actor-critic-with-multivariate-normal-network-weights-fail-to-update/74548"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal


class GenericNetwork(nn.Module):
    def __init__(self, lr, input_dims, fc1_dims, n_outputs):
        super().__init__()
        self.fc1 = nn.Linear(input_dims, fc1_dims)
        self.fc2 = nn.Linear(fc1_dims, n_outputs)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=lr)

    def forward(self, observation):
        state = torch.as_tensor(observation, dtype=torch.float32)
        return self.fc2(F.relu(self.fc1(state)))


def params_from_thetas(thetas):
    mu = np.array([thetas[0] * 2 * math.pi, thetas[1] * math.pi / 2])
    cov = np.eye(2) * 0.05
    return mu, cov


class Agent:
    def __init__(self, alpha=1e-3, beta=1e-3, input_dims=4, gamma=0.99):
        self.gamma = gamma
        self.log_probs = None
        self.actor = GenericNetwork(alpha, input_dims, 16, n_outputs=2)
        self.critic = GenericNetwork(beta, input_dims, 16, n_outputs=1)

    def choose_action(self, observation):
        policy_thetas = torch.sigmoid(self.actor(observation))
        mu, cov = params_from_thetas(policy_thetas.detach().numpy())
        action_probs = MultivariateNormal(torch.FloatTensor(mu), torch.FloatTensor(cov))
        action = action_probs.sample()
        self.log_probs = action_probs.log_prob(action)
        return action.numpy()

    def learn(self, state, reward, new_state, done, record=None):
        critic_value = self.critic(state)
        critic_value_ = self.critic(new_state)
        delta = (reward + self.gamma * critic_value_ * (1 - int(done))) - critic_value
        actor_loss = -self.log_probs * delta
        critic_loss = delta ** 2
        if record is not None:
            record.append(None if self.critic.fc2.bias.grad is None else self.critic.fc2.bias.grad.clone())
        (actor_loss + critic_loss).backward()
        self.actor.optimizer.step()  # expect: ADL018
        self.critic.optimizer.step()  # expect: ADL018


def run_episode(agent, steps=3, record=None):
    observation = np.random.randn(4).astype(np.float32)
    for step in range(steps):
        agent.choose_action(observation)
        new_observation = np.random.randn(4).astype(np.float32)
        agent.learn(observation, 1.0, new_observation, step == steps - 1, record=record)
        observation = new_observation


def bug_shows():
    """The actor never receives a gradient, and the critic's .grad before the
    second backward still holds the first one."""
    torch.manual_seed(0)
    np.random.seed(0)
    agent = Agent()
    record = []
    run_episode(agent, record=record)
    actor_untouched = all(p.grad is None for p in agent.actor.parameters())
    return actor_untouched and record[1] is not None and record[1].abs().sum().item() > 0
