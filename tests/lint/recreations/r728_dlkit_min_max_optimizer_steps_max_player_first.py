"""dlkit, `framework/optim/min_max.py`: `MinMaxOptimizer.train_step(loss)` maximises
`loss.max_loss` and steps the max player's optimizer, then minimises `loss.min_loss`, built in
the same pass and extended with `add_min_loss` terms that go through the max player's output.
The step wrote the max player's weights in place, so the min player's backward finds its saved
weights at a newer version and raises.
Re-created in my own words with the file's classes (`MinMaxLoss` with `add_min_loss`,
`MinMaxParameters`, `MinMaxOptimizer`) and a caller of the kind the repository writes: a
feature extractor (min player) trained on a task loss plus a Wasserstein critic's estimate of the
gap between two domains, the critic (max player) trained on detached features.
Raises at `loss.min_loss.backward()`; buggy line: `self.opt_max.step()` before it.
Source: https://github.com/nazarblch/dlkit/blob/4756a443638fabfc92ac5287bdc80643320fe2ce/framework/optim/min_max.py"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim


class MinMaxLoss:
    def __init__(self, min_loss, max_loss):
        self.min_loss = min_loss
        self.max_loss = max_loss

    def add_min_loss(self, loss):
        self.min_loss += loss

    def add_max_loss(self, loss):
        self.max_loss += loss


class MinMaxParameters:
    def __init__(self, min_parameters, max_parameters):
        self.min_parameters = min_parameters
        self.max_parameters = max_parameters


class MinMaxOptimizer:
    def __init__(self, parameters, min_learning_rate, max_learning_rate, betas=(0.5, 0.999)):
        self.opt_max = optim.Adam(parameters.max_parameters, lr=max_learning_rate, betas=betas)
        self.opt_min = optim.Adam(parameters.min_parameters, lr=min_learning_rate, betas=betas)

    def train_step(self, loss):
        self.opt_max.zero_grad()
        (-loss.max_loss).backward()
        self.opt_max.step()  # missed: ADL003, the losses are attributes of a `MinMaxLoss` object passed to the optimizer class's `train_step`
        self.opt_min.zero_grad()
        loss.min_loss.backward()
        self.opt_min.step()


class Features(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        return self.net(x)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, h):
        return self.net(h)


def domain_gap(critic, h_source, h_target):
    return critic(h_source).mean() - critic(h_target).mean()


def run():
    torch.manual_seed(0)
    features, critic, head = Features(), Critic(), nn.Linear(8, 2)
    optimizer = MinMaxOptimizer(
        MinMaxParameters(list(features.parameters()) + list(head.parameters()), critic.parameters()),
        min_learning_rate=1e-3, max_learning_rate=1e-3)
    for _ in range(2):
        x_s, y_s, x_t = torch.randn(8, 6), torch.randint(0, 2, (8,)), torch.randn(8, 6) + 1
        h_s, h_t = features(x_s), features(x_t)
        loss = MinMaxLoss(F.cross_entropy(head(h_s), y_s), domain_gap(critic, h_s.detach(), h_t.detach()))
        loss.add_min_loss(0.1 * domain_gap(critic, h_s, h_t))
        optimizer.train_step(loss)
