"""A user assembling a batch of 2x2 Jacobians started from the identity
broadcast over the batch, `J = torch.eye(2).unsqueeze(0).expand(5, 2, 2)`,
and filled it row by row, `J[:, i, :] = ...`.  `expand` allocates no memory:
all five matrices share one, so the write is refused ("unsupported
operation: more than one element of the written-to tensor refers to a single
memory location. Please clone() the tensor before performing the
operation").  Here the Jacobian of a planar flow's coupling map feeds the
log-determinant of its likelihood.  The fix clones the expanded identity (or
builds the rows with `torch.stack`).
Buggy line: `J[:, i, :] = torch.autograd.grad(...)` in `coupling_jacobian`.
Expected finding: ADL012 there.
Source: https://github.com/pytorch/pytorch/issues/69204"""
import torch
import torch.nn as nn


class Coupling(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))

    def forward(self, z):
        return z + 0.1 * self.net(z)


def coupling_jacobian(flow, z):
    z = z.requires_grad_(True)
    out = flow(z)
    J = torch.eye(2).unsqueeze(0).expand(z.shape[0], 2, 2)
    for i in range(2):
        J[:, i, :] = torch.autograd.grad(out[:, i].sum(), z, create_graph=True)[0]  # expect: ADL012
    return out, J


def negative_log_likelihood(flow, z):
    out, J = coupling_jacobian(flow, z)
    log_det = torch.linalg.slogdet(J)[1]
    return (0.5 * out.pow(2).sum(-1) - log_det).mean()


def run():
    torch.manual_seed(0)
    flow = Coupling()
    loss = negative_log_likelihood(flow, torch.randn(5, 2))
    loss.backward()
