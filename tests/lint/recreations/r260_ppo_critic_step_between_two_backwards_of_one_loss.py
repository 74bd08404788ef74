"""A course repository's PPO update: the actor's clipped surrogate and the
critic's clipped value loss are summed into one `loss`, which is
backpropagated twice on each minibatch, once for each optimizer:
`critic_optim.zero_grad(); loss.backward(retain_graph=True);
critic_optim.step()`, then `actor_optim.zero_grad(); loss.backward();
actor_optim.step()`.  The critic's step changes in place the weights that the
retained graph saved (the critic has three linear layers), so the second
backward raises "modified by an inplace operation" on the first minibatch.
The update receives the networks and their optimizers as arguments (the
repository builds them in `main.py`; here a builder returns them), so nothing
near the update says which parameters `critic_optim` holds.  Backpropagating
once and stepping both optimizers after it (or computing the critic's loss
again after its step) fixes it.
Source: https://github.com/reinforcement-learning-kr/pg_travel (mujoco/agent/ppo_gae.py, train_model)"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, num_outputs)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        mu = self.fc3(x)
        logstd = torch.zeros_like(mu)
        return mu, torch.exp(logstd), logstd


class Critic(nn.Module):
    def __init__(self, num_inputs, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


def log_density(x, mu, std, logstd):
    var = std.pow(2)
    log_density = -(x - mu).pow(2) / (2 * var) - 0.5 * np.log(2 * np.pi) - logstd
    return log_density.sum(1, keepdim=True)


def surrogate_loss(actor, advants, states, old_policy, actions):
    mu, std, logstd = actor(states)
    new_policy = log_density(actions, mu, std, logstd)
    ratio = torch.exp(new_policy - old_policy)
    return ratio * advants, ratio


def train_model(actor, critic, states, actions, returns, advants, actor_optim, critic_optim,
                clip_param=0.2, batch_size=8):
    criterion = torch.nn.MSELoss()
    with torch.no_grad():
        mu, std, logstd = actor(states)
        old_policy = log_density(actions, mu, std, logstd)
        old_values = critic(states)
    n = len(states)
    arr = np.arange(n)
    for epoch in range(2):
        np.random.shuffle(arr)
        for i in range(n // batch_size):
            batch_index = torch.LongTensor(arr[batch_size * i: batch_size * (i + 1)])
            inputs = states[batch_index]
            returns_samples = returns[batch_index]
            advants_samples = advants[batch_index]
            oldvalue_samples = old_values[batch_index]

            loss, ratio = surrogate_loss(actor, advants_samples, inputs,
                                         old_policy[batch_index], actions[batch_index])
            values = critic(inputs)
            clipped_values = oldvalue_samples + torch.clamp(values - oldvalue_samples, -clip_param, clip_param)
            critic_loss1 = criterion(clipped_values, returns_samples)
            critic_loss2 = criterion(values, returns_samples)
            critic_loss = torch.max(critic_loss1, critic_loss2).mean()

            clipped_ratio = torch.clamp(ratio, 1.0 - clip_param, 1.0 + clip_param)
            clipped_loss = clipped_ratio * advants_samples
            actor_loss = -torch.min(loss, clipped_loss).mean()

            loss = actor_loss + 0.5 * critic_loss

            critic_optim.zero_grad()
            loss.backward(retain_graph=True)
            critic_optim.step()  # expect: ADL003

            actor_optim.zero_grad()
            loss.backward()
            actor_optim.step()


def build_agent(num_inputs, num_outputs, actor_lr=3e-4, critic_lr=3e-4, l2_rate=1e-3):
    actor, critic = Actor(num_inputs, num_outputs), Critic(num_inputs)
    return (actor, critic, optim.Adam(actor.parameters(), lr=actor_lr),
            optim.Adam(critic.parameters(), lr=critic_lr, weight_decay=l2_rate))


def run():
    torch.manual_seed(0)
    np.random.seed(0)
    actor, critic, actor_optim, critic_optim = build_agent(4, 2)
    states, actions = torch.randn(16, 4), torch.randn(16, 2)
    returns, advants = torch.randn(16, 1), torch.randn(16, 1)
    train_model(actor, critic, states, actions, returns, advants, actor_optim, critic_optim)
