"""A GFlowNet trained with the trajectory-balance loss (alexhernandezgarcia/gflownet's
envs/base.py): `get_logprobs()` was written from `sample_actions()`, which copies the policy's
outputs with `logits = policy_outputs.clone().detach()` before masking invalid actions, since sampling
needs no gradient. In `get_logprobs()` the same `.detach()` makes every forward log-probability a
constant, so the trajectory-balance loss `(logZ + sum log P_F - log R - sum log P_B)^2` only trains
`logZ`: the forward policy never learns and the sampler stays uniform (no error: `logZ` keeps the loss
differentiable).
Source: https://github.com/alexhernandezgarcia/gflownet/pull/251 ("Fix: get_logprobs of base env
(reason why TB was not training well)": "The clone of `policy_outputs` into `logits` in
`get_logprobs()` of the base environment was incorrectly detached, preventing the correct
propagation of gradients").
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

LENGTH = 6           # states 0..LENGTH-1 on a line; action 0 moves right, action 1 stops
N_ACTIONS = 2


def encode(positions):
    return nn.functional.one_hot(positions, LENGTH).float()


def invalid_mask(positions):
    mask = torch.zeros(len(positions), N_ACTIONS, dtype=torch.bool)
    mask[:, 0] = positions == LENGTH - 1      # cannot move right from the last state
    return mask


def sample_actions(policy_outputs, mask):
    logits = policy_outputs.clone().detach()
    logits[mask] = -torch.inf
    return torch.distributions.Categorical(logits=logits).sample()


def get_logprobs(policy_outputs, actions, mask):
    logits = policy_outputs.clone()
    logits[mask] = -torch.inf
    logprobs = torch.log_softmax(logits, dim=1)
    return logprobs[torch.arange(len(actions)), actions]


def log_reward(positions):
    return -((positions.float() - 4.0) ** 2) / 2.0


forward_policy = nn.Sequential(nn.Linear(LENGTH, 16), nn.LeakyReLU(), nn.Linear(16, N_ACTIONS))
logZ = nn.Parameter(torch.zeros(1))
optimizer = torch.optim.Adam([{"params": forward_policy.parameters(), "lr": 1e-2},
                              {"params": [logZ], "lr": 1e-1}])

losses = []
for iteration in range(6):
    batch = 8
    positions = torch.zeros(batch, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    visited, taken, masks = [], [], []
    while not done.all():
        active = (~done).nonzero().squeeze(1)
        with torch.no_grad():
            outputs = forward_policy(encode(positions[active]))
        mask = invalid_mask(positions[active])
        actions = sample_actions(outputs, mask)
        visited.append((active, positions[active].clone()))
        taken.append(actions)
        masks.append(mask)
        moved = actions == 0
        positions[active[moved]] += 1
        done[active[~moved]] = True

    sum_logprobs_f = torch.zeros(batch)
    for (active, states), actions, mask in zip(visited, taken, masks):
        logprobs = get_logprobs(forward_policy(encode(states)), actions, mask)
        sum_logprobs_f = sum_logprobs_f.index_add(0, active, logprobs)
    # The backward policy of a line is deterministic: log P_B = 0.
    loss = ((logZ + sum_logprobs_f - log_reward(positions)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "logZ": logZ.detach().clone(),
          "policy": [p.detach().clone() for p in forward_policy.parameters()]}
