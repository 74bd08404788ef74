"""A multi-agent DDPG trainer computes the actor's objective through the
critic (`j = critic(obs, action=actor(obs))`, `actor_loss = -j.mean()`, the
critic not frozen and its output not cut), clears the actor's and the
critic's optimizers, runs `actor_loss.backward()` and
`critic_loss.backward()`, and steps both.  The actor's backward also adds
the gradient of `-Q(s, actor(s))` into the critic's `.grad`, which the
critic's step applies: the critic is pushed to raise the value of the
actor's own actions, besides fitting the returns.  Nothing raises.  The fix
freezes the critic around the actor's backward (or steps the critic before
the actor's loss is built).  Seen while reading set W (docs/lint.md,
twenty-fifth check); missed by ADL024 (the models and optimizers are
entries of dicts picked by policy, and the losses come from another
object's method).
Source: https://github.com/salesforce/warp-drive
(warp_drive/training/trainers/trainer_ddpg.py, TrainerDDPG._update_model_params,
and warp_drive/training/algorithms/policygradient/ddpg.py)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6 + 2, 16), nn.Tanh(), nn.Linear(16, 1))

    def forward(self, obs, action):
        return self.net(torch.cat([obs, action], dim=-1))


def build(seed=0):
    torch.manual_seed(seed)
    actors = {"agent": nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 2), nn.Softmax(dim=-1))}
    critics = {"agent": Critic()}
    actor_optimizers = {"agent": torch.optim.SGD(actors["agent"].parameters(), lr=0.05)}
    critic_optimizers = {"agent": torch.optim.SGD(critics["agent"].parameters(), lr=0.05)}
    return actors, critics, actor_optimizers, critic_optimizers


class DDPGLosses:
    def compute_loss_and_metrics(self, returns, value_functions, j_functions):
        critic_loss = F.mse_loss(value_functions, returns)
        actor_loss = -j_functions.mean()
        return actor_loss, critic_loss


def update(actors, critics, actor_optimizers, critic_optimizers, batch, policy, correct):
    obs, actions, returns = batch
    probabilities = actors[policy](obs)
    value_functions = critics[policy](obs, actions)
    if correct:  # the correct program: the actor's objective reaches only the actor
        for p in critics[policy].parameters():
            p.requires_grad_(False)
    j_functions = critics[policy](obs, probabilities)
    actor_loss, critic_loss = DDPGLosses().compute_loss_and_metrics(returns, value_functions, j_functions)
    actor_optimizers[policy].zero_grad()
    critic_optimizers[policy].zero_grad()
    actor_loss.backward()  # missed: ADL024
    if correct:
        for p in critics[policy].parameters():
            p.requires_grad_(True)
    critic_loss.backward()
    actor_optimizers[policy].step()
    critic_optimizers[policy].step()


def trained(correct):
    networks = build()
    torch.manual_seed(1)
    for _ in range(3):
        batch = (torch.randn(12, 6), F.one_hot(torch.randint(0, 2, (12,)), 2).float(), torch.randn(12, 1))
        update(*networks, batch, "agent", correct)
    actors, critics, _, _ = networks
    return [p.detach().clone() for p in critics["agent"].parameters()]


def bug_shows():
    """The critic trained by the buggy update differs from the one whose
    gradients come from its own loss alone (the actor's updates are the
    same in both: freezing the critic changes only where the actor's
    objective sends its gradient)."""
    buggy = trained(correct=False)
    correct = trained(correct=True)
    return any(not torch.equal(b, c) for b, c in zip(buggy, correct))
