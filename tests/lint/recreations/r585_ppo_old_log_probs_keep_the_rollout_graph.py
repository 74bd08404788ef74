"""An article on the "Trying to backward through the graph a second time"
error in a PPO agent: the log-probabilities stored during the rollout are
kept with the policy's graph, and the K-epoch update computes the ratio
`exp(log_probs - old_log_probs)` from them; the first epoch's `backward()`
frees the rollout graph, the second epoch fails (and `retain_graph=True`
only turns it into an in-place error after `optimizer.step()`).
Re-created as the article's agent shape: an `ActorCritic` network, a
`Memory` buffer, `select_action` storing `dist.log_prob(action)` as is, and
`update` running K epochs of the clipped objective.  Raises at the second
epoch of the first update.
Buggy line: `memory.logprobs.append(dist.log_prob(action))` (the rollout's
log-probability kept with its graph).
Source: https://devgem.vercel.app/posts/how-to-fix-the-runtimeerror-trying-to-backward-through-the-graph-a-second-time-error-in-proximal-policy-optimization-ppo"""
import torch
import torch.nn as nn
from torch.distributions import Categorical


class Memory:
    def __init__(self):
        self.states, self.actions, self.logprobs, self.rewards = [], [], [], []

    def clear(self):
        del self.states[:], self.actions[:], self.logprobs[:], self.rewards[:]


class ActorCritic(nn.Module):
    def __init__(self, state_dim=4, n_actions=2):
        super().__init__()
        self.actor = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, n_actions), nn.Softmax(dim=-1))
        self.critic = nn.Sequential(nn.Linear(state_dim, 16), nn.Tanh(), nn.Linear(16, 1))

    def evaluate(self, states, actions):
        dist = Categorical(self.actor(states))
        return dist.log_prob(actions), self.critic(states).squeeze(-1), dist.entropy()


class PPO:
    def __init__(self, k_epochs=3, eps_clip=0.2):
        self.policy = ActorCritic()
        self.optimizer = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.k_epochs, self.eps_clip = k_epochs, eps_clip

    def select_action(self, state, memory):
        dist = Categorical(self.policy.actor(state))
        action = dist.sample()
        memory.states.append(state)
        memory.actions.append(action)
        memory.logprobs.append(dist.log_prob(action))  # missed: ADL019
        return action.item()

    def update(self, memory):
        returns = torch.tensor(memory.rewards)
        old_states = torch.stack(memory.states)
        old_actions = torch.stack(memory.actions)
        old_logprobs = torch.stack(memory.logprobs)
        for _ in range(self.k_epochs):
            logprobs, values, entropy = self.policy.evaluate(old_states, old_actions)
            ratios = torch.exp(logprobs - old_logprobs)
            advantages = returns - values.detach()
            surr1 = ratios * advantages
            surr2 = torch.clamp(ratios, 1 - self.eps_clip, 1 + self.eps_clip) * advantages
            loss = -torch.min(surr1, surr2) + 0.5 * (values - returns) ** 2 - 0.01 * entropy
            self.optimizer.zero_grad()
            loss.mean().backward()
            self.optimizer.step()


def run():
    torch.manual_seed(0)
    agent, memory = PPO(), Memory()
    for t in range(6):
        agent.select_action(torch.randn(4), memory)
        memory.rewards.append(float(t % 2))
    agent.update(memory)
