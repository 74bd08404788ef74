"""A GFlowNet trained with a detailed-balance loss walks a batch of
trajectories step by step: each step's error uses the forward log-probability
that the policy gave at the previous step (`prev_forward_logprob`).  Summing
the per-step losses and calling backward once after the walk works; moving
the backward pass and the optimizer step into the loop (one update per
step) does not: the next step's loss still reaches `prev_forward_logprob`,
whose graph the previous step's `loss.backward()` freed ("Trying to
backward through the graph a second time").  The fix detaches the carried
log-probability (or keeps one backward per trajectory).
Buggy line: `loss.backward()` inside the `while` loop of `train_step`,
through `prev_forward_logprob` carried from the previous iteration.
Expected finding: ADL019 there.
Source: https://github.com/Lightning-AI/pytorch-lightning/issues/20296"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GridEnv:
    def __init__(self, batch_size=3, n_actions=3, horizon=3):
        self.batch_size = batch_size
        self.n_actions = n_actions
        self.horizon = horizon
        self.terminal_index = n_actions - 1
        self.reset()

    def reset(self):
        self.state = torch.zeros(self.batch_size, 4)
        self.t = torch.zeros(self.batch_size, dtype=torch.long)
        self.done = torch.zeros(self.batch_size, dtype=torch.bool)

    def step(self, actions):
        active = ~self.done
        self.state[active, actions[active] % 4] += 1
        self.t[active] += 1
        self.done = self.done | (actions == self.terminal_index) | (self.t >= self.horizon)

    def log_reward(self):
        return -((self.state - 1.0) ** 2).sum(-1)


class Policy(nn.Module):
    def __init__(self, n_actions=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 16), nn.ReLU())
        self.forward_head = nn.Linear(16, n_actions)
        self.backward_head = nn.Linear(16, n_actions)

    def forward(self, state):
        h = self.trunk(state)
        return F.log_softmax(self.forward_head(h), -1), F.log_softmax(self.backward_head(h), -1)


def train_step(policy, optimizer, env):
    env.reset()
    actions = None
    prev_log_rewards = torch.zeros(env.batch_size)
    prev_forward_logprob = None
    while not torch.all(env.done):
        active = ~env.done
        forward_logprob, back_logprob = policy(env.state)
        log_rewards = env.log_reward()
        if actions is not None:
            error = log_rewards[active] - prev_log_rewards[active]
            error = error + back_logprob[active].gather(1, actions[active, None]).squeeze(1)
            error = error - prev_forward_logprob[active].gather(1, actions[active, None]).squeeze(1)
            loss = F.huber_loss(error, torch.zeros_like(error), delta=1.0)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()  # missed: ADL003
        actions = torch.distributions.Categorical(logits=forward_logprob.detach()).sample()
        env.step(actions)
        prev_log_rewards = log_rewards
        prev_forward_logprob = forward_logprob


def run():
    torch.manual_seed(0)
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    train_step(policy, optimizer, GridEnv())
