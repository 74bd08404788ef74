"""TD3-style update with one twin-critic module: the actor's loss,
`-torch.min(q1, q2)` of the critic on the actor's actions, is computed before
the critic's optimizer steps, and backpropagated after it.
Source: https://github.com/pytorch/pytorch/issues/38480"""
import torch
import torch.nn as nn
import torch.nn.functional as F

actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())


class TwinCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
        self.q2 = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, state, action):
        sa = torch.cat([state, action], 1)
        return self.q1(sa), self.q2(sa)


critic = TwinCritic()
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)


def update(state, action, target_q):
    current_q1, current_q2 = critic(state, action)
    critic_loss = F.mse_loss(current_q1, target_q) + F.mse_loss(current_q2, target_q)
    q1_pi, q2_pi = critic(state, actor(state))
    actor_loss = -torch.min(q1_pi, q2_pi).mean()

    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()  # expect: ADL003
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()


def run():
    torch.manual_seed(0)
    update(torch.randn(8, 3), torch.randn(8, 2), torch.randn(8, 1))
