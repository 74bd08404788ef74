"""Wolf (flow-based generative models): the affine transform of a coupling
layer splits the parameters the coupling network predicts with
`params.chunk(2, dim)` and turns the log-scale into a scale in place,
`log_scale.mul_(0.5).tanh_()`, to save memory.  `chunk` returns several views
of one tensor, and PyTorch forbids writing one of them in place ("Output 1 of
Split is a view and is being modified inplace").  The report's fix
was `log_scale.clone()` before the in-place ops; the maintainer suggested the
out-of-place `log_scale.mul(0.5).tanh()`.
Source: https://github.com/XuezheMax/wolf/pull/1"""
import torch
import torch.nn as nn


class Transform(nn.Module):
    def __init__(self):
        super().__init__()

    def calc_params(self, params):
        raise NotImplementedError

    def fwd(self, z, params):
        raise NotImplementedError


class Affine(Transform):
    def __init__(self, dim, alpha):
        super().__init__()
        self.dim = dim
        self.alpha = alpha

    def calc_params(self, params):
        mu, log_scale = params.chunk(2, dim=self.dim)
        scale = log_scale.mul_(0.5).tanh_().mul(self.alpha).add(1.0)  # missed: ADL015
        return mu, scale

    def fwd(self, z, params):
        mu, scale = self.calc_params(params)
        z = scale * z + mu
        logdet = scale.log().view(z.size(0), -1).sum(dim=1)
        return z, logdet


class NICEBlock(nn.Module):
    def __init__(self, in_features, hidden_features):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, hidden_features), nn.ELU(),
                                 nn.Linear(hidden_features, 2 * in_features))

    def forward(self, x):
        return self.net(x)


class NICE(nn.Module):
    def __init__(self, features, hidden_features=16, alpha=1.0):
        super().__init__()
        self.half = features // 2
        self.net = NICEBlock(self.half, hidden_features)
        self.transform = Affine(dim=1, alpha=alpha)

    def forward(self, input):
        z1, z2 = input.split([self.half, input.size(1) - self.half], dim=1)
        params = self.net(z1)
        z2, logdet = self.transform.fwd(z2, params)
        return torch.cat([z1, z2], dim=1), logdet


def run():
    torch.manual_seed(0)
    flow = NICE(features=8)
    optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)
    x = torch.randn(16, 8)
    z, logdet = flow(x)
    loss = (0.5 * z.pow(2).sum(dim=1) - logdet).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
