"""DreamBooth LoRA training of a diffusion UNet with `--mixed_precision fp16 --validation_prompt`
(diffusers' train_dreambooth_lora.py). The frozen UNet is kept in fp16 and the trainable LoRA
parameters are upcast to fp32 once before the loop (`cast_training_params(..., torch.float32)`),
as GradScaler requires. Validation builds a pipeline around the same live `unet` object and
`log_validation` moves it with `pipeline.to(accelerator.device, dtype=torch_dtype)`: that casts
the shared UNet, LoRA adapters included, back to fp16. The first training step after validation
makes fp16 gradients and `accelerator.clip_grad_norm_` -> `GradScaler.unscale_` raises
"ValueError: Attempting to unscale FP16 gradients." Removing `--validation_prompt` avoids it.
Merged fix: drop the `dtype=torch_dtype` from the `.to(...)` in `log_validation`, so the shared
UNet keeps its fp32 LoRA parameters.
Source: https://github.com/huggingface/diffusers/pull/13895 (issue #13124)
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cpu")
weight_dtype = torch.float16


class LoRALinear(nn.Module):
    def __init__(self, base, rank=2):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, rank, bias=False)
        self.lora_B = nn.Linear(rank, base.out_features, bias=False)
        nn.init.normal_(self.lora_A.weight, std=0.1)
        nn.init.normal_(self.lora_B.weight, std=0.1)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class TinyUNet(nn.Module):
    def __init__(self, ch=4, dim=16):
        super().__init__()
        self.conv_in = nn.Conv2d(ch, dim, 3, padding=1)
        self.to_q = nn.Linear(dim, dim)
        self.to_v = nn.Linear(dim, dim)
        self.time_proj = nn.Linear(1, dim)
        self.conv_out = nn.Conv2d(dim, ch, 3, padding=1)

    def forward(self, x, t):
        h = F.silu(self.conv_in(x) + self.time_proj(t[:, None].to(x.dtype))[:, :, None, None])
        b, c, hh, ww = h.shape
        tokens = h.flatten(2).transpose(1, 2)
        attn = torch.softmax(self.to_q(tokens) @ tokens.transpose(1, 2) / c ** 0.5, dim=-1)
        tokens = tokens + attn @ self.to_v(tokens)
        h = tokens.transpose(1, 2).reshape(b, c, hh, ww)
        return self.conv_out(h)


def cast_training_params(model, dtype=torch.float32):
    for param in model.parameters():
        if param.requires_grad:
            param.data = param.to(dtype)


class Pipeline:
    def __init__(self, unet, torch_dtype):
        self.unet = unet
        self.torch_dtype = torch_dtype

    def to(self, device, dtype=None):
        self.unet.to(device, dtype=dtype)
        return self

    @torch.no_grad()
    def __call__(self, latents, steps=3):
        for i in reversed(range(steps)):
            t = torch.full((latents.shape[0],), float(i) / steps)
            with torch.autocast("cpu", dtype=torch.float16):
                latents = latents - 0.1 * self.unet(latents, t).float()
        return latents


def log_validation(pipeline, accelerator_device, torch_dtype):
    pipeline = pipeline.to(accelerator_device, dtype=torch_dtype)
    generator = torch.Generator().manual_seed(1)
    images = pipeline(torch.randn(1, 4, 6, 6, generator=generator))
    return images


unet = TinyUNet()
unet.requires_grad_(False)
unet.to(device, dtype=weight_dtype)
unet.to_q = LoRALinear(unet.to_q)
unet.to_v = LoRALinear(unet.to_v)
cast_training_params(unet, dtype=torch.float32)
params_to_optimize = [p for p in unet.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(params_to_optimize, lr=1e-3)
scaler = torch.amp.GradScaler("cpu")

instance_latents = torch.randn(8, 4, 6, 6)
losses, validations = [], []
for step in range(4):
    latents = instance_latents[2 * step: 2 * step + 2]
    noise = torch.randn_like(latents)
    timesteps = torch.rand(latents.shape[0])
    noisy = latents * (1 - timesteps)[:, None, None, None] + noise * timesteps[:, None, None, None]
    with torch.autocast("cpu", dtype=torch.float16):
        model_pred = unet(noisy, timesteps)
        loss = F.mse_loss(model_pred.float(), noise)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(params_to_optimize, 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())

    if step == 1:
        pipeline = Pipeline(unet=unet, torch_dtype=weight_dtype)
        validations.append(log_validation(pipeline, device, weight_dtype))

result = {
    "losses": torch.tensor(losses),
    "validation": validations,
    "lora": [p.detach().clone() for p in params_to_optimize],
}
