"""Variational adversarial imitation (VAIL) reward in an RL trainer: the discriminator encodes a
state-action pair, and its variational bottleneck draws the code from a Gaussian with a learned
mean and a learned standard deviation before the estimator head. The draw is
`torch.normal(z_mu, z_sigma)`, which is not reparameterised: its backward sends zeros to the mean
and the standard deviation, so the discriminator's encoder and sigma get no gradient from the
expert/policy classification loss, only from the KL bottleneck term. Nothing raises; the
discriminator learns far slower than it should and the imitation reward is poor.
Source: https://github.com/Unity-Technologies/ml-agents/pull/5546 ("Fix VAIL": torch.normal is not
reparameterized and gradients are broken; the code is drawn as mean + noise * sigma)
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

OBS, ACT, HIDDEN, Z_SIZE, BATCH = 6, 2, 16, 4, 32
EPSILON = 1e-7


class DiscriminatorNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(OBS + ACT, HIDDEN), nn.Tanh(),
                                     nn.Linear(HIDDEN, HIDDEN), nn.Tanh())
        self.z_sigma = nn.Parameter(torch.ones(Z_SIZE, dtype=torch.float), requires_grad=True)
        self.z_mu_layer = nn.Linear(HIDDEN, Z_SIZE)
        self.beta = 0.1
        self.estimator = nn.Sequential(nn.Linear(Z_SIZE, 1), nn.Sigmoid())

    def compute_estimate(self, obs, actions, use_vail_noise=True):
        hidden = self.encoder(torch.cat([obs, actions], dim=-1))
        z_mu = self.z_mu_layer(hidden)
        noise_scale = 1.0 if use_vail_noise else 0.0
        sigma = (self.z_sigma * noise_scale).expand_as(z_mu)
        hidden = z_mu + torch.randn_like(z_mu) * sigma
        return self.estimator(hidden), z_mu

    def compute_loss(self, policy_obs, policy_actions, expert_obs, expert_actions):
        policy_estimate, policy_mu = self.compute_estimate(policy_obs, policy_actions)
        expert_estimate, expert_mu = self.compute_estimate(expert_obs, expert_actions)
        discriminator_loss = -(
            torch.log(expert_estimate + EPSILON) + torch.log(1.0 - policy_estimate + EPSILON)
        ).mean()
        kl_loss = torch.mean(
            -torch.sum(
                1 + (self.z_sigma ** 2).log() - 0.5 * expert_mu ** 2 - 0.5 * policy_mu ** 2
                - (self.z_sigma ** 2),
                dim=1,
            )
        )
        vail_loss = self.beta * (kl_loss - 0.5)
        return discriminator_loss + vail_loss


discriminator = DiscriminatorNetwork()
optimizer = torch.optim.Adam(discriminator.parameters(), lr=3e-3)
expert_obs = torch.randn(200, OBS) + 1.0
expert_actions = torch.tanh(expert_obs[:, :ACT])
losses = []
for step in range(40):
    idx = torch.randint(0, 200, (BATCH,))
    policy_obs = torch.randn(BATCH, OBS)
    policy_actions = torch.rand(BATCH, ACT) * 2 - 1
    loss = discriminator.compute_loss(policy_obs, policy_actions, expert_obs[idx], expert_actions[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

with torch.no_grad():
    reward_estimate, _ = discriminator.compute_estimate(expert_obs[:8], expert_actions[:8], use_vail_noise=False)

result = {
    "losses": torch.stack(losses),
    "params": [p.detach().clone() for p in discriminator.parameters()],
    "reward": reward_estimate,
}
