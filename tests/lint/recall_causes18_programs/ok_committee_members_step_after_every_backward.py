"""Near twin of bad_committee_members_step_under_joint_prediction: the one backward through
`joint` runs first (every member zeroed before it), and the members step in a loop of their own after it.  Correct."""
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
        joint = torch.stack(forecasts).mean(0)
        for member in self.members:
            member.opt.zero_grad()
        loss = F.mse_loss(joint, y) + 0.1 * joint.pow(2).mean()
        loss.backward()
        for member in self.members:
            member.opt.step()
        return joint.detach()


def run():
    torch.manual_seed(0)
    committee = Committee(3, 4)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    return committee.update(x, y)
