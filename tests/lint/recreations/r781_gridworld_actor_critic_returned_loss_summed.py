"""RL_Assignments, `ac.py`: an actor-critic with a shared trunk (`Policy` with `action_head` and
`value_head`, `saved_actions` and `rewards` kept on the module) for a gridworld.
`finish_episode()` builds the policy and value losses from the episode, backpropagates
`all_loss`, steps, clears the buffers and returns `all_loss` itself; `main()` adds it to the
logging total every episode, `loss += finish_episode() / log_interval`, and resets `loss = 0` only
every `log_interval` (500) episodes, so the graphs of up to 500 episodes stay reachable from
`loss` (the report prints it with `{:.4f}`).
Re-created in my own words with the script's structure: module-level `policy`, `optimizer` and
`env`, `select_action`, `finish_episode`, and `main` with its `count(1)` episode loop and
`log_interval`, on a small stand-in gridworld.
Nothing raises: `bug_shows()` shows the logged total still attached to the episodes' graphs.
Source: https://github.com/Leon950101/RL_Assignments/blob/abc98c4e82e5e0c6b6c06dd67f55b17cb3435e19/ac.py"""
from collections import namedtuple
from itertools import count

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple('SavedAction', ['log_prob', 'value'])


class Gridworld:
    gamma = 0.9

    def reset(self):
        self.t = 0
        return torch.zeros(4)

    def step(self, action):
        self.t += 1
        state = torch.full((4,), float(self.t)) / 10
        return state, float(action == 1), self.t >= 3, {}


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.affine1 = nn.Linear(4, 16)
        self.action_head = nn.Linear(16, 3)
        self.value_head = nn.Linear(16, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


env = Gridworld()
policy = Policy()
optimizer = optim.Adam(policy.parameters(), lr=5e-4)


def select_action(state):
    probs, state_value = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def finish_episode():
    R = 0
    saved_actions = policy.saved_actions
    policy_losses = []
    value_losses = []
    returns = []
    for r in policy.rewards[::-1]:
        R = r + env.gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    all_loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    all_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_actions[:]
    return all_loss


def main(episodes=4, log_interval=500):
    torch.manual_seed(0)
    running_reward = 0
    loss = 0
    for i_episode in count(1):
        state = env.reset()
        ep_reward = 0
        for t in range(0, 100):
            action = select_action(state)
            state, reward, done, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.001 * ep_reward + (1 - 0.001) * running_reward
        loss += finish_episode() / log_interval  # missed: ADL028, a returned loss with its graph summed into a number-initialised total
        if i_episode % log_interval == 0:
            print('Episode: {}| Average reward: {:.2f}| Loss: {:.4f}'.format(i_episode, running_reward, loss))
            loss = 0
        if i_episode >= episodes:
            break
    return loss


def bug_shows():
    return main().grad_fn is not None
