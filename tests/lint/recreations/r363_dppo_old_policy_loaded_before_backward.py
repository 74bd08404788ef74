"""Pytorch-DPPO's PPO workers compute the clipped surrogate with the ratio
`probs / probs_old`, where `probs_old` comes from `model_old(batch_states)`
run with gradients on, and then refresh the old policy "before step":
`model_old.load_state_dict(model.state_dict())`, just before
`total_loss.backward()`.  Loading copies into `model_old`'s parameters in
place; its linear layers kept those weights (transposed) for backward, and
backward fails ("output 0 of TBackward0, is at version 2; expected version
1").  The fix computes the old policy's values under `torch.no_grad()` (or
loads the state after backward).
Buggy line: `model_old.load_state_dict(model.state_dict())` in
`ppo_update`.
Expected finding: ADL003 (the parameters of `model_old` rewritten in place
between its forward and a backward through that graph).
Source: https://github.com/alexis-jacq/Pytorch-DPPO/issues/9"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.fc1 = nn.Linear(num_inputs, 16)
        self.mu = nn.Linear(16, num_outputs)
        self.sigma_sq = nn.Linear(16, num_outputs)
        self.v = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.mu(h), F.softplus(self.sigma_sq(h)), self.v(h)


def normal(x, mu, sigma_sq):
    a = (-1 * (x - mu).pow(2) / (2 * sigma_sq)).exp()
    b = 1 / (2 * sigma_sq * math.pi).sqrt()
    return a * b


def ppo_update(model, model_old, optimizer, batches, clip=0.2):
    for batch_states, batch_actions, batch_returns, batch_advantages in batches:
        model.zero_grad()
        mu_old, sigma_sq_old, v_pred_old = model_old(batch_states.detach())
        probs_old = normal(batch_actions, mu_old, sigma_sq_old)
        mu, sigma_sq, v_pred = model(batch_states)
        probs = normal(batch_actions, mu, sigma_sq)
        ratio = probs / (1e-10 + probs_old)
        surr1 = ratio * batch_advantages
        surr2 = ratio.clamp(1 - clip, 1 + clip) * batch_advantages
        loss_clip = -torch.mean(torch.min(surr1, surr2))
        vfloss1 = (v_pred - batch_returns) ** 2
        v_pred_clipped = v_pred_old + (v_pred - v_pred_old).clamp(-clip, clip)
        vfloss2 = (v_pred_clipped - batch_returns) ** 2
        loss_value = 0.5 * torch.mean(torch.max(vfloss1, vfloss2))
        total_loss = loss_clip + loss_value
        model_old.load_state_dict(model.state_dict())  # expect: ADL003
        total_loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = Model(3, 2)
    model_old = Model(3, 2)
    model_old.load_state_dict(model.state_dict())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batches = [(torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1), torch.randn(4, 1))]
    ppo_update(model, model_old, optimizer, batches)
