"""A blog post on "[Solved] RuntimeError: Trying to backward through the
graph a second time": a network with two outputs whose losses are
backpropagated separately, `loss1.backward()` then `loss2.backward()`.  The
two losses share the network's trunk; the first backward frees the trunk's
saved tensors, and the second raises "Trying to backward through the graph
a second time, but the buffers have already been freed".  The post's fix:
`loss1.backward(retain_graph=True)` (or one backward of the sum).
Buggy line: `loss1.backward()` followed by `loss2.backward()` through the
shared trunk.
Source: https://programmerah.com/solved-runtimeerror-trying-to-backward-through-the-graph-a-second-time-28387/"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeadNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(5, 16), nn.Tanh())
        self.head1 = nn.Linear(16, 3)
        self.head2 = nn.Linear(16, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.head1(h), self.head2(h)


def train(net, optimizer, batches):
    for x, y1, y2 in batches:
        output1, output2 = net(x)
        loss1 = F.cross_entropy(output1, y1)
        loss2 = F.mse_loss(output2, y2)
        optimizer.zero_grad()
        loss1.backward()
        loss2.backward()  # expect: ADL019
        optimizer.step()


def run():
    torch.manual_seed(0)
    net = TwoHeadNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,)), torch.randn(4, 1))]
    train(net, optimizer, batches)
