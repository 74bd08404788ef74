"""Recurrent Q-learning with a Python GRU whose unroll collects its hidden states in a list and
stacks them.
Source: https://github.com/pytorch/rl/issues/1742."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

OBS, HIDDEN, ACTIONS, T, BATCH, GAMMA = 6, 16, 3, 8, 12, 0.95


class PythonGRUCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_map = nn.Linear(OBS, 3 * HIDDEN)
        self.hidden_map = nn.Linear(HIDDEN, 3 * HIDDEN)

    def forward(self, x, h):
        xr, xz, xn = self.input_map(x).chunk(3, dim=-1)
        hr, hz, hn = self.hidden_map(h).chunk(3, dim=-1)
        reset = torch.sigmoid(xr + hr)
        update = torch.sigmoid(xz + hz)
        candidate = torch.tanh(xn + reset * hn)
        return (1 - update) * candidate + update * h


class RecurrentQNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = PythonGRUCell()
        self.head = nn.Linear(HIDDEN, ACTIONS)

    def forward(self, obs):
        h = torch.zeros(obs.shape[1], HIDDEN)
        states = []
        for t in range(obs.shape[0]):
            h = self.cell(obs[t], h)
            states.append(h)
        return self.head(torch.stack(states))


q_net = RecurrentQNetwork()
optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)
losses = []
for update in range(5):
    obs = torch.randn(T + 1, BATCH, OBS)
    actions = torch.randint(0, ACTIONS, (T, BATCH))
    rewards = torch.randn(T, BATCH)
    q_values = q_net(obs)
    chosen = q_values[:-1].gather(-1, actions.unsqueeze(-1)).squeeze(-1)
    targets = rewards + GAMMA * q_values[1:].max(dim=-1).values.detach()
    loss = F.smooth_l1_loss(chosen, targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in q_net.parameters()]}
