"""Invariant Information Clustering (IIC): the mutual-information loss builds
the marginals as expanded views of the joint's row and column sums,
`p_i = p_i_j.sum(dim=1).view(k, 1).expand(k, k)`, then floors them in place
to avoid NaNs, `p_i[(p_i < EPS).data] = EPS`.  An in-place write into an
expanded tensor is refused ("more than one element of the written-to tensor
refers to a single memory location"), so training fails at the first batch;
the fix computes `torch.clamp` out of place.
Buggy lines: `p_j[(p_j < EPS).data] = EPS` and `p_i[(p_i < EPS).data] = EPS`.
Expected finding: ADL012 there.
Source: https://github.com/xu-ji/IIC/pull/99"""
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def IID_loss(x_out, x_tf_out, lamb=1.0, EPS=sys.float_info.epsilon):
    _, k = x_out.size()
    p_i_j = compute_joint(x_out, x_tf_out)
    assert (p_i_j.size() == (k, k))

    p_i = p_i_j.sum(dim=1).view(k, 1).expand(k, k)
    p_j = p_i_j.sum(dim=0).view(1, k).expand(k, k)

    p_i_j[(p_i_j < EPS).data] = EPS
    p_j[(p_j < EPS).data] = EPS  # expect: ADL012
    p_i[(p_i < EPS).data] = EPS  # expect: ADL012

    loss = - p_i_j * (torch.log(p_i_j) - lamb * torch.log(p_j) - lamb * torch.log(p_i))
    return loss.sum()


def compute_joint(x_out, x_tf_out):
    bn, k = x_out.size()
    p_i_j = x_out.unsqueeze(2) * x_tf_out.unsqueeze(1)
    p_i_j = p_i_j.sum(dim=0)
    p_i_j = (p_i_j + p_i_j.t()) / 2.
    p_i_j = p_i_j / p_i_j.sum()
    return p_i_j


class ClusterNet(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, k)

    def forward(self, x):
        return F.softmax(self.head(self.features(x)), dim=1)


def run():
    torch.manual_seed(0)
    net = ClusterNet()
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-4)
    imgs = torch.randn(6, 8)
    imgs_tf = imgs + 0.1 * torch.randn(6, 8)
    optimizer.zero_grad()
    loss = IID_loss(net(imgs), net(imgs_tf))
    loss.backward()
    optimizer.step()
