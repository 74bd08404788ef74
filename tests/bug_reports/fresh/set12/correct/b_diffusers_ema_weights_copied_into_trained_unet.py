"""diffusers train_unconditional.py: the EMA weights were copied over the model being trained to sample images, and never put back.
Source: https://github.com/huggingface/diffusers/issues/2321 (store the trained weights, sample with the EMA ones, restore)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class EMAModel:
    def __init__(self, parameters, decay=0.9):
        self.shadow_params = [p.clone().detach() for p in parameters]
        self.decay = decay
        self.temp_stored_params = None

    @torch.no_grad()
    def step(self, parameters):
        for s_param, param in zip(self.shadow_params, parameters):
            s_param.sub_((1 - self.decay) * (s_param - param))

    def copy_to(self, parameters):
        for s_param, param in zip(self.shadow_params, parameters):
            param.data.copy_(s_param.data)

    def store(self, parameters):
        self.temp_stored_params = [param.detach().clone() for param in parameters]

    def restore(self, parameters):
        for c_param, param in zip(self.temp_stored_params, parameters):
            param.data.copy_(c_param.data)
        self.temp_stored_params = None


class TinyUNet(nn.Module):
    def __init__(self, dim=16, hidden=64):
        super().__init__()
        self.time_embedding = nn.Embedding(50, hidden)
        self.inp = nn.Linear(dim, hidden)
        self.mid = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU())
        self.out = nn.Linear(hidden, dim)

    def forward(self, sample, timesteps):
        return self.out(self.mid(self.inp(sample) + self.time_embedding(timesteps)))


class DDPMScheduler:
    def __init__(self, num_train_timesteps=50):
        self.num_train_timesteps = num_train_timesteps
        betas = torch.linspace(1e-4, 0.2, num_train_timesteps)
        self.alphas = 1.0 - betas
        self.alphas_cumprod = torch.cumprod(self.alphas, 0)

    def add_noise(self, clean, noise, timesteps):
        a = self.alphas_cumprod[timesteps].sqrt().unsqueeze(1)
        s = (1 - self.alphas_cumprod[timesteps]).sqrt().unsqueeze(1)
        return a * clean + s * noise


@torch.no_grad()
def sample_images(unet, scheduler, n=4, dim=16):
    x = torch.randn(n, dim)
    for t in reversed(range(scheduler.num_train_timesteps)):
        timesteps = torch.full((n,), t, dtype=torch.long)
        eps = unet(x, timesteps)
        alpha, alpha_bar = scheduler.alphas[t], scheduler.alphas_cumprod[t]
        x = (x - (1 - alpha) / (1 - alpha_bar).sqrt() * eps) / alpha.sqrt()
    return x


images = torch.randn(64, 16).cumsum(dim=1) * 0.2
model = TinyUNet()
noise_scheduler = DDPMScheduler()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
ema_model = EMAModel(model.parameters())
losses, samples = [], []
for epoch in range(4):
    model.train()
    for clean_images in images.split(16):
        noise = torch.randn_like(clean_images)
        timesteps = torch.randint(0, noise_scheduler.num_train_timesteps, (clean_images.shape[0],))
        noisy_images = noise_scheduler.add_noise(clean_images, noise, timesteps)
        loss = F.mse_loss(model(noisy_images, timesteps), noise)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema_model.step(model.parameters())
        losses.append(loss.detach())
    unet = model
    ema_model.store(unet.parameters())
    ema_model.copy_to(unet.parameters())
    samples.append(sample_images(unet, noise_scheduler))
    ema_model.restore(unet.parameters())
result = {"losses": losses, "samples": samples, "params": [p.detach().clone() for p in model.parameters()]}
