"""A one-class time-series anomaly detector's training loop (COUTA, re-written in
our own words): each batch's loss is `loss_oc + alpha * loss_ssl`, backpropagated
and stepped, and both the loss and its one-class part `loss_oc` are appended to
lists that live for the epoch and are only averaged for the log after it.  The
loss's list is reported; the part's list keeps the same graphs (the nodes of
every batch of the epoch) and stays after the help is applied to the first.
Source: https://github.com/xuhongzuo/DeepOD/blob/bb8c20c5c7e8/deepod/models/time_series/couta.py
(lines 308-345)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rep = nn.Linear(6, 4)
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        r = torch.tanh(self.rep(x))
        return r, self.head(r).squeeze(-1)


def train_epoch(net, optimizer, batches, alpha=0.1):
    loss_lst, loss_oc_lst = [], []
    for x0 in batches:
        rep, pred = net(x0)
        loss_oc = (rep ** 2).sum(-1).mean()
        loss_ssl = F.mse_loss(pred, torch.zeros_like(pred))
        loss = loss_oc + alpha * loss_ssl
        net.zero_grad()
        loss.backward()
        optimizer.step()
        loss_lst.append(loss.item())
        loss_oc_lst.append(loss_oc)  # missed: ADL023
    return sum(loss_lst) / len(loss_lst), loss_oc_lst


def nodes(tensor):
    seen, todo = set(), [tensor.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        todo.extend(n for n, _ in node.next_functions)
    return len(seen)


def bug_shows():
    torch.manual_seed(0)
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    _, kept = train_epoch(net, optimizer, [torch.randn(8, 6) for _ in range(5)])
    # every batch's part keeps its graph alive until the epoch ends
    return all(part.grad_fn is not None for part in kept) and sum(nodes(p) for p in kept) >= 5 * nodes(kept[0])
