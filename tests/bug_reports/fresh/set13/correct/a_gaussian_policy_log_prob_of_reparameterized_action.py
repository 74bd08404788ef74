"""A REINFORCE learner for continuous control with a Gaussian policy: a mean head and a
log-variance head over a shared observation encoder. The action is drawn with `d.rsample()` and
its log-probability `d.log_prob(a)` is weighted by the return. Because the reparameterized sample is
`a = mean + std * eps`, `a - mean` no longer depends on the mean, so `log_prob(a)` has a zero
gradient with respect to the mean: the mean head (and the encoder through it) gets exactly zero
policy gradient and never learns, while the log-variance head gets a wrong one. Nothing raises.
Source: https://github.com/pytorch/pytorch/issues/10943 ("`Normal` distribution: Gaussian policy
with zero gradient of mean head": `a = d.rsample(); logprob = d.log_prob(a)` gives `mean grad:
tensor([[0., 0., 0.]])`; answer: the score-function estimator needs the action as a constant, sample
with `d.sample()`).
expect: silent"""
import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)

OBS, HID, ACT, BATCH = 3, 16, 1, 32


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(OBS, HID), nn.Tanh())
        self.mean_head = nn.Linear(HID, ACT)
        self.logvar_head = nn.Linear(HID, ACT)

    def forward(self, obs):
        h = self.encoder(obs)
        mean = self.mean_head(h)
        std = torch.exp(0.5 * self.logvar_head(h))
        return Normal(mean, std)


def returns_for(obs, action):
    # Stand-in for an environment rollout: the best action is 0.5 * obs[0].
    return -((action - 0.5 * obs[:, :1]) ** 2).squeeze(1)


policy = GaussianPolicy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
losses = []
for step in range(5):
    obs = torch.randn(BATCH, OBS)
    d = policy(obs)
    a = d.sample()
    logprob = d.log_prob(a).sum(1)
    ret = returns_for(obs, a.detach())
    advantage = ret - ret.mean()
    loss = -(logprob * advantage).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in policy.parameters()]}
