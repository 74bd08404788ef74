"""A Dreamer agent gets its three losses from one helper (`self.loss`, a
tuple), then steps the world-model optimizer before the actor's backward();
the actor's loss was computed through the world model's transition and reward
layers, whose weights the step changed ("output 0 of TBackward, is at
version 2; expected version 1", PyTorch 1.5).
Source: https://github.com/juliusfrost/dreamer-pytorch/issues/52"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Transition(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.fc = nn.Linear(state_dim + action_dim, state_dim)

    def forward(self, state, action):
        return torch.tanh(self.fc(torch.cat([state, action], dim=-1)))


class Dreamer:
    def __init__(self, obs_dim=5, state_dim=4, action_dim=2, horizon=3, discount=0.99):
        self.horizon = horizon
        self.discount = discount
        self.representation = nn.Linear(obs_dim, state_dim)
        self.transition = Transition(state_dim, action_dim)
        self.reward_model = nn.Linear(state_dim, 1)
        self.actor = nn.Sequential(nn.Linear(state_dim, action_dim), nn.Tanh())
        self.value_model = nn.Linear(state_dim, 1)
        self.model_modules = nn.ModuleList([self.representation, self.transition, self.reward_model])
        self.model_optimizer = torch.optim.Adam(self.model_modules.parameters(), lr=6e-4)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=8e-5)
        self.value_optimizer = torch.optim.Adam(self.value_model.parameters(), lr=8e-5)

    def optimize_agent(self, observation, action, reward):
        model_loss, actor_loss, value_loss = self.loss(observation, action, reward)

        self.model_optimizer.zero_grad()
        self.actor_optimizer.zero_grad()
        self.value_optimizer.zero_grad()

        model_loss.backward()
        self.model_optimizer.step()  # expect: ADL003
        actor_loss.backward()
        self.actor_optimizer.step()
        value_loss.backward()
        self.value_optimizer.step()

    def loss(self, observation, action, reward):
        post = torch.tanh(self.representation(observation))
        next_post = self.transition(post[:-1], action[:-1])
        reward_pred = self.reward_model(post)
        model_loss = F.mse_loss(reward_pred, reward) + F.mse_loss(next_post, post[1:].detach())

        imag_state = post.detach()
        imag_states = []
        for t in range(self.horizon):
            imag_action = self.actor(imag_state)
            imag_state = self.transition(imag_state, imag_action)
            imag_states.append(imag_state)
        imag_states = torch.stack(imag_states)
        imag_reward = self.reward_model(imag_states)
        value = self.value_model(imag_states)
        returns = imag_reward.sum(0) + self.discount ** self.horizon * value[-1]
        actor_loss = -returns.mean()

        value_pred = self.value_model(imag_states.detach())
        value_loss = F.mse_loss(value_pred[-1], returns.detach())
        return model_loss, actor_loss, value_loss


def run():
    torch.manual_seed(0)
    agent = Dreamer()
    agent.optimize_agent(torch.randn(6, 5), torch.randn(6, 2), torch.randn(6, 1))
