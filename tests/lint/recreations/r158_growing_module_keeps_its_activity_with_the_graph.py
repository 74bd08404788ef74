"""GroMo (growing neural networks): a merge module records the activity
that later statistics are computed from, `self.activity = y`, in every
`forward` while `store_activity` is on, without detaching it.  The module
then holds the output of the last forward together with its whole graph
(every layer's saved tensors) until the next forward replaces it: memory
that training never frees between steps, and a tensor whose `requires_grad`
leaks into the statistics; nothing raises.  The fix stores `y.detach()`.
Source: https://github.com/growingnet/gromo/issues/135"""
import torch
import torch.nn as nn


class MergeGrowingModule(nn.Module):
    def __init__(self, post_merge_function=None):
        super().__init__()
        self.post_merge_function = post_merge_function
        self.store_activity = 1
        self.activity = None

    def forward(self, x):
        if self.post_merge_function and (x is not None):
            y = self.post_merge_function(x)
        else:
            y = x
        if self.store_activity > 0:
            self.activity = y  # missed: ADL017
        return y

    def tensor_s_update(self):
        return torch.einsum("ij,ik->jk", self.activity, self.activity) / self.activity.shape[0]


class GrowingNet(nn.Module):
    def __init__(self, in_features=3, hidden=4, out_features=2):
        super().__init__()
        self.first = nn.Linear(in_features, hidden)
        self.merge = MergeGrowingModule(post_merge_function=nn.ReLU())
        self.second = nn.Linear(hidden, out_features)

    def forward(self, x):
        return self.second(self.merge(self.first(x)))


def train(net, batches):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for x, y in batches:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        optimizer.step()
        net.merge.tensor_s_update()


def bug_shows():
    torch.manual_seed(0)
    net = GrowingNet()
    train(net, [(torch.randn(5, 3), torch.randn(5, 2)) for _ in range(2)])
    statistic = net.merge.tensor_s_update()
    # the stored activity still carries the last step's graph, and so does every statistic made from it
    return net.merge.activity.grad_fn is not None and statistic.requires_grad
