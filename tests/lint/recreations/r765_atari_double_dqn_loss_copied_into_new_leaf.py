"""Atari-Breakout-DoubleDQN, `Agent_Implementation.py` (the first stored version, later rewritten
around `compute_double_dqn_loss`): `DQNAgent.train` samples a minibatch from its replay memory,
loops over it building `loss += (y_pred - self.Q(one_state)[one_action]) ** 2` with the target
from the target network's `.item()`, averages it, and then writes
`loss = torch.tensor(loss, requires_grad=True)` before `loss.backward()`.  `torch.tensor`
copies the value into a new leaf: the backward stops there, the Q network's parameters get no
gradient, and `self.optimizer.step()` never changes them.
Re-created in my own words with the file's structure: the convolutional `DQN(num_actions,
k_frames, height, width)`, `DQNAgent` with `choose_action`, `train`, `update` (target network
copy) and the replay-memory methods `add`/`sample_experiences`/`__len__`, and a short training
loop over random stacked frames.
Nothing raises (torch warns about the copy): `bug_shows()` shows the Q network's weights
unchanged by training.
Buggy line: `loss = torch.tensor(loss, requires_grad=True)`.
Source: https://github.com/vishesh-kumar-singh/Atari-Breakout-DoubleDQN (Agent_Implementation.py, first stored version)"""
import copy
import random
from collections import deque

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

game_num_actions = 4
k_frames = 4
game_frame_height = 12
game_frame_width = 12
epsilon = 0.1
batch = 4


class DQN(nn.Module):
    def __init__(self, num_actions, k, height, width):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(k, 8, 4, stride=2), nn.ReLU())
        out = (height - 4) // 2 + 1
        self.head = nn.Sequential(nn.Flatten(0), nn.Linear(8 * out * (((width - 4) // 2) + 1), num_actions))

    def forward(self, x):
        return self.head(self.conv(x))


class DQNAgent:
    def __init__(self, game_env, capacity):
        self.capacity = capacity
        self.buffer = deque(maxlen=capacity)
        self.env = game_env
        self.Q = DQN(game_num_actions, k_frames, game_frame_height, game_frame_width)
        self.target_Q = None
        self.optimizer = optim.Adam(self.Q.parameters(), lr=0.0001)

    def choose_action(self, state):
        if np.random.uniform() < epsilon:
            return random.randrange(game_num_actions)
        with torch.no_grad():
            q_values = self.target_Q(state)
        return torch.argmax(q_values).item()

    def train(self):
        minibatch = self.sample_experiences(batch_size=batch)

        state_batch = torch.cat([info[0] for info in minibatch], dim=0)
        action_batch = torch.tensor([info[1] for info in minibatch])
        reward_batch = torch.tensor([info[2] for info in minibatch])
        next_state = torch.cat([info[3] for info in minibatch], dim=0)
        terminated_batch = torch.tensor([info[4] for info in minibatch])

        loss = 0
        for i in range(batch):
            one_state = state_batch[i]
            one_action = action_batch[i]
            one_reward = reward_batch[i]
            one_next_state = next_state[i]
            one_terminated = terminated_batch[i]

            if one_terminated:
                y_pred = one_reward
            else:
                gamma = 0.1
                y_pred = one_reward + gamma * torch.max(self.target_Q(one_next_state)).item()
            loss += (y_pred - self.Q(one_state)[one_action]) ** 2

        loss /= batch

        loss = torch.tensor(loss, requires_grad=True)  # expect: ADL034

        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()

    def update(self):
        self.target_Q = copy.deepcopy(self.Q)

    def add(self, experience):
        self.buffer.append(experience)

    def sample_experiences(self, batch_size):
        return random.sample(self.buffer, batch_size)

    def __len__(self):
        return len(self.buffer)


def frames():
    return torch.rand(1, k_frames, game_frame_height, game_frame_width)


def train_agent(agent, steps=6):
    agent.update()
    state = frames()
    for step in range(steps):
        action = agent.choose_action(state[0])
        next_state = frames()
        agent.add((state, action, float(step % 2), next_state, step == steps - 1))
        state = next_state
        if len(agent) >= batch:
            agent.train()
    return agent


def run():
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    return train_agent(DQNAgent(game_env=None, capacity=100))


def bug_shows():
    torch.manual_seed(0)
    initial = DQN(game_num_actions, k_frames, game_frame_height, game_frame_width).state_dict()
    trained = run().Q.state_dict()
    return all(torch.equal(initial[name], trained[name]) for name in initial)
