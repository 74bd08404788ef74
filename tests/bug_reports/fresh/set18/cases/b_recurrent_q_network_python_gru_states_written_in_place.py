"""Recurrent Q-learning (R2D2-style) with a GRU written in Python, so that the policy can be
scripted and inspected step by step. The unroll keeps every hidden state in one preallocated
tensor, `hidden = torch.zeros(T + 1, B, H)`, and each step reads the previous state from it and
writes the new one into the next row: `hidden[t + 1] = self.cell(obs[t], hidden[t])`. The cell's
matrix products save their input `hidden[t]`, a view of that tensor; the write of the next row
bumps the version of the whole tensor, and the TD loss's backward raises "one of the variables
needed for gradient computation has been modified by an inplace operation".
Source: https://github.com/pytorch/rl/issues/1742 ("[BUG] Python-based RNNs in place operations
cause RuntimeError": training a recurrent DQN with TorchRL's Python-based GRU fails in backward
with that error; the fix, pytorch/rl#1732, collects the hidden states of the unroll without
writing them in place into one tensor).
expect: raises"""
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
        hidden = torch.zeros(obs.shape[0] + 1, obs.shape[1], HIDDEN)
        for t in range(obs.shape[0]):
            hidden[t + 1] = self.cell(obs[t], hidden[t])
        return self.head(hidden[1:])


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
