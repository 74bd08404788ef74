"""Option-critic: the feature state of the next observation is computed with
the network (`state = option_critic.get_state(...)`), carried into the next
iteration of the episode loop and used there for the action's log-probability;
in between, `actor_loss()` has stepped the optimizer over the same network, so
the next actor loss's backward goes through features computed with the old
weights ("output 0 of TBackward, is at version 2; expected version 1").  The
maintainer's fix recomputes the state from the stored observation.
Source: https://github.com/lweitkamp/option-critic-pytorch/issues/5"""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Bernoulli, Categorical


class OptionCriticFeatures(nn.Module):
    def __init__(self, in_features, num_actions, num_options, temperature=1.0):
        super().__init__()
        self.num_options = num_options
        self.temperature = temperature
        self.features = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.Q = nn.Linear(16, num_options)
        self.terminations = nn.Linear(16, num_options)
        self.options_W = nn.Parameter(torch.zeros(num_options, 16, num_actions))
        self.options_b = nn.Parameter(torch.zeros(num_options, num_actions))

    def get_state(self, obs):
        return self.features(obs)

    def get_Q(self, state):
        return self.Q(state)

    def predict_option_termination(self, state, current_option):
        termination = self.terminations(state)[:, current_option].sigmoid()
        option_termination = Bernoulli(termination).sample()
        next_option = self.get_Q(state).argmax(dim=-1)
        return bool(option_termination.item()), next_option.item()

    def get_terminations(self, state):
        return self.terminations(state).sigmoid()

    def get_action(self, state, option):
        logits = state @ self.options_W[option] + self.options_b[option]
        action_dist = Categorical(logits=logits / self.temperature)
        action = action_dist.sample()
        return action.item(), action_dist.log_prob(action), action_dist.entropy()


def actor_loss(obs, option, logp, entropy, reward, done, next_obs, model, model_prime, optim, gamma=0.99,
               termination_reg=0.01, entropy_reg=0.01):
    state = model.get_state(obs)
    next_state = model.get_state(next_obs)
    next_state_prime = model_prime.get_state(next_obs)
    option_term_prob = model.get_terminations(state)[:, option]
    next_option_term_prob = model.get_terminations(next_state)[:, option].detach()
    Q = model.get_Q(state).detach().squeeze()
    next_Q_prime = model_prime.get_Q(next_state_prime).detach().squeeze()
    gt = reward + (1 - done) * gamma * ((1 - next_option_term_prob) * next_Q_prime[option]
                                        + next_option_term_prob * next_Q_prime.max(dim=-1)[0])
    termination_loss = option_term_prob * (Q[option].detach() - Q.max(dim=-1)[0].detach() + termination_reg) * (1 - done)
    policy_loss = -logp * (gt.detach() - Q[option]) - entropy_reg * entropy
    loss = (termination_loss + policy_loss).sum()
    optim.zero_grad()
    loss.backward()
    optim.step()
    return loss


def run(steps=4, num_options=2):
    torch.manual_seed(0)
    np.random.seed(0)
    option_critic = OptionCriticFeatures(4, 3, num_options)
    option_critic_prime = OptionCriticFeatures(4, 3, num_options)
    optim_actor = torch.optim.SGD(option_critic.parameters(), lr=0.1)
    obs = torch.randn(1, 4)
    state = option_critic.get_state(obs)
    current_option = 0
    for _ in range(steps):
        action, logp, entropy = option_critic.get_action(state, current_option)
        next_obs, reward, done = torch.randn(1, 4), 1.0, 0.0
        state = option_critic.get_state(next_obs)
        option_termination, greedy_option = option_critic.predict_option_termination(state, current_option)
        actor_loss(obs, current_option, logp, entropy, reward, done, next_obs, option_critic,  # expect: ADL003
                   option_critic_prime, optim_actor)
        if option_termination:
            current_option = greedy_option
        obs = next_obs
