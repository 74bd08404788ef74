"""Diffusion-based face inpainting (DifFace): the DDIM sampling loop runs under
`torch.no_grad()`, and at every step the predicted clean image is refined by a gradient step on
the masked data-consistency loss, `grad = torch.autograd.grad(loss, pred_xstart)`. Under
no_grad the loss has no graph, so the refinement raises "element 0 of tensors does not require
grad and does not have a grad_fn".
Source: https://github.com/zsyOAOA/DifFace/pull/21 ("enable autograd": the inpainting run fails
in `_refine_xstart` at `th.autograd.grad(...)`; fix: compute the refinement under
`torch.enable_grad()`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
timesteps = torch.linspace(0.9, 0.1, 5)
alpha_bar = torch.cos(timesteps * torch.pi / 2) ** 2


class Denoiser(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, 32), nn.SiLU(), nn.Linear(32, dim))

    def forward(self, x, t):
        return self.net(torch.cat([x, t.expand(x.shape[0], 1)], dim=1))


def refine_xstart(pred_xstart, y0, mask, step_size=0.5):
    pred_xstart = pred_xstart.detach().requires_grad_(True)
    loss = F.mse_loss(pred_xstart * mask, y0 * mask, reduction="sum")
    grad = torch.autograd.grad(loss, pred_xstart)[0]
    return (pred_xstart - step_size * grad).detach()


@torch.no_grad()
def ddim_sample_loop(model, noise, y0, mask):
    x = noise
    for i, t in enumerate(timesteps):
        eps = model(x, t.view(1, 1))
        pred_xstart = (x - (1 - alpha_bar[i]).sqrt() * eps) / alpha_bar[i].sqrt()
        pred_xstart = refine_xstart(pred_xstart, y0, mask)
        a_next = alpha_bar[i + 1] if i + 1 < len(timesteps) else torch.tensor(1.0)
        x = a_next.sqrt() * pred_xstart + (1 - a_next).sqrt() * eps
    return x


model = Denoiser().eval()
y0 = torch.randn(2, 12)
mask = (torch.rand(2, 12) > 0.4).float()
samples = ddim_sample_loop(model, torch.randn(2, 12), y0, mask)
result = {"samples": samples}
