"""Ref-NeRF evaluation: the model computes surface normals as the gradient of the density with
respect to the sample positions (`torch.autograd.grad` inside `torch.enable_grad()`), which works
under `no_grad`; the evaluation loop (PyTorch Lightning >= 1.8 by default) runs under
`torch.inference_mode()`, where `enable_grad` records nothing, so `autograd.grad` fails.
Source: https://github.com/kakaobrain/nerf-factory/issues/22 ("element 0 of tensors does not
require grad and does not have a grad_fn" when evaluating Ref-NeRF; maintainers: the newer
Lightning evaluates under `torch.inference_mode()`, the implementation assumes `torch.no_grad()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RefNeRF(nn.Module):
    def __init__(self):
        super().__init__()
        self.density_net = nn.Sequential(nn.Linear(3, 32), nn.Softplus(), nn.Linear(32, 1))
        self.color_net = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 3))

    def density_and_normals(self, means):
        with torch.enable_grad():
            means = means.detach().requires_grad_(True)
            density = F.softplus(self.density_net(means))
            grad = torch.autograd.grad(density.sum(), means, create_graph=self.training)[0]
        normals = -F.normalize(grad, dim=-1)
        return density, normals

    def forward(self, rays_o, rays_d):
        t = torch.linspace(0.1, 1.0, 8)
        means = rays_o[:, None] + t[None, :, None] * rays_d[:, None]
        density, normals = self.density_and_normals(means)
        rgb = torch.sigmoid(self.color_net(torch.cat([means, normals], -1)))
        weights = torch.softmax(density.squeeze(-1), dim=-1)
        return (weights[..., None] * rgb).sum(1)


model = RefNeRF()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
rays_o, rays_d, target = torch.randn(16, 3), F.normalize(torch.randn(16, 3), dim=-1), torch.rand(16, 3)
model.train()
for step in range(2):
    loss = F.mse_loss(model(rays_o, rays_d), target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def test_step(model, rays_o, rays_d):
    model.eval()
    with torch.no_grad():
        return model(rays_o, rays_d)


rendered = test_step(model, rays_o, rays_d)
result = {"rendered": rendered.clone(), "params": [p.detach().clone() for p in model.parameters()]}
