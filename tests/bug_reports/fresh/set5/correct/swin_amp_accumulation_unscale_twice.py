"""Masked-image pretraining (SimMIM-style) with mixed precision and gradient accumulation: the
loop calls `scaler.unscale_(optimizer)` (to clip) after every micro-batch, but `scaler.step` and
`scaler.update` only every `accumulation_steps` micro-batches, so the second micro-batch unscales
again before any update.
Source: https://github.com/microsoft/Swin-Transformer/issues/311 ("AMP + Accumulation-steps Fails":
"unscale_() has already been called on this optimizer since the last update()").
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 16))
optimizer = torch.optim.AdamW(encoder.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu")
accumulation_steps = 2
patches = torch.randn(8, 4, 16)
masks = (torch.rand(8, 4, 1) > 0.5).float()

losses = []
optimizer.zero_grad()
for idx in range(8):
    x, mask = patches[idx], masks[idx]
    reconstruction = encoder(x * (1 - mask))
    loss = ((reconstruction - x) ** 2 * mask).mean() / accumulation_steps
    scaler.scale(loss).backward()
    if (idx + 1) % accumulation_steps == 0:
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(encoder.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in encoder.parameters()]}
