"""Segmentation U-Net trained with a gradient scaler (mixed precision): the gradients are clipped
right after `grad_scaler.scale(loss).backward()`, while they are still multiplied by the loss
scale, so the clipping threshold applies to the scaled norm and the real update is tiny (no
error).
Source: https://github.com/milesial/Pytorch-UNet/pull/470 ("Unscale gradients before clipping":
call `grad_scaler.unscale_(optimizer)` before `clip_grad_norm_`, as in PyTorch's AMP guide).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
grad_scaler = torch.amp.GradScaler("cpu")
images = torch.randn(4, 1, 8, 8)
masks = (images > 0).long().squeeze(1)

losses = []
for epoch in range(5):
    masks_pred = model(images)
    loss = F.cross_entropy(masks_pred, masks)
    optimizer.zero_grad(set_to_none=True)
    grad_scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    grad_scaler.step(optimizer)
    grad_scaler.update()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach() for p in model.parameters()]}
