"""Plan2Explore's world-model update: the recurrent world model is learned task-agnostically (the
observation reconstruction and the KL term); the extrinsic reward head is fitted alongside, for
the later task policy, and must not shape the latent states. Here the reward head reads the
posterior and deterministic states as they are, so the reward loss backpropagates into the
recurrent model and the encoder: the exploration world model is trained on the task reward.
Nothing raises.
Source: https://github.com/kc-ml2/SimpleDreamer/pull/10 ("fix reward gradient flow to model":
`self.reward_predictor(posterior_info.posteriors, posterior_info.deterministics)` becomes
`self.reward_predictor(posterior_info.posteriors.detach(), posterior_info.deterministics.detach())`)
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACTIONS, LATENT, DETER, BATCH, LENGTH = 6, 2, 4, 8, 4, 6

observations = torch.randn(BATCH, LENGTH, OBS)
actions = torch.randn(BATCH, LENGTH, ACTIONS)
rewards = torch.randn(BATCH, LENGTH)


class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(OBS, LATENT)
        self.recurrent_model = nn.GRUCell(LATENT + ACTIONS, DETER)
        self.representation_model = nn.Linear(DETER + LATENT, 2 * LATENT)
        self.decoder = nn.Linear(LATENT + DETER, OBS)


class RewardPredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(LATENT + DETER, 1)

    def forward(self, posteriors, deterministics):
        return self.net(torch.cat([posteriors, deterministics], dim=-1)).squeeze(-1)


world_model = WorldModel()
reward_predictor = RewardPredictor()
model_params = list(world_model.parameters()) + list(reward_predictor.parameters())
model_optimizer = torch.optim.Adam(model_params, lr=1e-2)

losses = []
for update in range(15):
    posterior = torch.zeros(BATCH, LATENT)
    deterministic = torch.zeros(BATCH, DETER)
    posteriors, deterministics, kl_terms = [], [], []
    for t in range(LENGTH):
        deterministic = world_model.recurrent_model(torch.cat([posterior, actions[:, t]], dim=-1), deterministic)
        embedded = world_model.encoder(observations[:, t])
        mean, log_std = world_model.representation_model(torch.cat([deterministic, embedded], dim=-1)).chunk(2, dim=-1)
        posterior = mean + 0.1 * torch.randn_like(mean) * log_std.exp()
        kl_terms.append(0.5 * (mean.pow(2) + (2 * log_std).exp() - 2 * log_std - 1).sum(-1))
        posteriors.append(posterior)
        deterministics.append(deterministic)
    posteriors = torch.stack(posteriors, dim=1)
    deterministics = torch.stack(deterministics, dim=1)

    reconstruction = world_model.decoder(torch.cat([posteriors, deterministics], dim=-1))
    reconstruction_loss = F.mse_loss(reconstruction, observations)
    kl_loss = torch.stack(kl_terms).mean()
    predicted_reward = reward_predictor(posteriors, deterministics)
    reward_loss = F.mse_loss(predicted_reward, rewards)
    model_loss = reconstruction_loss + 0.1 * kl_loss + reward_loss

    model_optimizer.zero_grad()
    model_loss.backward()
    nn.utils.clip_grad_norm_(model_params, 100.0)
    model_optimizer.step()
    losses.append(model_loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model_params]}
