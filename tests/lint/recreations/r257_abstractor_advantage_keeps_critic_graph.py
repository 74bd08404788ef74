"""fast_abs_rl trains its extractor with advantage actor-critic: for every
extracted sentence the policy loss is `-p.log_prob(action) * (advantage /
len(indices))` with `advantage = r - b`, where `b` is the critic's baseline
for that step, and the critic's own loss `mse(baseline, reward)` is
backpropagated together with the policy losses.  `b` is not detached, so
the policy losses also backpropagate into the critic and push the baseline
to make the advantage larger: the critic's gradient is not the gradient of
its loss, and the reported average advantage keeps falling.  Nothing
raises.  The fix uses `(r - b).item()` (or `b.detach()`) in the policy loss.
Buggy line: `advantage = r - b` in `a2c_train_step`.
Expected finding: none (no rule checks a critic's baseline that the policy
loss backpropagates into).
Source: https://github.com/ChenRocks/fast_abs_rl/issues/49"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd
from torch.distributions import Categorical


class PtrExtractorRLStop(nn.Module):
    def __init__(self, dim=6, n_sents=4):
        super().__init__()
        self.scorer = nn.Linear(dim, 1)
        self.n_sents = n_sents

    def forward(self, sent_vecs, n_steps):
        scores = self.scorer(sent_vecs).squeeze(-1)
        return [Categorical(logits=scores) for _ in range(n_steps)]


class Critic(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.value = nn.Sequential(nn.Linear(dim, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, sent_vecs, n_steps):
        return self.value(sent_vecs.mean(0, keepdim=True)).expand(n_steps, 1).squeeze(1)


def a2c_train_step(agent, critic, sent_vecs, rewards, optimizer):
    n_steps = len(rewards)
    probs = agent(sent_vecs, n_steps)
    indices = [p.sample() for p in probs]
    baseline = critic(sent_vecs, n_steps)
    reward = torch.tensor(rewards)
    losses = []
    avg_advantage = 0
    for action, p, r, b in zip(indices, probs, reward, baseline):
        advantage = r - b  # missed:
        avg_advantage += advantage
        losses.append(-p.log_prob(action) * (advantage / len(indices)))
    critic_loss = F.mse_loss(baseline, reward)
    optimizer.zero_grad()
    autograd.backward([critic_loss] + losses, [torch.ones(())] * (1 + len(losses)))
    optimizer.step()
    return avg_advantage / len(indices)


def bug_shows():
    """The critic's gradient differs from the gradient of the critic loss."""
    torch.manual_seed(0)
    agent, critic = PtrExtractorRLStop(), Critic()
    sent_vecs, rewards = torch.randn(4, 6), [1.0, 0.5, 0.0]
    optimizer = torch.optim.SGD(list(agent.parameters()) + list(critic.parameters()), lr=0.0)
    torch.manual_seed(1)
    a2c_train_step(agent, critic, sent_vecs, rewards, optimizer)
    grad_with_policy = critic.value[0].weight.grad.clone()
    critic.zero_grad()
    F.mse_loss(critic(sent_vecs, len(rewards)), torch.tensor(rewards)).backward()
    return not torch.allclose(grad_with_policy, critic.value[0].weight.grad)


def run():
    torch.manual_seed(0)
    agent, critic = PtrExtractorRLStop(), Critic()
    optimizer = torch.optim.Adam(list(agent.parameters()) + list(critic.parameters()), lr=1e-3)
    a2c_train_step(agent, critic, torch.randn(4, 6), [1.0, 0.5, 0.0], optimizer)
