"""Weighted matrix factorisation surrogate (revisiting adversarially learned
injection attacks): the ALS solver of `WMFTrainer` solves each user's and
item's factors in closed form and writes them back into the model's
parameters row by row, `model.P[user] = new_p_u.t()`, with gradients
enabled.  `P` and `Q` are `nn.Parameter`s, so the first write fails ("a view
of a leaf Variable that requires grad is being used in an in-place
operation"); the fix writes under `torch.no_grad()`.
Buggy lines: `model.P[user] = ...` and `model.Q[item] = ...` in `train_als`.
Expected finding: ADL014 there.
Source: https://github.com/graytowne/revisit_adv_rec/issues/3"""
import numpy as np
import torch
import torch.nn as nn


class WeightedMF(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super(WeightedMF, self).__init__()
        self.dim = dim
        self.Q = nn.Parameter(torch.zeros([n_items, dim]).normal_(mean=0, std=0.1))
        self.P = nn.Parameter(torch.zeros([n_users, dim]).normal_(mean=0, std=0.1))
        self.params = nn.ParameterList([self.Q, self.P])

    def forward(self, user_id=None):
        if user_id is None:
            return torch.mm(self.P, self.Q.t())
        return torch.mm(self.P[[user_id]], self.Q.t())


class WMFTrainer(object):
    def __init__(self, n_users, n_items, dim=4, l2=0.1, weight_alpha=20):
        self.net = WeightedMF(n_users, n_items, dim)
        self.dim = dim
        self.l2 = l2
        self.weight_alpha = weight_alpha

    def train_als(self, data):
        model = self.net
        P = model.P.detach()
        Q = model.Q.detach()
        weight_alpha = self.weight_alpha - 1
        lamda_eye = torch.eye(self.dim) * self.l2

        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, x_u in enumerate(data):
            cu = x_u * weight_alpha + 1
            lhs = torch.mm(Q.t(), torch.diag(cu - 1).mm(Q)) + residual
            rhs = torch.mm(Q.t(), torch.diag(cu).mm(x_u.view(-1, 1)))
            new_p_u = torch.mm(lhs.inverse(), rhs)
            model.P[user] = new_p_u.t()  # missed: ADL014

        residual = torch.mm(P.t(), P) + lamda_eye
        for item, x_v in enumerate(data.t()):
            cv = x_v * weight_alpha + 1
            lhs = torch.mm(P.t(), torch.diag(cv - 1).mm(P)) + residual
            rhs = torch.mm(P.t(), torch.diag(cv).mm(x_v.view(-1, 1)))
            new_q_v = torch.mm(lhs.inverse(), rhs)
            model.Q[item] = new_q_v.t()  # missed: ADL014
        return 0

    def fit(self, data, epoch_num=1):
        for _ in range(epoch_num):
            self.train_als(data)


def run():
    torch.manual_seed(0)
    rng = np.random.RandomState(0)
    data = torch.from_numpy((rng.rand(5, 6) > 0.5).astype(np.float32))
    WMFTrainer(n_users=5, n_items=6).fit(data)
