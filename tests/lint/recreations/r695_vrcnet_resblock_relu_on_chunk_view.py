"""Density_aware_Chamfer_Distance (wutong16), `models/vrcnet.py` (and `vrcnet_plus.py`),
seen while reading lint set AP: the VRCNet model's training branch splits the encoder's
global feature of the stacked partial and complete clouds with `feat_x, feat_y =
feat.chunk(2)` and hands `feat_x` to `self.posterior_infer1`, a `Linear_ResBlock` whose
`forward` starts with `self.af(feature)`, `self.af = nn.ReLU(inplace=True)`: the ReLU
writes the chunk in place.  `chunk` returns several views of one tensor, which autograd
cannot rebase, so the first training batch (`train.py`, `cfgs/vrc.yaml`) raises "Output 0
of SplitBackward0 is a view and is being modified inplace".  (The block's residual,
`self.conv_res(feature)`, also reads the activated values, which the opt-in ADL002
reports; no default rule reported the failure there: the encoder, `PCN_encoder`, is a class
imported from another file of the project, `models/pcn.py`, so its output was not known
to carry a graph.)
Re-created with a small encoder and block in my own shapes, the encoder a same-file layer
(ADL015 finds this form): `run()` trains one step.
Buggy line: `mu_logstd = self.posterior(feat_a)` (a module that writes its argument in
place, called on one of several views).
Source: https://github.com/wutong16/Density_aware_Chamfer_Distance/blob/main/models/vrcnet.py"""
import torch
import torch.nn as nn


class ResidualMLP(nn.Module):
    def __init__(self, width=8, out=4):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, out)
        self.skip = nn.Linear(width, out)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(self.act(x)))) + self.skip(x)


class Completion(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 8)
        self.posterior = ResidualMLP()

    def forward(self, partial, complete):
        feat = self.encoder(torch.cat([partial, complete], dim=0))
        feat_a, feat_b = feat.chunk(2)
        mu_logstd = self.posterior(feat_a)  # expect: ADL015
        return mu_logstd.sum() + feat_b.sum()


def run():
    torch.manual_seed(0)
    model = Completion()
    opt = torch.optim.Adam(model.parameters())
    loss = model(torch.randn(4, 3), torch.randn(4, 3))
    opt.zero_grad()
    loss.backward()
    opt.step()
