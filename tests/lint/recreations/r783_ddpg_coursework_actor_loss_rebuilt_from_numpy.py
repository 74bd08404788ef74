"""RLCoursework, `ddpg/main.py`: a DDPG whose `ActorNetwork` and `CriticNetwork` own their Adam
optimizers and `Update` methods.  The training loop asks the critic for the values of the
actor's actions and passes them to `ActorNetwork.Update(values)`, which turns them into NumPy
(`values = values.detach().numpy()`), sums them into `E` with a Python loop, and backpropagates
`loss = -torch.tensor(E, requires_grad=True)` before `self.optimizer.step()`.  The loss is a new
leaf: the actor's layers get no gradient and the actor never trains.
Re-created in my own words with the repository's structure (a second program of r782's
repository, a different mistake): `ActorNetwork.ChooseAction/Update/Refresh`,
`CriticNetwork.ActionValue/Update/Refresh`, and a training step over a replay batch.
Nothing raises: `bug_shows()` shows the actor's weights unchanged after the update.
Source: https://github.com/MBr2950/RLCoursework/blob/f7d6eb21a6e77cffcc22fedb1f472e39db9d2539/ddpg/main.py"""
import numpy as np
import torch
from torch import nn

beta = 0.01


class ActorNetwork(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.NN = nn.Sequential(nn.Linear(state_dim, 16), nn.ReLU(), nn.Linear(16, action_dim))
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.003)

    def ChooseAction(self, State):
        State = torch.from_numpy(State).float()
        return (self.NN(State)).detach().numpy()

    def Update(self, values):
        values = values.detach().numpy()  # expect: ADL034
        self.optimizer.zero_grad()
        E = 0
        for i in range(len(values)):
            E += (i + 1) * values[i]
        loss = torch.tensor(E, requires_grad=True)
        loss = -loss
        loss.backward()
        self.optimizer.step()

    def Refresh(self, pi):
        for param1, param2 in zip(self.parameters(), pi.parameters()):
            param1.data.mul_(1 - beta)
            param1.data.add_(beta * param2.data)


class CriticNetwork(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.NN = nn.Sequential(nn.Linear(state_dim + action_dim, 16), nn.ReLU(), nn.Linear(16, action_dim))
        self.optimizer = torch.optim.Adam(self.parameters(), lr=0.003)

    def ActionValue(self, State, Action):
        return self.NN(torch.from_numpy(np.concatenate((State, Action))).float())

    def Update(self, y1, y2):
        self.optimizer.zero_grad()
        loss = nn.functional.huber_loss(y1, y2)
        loss.backward()
        self.optimizer.step()


def train_step(pi, q, batch):
    values = torch.stack([q.ActionValue(state, pi.ChooseAction(state)) for state in batch])
    pi.Update(values.squeeze(-1))


def run(pi=None):
    torch.manual_seed(0)
    pi = pi or ActorNetwork(3, 1)
    q = CriticNetwork(3, 1)
    batch = [np.random.default_rng(i).random(3) for i in range(4)]
    train_step(pi, q, batch)
    return pi


def bug_shows():
    torch.manual_seed(0)
    pi = ActorNetwork(3, 1)
    before = [p.detach().clone() for p in pi.parameters()]
    run(pi)
    return all(torch.equal(b, p) for b, p in zip(before, pi.parameters()))
