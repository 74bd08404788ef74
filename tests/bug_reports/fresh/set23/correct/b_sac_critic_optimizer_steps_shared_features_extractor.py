"""The same SAC with the pull request's fix: the critic computes the shared extractor's features
with gradients off, and its optimizer holds the critic's parameters except the extractor's; the
extractor learns from the actor loss only.
Source: https://github.com/DLR-RM/stable-baselines3/pull/198"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, FEATURES, ACTIONS, BATCH, GAMMA = 8, 16, 2, 16, 0.99

features_extractor = nn.Sequential(nn.Linear(OBS, FEATURES), nn.ReLU(), nn.Linear(FEATURES, FEATURES), nn.ReLU())


class Actor(nn.Module):
    def __init__(self, features_extractor):
        super().__init__()
        self.features_extractor = features_extractor
        self.mu = nn.Linear(FEATURES, ACTIONS)
        self.log_std = nn.Linear(FEATURES, ACTIONS)

    def action_log_prob(self, obs):
        features = self.features_extractor(obs)
        dist = torch.distributions.Normal(self.mu(features), self.log_std(features).clamp(-5, 2).exp())
        raw = dist.rsample()
        action = torch.tanh(raw)
        log_prob = (dist.log_prob(raw) - torch.log(1 - action.pow(2) + 1e-6)).sum(-1)
        return action, log_prob


class Critic(nn.Module):
    def __init__(self, features_extractor):
        super().__init__()
        self.features_extractor = features_extractor
        self.q_networks = nn.ModuleList(nn.Sequential(nn.Linear(FEATURES + ACTIONS, 32), nn.ReLU(), nn.Linear(32, 1))
                                        for _ in range(2))

    def forward(self, obs, actions):
        with torch.set_grad_enabled(False):
            features = self.features_extractor(obs)
        return tuple(q(torch.cat([features, actions], dim=1)).squeeze(-1) for q in self.q_networks)


actor = Actor(features_extractor)
critic = Critic(features_extractor)
critic_target = Critic(nn.Sequential(nn.Linear(OBS, FEATURES), nn.ReLU(), nn.Linear(FEATURES, FEATURES), nn.ReLU()))
critic_target.load_state_dict(critic.state_dict())
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-3)
critic_parameters = [p for name, p in critic.named_parameters() if "features_extractor" not in name]
critic_optimizer = torch.optim.Adam(critic_parameters, lr=3e-3)
ent_coef = 0.1

batches = [(torch.randn(BATCH, OBS), torch.rand(BATCH, ACTIONS) * 2 - 1, torch.randn(BATCH), torch.randn(BATCH, OBS))
           for _ in range(10)]

losses = []
for obs, actions, rewards, next_obs in batches:
    actions_pi, log_prob = actor.action_log_prob(obs)
    with torch.no_grad():
        next_actions, next_log_prob = actor.action_log_prob(next_obs)
        next_q = torch.min(*critic_target(next_obs, next_actions)) - ent_coef * next_log_prob
        target_q = rewards + GAMMA * next_q
    current_q = critic(obs, actions)
    critic_loss = 0.5 * sum(F.mse_loss(q, target_q) for q in current_q)
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()

    min_qf_pi = torch.min(*critic(obs, actions_pi))
    actor_loss = (ent_coef * log_prob - min_qf_pi).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
    with torch.no_grad():
        for param, target_param in zip(critic.parameters(), critic_target.parameters()):
            target_param.mul_(0.99).add_(0.01 * param)
    losses.append(torch.stack([critic_loss.detach(), actor_loss.detach()]))

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in list(actor.parameters()) + list(critic.parameters())]}
