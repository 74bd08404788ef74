"""Fine-tuning a diffusion model from human preferences (D3PO) with mixed precision: the script
casts the VAE, the text encoder and the U-Net to the half-precision inference dtype; without LoRA
the U-Net itself is trained, its gradients are float16, and `GradScaler.unscale_` refuses them.
Source: https://github.com/yk7333/d3po/issues/6 ("ValueError: Attempting to unscale FP16
gradients" with LoRA disabled and fp16 AMP; fixed with
`unet_dtype = inference_dtype if config.use_lora else torch.float32` for the U-Net).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
use_lora = False
inference_dtype = torch.float16


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8 + 6, 32), nn.SiLU(), nn.Linear(32, 8))

    def forward(self, latents, text_emb):
        return self.net(torch.cat([latents, text_emb], dim=-1))


text_encoder = nn.Linear(10, 6)
unet = TinyUNet()
text_encoder.to(dtype=inference_dtype)
unet.to(dtype=inference_dtype if use_lora else torch.float32)
text_encoder.requires_grad_(False)
unet_dtype = next(unet.parameters()).dtype
optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cpu")
losses = []
for step in range(3):
    prompts = torch.randn(4, 10, dtype=inference_dtype)
    latents, noise = torch.randn(4, 8), torch.randn(4, 8)
    preferred = torch.tensor([1.0, -1.0, 1.0, -1.0])
    with torch.no_grad():
        text_emb = text_encoder(prompts)
    pred = unet(latents.to(unet_dtype), text_emb.to(unet_dtype)).float()
    per_sample = ((pred - noise) ** 2).mean(-1)
    loss = -torch.nn.functional.logsigmoid(-preferred * per_sample).mean()
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(unet.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.detach())
result = {"losses": losses, "unet": [p.detach().float().clone() for p in unet.parameters()]}
