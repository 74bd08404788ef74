"""A TD3 learner whose loss function evaluates the twin critics once, on a batch that stacks the
replayed actions with the actor's actions (`torch.cat([data_action, actor(obs)])`, as a vectorized
loss module does to save a forward pass), and splits the Q-values into the critic loss and the
actor loss. The training script, written for DDPG with separate optimizers, backpropagates
`loss_actor` and steps the actor, then backpropagates `loss_qvalue`. The first backward freed the
shared critic graph (and the actor step modified the actor's weights that the stacked batch still
holds), so `loss_qvalue.backward()` raises "Trying to backward through the graph a second time".
Source: https://github.com/pytorch/rl/issues/1187 ("TD3 loss mixes actor and critic grads": a working
DDPG script repurposed for TD3 fails at `loss["loss_qvalue"].backward()` with "Trying to backward
through the graph a second time"; fixed by computing the actor loss and the value loss in separate
forward passes, pytorch/rl#1240 "Separate losses").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, ACT, HID, BATCH, GAMMA = 4, 2, 16, 8, 0.99


def mlp(inp, out):
    return nn.Sequential(nn.Linear(inp, HID), nn.ReLU(), nn.Linear(HID, out))


actor = nn.Sequential(mlp(OBS, ACT), nn.Tanh())
critics = nn.ModuleList([mlp(OBS + ACT, 1), mlp(OBS + ACT, 1)])
target_actor = nn.Sequential(mlp(OBS, ACT), nn.Tanh())
target_critics = nn.ModuleList([mlp(OBS + ACT, 1), mlp(OBS + ACT, 1)])
target_actor.load_state_dict(actor.state_dict())
target_critics.load_state_dict(critics.state_dict())
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critics.parameters(), lr=1e-3)


def td3_loss(obs, action, reward, next_obs, done):
    with torch.no_grad():
        noise = (0.2 * torch.randn_like(action)).clamp(-0.5, 0.5)
        next_action = (target_actor(next_obs) + noise).clamp(-1, 1)
        next_in = torch.cat([next_obs, next_action], dim=1)
        next_q = torch.min(target_critics[0](next_in), target_critics[1](next_in)).squeeze(1)
        target = reward + GAMMA * (1 - done) * next_q
    stacked = torch.cat([torch.cat([obs, action], dim=1), torch.cat([obs, actor(obs)], dim=1)])
    q1, q2 = critics[0](stacked).squeeze(1), critics[1](stacked).squeeze(1)
    loss_qvalue = F.mse_loss(q1[:BATCH], target) + F.mse_loss(q2[:BATCH], target)
    loss_actor = -q1[BATCH:].mean()
    return loss_actor, loss_qvalue


actor_losses, q_losses = [], []
for step in range(3):
    obs, next_obs = torch.randn(BATCH, OBS), torch.randn(BATCH, OBS)
    action = torch.rand(BATCH, ACT) * 2 - 1
    reward, done = torch.randn(BATCH), torch.zeros(BATCH)
    loss_actor, loss_qvalue = td3_loss(obs, action, reward, next_obs, done)
    actor_optimizer.zero_grad()
    loss_actor.backward()
    actor_optimizer.step()
    critic_optimizer.zero_grad()
    loss_qvalue.backward()
    critic_optimizer.step()
    actor_losses.append(loss_actor.detach())
    q_losses.append(loss_qvalue.detach())

result = {"actor_losses": actor_losses, "q_losses": q_losses,
          "actor": [p.detach().clone() for p in actor.parameters()],
          "critics": [p.detach().clone() for p in critics.parameters()]}
