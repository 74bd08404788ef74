"""TUNIT (Clova AI, "Rethinking the Truly Unsupervised Image-to-Image
Translation"): the guiding network's clustering head is trained with the IIC
loss.  `calc_iic_loss` builds the joint distribution of two views' cluster
probabilities, takes its marginals as expanded views,
`p_j = p_i_j.sum(dim=0).view(1, k).expand(k, k)`, and keeps the logarithms
finite by clamping all three in place, `p_j[(p_j < EPS).data] = EPS`.  The
values stay right (every alias of an element gets the same value), but the
backward of an indexed write into an expanded tensor raises "unsupported
operation: more than one element of the written-to tensor refers to a single
memory location", whether or not any element is below `EPS`: the
unsupervised and semi-supervised trainers add the loss into `c_loss` and call
`c_loss.backward()` on every batch (the README pins torch 1.1 or 1.2, where
such writes only warned).  Cloning the marginals, as the message asks, runs
with the same loss.
Source: https://github.com/clovaai/tunit (tools/ops.py, train/train_unsupervised.py)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def compute_joint(x_out, x_tf_out):
    bn, k = x_out.size()
    p_i_j = x_out.unsqueeze(2) * x_tf_out.unsqueeze(1)
    p_i_j = p_i_j.sum(dim=0)
    p_i_j = (p_i_j + p_i_j.t()) / 2.
    p_i_j = p_i_j / p_i_j.sum()
    return p_i_j


def calc_iic_loss(x_out, x_tf_out, lamb=1.0, EPS=1e-10):
    _, k = x_out.size()
    p_i_j = compute_joint(x_out, x_tf_out)

    p_i = p_i_j.sum(dim=1).view(k, 1).expand(k, k)
    p_j = p_i_j.sum(dim=0).view(1, k).expand(k, k)

    # avoid NaN losses
    p_i_j[(p_i_j < EPS).data] = EPS
    p_j[(p_j < EPS).data] = EPS  # expect: ADL012
    p_i[(p_i < EPS).data] = EPS  # expect: ADL012

    loss = - p_i_j * (torch.log(p_i_j) - lamb * torch.log(p_j) - lamb * torch.log(p_i))
    return loss.sum()


class GuidingNetwork(nn.Module):
    def __init__(self, in_dim=12, hidden=16, clusters=5):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.disc = nn.Linear(hidden, clusters)

    def iic(self, x):
        return self.disc(self.features(x))


def run():
    torch.manual_seed(0)
    C = GuidingNetwork()
    c_opt = torch.optim.Adam(C.parameters(), lr=1e-4)
    for _ in range(2):
        x_org = torch.randn(8, 12)
        x_tf = x_org + 0.1 * torch.randn(8, 12)  # the augmented view
        q_disc = F.softmax(C.iic(x_org), 1)
        k_disc = F.softmax(C.iic(x_tf), 1)
        c_loss = 5.0 * calc_iic_loss(q_disc, k_disc)
        c_opt.zero_grad()
        c_loss.backward()
        c_opt.step()
