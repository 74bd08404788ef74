"""Semantic segmentation training with mixed precision (lightly-ai/lightly-train, the DINOv3 EoMT
segmentation task's `clip_gradients`): the loss is scaled by a GradScaler, the gradients are unscaled
and clipped with `clip_grad_norm_(..., error_if_nonfinite=True)` before `scaler.step`. At the
scaler's first, too large scale the half-precision backward overflows, as GradScaler expects (it
skips that step and lowers the scale); the clipping raises first with "The total norm of order 2.0
for gradients from `parameters` is non-finite, so it cannot be clipped."
Source: https://github.com/lightly-ai/lightly-train/issues/255 ("How to set error_if_nonfinite=False";
the correct version clips with error_if_nonfinite=False and leaves the overflowing step to
`scaler.step`, which skips it).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_CLASSES = 3


class SegHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.classifier = nn.Conv2d(16, NUM_CLASSES, 1)

    def forward(self, images):
        return self.classifier(self.backbone(images))


def clip_gradients(model, max_norm=1.0):
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm, error_if_nonfinite=True)


model = SegHead()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

images = torch.randn(6, 3, 8, 8) * 40
masks = torch.randint(0, NUM_CLASSES, (6, 8, 8))

losses, scales = [], []
for step in range(6):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        logits = model(images)
    loss = F.cross_entropy(logits.float(), masks)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    clip_gradients(model)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.detach())
    scales.append(torch.tensor(scaler.get_scale()))

result = {"losses": torch.stack(losses), "scales": torch.stack(scales),
          "params": [p.detach().clone() for p in model.parameters()]}
