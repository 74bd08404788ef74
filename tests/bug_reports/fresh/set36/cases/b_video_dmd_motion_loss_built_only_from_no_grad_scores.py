"""Distribution-matching distillation (DMD) of a few-step video generator with an added temporal
"motion" term (Sphere-AI-Lab/diagdistill#2, "Motion dmd loss does not have gradient"): the score
difference `grad` and its frame-to-frame version `grad_motion` are computed under `torch.no_grad()`
(as DMD does), the spatial loss regresses the generator's latent onto `(latent - grad).detach()`,
but the motion loss is built from `grad_motion` and from frame weights that are detached, and never
from the generator's own latent. The weighted motion loss is added to the total, backward runs, and
the motion term trains nothing: its gradient is zero for every generator weight. No error. The
maintainers' fix mirrors the spatial branch: `pred_motion` is the generator latent's frame
difference and the target is `(pred_motion - grad_motion).detach()`.
Source: https://github.com/Sphere-AI-Lab/diagdistill/issues/2
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

B, T, C, H, W = 2, 4, 2, 4, 4


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, T * C * H * W))

    def forward(self, z):
        return self.net(z).view(-1, T, C, H, W)


class Score(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(C, C, 3, padding=1)

    def forward(self, noisy):
        return self.conv(noisy.transpose(1, 2)).transpose(1, 2)


def compute_kl_grad(fake_score, real_score, noisy, estimated_clean):
    pred_fake = fake_score(noisy)
    pred_real = real_score(noisy)
    grad = pred_fake - pred_real
    grad_motion = (pred_fake[:, 1:] - pred_fake[:, :-1]) - (pred_real[:, 1:] - pred_real[:, :-1])
    p_real = estimated_clean - pred_real
    grad = grad / torch.abs(p_real).mean(dim=[1, 2, 3, 4], keepdim=True)
    p_real_motion = (estimated_clean[:, 1:] - estimated_clean[:, :-1]) - (pred_real[:, 1:] - pred_real[:, :-1])
    grad_motion = grad_motion / torch.abs(p_real_motion).mean(dim=[1, 2, 3, 4], keepdim=True)
    return torch.nan_to_num(grad), torch.nan_to_num(grad_motion)


def dynamic_frame_weights(pred, target):
    per_frame_loss = F.mse_loss(pred, target, reduction="none").mean(dim=[2, 3, 4])
    cum_error = torch.cumsum(per_frame_loss, dim=1)
    return (1.0 + cum_error / cum_error[:, -1:].clamp_min(1e-6)).detach()


def distribution_matching_loss(latent, fake_score, real_score, lambda_flow=0.5):
    with torch.no_grad():
        noisy = latent + 0.5 * torch.randn_like(latent)
        grad, grad_motion = compute_kl_grad(fake_score, real_score, noisy, latent)

    target = (latent - grad).detach()
    dmd_original_loss = 0.5 * F.mse_loss(latent, target)

    weights = dynamic_frame_weights(grad_motion, latent[:, 1:])
    squared_error = grad_motion ** 2
    dmd_motion_loss = (squared_error * weights.view(B, T - 1, 1, 1, 1)).mean()

    return dmd_original_loss + lambda_flow * dmd_motion_loss


generator = Generator()
fake_score = Score()
real_score = Score()
for p in real_score.parameters():
    p.requires_grad_(False)
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)

losses = []
for step in range(5):
    z = torch.randn(B, 8)
    latent = generator(z)
    loss = distribution_matching_loss(latent, fake_score, real_score)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in generator.parameters()]}
