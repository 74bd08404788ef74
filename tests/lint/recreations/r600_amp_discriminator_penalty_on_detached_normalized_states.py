"""amp-rsl-rl (Adversarial Motion Priors on top of rsl_rl, legged-robot
locomotion): the discriminator's loss normalizes the expert and policy state
transitions with its empirical normalizer first and then computes the
gradient penalty on them; `compute_grad_pen` starts from
`data = expert.detach().requires_grad_(True)`, a new leaf on the already
normalized tensor.  The `.detach()` cuts the normalizer out of the graph, so
the R1 penalty measures the discriminator's gradient with respect to the
normalized states, not the raw observations it is meant to regularize:
scaled by each feature's standard deviation, so features with a small
spread are over-penalized and large ones under-penalized.  Nothing raises.
The pull request moves the normalization inside the penalty's graph
(normalize the leaf made from the raw states).  Re-created as the
repository's `Discriminator` (`EmpiricalNormalization`, `trunk`, `linear`,
`compute_loss`, `compute_grad_pen` with the BCE / R1 branch) and one update.
`bug_shows()` compares the penalty with the one taken on the raw states.
Buggy line: `sample_amp_expert = tuple(self.amp_normalizer(s) for s in
sample_amp_expert)` before `compute_grad_pen`, whose
`data = expert.detach().requires_grad_(True)` then starts after the
normalizer.
Source: https://github.com/gbionics/amp-rsl-rl/pull/58"""
import torch
import torch.nn as nn
from torch import autograd


class EmpiricalNormalization(nn.Module):
    def __init__(self, shape, eps=1e-2):
        super().__init__()
        self.eps = eps
        self.register_buffer("_mean", torch.zeros(shape).unsqueeze(0))
        self.register_buffer("_std", torch.ones(shape).unsqueeze(0))

    def update(self, x):
        self._mean.copy_(x.mean(0, keepdim=True))
        self._std.copy_(x.std(0, keepdim=True))

    def forward(self, x):
        return (x - self._mean) / (self._std + self.eps)


class Discriminator(nn.Module):
    def __init__(self, amp_obs_dim, hidden=32):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(2 * amp_obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.linear = nn.Linear(hidden, 1)
        self.amp_normalizer = EmpiricalNormalization(shape=[amp_obs_dim])
        self.loss_fun = nn.BCEWithLogitsLoss()

    def forward(self, state, next_state):
        state = self.amp_normalizer(state)
        next_state = self.amp_normalizer(next_state)
        return self.linear(self.trunk(torch.cat([state, next_state], dim=-1)))

    def compute_loss(self, policy_d, expert_d, sample_amp_expert, sample_amp_policy, lambda_=10.0):
        sample_amp_expert = tuple(self.amp_normalizer(s) for s in sample_amp_expert)  # missed: no rule (penalty on a detached leaf made after the normalizer)
        sample_amp_policy = tuple(self.amp_normalizer(s) for s in sample_amp_policy)
        grad_pen_loss = self.compute_grad_pen(expert_states=sample_amp_expert, lambda_=lambda_)
        expert_loss = self.loss_fun(expert_d, torch.ones_like(expert_d))
        policy_loss = self.loss_fun(policy_d, torch.zeros_like(policy_d))
        return 0.5 * (expert_loss + policy_loss), grad_pen_loss

    def compute_grad_pen(self, expert_states, lambda_=10.0):
        expert = torch.cat(expert_states, -1)
        # R1 regularizer on REAL: 0.5 * lambda * ||grad_x D(x_real)||^2
        data = expert.detach().requires_grad_(True)
        scores = self.linear(self.trunk(data))
        grad = autograd.grad(outputs=scores.sum(), inputs=data, create_graph=True, retain_graph=True,
                             only_inputs=True)[0]
        return 0.5 * lambda_ * (grad.pow(2).sum(dim=1)).mean()


def r1_on_raw_states(disc, expert_states, lambda_=10.0):
    raw = torch.cat(expert_states, -1).detach().requires_grad_(True)
    half = raw.shape[-1] // 2
    scores = disc(raw[:, :half], raw[:, half:])
    grad = autograd.grad(scores.sum(), raw, create_graph=True)[0]
    return 0.5 * lambda_ * (grad.pow(2).sum(dim=1)).mean()


def bug_shows():
    """The penalty the update uses differs from the R1 penalty on the raw observations."""
    torch.manual_seed(0)
    scale = torch.tensor([0.05, 0.1, 1.0, 5.0, 20.0, 0.5])
    expert = (torch.randn(64, 6) * scale, torch.randn(64, 6) * scale)
    policy = (torch.randn(64, 6) * scale, torch.randn(64, 6) * scale)
    disc = Discriminator(amp_obs_dim=6)
    disc.amp_normalizer.update(torch.cat([expert[0], policy[0]]))
    amp_loss, grad_pen = disc.compute_loss(disc(*policy), disc(*expert), expert, policy)
    intended = r1_on_raw_states(disc, expert)
    return not torch.allclose(grad_pen, intended, rtol=1e-2)
