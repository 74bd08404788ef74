"""Diffusion-policy baseline in a notebook that trains two policies (siddancha/streaming-flow-policy,
the Push-T training notebook): the diffusion policy's training loop predicts noise with
`dp_noise_pred_net`, but its AdamW optimizer (and its EMA) were built on the parameters of the
other network of the notebook, `noise_pred_net`. The loss is backpropagated into the diffusion
policy's network, whose gradients nobody applies, and `optimizer.step()` updates a network that
received no gradient: the diffusion policy never trains. Nothing is raised.
Source: https://github.com/siddancha/streaming-flow-policy/pull/15 ("The Adam target parameters for
the diffusion policy should come from the `dp_noise_pred_net`"; the maintainer: "Thank you for
catching this bug", merged).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACTION, STEPS, BATCH = 5, 3, 10, 8


class NoisePredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(ACTION + OBS + 1, 32), nn.Mish(), nn.Linear(32, ACTION))

    def forward(self, noisy_action, timestep, obs):
        t = timestep.float().unsqueeze(1) / STEPS
        return self.net(torch.cat([noisy_action, obs, t], dim=1))


betas = torch.linspace(1e-4, 0.2, STEPS)
alphas_cumprod = torch.cumprod(1 - betas, dim=0)

# the streaming flow policy's network, trained earlier in the notebook
noise_pred_net = NoisePredictor()
# the diffusion policy's network
dp_noise_pred_net = NoisePredictor()
optimizer = torch.optim.AdamW(params=noise_pred_net.parameters(), lr=1e-3, weight_decay=1e-6)

obs = torch.randn(BATCH, OBS)
actions = torch.tanh(torch.randn(BATCH, ACTION))

losses = []
for step in range(4):
    noise = torch.randn(BATCH, ACTION)
    timesteps = torch.randint(0, STEPS, (BATCH,))
    scale = alphas_cumprod[timesteps].sqrt().unsqueeze(1)
    sigma = (1 - alphas_cumprod[timesteps]).sqrt().unsqueeze(1)
    noisy_actions = scale * actions + sigma * noise
    noise_pred = dp_noise_pred_net(noisy_actions, timesteps, obs)
    loss = F.mse_loss(noise_pred, noise)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in [*dp_noise_pred_net.parameters(), *noise_pred_net.parameters()]]}
