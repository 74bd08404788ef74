"""MLNT (meta-learning based noise-tolerant training) takes, for each of
`num_fast` synthetic label-noise draws, one fast-weight step from the
gradient of a loss on the network's `outputs`, computed once per batch
before the loop.  After replacing the in-place `grad.detach_()` that newer
PyTorch rejects ("Can't detach views in-place"), the reporter's version
computes the fast gradients with `torch.autograd.grad(fast_loss,
net.parameters())` and no `retain_graph`: "the first noise type iteration is
ok.  But the second noise type it cannot compute grads =
torch.autograd.grad()" -- "Trying to backward through the graph a second
time": the first call freed the graph of `outputs` that every draw shares.
Buggy line: `grads = torch.autograd.grad(fast_loss, net.parameters())` in the
`num_fast` loop.
Source: https://github.com/LiJunnan1992/MLNT/issues/8"""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, d=6, classes=3):
        super().__init__()
        self.fc1 = nn.Linear(d, 8)
        self.fc2 = nn.Linear(8, classes)

    def forward(self, x, weights=None):
        if weights is None:
            return self.fc2(F.relu(self.fc1(x)))
        h = F.relu(F.linear(x, weights["fc1.weight"], weights["fc1.bias"]))
        return F.linear(h, weights["fc2.weight"], weights["fc2.bias"])


def train(net, tch_net, train_loader, num_fast=2, perturb_ratio=0.5, meta_lr=0.2, lr=0.02):
    optimizer = torch.optim.SGD(net.parameters(), lr=lr, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    consistent_criterion = nn.KLDivLoss(reduction="batchmean")
    net.train()
    for batch_idx, (inputs, targets) in enumerate(train_loader):
        optimizer.zero_grad()
        outputs = net(inputs)
        class_loss = criterion(outputs, targets)
        class_loss.backward(retain_graph=True)
        with torch.no_grad():
            tch_outputs = F.softmax(tch_net(inputs), -1)
        for i in range(num_fast):
            targets_fast = targets.clone()
            randidx = torch.randperm(targets.size(0))
            for n in range(int(targets.size(0) * perturb_ratio)):
                targets_fast[randidx[n]] = targets[randidx[(n + 1) % len(randidx)]]
            fast_loss = criterion(outputs, targets_fast)
            grads = torch.autograd.grad(fast_loss, net.parameters())  # expect: ADL019
            grads = [grad.detach() for grad in grads]
            fast_weights = OrderedDict(
                (name, param - meta_lr * grad) for ((name, param), grad) in zip(net.named_parameters(), grads)
            )
            fast_out = net.forward(inputs, fast_weights)
            consistent_loss = consistent_criterion(F.log_softmax(fast_out, dim=1), tch_outputs)
            consistent_loss = consistent_loss * meta_lr / num_fast
            consistent_loss.backward()
        optimizer.step()


def run():
    torch.manual_seed(0)
    loader = [(torch.randn(4, 6), torch.randint(0, 3, (4,)))]
    train(Net(), Net(), loader)
