"""Actor training on imagined rollouts of a learned world model (Dreamer-style value gradients): the
rollout batch is a dict of tensors, the rewards come from the world model's reward head (squashed
with `tanh`), and the actor maximizes lambda-returns computed *through* those rewards. The
advantage module, written like TorchRL's value estimators, has an `average_rewards` option that
standardizes the rewards and writes them back into the batch in place ("to consume less memory"),
the equivalent of `tensordict.set_("reward", reward)`. The reward tensor is the output of `tanh`,
which autograd saved for its backward, so `actor_loss.backward()` raises "one of the variables
needed for gradient computation has been modified by an inplace operation".
Source: https://github.com/pytorch/rl/pull/322 ("[BugFix]: gradient propagation in advantage
estimates", merged; the review note on the changed line: "`set_` is in-place and `set` not. If we
do in-place modifications with rewards that require gradients we can get graph errors."; the diff
changes `tensordict.set_(` to `tensordict.set(`)
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

OBS, ACT, LATENT, HORIZON, BATCH = 6, 2, 32, 8, 16


class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(OBS, LATENT)
        self.dynamics = nn.GRUCell(ACT, LATENT)
        self.reward_head = nn.Sequential(nn.Linear(LATENT, 64), nn.ELU(), nn.Linear(64, 1))

    def reward(self, latent):
        return torch.tanh(self.reward_head(latent)).squeeze(-1)


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LATENT, 64), nn.ELU(), nn.Linear(64, ACT), nn.Tanh())

    def forward(self, latent):
        return self.net(latent)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(LATENT, 64), nn.ELU(), nn.Linear(64, 1))

    def forward(self, latent):
        return self.net(latent).squeeze(-1)


class TDLambdaEstimate:
    def __init__(self, gamma=0.99, lmbda=0.95, average_rewards=True):
        self.gamma, self.lmbda, self.average_rewards = gamma, lmbda, average_rewards

    def __call__(self, batch):
        reward = batch["reward"]
        if self.average_rewards:
            reward = reward - reward.mean()
            reward = reward / reward.std().clamp_min(1e-4)
            batch["reward"] = reward
        value = batch["value"]
        returns = []
        next_return = value[-1]
        for t in reversed(range(HORIZON)):
            next_return = batch["reward"][t] + self.gamma * (
                (1 - self.lmbda) * value[t + 1] + self.lmbda * next_return)
            returns.append(next_return)
        batch["value_target"] = torch.stack(returns[::-1])
        return batch


def imagine(world_model, actor, critic, obs):
    latent = world_model.encoder(obs)
    latents = [latent]
    for _ in range(HORIZON):
        latent = world_model.dynamics(actor(latent), latent)
        latents.append(latent)
    latents = torch.stack(latents)
    return {"reward": world_model.reward(latents[1:]), "value": critic(latents)}


world_model, actor, critic = WorldModel(), Actor(), Critic()
world_model.requires_grad_(False)
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
estimator = TDLambdaEstimate()

losses = []
for step in range(15):
    obs = torch.randn(BATCH, OBS)
    batch = estimator(imagine(world_model, actor, critic, obs))
    actor_loss = -batch["value_target"].mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()

    with torch.no_grad():
        latents = world_model.encoder(obs)
    critic_loss = (critic(latents) - batch["value_target"][0].detach()).pow(2).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    losses.append(torch.stack([actor_loss.detach(), critic_loss.detach()]))

result = {"losses": torch.stack(losses),
          "actor": [p.detach().clone() for p in actor.parameters()],
          "critic": [p.detach().clone() for p in critic.parameters()]}
