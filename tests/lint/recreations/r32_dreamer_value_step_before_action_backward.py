"""Dreamer: the value model's optimizer steps before the action model's
backward(), whose loss is the mean of the lambda returns computed (in a
helper) from the value model's predictions; the step changed the weights that
backward needs ("output 0 of AsStridedBackward0, is at version 2").
Source: https://github.com/cross32768/Dreamer_PyTorch/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.functional import mse_loss
from torch.nn.utils import clip_grad_norm_


class TransitionModel(nn.Module):
    def __init__(self, state_dim, action_dim, rnn_hidden_dim):
        super().__init__()
        self.fc_state_action = nn.Linear(state_dim + action_dim, rnn_hidden_dim)
        self.rnn = nn.GRUCell(rnn_hidden_dim, rnn_hidden_dim)
        self.fc_state_prior = nn.Linear(rnn_hidden_dim, state_dim)

    def prior(self, state, action, rnn_hidden):
        hidden = F.elu(self.fc_state_action(torch.cat([state, action], dim=1)))
        rnn_hidden = self.rnn(hidden, rnn_hidden)
        next_state = torch.tanh(self.fc_state_prior(rnn_hidden))
        return next_state, rnn_hidden


class ValueModel(nn.Module):
    def __init__(self, state_dim, rnn_hidden_dim, hidden_dim=16):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_hidden_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, 1)

    def forward(self, state, rnn_hidden):
        return self.fc2(F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=-1))))


class RewardModel(ValueModel):
    pass


class ActionModel(nn.Module):
    def __init__(self, state_dim, rnn_hidden_dim, action_dim, hidden_dim=16):
        super().__init__()
        self.fc1 = nn.Linear(state_dim + rnn_hidden_dim, hidden_dim)
        self.fc_mean = nn.Linear(hidden_dim, action_dim)

    def forward(self, state, rnn_hidden):
        hidden = F.elu(self.fc1(torch.cat([state, rnn_hidden], dim=1)))
        return torch.tanh(self.fc_mean(hidden))


def lambda_target(rewards, values, gamma, lambda_):
    """TD(lambda) returns over an imagined trajectory (time first)."""
    returns = []
    next_return = values[-1]
    for t in reversed(range(rewards.shape[0] - 1)):
        next_return = rewards[t] + gamma * ((1 - lambda_) * values[t + 1] + lambda_ * next_return)
        returns.append(next_return)
    return torch.stack(returns[::-1])


def train(collect_interval=2, imagination_horizon=4, gamma=0.9, lambda_=0.95, clip=100.0):
    state_dim, action_dim, rnn_hidden_dim = 3, 2, 6
    rssm = TransitionModel(state_dim, action_dim, rnn_hidden_dim)
    value_model = ValueModel(state_dim, rnn_hidden_dim)
    reward_model = RewardModel(state_dim, rnn_hidden_dim)
    action_model = ActionModel(state_dim, rnn_hidden_dim, action_dim)
    value_optimizer = torch.optim.Adam(value_model.parameters(), lr=1e-3)
    action_optimizer = torch.optim.Adam(action_model.parameters(), lr=1e-3)

    for update_step in range(collect_interval):
        flatten_states = torch.randn(5, state_dim)
        flatten_rnn_hiddens = torch.zeros(5, rnn_hidden_dim)
        imaginated_states = []
        imaginated_rnn_hiddens = []
        for h in range(imagination_horizon):
            actions = action_model(flatten_states, flatten_rnn_hiddens)
            flatten_states, flatten_rnn_hiddens = rssm.prior(flatten_states, actions, flatten_rnn_hiddens)
            imaginated_states.append(flatten_states)
            imaginated_rnn_hiddens.append(flatten_rnn_hiddens)
        imaginated_states = torch.stack(imaginated_states)
        imaginated_rnn_hiddens = torch.stack(imaginated_rnn_hiddens)

        imaginated_rewards = reward_model(imaginated_states, imaginated_rnn_hiddens)
        imaginated_values = value_model(imaginated_states, imaginated_rnn_hiddens)
        lambda_target_values = lambda_target(imaginated_rewards, imaginated_values, gamma, lambda_)

        # update value model
        value_loss = 0.5 * mse_loss(imaginated_values[:-1], lambda_target_values.detach())
        value_optimizer.zero_grad()
        value_loss.backward(retain_graph=True)
        clip_grad_norm_(value_model.parameters(), clip)
        value_optimizer.step()  # expect: ADL003

        # update action model (multiply -1 for gradient ascent)
        action_loss = -1 * (lambda_target_values.mean())
        action_optimizer.zero_grad()
        action_loss.backward()
        clip_grad_norm_(action_model.parameters(), clip)
        action_optimizer.step()


def run():
    torch.manual_seed(0)
    train()
