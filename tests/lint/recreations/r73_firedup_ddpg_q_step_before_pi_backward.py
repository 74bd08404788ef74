"""Fired Up's DDPG (a PyTorch port of Spinning Up): one actor-critic module
returns `pi, q, q_pi` for a batch; the update builds `pi_loss = -q_pi.mean()`
and the Q loss, steps the Q optimizer, then calls `pi_loss.backward()` through
the Q-network's old weights ("output 0 of TBackward, is at version 2";
PyTorch 1.6).  The maintainer's fix reorders the two updates.
Source: https://github.com/kashif/firedup/issues/11"""
import torch
import torch.nn as nn


class MLP(nn.Module):
    def __init__(self, layers, activation=torch.tanh, output_activation=None):
        super().__init__()
        self.layers = nn.ModuleList()
        self.activation = activation
        self.output_activation = output_activation
        for i, layer in enumerate(layers[1:]):
            self.layers.append(nn.Linear(layers[i], layer))

    def forward(self, inputs):
        x = inputs
        for layer in self.layers[:-1]:
            x = self.activation(layer(x))
        if self.output_activation is None:
            return self.layers[-1](x)
        return self.output_activation(self.layers[-1](x))


class ActorCritic(nn.Module):
    def __init__(self, in_features, action_dim, hidden_sizes=(16, 16), activation=torch.relu,
                 output_activation=torch.tanh, action_scale=1.0):
        super().__init__()
        self.action_scale = action_scale
        self.policy = MLP([in_features] + list(hidden_sizes) + [action_dim], activation, output_activation)
        self.q = MLP([in_features + action_dim] + list(hidden_sizes) + [1], activation, None)

    def forward(self, x, a):
        pi = self.action_scale * self.policy(x)
        q = self.q(torch.cat((x, a), dim=1)).squeeze(1)
        q_pi = self.q(torch.cat((x, pi), dim=1)).squeeze(1)
        return pi, q, q_pi


def ddpg_update(actor_critic, target_actor_critic, pi_optimizer, q_optimizer, batch, gamma=0.99):
    obs1, obs2, acts, rews, done = batch
    _, q, q_pi = actor_critic(obs1, acts)
    _, _, q_pi_targ = target_actor_critic(obs2, acts)

    backup = (rews + gamma * (1 - done) * q_pi_targ).detach()
    pi_loss = -q_pi.mean()
    q_loss = ((q - backup) ** 2).mean()

    q_optimizer.zero_grad()
    q_loss.backward()
    q_optimizer.step()  # expect: ADL003

    pi_optimizer.zero_grad()
    pi_loss.backward()
    pi_optimizer.step()
    return pi_loss.item(), q_loss.item()


def run():
    torch.manual_seed(0)
    actor_critic = ActorCritic(3, 2)
    target_actor_critic = ActorCritic(3, 2)
    target_actor_critic.load_state_dict(actor_critic.state_dict())
    pi_optimizer = torch.optim.Adam(actor_critic.policy.parameters(), lr=1e-3)
    q_optimizer = torch.optim.Adam(actor_critic.q.parameters(), lr=1e-3)
    batch = (torch.randn(8, 3), torch.randn(8, 3), torch.rand(8, 2) * 2 - 1, torch.randn(8), torch.zeros(8))
    ddpg_update(actor_critic, target_actor_critic, pi_optimizer, q_optimizer, batch)
