"""Hierarchical RL: a high-level policy picks velocity commands and a pre-trained low-level policy
turns them into joint actions (IsaacLab's `PreTrainedPolicyAction`). The environment is stepped
outside `torch.inference_mode()`, so the low-level policy's output requires grad; copying it into
the persistent action buffer (`self.low_level_actions[:] = ...`) makes the buffer part of a graph,
and handing the buffer to the simulator as an array (Warp there, `.numpy()` here) fails.
Source: https://github.com/isaac-sim/IsaacLab/pull/5923 ("Fix pre-trained policy action grad
leak": the low-level policy now runs under `torch.no_grad()` and its output is detached before it
is copied into the action buffer).
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
NUM_ENVS, OBS, CMD, JOINTS = 4, 6, 2, 3


class PreTrainedPolicyAction:
    def __init__(self, policy):
        self.policy = policy
        self.low_level_actions = torch.zeros(NUM_ENVS, JOINTS)

    def apply_actions(self, obs, command):
        self.low_level_actions[:] = self.policy(torch.cat((obs, command), dim=-1))
        return self.low_level_actions.numpy()


class Simulator:
    def __init__(self):
        self.state = np.zeros((NUM_ENVS, OBS), dtype=np.float32)

    def step(self, joint_actions):
        self.state = 0.9 * self.state + 0.1 * np.tile(joint_actions, 2)
        reward = -np.abs(self.state).sum(axis=1)
        return torch.from_numpy(self.state.copy()), torch.from_numpy(reward)


low_level = nn.Sequential(nn.Linear(OBS + CMD, 16), nn.Tanh(), nn.Linear(16, JOINTS))  # loaded, frozen in spirit
high_level = nn.Sequential(nn.Linear(OBS, 16), nn.Tanh(), nn.Linear(16, CMD))
log_std = nn.Parameter(torch.zeros(CMD))
optimizer = torch.optim.Adam([*high_level.parameters(), log_std], lr=1e-2)
action_term = PreTrainedPolicyAction(low_level)
sim = Simulator()
obs = torch.zeros(NUM_ENVS, OBS)
returns = []
for update in range(3):
    log_probs, rewards = [], []
    for t in range(5):
        dist = torch.distributions.Normal(high_level(obs), log_std.exp())
        command = dist.sample()
        log_probs.append(dist.log_prob(command).sum(-1))
        obs, reward = sim.step(action_term.apply_actions(obs, command))
        rewards.append(reward)
    ret = torch.stack(rewards).sum(0)
    loss = -(torch.stack(log_probs).sum(0) * (ret - ret.mean())).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    returns.append(ret.mean())
result = {"returns": returns, "params": [p.detach().clone() for p in optimizer.param_groups[0]["params"]]}
