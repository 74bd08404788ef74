"""TorchRL's TD3 loss evaluates the twin critics once, on the stacked batch of
the actor's actions and the replay buffer's actions, and splits the result
into the actor loss and the critic loss it returns in one dict.  A training
script that treats them as independent losses, as it did for DDPG,
backpropagates `loss["loss_actor"]`, steps the actor, and then backpropagates
`loss["loss_qvalue"]`: the shared critic pass was freed by the first
backward ("Trying to backward through the graph a second time").  The fix
backpropagates the sum once (or recomputes the critic loss).
Buggy line: `loss["loss_qvalue"].backward()` in `train`.
Expected finding: ADL019 there.
Source: https://github.com/pytorch/rl/issues/1187"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 16), nn.ReLU(), nn.Linear(16, act_dim), nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.q1 = nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1))
        self.q2 = nn.Sequential(nn.Linear(obs_dim + act_dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, action):
        x = torch.cat([obs, action], dim=-1)
        return torch.stack([self.q1(x), self.q2(x)])


class TD3Loss(nn.Module):
    def __init__(self, actor, qvalue, gamma=0.99):
        super().__init__()
        self.actor = actor
        self.qvalue = qvalue
        self.gamma = gamma

    def forward(self, batch):
        obs, action, reward, next_obs = batch
        actor_action = self.actor(obs)
        n = obs.shape[0]
        q_all = self.qvalue(torch.cat([obs, obs]), torch.cat([actor_action, action]))
        q_actor, q_data = q_all[:, :n], q_all[:, n:]
        with torch.no_grad():
            next_q = self.qvalue(next_obs, self.actor(next_obs)).min(0).values
            target = reward + self.gamma * next_q
        return {
            "loss_actor": -q_actor[0].mean(),
            "loss_qvalue": F.mse_loss(q_data, target.expand_as(q_data)),
        }


def train(loss_module, actor_opt, critic_opt, batches):
    for batch in batches:
        loss = loss_module(batch)
        actor_opt.zero_grad()
        loss["loss_actor"].backward()
        actor_opt.step()
        critic_opt.zero_grad()
        loss["loss_qvalue"].backward()  # expect: ADL019
        critic_opt.step()


def run():
    torch.manual_seed(0)
    actor, qvalue = Actor(3, 2), TwinQ(3, 2)
    loss_module = TD3Loss(actor, qvalue)
    actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
    critic_opt = torch.optim.Adam(qvalue.parameters(), lr=1e-3)
    batches = [(torch.randn(4, 3), torch.rand(4, 2) * 2 - 1, torch.randn(4, 1), torch.randn(4, 3))]
    train(loss_module, actor_opt, critic_opt, batches)
