"""Optimising the initial noise of a diffusion pipeline (diffusers' `DiffusionPipeline.__call__`):
the user freezes the UNet and the VAE, makes the starting latents an `nn.Parameter`, runs the
pipeline from them and puts an image loss on the output. The pipeline's `__call__` is decorated
with `@torch.no_grad()` (pipelines are meant for inference), so the image has no grad_fn and
`loss.backward()` raises "element 0 of tensors does not require grad and does not have a grad_fn".
The maintainer's answer: call the undecorated function, `pipeline.__call__.__wrapped__`.
Source: https://github.com/huggingface/diffusers/issues/529 (also issues/12672 and
ZhentingWang/RONAN#3, "Questions about training noise")
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

C, H, W, STEPS = 4, 6, 6, 3


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv_in = nn.Conv2d(C + 1, 16, 3, padding=1)
        self.conv_out = nn.Conv2d(16, C, 3, padding=1)

    def forward(self, latents, t):
        time = torch.full_like(latents[:, :1], float(t) / STEPS)
        return self.conv_out(F.silu(self.conv_in(torch.cat([latents, time], dim=1))))


class TinyDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(C, 3, 2, stride=2)

    def forward(self, latents):
        return torch.sigmoid(self.up(latents))


class DenoisePipeline:
    def __init__(self, unet, vae):
        self.unet, self.vae = unet, vae

    @torch.no_grad()
    def __call__(self, latents):
        for t in reversed(range(STEPS)):
            noise_pred = self.unet(latents, t)
            latents = latents - 0.3 * noise_pred
        return self.vae(latents)


unet, vae = TinyUNet(), TinyDecoder()
for module in (unet, vae):
    module.eval()
    for param in module.parameters():
        param.requires_grad = False
pipe = DenoisePipeline(unet, vae)

cur_noise = nn.Parameter(torch.randn(1, C, H, W))
optimizer = torch.optim.Adam([cur_noise], lr=0.05)
target = torch.zeros(1, 3, 2 * H, 2 * W)

losses = []
for step in range(5):
    optimizer.zero_grad()
    image = pipe(latents=cur_noise)
    loss = F.mse_loss(F.interpolate(image, size=(8, 8), mode="bilinear", align_corners=False),
                      F.interpolate(target, size=(8, 8), mode="bilinear", align_corners=False))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "noise": cur_noise.detach().clone()}
