"""Training a denoising diffusion model with self-conditioning (lucidrains/denoising-diffusion-pytorch,
`GaussianDiffusion.p_losses`): half of the time the model's own estimate of x_0 is computed first,
without gradients, and fed back as an extra input. The estimate was made under
`torch.inference_mode()` and then `detach_()`-ed; the Unet weights the self-condition input with
a learned scale in the tracked forward, which would save the inference tensor for backward, and
the step that draws self-conditioning fails there with "Inference tensors cannot be saved for
backward". The reporter's fix,
which PyTorch's message also suggests: compute the estimate under `torch.no_grad()` instead (same
values, an ordinary tensor).
Source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/286
expect: raises"""
import math
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, t):
        half = self.dim // 2
        emb = math.log(10000) / (half - 1)
        emb = torch.exp(torch.arange(half) * -emb)
        emb = t.float()[:, None] * emb[None, :]
        return torch.cat((emb.sin(), emb.cos()), dim=-1)


class Unet(nn.Module):
    def __init__(self, dim=8, channels=1, self_condition=True):
        super().__init__()
        self.channels = channels
        self.self_condition = self_condition
        self.self_cond_scale = nn.Parameter(torch.full((1, channels, 1, 1), 0.5))
        self.init_conv = nn.Conv2d(channels * 2, dim, 3, padding=1)
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, dim), nn.GELU())
        self.mid = nn.Conv2d(dim, dim, 3, padding=1)
        self.final_conv = nn.Conv2d(dim, channels, 1)

    def forward(self, x, time, x_self_cond=None):
        if self.self_condition:
            if x_self_cond is None:
                x_self_cond = torch.zeros_like(x)
            x = torch.cat((x_self_cond * self.self_cond_scale, x), dim=1)
        h = self.init_conv(x)
        h = h + self.time_mlp(time)[:, :, None, None]
        h = F.silu(self.mid(F.silu(h)))
        return self.final_conv(h)


class GaussianDiffusion(nn.Module):
    def __init__(self, model, timesteps=20):
        super().__init__()
        self.model = model
        self.self_condition = model.self_condition
        self.num_timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.register_buffer("sqrt_alphas_cumprod", alphas_cumprod.sqrt())
        self.register_buffer("sqrt_one_minus_alphas_cumprod", (1.0 - alphas_cumprod).sqrt())

    def q_sample(self, x_start, t, noise):
        return (self.sqrt_alphas_cumprod[t][:, None, None, None] * x_start
                + self.sqrt_one_minus_alphas_cumprod[t][:, None, None, None] * noise)

    def model_predictions(self, x, t, x_self_cond=None):
        pred_noise = self.model(x, t, x_self_cond)
        pred_x_start = ((x - self.sqrt_one_minus_alphas_cumprod[t][:, None, None, None] * pred_noise)
                        / self.sqrt_alphas_cumprod[t][:, None, None, None])
        return pred_x_start.clamp(-1.0, 1.0)

    def p_losses(self, x_start, t):
        noise = torch.randn_like(x_start)
        x = self.q_sample(x_start=x_start, t=t, noise=noise)
        x_self_cond = None
        if self.self_condition and random.random() < 0.5:
            with torch.inference_mode():
                x_self_cond = self.model_predictions(x, t)
                x_self_cond.detach_()
        model_out = self.model(x, t, x_self_cond)
        return F.mse_loss(model_out, noise)

    def forward(self, img):
        t = torch.randint(0, self.num_timesteps, (img.shape[0],))
        return self.p_losses(img * 2 - 1, t)


model = Unet(dim=8, channels=1, self_condition=True)
diffusion = GaussianDiffusion(model, timesteps=20)
opt = torch.optim.Adam(diffusion.parameters(), lr=1e-3)
images = torch.rand(16, 1, 8, 8)

losses = []
for step in range(6):
    batch = images[(step * 4) % 16:(step * 4) % 16 + 4]
    loss = diffusion(batch)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.item())

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in diffusion.parameters()]}
