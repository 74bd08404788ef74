"""Classifier-guided diffusion sampling (openai/guided-diffusion, gaussian_diffusion.py,
`condition_mean`; the same code in lucidrains/denoising-diffusion-pytorch's guided_diffusion.py):
each reverse step shifts the predicted mean by the variance times the gradient of the
classifier's log-probability of the wanted class. The gradient was taken at the step's input
`x_t` instead of at the predicted mean, where the guided reverse step defines it; every guided
sample is pulled by the wrong gradient. Nothing is raised.
Source: https://github.com/openai/guided-diffusion/issues/51 ("Shouldn't we pass out["mean"] instead of
x here"; the authors: "Yes, this is indeed a slight bug"; fixed as `cond_fn(mean, t)` in
https://github.com/lucidrains/denoising-diffusion-pytorch/pull/277).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM, CLASSES, STEPS, BATCH = 6, 3, 8, 4

betas = torch.linspace(1e-3, 0.3, STEPS)
alphas = 1 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)
alphas_cumprod_prev = torch.cat([torch.ones(1), alphas_cumprod[:-1]])
posterior_variance = betas * (1 - alphas_cumprod_prev) / (1 - alphas_cumprod)

denoiser = nn.Sequential(nn.Linear(DIM + 1, 32), nn.SiLU(), nn.Linear(32, DIM))
classifier = nn.Sequential(nn.Linear(DIM + 1, 32), nn.SiLU(), nn.Linear(32, CLASSES))


def with_time(x, t):
    return torch.cat([x, torch.full((x.shape[0], 1), t / STEPS)], dim=1)


def cond_fn(x, t, y, scale=3.0):
    with torch.enable_grad():
        x_in = x.detach().requires_grad_(True)
        log_probs = F.log_softmax(classifier(with_time(x_in, t)), dim=-1)
        selected = log_probs[torch.arange(len(y)), y]
        return torch.autograd.grad(selected.sum(), x_in)[0] * scale


@torch.no_grad()
def p_mean_variance(x, t):
    eps = denoiser(with_time(x, t))
    x_start = (x - (1 - alphas_cumprod[t]).sqrt() * eps) / alphas_cumprod[t].sqrt()
    mean = (alphas_cumprod_prev[t].sqrt() * betas[t] * x_start
            + alphas[t].sqrt() * (1 - alphas_cumprod_prev[t]) * x) / (1 - alphas_cumprod[t])
    return mean, posterior_variance[t]


@torch.no_grad()
def guided_sample(y):
    x = torch.randn(BATCH, DIM)
    for t in reversed(range(STEPS)):
        mean, variance = p_mean_variance(x, t)
        gradient = cond_fn(mean, t, y)
        mean = mean + variance * gradient
        noise = torch.randn_like(x) if t > 0 else torch.zeros_like(x)
        x = mean + variance.sqrt() * noise
    return x


wanted = torch.tensor([0, 1, 2, 1])
samples = guided_sample(wanted)

result = {"samples": samples}
