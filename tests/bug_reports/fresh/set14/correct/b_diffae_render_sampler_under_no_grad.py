"""Attribute manipulation through a diffusion autoencoder with the DDIM sampling loop run with
gradients, so that `beta` is fitted through `render`.
Source: https://github.com/konpatp/diffae/issues/43."""
import torch
import torch.nn as nn

torch.manual_seed(0)

PIXELS, CODE, STEPS = 16, 4, 5


class ConditionalDenoiser(nn.Module):
    """Predicts the noise in x_t from (x_t, t, semantic code)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(PIXELS + CODE + 1, 32), nn.SiLU(), nn.Linear(32, PIXELS))

    def forward(self, x, t, cond):
        t_feature = t.expand(x.shape[0], 1)
        return self.net(torch.cat([x, cond, t_feature], dim=-1))


class DiffusionAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.denoiser = ConditionalDenoiser()
        self.register_buffer("alphas_cumprod", torch.linspace(0.99, 0.05, STEPS))

    def ddim_sample_loop(self, x_T, cond, T):
        x = x_T
        for i in reversed(range(T)):
            a_t = self.alphas_cumprod[i]
            a_prev = self.alphas_cumprod[i - 1] if i > 0 else torch.tensor(1.0)
            eps = self.denoiser(x, torch.tensor([[i / T]]), cond)
            x0 = (x - (1 - a_t).sqrt() * eps) / a_t.sqrt()
            x = a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps
        return x

    def render(self, x_T, cond, T=STEPS):
        return self.ddim_sample_loop(x_T, cond, T)


model = DiffusionAutoencoder()
for parameter in model.parameters():
    parameter.requires_grad_(False)  # a pretrained model: only beta is optimised

cond = torch.randn(2, CODE)
cond_new = torch.randn(2, CODE)
xT = torch.randn(2, PIXELS)
target = torch.randn(2, PIXELS)
beta = torch.full((2, 1), 0.5, requires_grad=True)
optimizer = torch.optim.Adam([beta], lr=0.05)
losses = []
for step in range(5):
    optimizer.zero_grad()
    cond2 = cond * beta + cond_new * (1 - beta)
    gen_img = model.render(xT, cond2, T=STEPS)
    loss = ((gen_img - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "beta": beta.detach().clone()}
