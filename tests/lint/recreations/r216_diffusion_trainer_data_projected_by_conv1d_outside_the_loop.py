"""A user of denoising-diffusion-pytorch reshapes their 1-D signals to the
U-Net's channel count with an `nn.Conv1d` applied once, before building the
`Trainer`: every sample of the dataset then carries the graph of that
convolution (its weight requires grad).  The trainer's loop computes the
diffusion loss of a batch and calls `loss.backward()`; the first step
frees the convolution's part of the graph, and the second step's backward
reaches it again ("Trying to backward through the graph a second time").
The fix projects the data under `torch.no_grad()` (or makes the projection
part of the model).
Buggy line: `loss.backward()` in `Trainer.train`, backpropagating into
`projected` computed once before the loop.
Expected finding: ADL019 there.
Source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/109"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Unet1D(nn.Module):
    def __init__(self, channels=4, dim=8):
        super().__init__()
        self.time_mlp = nn.Linear(1, dim)
        self.down = nn.Conv1d(channels, dim, 3, padding=1)
        self.up = nn.Conv1d(dim, channels, 3, padding=1)

    def forward(self, x, t):
        h = F.silu(self.down(x) + self.time_mlp(t.float().view(-1, 1)).unsqueeze(-1))
        return self.up(h)


class GaussianDiffusion1D(nn.Module):
    def __init__(self, model, timesteps=10):
        super().__init__()
        self.model = model
        self.num_timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        self.register_buffer('alphas_cumprod', torch.cumprod(1 - betas, dim=0))

    def q_sample(self, x_start, t, noise):
        a = self.alphas_cumprod[t].view(-1, 1, 1)
        return a.sqrt() * x_start + (1 - a).sqrt() * noise

    def forward(self, img):
        t = torch.randint(0, self.num_timesteps, (img.shape[0],))
        noise = torch.randn_like(img)
        x = self.q_sample(img, t, noise)
        return F.mse_loss(self.model(x, t), noise)


class Trainer:
    def __init__(self, diffusion_model, dataset, train_batch_size=2, train_lr=1e-4, train_num_steps=2):
        self.model = diffusion_model
        self.dataset = dataset
        self.batch_size = train_batch_size
        self.train_num_steps = train_num_steps
        self.opt = torch.optim.Adam(diffusion_model.parameters(), lr=train_lr)

    def train(self):
        step = 0
        while step < self.train_num_steps:
            data = self.dataset[:self.batch_size]
            loss = self.model(data)
            loss.backward()  # missed: ADL019
            self.opt.step()
            self.opt.zero_grad()
            step += 1


def run():
    torch.manual_seed(0)
    signals = torch.randn(2, 1, 16)
    conv = nn.Conv1d(1, 4, kernel_size=1)
    projected = conv(signals)
    diffusion = GaussianDiffusion1D(Unet1D(channels=4))
    Trainer(diffusion, projected).train()
