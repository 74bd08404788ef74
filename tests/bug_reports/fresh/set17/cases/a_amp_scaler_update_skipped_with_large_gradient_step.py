"""Novel-view-synthesis transformer trained with a GradScaler (Haian-Jin/LVSM, train.py): after
unscaling, a step whose gradient norm is above a threshold is skipped, and the skip also skipped
`scaler.update()`, which sat in the same branch as `scaler.step(optimizer)`. The next iteration's
`scaler.unscale_(optimizer)` then finds the optimizer already unscaled since the last update and
raises.
Source: https://github.com/Haian-Jin/LVSM/pull/19 ("RuntimeError: unscale_() has already been
called on this optimizer since the last update()" after "skipping optimizer step"; the merged fix
calls `scaler.update()` on every iteration, outside the skip).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM, TOKENS, BATCH, CLIP, SKIP_ABOVE = 12, 6, 4, 1.0, 10.0


class ViewRenderer(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Linear(DIM, DIM)
        self.mix = nn.Linear(DIM, DIM)
        self.to_rgb = nn.Linear(DIM, 3)

    def forward(self, rays):
        hidden = F.gelu(self.tokens(rays))
        hidden = hidden + F.gelu(self.mix(hidden.mean(dim=1, keepdim=True)))
        return self.to_rgb(hidden)


model = ViewRenderer()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 8)

rays = torch.randn(4, BATCH, TOKENS, DIM)
targets = torch.randn(4, BATCH, TOKENS, 3)
targets[1] *= 40.0  # an outlier batch: its gradient norm is far above the skip threshold

losses, norms = [], []
for step in range(4):
    optimizer.zero_grad()
    loss = F.mse_loss(model(rays[step]), targets[step])
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
    if grad_norm > SKIP_ABOVE:
        print(f"step {step}: grad norm {grad_norm:.1f} > {SKIP_ABOVE}, skipping optimizer step")
    else:
        scaler.step(optimizer)
        scaler.update()
    losses.append(loss.detach())
    norms.append(grad_norm.detach())

result = {"losses": torch.stack(losses), "norms": torch.stack(norms),
          "params": [p.detach().clone() for p in model.parameters()]}
