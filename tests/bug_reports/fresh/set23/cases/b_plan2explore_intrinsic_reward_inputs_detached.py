"""Plan2Explore's exploration actor: it imagines trajectories through the recurrent world model
and is rewarded by the disagreement (variance) of an ensemble of one-step models that predict the
next embedding from the imagined action, stochastic state and deterministic state. The ensemble
is called on `actions.detach()`, `priors.detach()`, `deterministics.detach()`, so the intrinsic
reward carries no gradient back to the actor: the actor learns from the critic's values only and
never to seek disagreement. Nothing raises: the critic term keeps the actor loss differentiable.
Source: https://github.com/kc-ml2/SimpleDreamer/commit/cb6d4f04e3d01c517da793d60cf92644766017a6
("fix intrinsic agent update detach": the three `.detach()` calls on the one-step models' inputs
are removed)
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

ACTIONS, LATENT, DETER, EMBED, HORIZON, BATCH, ENSEMBLE = 2, 4, 6, 5, 5, 8, 4


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LATENT + DETER, 16), nn.ELU(), nn.Linear(16, ACTIONS))

    def forward(self, prior, deterministic):
        return torch.tanh(self.net(torch.cat([prior, deterministic], dim=-1)))


class RSSM(nn.Module):
    def __init__(self):
        super().__init__()
        self.recurrent_model = nn.GRUCell(LATENT + ACTIONS, DETER)
        self.transition_model = nn.Linear(DETER, LATENT)

    def imagine(self, prior, action, deterministic):
        deterministic = self.recurrent_model(torch.cat([prior, action], dim=-1), deterministic)
        return torch.tanh(self.transition_model(deterministic)), deterministic


class OneStepModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(ACTIONS + LATENT + DETER, 16), nn.ELU(), nn.Linear(16, EMBED))

    def forward(self, action, prior, deterministic):
        return self.net(torch.cat([action, prior, deterministic], dim=-1))


rssm = RSSM()
one_step_models = nn.ModuleList(OneStepModel() for _ in range(ENSEMBLE))
critic = nn.Linear(LATENT + DETER, 1)
for module in (rssm, one_step_models, critic):
    module.requires_grad_(False)
actor = Actor()
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-2)
start_priors = torch.randn(15, BATCH, LATENT)
start_deterministics = torch.randn(15, BATCH, DETER)

losses = []
for prior, deterministic in zip(start_priors, start_deterministics):
    actions, priors, deterministics = [], [], []
    for _ in range(HORIZON):
        action = actor(prior, deterministic)
        prior, deterministic = rssm.imagine(prior, action, deterministic)
        actions.append(action)
        priors.append(prior)
        deterministics.append(deterministic)
    actions, priors, deterministics = torch.stack(actions), torch.stack(priors), torch.stack(deterministics)
    predicted_feature_means = [
        model(actions.detach(), priors.detach(), deterministics.detach())
        for model in one_step_models
    ]
    intrinsic_reward = torch.stack(predicted_feature_means).var(dim=0).mean(dim=-1)
    values = critic(torch.cat([priors, deterministics], dim=-1)).squeeze(-1)
    actor_loss = -(intrinsic_reward.sum(dim=0) + values[-1]).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    losses.append(actor_loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in actor.parameters()]}
