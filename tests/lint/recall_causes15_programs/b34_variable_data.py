import torch
import torch.nn as nn
from torch.autograd import Variable


class Learner:
    def __init__(self):
        self.net = nn.Linear(4, 2)
        self.crit = nn.CrossEntropyLoss()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.5)

    def update(self, x, y):
        self.opt.zero_grad()
        logits = self.net(x)
        loss = Variable(self.crit(logits, y).data, requires_grad=True)  # BUG34
        loss.backward()
        self.opt.step()
        return float(loss)


def run():
    torch.manual_seed(0)
    learner = Learner()
    before = learner.net.weight.clone()
    for _ in range(3):
        learner.update(torch.randn(8, 4), torch.randint(0, 2, (8,)))
    return torch.equal(before, learner.net.weight)
