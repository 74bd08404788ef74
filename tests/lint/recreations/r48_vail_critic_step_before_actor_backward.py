"""VAIL/GAIL actor-critic training: the advantages come from the critic and
are not detached; each epoch steps the critic, then backpropagates the actor's
surrogate loss through those advantages, which need the critic's old weights
("modified by an inplace operation", error traced to `values = critic(inputs)`).
Source: https://github.com/reinforcement-learning-kr/lets-do-irl/issues/9"""
import torch
import torch.nn as nn
import torch.optim as optim


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs, hidden_size=16):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.fc3 = nn.Linear(hidden_size, num_outputs)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        mu = self.fc3(x)
        std = torch.ones_like(mu)
        return mu, std


class Critic(nn.Module):
    def __init__(self, num_inputs, hidden_size=16):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.fc3 = nn.Linear(hidden_size, 1)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        return self.fc3(x)


def log_prob_density(x, mu, std):
    log_density = -(x - mu).pow(2) / (2 * std.pow(2)) - 0.5 * torch.log(2 * torch.pi * std.pow(2))
    return log_density.sum(1, keepdim=True)


def get_gae(rewards, masks, values, gamma=0.99, lamda=0.98):
    returns = torch.zeros_like(rewards)
    advants = torch.zeros_like(rewards)
    running_returns = 0
    previous_value = 0
    running_advants = 0
    for t in reversed(range(len(rewards))):
        running_returns = rewards[t] + gamma * running_returns * masks[t]
        returns[t] = running_returns
        running_delta = rewards[t] + gamma * previous_value * masks[t] - values[t]
        previous_value = values[t]
        running_advants = running_delta + gamma * lamda * running_advants * masks[t]
        advants[t] = running_advants
    advants = (advants - advants.mean()) / (advants.std() + 1e-8)
    return returns, advants


def surrogate_loss(actor, advants, states, old_policy, actions):
    mu, std = actor(states)
    new_policy = log_prob_density(actions, mu, std)
    ratio = torch.exp(new_policy - old_policy)
    return -(ratio * advants).mean(), ratio


def train_actor_critic(actor, critic, memory, actor_optim, critic_optim, epochs=2):
    states, actions, rewards, masks = memory
    old_values = critic(states)
    returns, advants = get_gae(rewards, masks, old_values)
    mu, std = actor(states)
    old_policy = log_prob_density(actions, mu, std)
    criterion = nn.MSELoss()
    for _ in range(epochs):
        values = critic(states)
        critic_loss = criterion(values, returns)
        critic_optim.zero_grad()
        critic_loss.backward(retain_graph=True)
        critic_optim.step()  # expect: ADL003

        loss, ratio = surrogate_loss(actor, advants, states, old_policy.detach(), actions)
        actor_optim.zero_grad()
        loss.backward(retain_graph=True)
        actor_optim.step()


def run():
    torch.manual_seed(0)
    actor, critic = Actor(4, 2), Critic(4)
    actor_optim = optim.Adam(actor.parameters(), lr=3e-4)
    critic_optim = optim.Adam(critic.parameters(), lr=3e-4)
    memory = (torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 1), torch.ones(8, 1))
    train_actor_critic(actor, critic, memory, actor_optim, critic_optim)
