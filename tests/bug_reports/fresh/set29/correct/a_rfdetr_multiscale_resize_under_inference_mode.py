"""RF-DETR (Roboflow's real-time detection transformer), fine-tuning with multi-scale training:
`train_one_epoch` picks a random scale for each batch and resizes the batch's images and padding
mask with `F.interpolate` inside `with torch.inference_mode():` (the resize needs no gradient).
Tensors made in inference mode are inference tensors; the resized images are the model's input,
and the backbone's first convolution saves its input for backward, so the forward fails with
"Inference tensors cannot be saved for backward. To work around you can make a clone to get a
normal tensor and use it in autograd." The merged fix (PR #559, "Replace `inference_mode()` with
`no_grad()` to resolve training") uses `torch.no_grad()` for the resize.
Source: https://github.com/roboflow/rf-detr/issues/461
expect: raises"""
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask


class TinyDetector(nn.Module):
    """Patch-embedding backbone (as a DINOv2 embedding would be), a few queries, box and class heads."""

    def __init__(self, num_classes=3, dim=16, num_queries=4, patch_size=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch_size, stride=patch_size)
        self.encoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.queries = nn.Parameter(torch.randn(num_queries, dim) * 0.1)
        self.class_embed = nn.Linear(dim, num_classes + 1)
        self.bbox_embed = nn.Linear(dim, 4)

    def forward(self, samples):
        feats = self.patch_embed(samples.tensors).flatten(2).transpose(1, 2)
        mask = F.interpolate(samples.mask.unsqueeze(1).float(), size=samples.tensors.shape[-2:]).squeeze(1)
        keep = F.avg_pool2d(1 - mask.unsqueeze(1), 4).flatten(1).unsqueeze(-1)
        feats = self.encoder(feats) * keep
        attn = torch.softmax(self.queries @ feats.transpose(1, 2) / feats.shape[-1] ** 0.5, dim=-1)
        hs = attn @ feats
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


def criterion(outputs, targets):
    """Each query matched to the target with the same index (a fixed assignment keeps it short)."""
    loss_ce = F.cross_entropy(outputs["pred_logits"].flatten(0, 1), targets["labels"].flatten())
    loss_bbox = F.l1_loss(outputs["pred_boxes"], targets["boxes"])
    return {"loss_ce": loss_ce, "loss_bbox": loss_bbox}


def compute_multi_scale_scales(resolution, expanded_scales=False, patch_size=4):
    base = [resolution - 2 * patch_size, resolution, resolution + 2 * patch_size]
    return base + ([resolution + 4 * patch_size] if expanded_scales else [])


def train_one_epoch(model, criterion, data_loader, optimizer, epoch, args):
    model.train()
    losses = []
    for it, (samples, targets) in enumerate(data_loader):
        if args["multi_scale"]:
            scales = compute_multi_scale_scales(args["resolution"], args["expanded_scales"], args["patch_size"])
            random.seed(it)
            scale = random.choice(scales)
            with torch.no_grad():
                samples.tensors = F.interpolate(samples.tensors, size=scale, mode='bilinear', align_corners=False)
                samples.mask = F.interpolate(samples.mask.unsqueeze(1).float(), size=scale, mode='nearest').squeeze(1).bool()

        outputs = model(samples)
        loss_dict = criterion(outputs, targets)
        loss = loss_dict["loss_ce"] + 5.0 * loss_dict["loss_bbox"]
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


def make_loader(n_batches, batch_size=2, resolution=32, num_queries=4):
    batches = []
    for _ in range(n_batches):
        images = torch.rand(batch_size, 3, resolution, resolution)
        mask = torch.zeros(batch_size, resolution, resolution, dtype=torch.bool)
        mask[:, :, resolution - 4:] = True
        targets = {"labels": torch.randint(0, 4, (batch_size, num_queries)),
                   "boxes": torch.rand(batch_size, num_queries, 4)}
        batches.append((NestedTensor(images, mask), targets))
    return batches


args = {"multi_scale": True, "expanded_scales": False, "resolution": 32, "patch_size": 4}
model = TinyDetector()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
epoch_losses = [train_one_epoch(model, criterion, make_loader(4), optimizer, epoch, args) for epoch in range(2)]
result = {"losses": torch.cat(epoch_losses), "params": [p.detach().clone() for p in model.parameters()]}
