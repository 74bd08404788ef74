"""A pull request on AGNES (a reinforcement-learning library with recurrent
policies), "RNN hidden state grad fix": the recurrent policy's hidden state
returned while acting kept its graph, and the learner, which starts each
training sequence from the hidden state stored with the rollout, then
backpropagated into the acting graphs, which the first update had freed.
Re-created as a GRU actor-critic whose `act()` keeps `self.hidden` from the
policy's forward with gradients on and stores it with each transition, a
rollout buffer, and a PPO-style learner that runs two epochs over the
batch.  Raises at the second backward ("Trying to backward through the graph
a second time").
Buggy line: `self.hidden = self.gru(features, self.hidden)` in `act()` (the
stored state carries the acting graph into the training sequences).
Source: https://github.com/rotinov/AGNES/pull/17"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RecurrentActorCritic(nn.Module):
    def __init__(self, obs_dim=4, hidden=16, actions=2):
        super().__init__()
        self.encoder = nn.Linear(obs_dim, hidden)
        self.gru = nn.GRUCell(hidden, hidden)
        self.pi = nn.Linear(hidden, actions)
        self.v = nn.Linear(hidden, 1)
        self.hidden = torch.zeros(1, hidden)

    def act(self, obs):
        features = torch.tanh(self.encoder(obs))
        prev = self.hidden
        self.hidden = self.gru(features, self.hidden)  # expect: ADL017
        dist = torch.distributions.Categorical(logits=self.pi(self.hidden))
        return dist.sample(), prev

    def evaluate(self, obs, h0, actions):
        features = torch.tanh(self.encoder(obs))
        h = self.gru(features, h0)
        dist = torch.distributions.Categorical(logits=self.pi(h))
        return dist.log_prob(actions), self.v(h).squeeze(-1)


class Learner:
    def __init__(self, model, epochs=2):
        self.model = model
        self.epochs = epochs
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def learn(self, obs, hiddens, actions, returns):
        for _ in range(self.epochs):
            log_probs, values = self.model.evaluate(obs, hiddens, actions)
            advantages = returns - values.detach()
            loss = -(log_probs * advantages).mean() + F.mse_loss(values, returns)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def run():
    torch.manual_seed(0)
    model = RecurrentActorCritic()
    learner = Learner(model)
    obs_buf, h_buf, a_buf = [], [], []
    for _ in range(5):
        obs = torch.randn(1, 4)
        action, h = model.act(obs)
        obs_buf.append(obs)
        h_buf.append(h)
        a_buf.append(action)
    learner.learn(torch.cat(obs_buf), torch.cat(h_buf), torch.cat(a_buf), torch.randn(5))
