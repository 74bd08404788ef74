"""A committee of forecasters, each owning its optimiser (`self.opt` over its net's
parameters).  Every member's forecast is stacked into `joint` before the per-member update
loop; each iteration backpropagates a loss of `joint` (retaining the graph) and steps its
member's net in place, so the second member's backward goes through the first member's net,
whose weights the first iteration already changed: RuntimeError (modified by an inplace
operation).  Written for this stop (causes, cause 1: ADL003 across loop iterations)."""
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
            loss = F.mse_loss(joint, y) + 0.1 * joint.pow(2).mean()
            member.opt.zero_grad()
            loss.backward(retain_graph=True)
            member.opt.step()
        return joint.detach()


def run():
    torch.manual_seed(0)
    committee = Committee(3, 4)
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    return committee.update(x, y)
