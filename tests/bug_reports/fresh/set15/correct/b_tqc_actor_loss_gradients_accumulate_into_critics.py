"""RLlib's TQC learner with the critic parameters frozen while the actor loss evaluates the
policy's actions (SAC's freeze pattern, as the fix applies it to the `qf_curr` pass): the policy's
backward reaches the actions, not the critic weights.
Source: https://github.com/ray-project/ray/pull/65125."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACT, BATCH, GAMMA = 5, 2, 32, 0.9


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, obs, action):
        return self.net(torch.cat([obs, action], dim=-1)).squeeze(-1)


policy = nn.Sequential(nn.Linear(OBS, 32), nn.ReLU(), nn.Linear(32, ACT), nn.Tanh())
critic = Critic()
target_critic = Critic()
target_critic.load_state_dict(critic.state_dict())
optimizers = {"qf": torch.optim.Adam(critic.parameters(), lr=1e-2),
              "policy": torch.optim.Adam(policy.parameters(), lr=1e-2)}


def forward_train(batch):
    obs, actions, rewards, next_obs = batch
    with torch.no_grad():
        target = rewards + GAMMA * target_critic(next_obs, policy(next_obs))
    critic_loss = F.mse_loss(critic(obs, actions), target)
    for parameter in critic.parameters():
        parameter.requires_grad_(False)
    qf_curr = critic(obs, policy(obs))
    for parameter in critic.parameters():
        parameter.requires_grad_(True)
    actor_loss = -qf_curr.mean()
    return {"qf": critic_loss, "policy": actor_loss}


def compute_gradients(losses):
    gradients = {}
    for name in ("qf", "policy"):
        optimizer = optimizers[name]
        optimizer.zero_grad()
        losses[name].backward(retain_graph=True)
        gradients[name] = [p.grad for group in optimizer.param_groups for p in group["params"]]
    return gradients


def apply_gradients():
    for optimizer in optimizers.values():
        optimizer.step()


batch = (torch.randn(BATCH, OBS), torch.rand(BATCH, ACT) * 2 - 1, torch.randn(BATCH), torch.randn(BATCH, OBS))
losses = []
for update in range(5):
    step_losses = forward_train(batch)
    compute_gradients(step_losses)
    apply_gradients()
    losses.append(torch.stack([step_losses["qf"].detach(), step_losses["policy"].detach()]))

result = {"losses": torch.stack(losses), "critic": [p.detach().clone() for p in critic.parameters()],
          "policy": [p.detach().clone() for p in policy.parameters()]}
