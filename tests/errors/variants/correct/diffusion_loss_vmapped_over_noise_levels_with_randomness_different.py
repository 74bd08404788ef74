# message: You tried to vmap over ClampedSiLU, but it does not have vmap support. Please override and
#   implement the vmap staticmethod or set generate_vmap_rule=True. For more details, please see
#   https://pytorch.org/docs/main/notes/extending.func.html
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 26
# trigger: a denoising-diffusion training step evaluates the noise-prediction loss at several noise
#   levels at once with torch.vmap(..., in_dims=(0, None, None), randomness="different"), each level drawing
#   its own noise; the denoiser's activation is a custom Function (forward and setup_context apart, a
#   clamped gradient in backward) without a vmap rule
# source: none found; the pattern as users write it (vmap over timesteps instead of a Python loop)
# results: model, losses
import torch
from torch import nn


class ClampedSiLU(torch.autograd.Function):  # PRIMARY
    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x * torch.sigmoid(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        gate = torch.sigmoid(x)
        return (grad_output * (gate * (1 + x * (1 - gate)))).clamp(-1.0, 1.0)


class Denoiser(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.inp = nn.Linear(width + 1, 16)
        self.out = nn.Linear(16, width)

    def forward(self, noisy, level):
        features = torch.cat([noisy, level.expand(noisy.shape[0], 1)], dim=-1)
        return self.out(ClampedSiLU.apply(self.inp(features)))


def loss_at_level(level, clean, model):
    keep = torch.cos(level * torch.pi / 2)
    noise = torch.randn_like(clean)
    noisy = keep * clean + (1 - keep ** 2).sqrt() * noise
    return (model(noisy, level.reshape(1, 1)) - noise).pow(2).mean()


torch.manual_seed(0)
model = Denoiser()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
levels = torch.linspace(0.1, 0.9, 4)
losses = []
for _ in range(2):
    clean = torch.randn(8, 6)
    per_level = torch.vmap(loss_at_level, in_dims=(0, None, None), randomness="different")(levels, clean, model)
    loss = per_level.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(per_level.detach())
