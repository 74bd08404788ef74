"""Near twin: `joint` is rebuilt inside the update loop, after the earlier members stepped,
with the other members' forecasts detached; each backward goes through a graph built after
every step before it.  Correct."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Member:
    def __init__(self, n_in):
        self.net = nn.Sequential(nn.Linear(n_in, 8), nn.Tanh(), nn.Linear(8, 1))
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)


class Committee:
    def __init__(self, n_members, n_in):
        self.members = [Member(n_in) for _ in range(n_members)]

    def update(self, x, y):
        forecasts = []
        for member in self.members:
            forecasts.append(member.net(x))
        for i, member in enumerate(self.members):
            parts = [f if j == i else f.detach() for j, f in enumerate(forecasts)]
            parts[i] = member.net(x)
            joint = torch.stack(parts).mean(0)
            loss = F.mse_loss(joint, y) + 0.1 * joint.pow(2).mean()
            member.opt.zero_grad()
            loss.backward()
            member.opt.step()
        return joint.detach()


def run():
    torch.manual_seed(0)
    committee = Committee(3, 4)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    return committee.update(x, y)
