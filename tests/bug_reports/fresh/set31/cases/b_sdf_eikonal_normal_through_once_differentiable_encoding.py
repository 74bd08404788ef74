"""A neural signed-distance field: a fused input encoding (tiny-cuda-nn's `Encoding`, an
autograd.Function whose backward is `@once_differentiable`) feeds a PyTorch MLP. The reporter
needs surface normals for an eikonal term, computes them as the gradient of the SDF with respect
to the points (`torch.autograd.grad(sdf, x, create_graph=True)`) and puts them in the loss;
`loss.backward()` then fails with "trying to differentiate twice a function that was marked with
@once_differentiable". The maintainer: the encoding has no second derivative, so the normal must
not enter the loss as an autograd gradient; compute it with finite differences, so that
everything is first order.
Source: https://github.com/NVlabs/tiny-cuda-nn/issues/50
expect: raises"""
import torch
import torch.nn as nn
from torch.autograd.function import once_differentiable

torch.manual_seed(0)


class _module_function(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, params, freqs):
        proj = x @ freqs
        ctx.save_for_backward(x, params, freqs)
        return torch.cat((torch.sin(proj), torch.cos(proj)), 1) * params

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, params, freqs = ctx.saved_tensors
        proj = x @ freqs
        features = torch.cat((torch.sin(proj), torch.cos(proj)), 1)
        grad_params = (grad_out * features).sum(0)
        d_features = torch.cat((torch.cos(proj), -torch.sin(proj)), 1) * params * grad_out
        n = proj.shape[1]
        grad_proj = d_features[:, :n] + d_features[:, n:]
        return grad_proj @ freqs.t(), grad_params, None


class Encoding(nn.Module):
    def __init__(self, n_input_dims=3, n_frequencies=16):
        super().__init__()
        self.register_buffer("freqs", torch.randn(n_input_dims, n_frequencies) * 2.0)
        self.params = nn.Parameter(torch.ones(2 * n_frequencies))
        self.n_output_dims = 2 * n_frequencies

    def forward(self, x):
        return _module_function.apply(x, self.params, self.freqs)


class SDFNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoding = Encoding()
        self.mlp = nn.Sequential(nn.Linear(self.encoding.n_output_dims, 64), nn.Softplus(beta=100),
                                 nn.Linear(64, 1))

    def forward(self, x):
        return self.mlp(self.encoding(x))


def sphere_sdf(x):
    return x.norm(dim=1, keepdim=True) - 0.5


sdf_net = SDFNetwork()
optimizer = torch.optim.Adam(sdf_net.parameters(), lr=1e-3)
eps = 1e-3
losses = []
for it in range(20):
    points = torch.rand(128, 3) * 2 - 1
    points.requires_grad_(True)
    sdf = sdf_net(points)
    normal = torch.autograd.grad(sdf, points, torch.ones_like(sdf), create_graph=True)[0]
    sdf_loss = (sdf - sphere_sdf(points.detach())).abs().mean()
    eikonal_loss = ((normal.norm(dim=1) - 1) ** 2).mean()
    loss = sdf_loss + 0.1 * eikonal_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in sdf_net.parameters()]}
