"""once-for-all's progressive shrinking trains several sampled sub-networks on
each batch: each one's loss is backpropagated and collected in a list made
anew for the batch, and the list's mean goes to the epoch's loss meter.  The
distributed meter detaches what it is given (`val.detach().cpu()` before the
all-reduce); the plain `AverageMeter`, used when the run manager is not a
distributed one, adds it as it is (`self.sum += val * n`), so the meter's sum
holds every batch's sub-network graphs until the epoch ends.  Re-created in
other words: a meter that sums what it gets, fed the mean of losses that were
each backpropagated already.
Buggy line: `losses.update(list_mean(loss_of_subnets), images.size(0))` with an
`AverageMeter`.  ADL023 reports the meter's update (the meter is handed a
value that adds up the list of backpropagated losses) and the list the losses
are collected in.
Source: https://github.com/mit-han-lab/once-for-all/blob/master/ofa/imagenet_classification/elastic_nn/training/progressive_shrinking.py"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n

    @property
    def avg(self):
        return self.sum / self.count


def list_mean(values):
    return sum(values) / len(values)


class ElasticNet(nn.Module):
    def __init__(self, widths=(4, 6, 8)):
        super().__init__()
        self.widths = widths
        self.active = widths[-1]
        self.hidden = nn.Linear(5, widths[-1])
        self.head = nn.Linear(widths[-1], 3)

    def sample_active_subnet(self):
        self.active = random.choice(self.widths)
        return {"width": self.active}

    def forward(self, x):
        h = F.relu(self.hidden(x))
        mask = torch.zeros(self.hidden.out_features)
        mask[: self.active] = 1
        return self.head(h * mask)


def train_one_epoch(net, optimizer, batches, subnets_per_batch=2):
    net.train()
    losses = AverageMeter()
    for images, labels in batches:
        net.zero_grad()
        loss_of_subnets = []
        for _ in range(subnets_per_batch):
            net.sample_active_subnet()
            loss = F.cross_entropy(net(images), labels)
            loss_of_subnets.append(loss)  # expect: ADL023
            loss.backward()
        optimizer.step()
        losses.update(list_mean(loss_of_subnets), images.size(0))  # expect: ADL023
    return losses


def bug_shows():
    """The epoch's loss meter holds the graphs of every batch's sub-networks."""
    torch.manual_seed(0)
    random.seed(0)
    net = ElasticNet()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
    meter = train_one_epoch(net, optimizer, batches)
    return meter.sum.grad_fn is not None
