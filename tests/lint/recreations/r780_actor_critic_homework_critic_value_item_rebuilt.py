"""COMP767_HW03, `HW03Q02_torch_bootstrap.py`: one-step actor-critic on CartPole with separate
`Actor` and `Critic` classes that own their Adam optimizers.  `Critic.forward` returns
`value.item()`, so the training loop's `v0 = cr(state0)` and `v1 = cr(state1)` are floats; the
critic's `backprop(log_prob, target, v0, i)` then rebuilds them as new tensors
(`v0 = torch.tensor([v0])`, `target = torch.tensor([target])`), sets `requires_grad = True` on the
new leaves, backpropagates `torch.stack(value_losses).sum()` with `value_losses.append(-v0)` and
steps.  The loss reaches only the new leaf, never the critic's layers: the critic never trains.
Re-created in my own words with the homework's structure: `Actor` with `choose_action`/
`backprop`, `Critic` with `forward`/`backprop`, the per-step episode loop with the bootstrapped
`target = reward + gamma * v1`, and a small stand-in environment for CartPole.
Nothing raises: `bug_shows()` shows the critic's weights unchanged after an episode of updates.
Source: https://github.com/Louis-Ratelle/COMP767_HW03/blob/fca89171a4540d2b7279c2701bffad7541e7e233/HW03Q02_torch_bootstrap.py"""
import torch
import torch.nn as nn
import torch.nn.functional as F

GAMMA = 0.99


class Actor(nn.Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.hidden1 = nn.Linear(input_dim, 16)
        self.action_head = nn.Linear(16, output_dim)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.001)

    def forward(self, x):
        x = F.relu(self.hidden1(x))
        return F.softmax(self.action_head(x), dim=-1)

    def choose_action(self, state):
        probs = self(state)
        m = torch.distributions.Categorical(probs)
        action = m.sample()
        return action.item(), m.log_prob(action)

    def backprop(self, log_prob, target, v0, i):
        advantage = target - v0
        loss = -log_prob * advantage * i
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class Critic(nn.Module):
    def __init__(self, input_dim):
        super().__init__()
        self.hidden1 = nn.Linear(input_dim, 16)
        self.hidden2 = nn.Linear(16, 16)
        self.value_head = nn.Linear(16, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.001)

    def forward(self, x):
        x = F.relu(self.hidden1(x))
        x = F.relu(self.hidden2(x))
        value = self.value_head(x)
        return value.item()

    def backprop(self, log_prob, target, v0, i):
        value_losses = []
        v0 = torch.tensor([v0])  # missed: ADL034, a float from another method's .item() rebuilt as a new leaf; the loss reaches it through a list and torch.stack
        target = torch.tensor([target])
        target.requires_grad = True
        v0.requires_grad = True
        value_losses.append(-v0)
        loss = torch.stack(value_losses).sum()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class PoleEnv:
    def __init__(self, steps=5):
        self.steps = steps

    def reset(self):
        self.t = 0
        return torch.tensor([0.1, 0.0, -0.1, 0.0])

    def step(self, action):
        self.t += 1
        state = torch.tensor([0.1 * self.t, 0.0, -0.1, float(action)])
        return state, 1.0, self.t >= self.steps, {}


def run(ac=None, cr=None):
    torch.manual_seed(0)
    env = PoleEnv()
    ac = ac or Actor(4, 2)
    cr = cr or Critic(4)
    state0 = env.reset()
    done = False
    i = 1
    while not done:
        action, log_prob = ac.choose_action(state0)
        v0 = cr(state0)
        state1, reward, done, _ = env.step(action)
        v1 = 0.0 if done else cr(state1)
        target = reward + GAMMA * v1
        ac.backprop(log_prob, target, v0, i)
        cr.backprop(log_prob, target, v0, i)
        i *= GAMMA
        state0 = state1


def bug_shows():
    torch.manual_seed(0)
    cr = Critic(4)
    before = [p.detach().clone() for p in cr.parameters()]
    run(cr=cr)
    return all(torch.equal(b, p) for b, p in zip(before, cr.parameters()))
