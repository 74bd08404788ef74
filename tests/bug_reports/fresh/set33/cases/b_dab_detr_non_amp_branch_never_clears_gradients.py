"""DAB-DETR (IDEA-Research/DAB-DETR), engine.py `train_one_epoch`: the mixed-precision branch calls
`optimizer.zero_grad()` before `scaler.scale(losses).backward()`, but the "original backward
function" branch (used without `--amp`) runs `losses.backward()`, clips and `optimizer.step()`
without ever clearing the gradients, so every step applies the sum of all earlier batches'
gradients. Nothing fails; the maintainer agreed it is a bug ("It can be viewed as a bug in our
implementation"). The fix: `optimizer.zero_grad()` before `losses.backward()` in that branch.
Source: https://github.com/IDEA-Research/DAB-DETR/issues/58
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyDETR(nn.Module):
    def __init__(self, num_queries=4, hidden=16, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(8, hidden), nn.ReLU())
        self.query_embed = nn.Embedding(num_queries, hidden)
        self.class_embed = nn.Linear(hidden, num_classes + 1)
        self.bbox_embed = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, samples):
        memory = self.backbone(samples)  # [B, T, H]
        attn = torch.softmax(self.query_embed.weight @ memory.transpose(1, 2), dim=-1)  # [B, Q, T]
        hs = attn @ memory
        return {"pred_logits": self.class_embed(hs), "pred_boxes": self.bbox_embed(hs).sigmoid()}


class SetCriterion(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_dict = {"loss_ce": 1.0, "loss_bbox": 5.0}

    def forward(self, outputs, targets):
        logits = outputs["pred_logits"]
        loss_ce = F.cross_entropy(logits.flatten(0, 1), targets["labels"].flatten())
        loss_bbox = F.l1_loss(outputs["pred_boxes"], targets["boxes"])
        return {"loss_ce": loss_ce, "loss_bbox": loss_bbox}


def train_one_epoch(model, criterion, data_loader, optimizer, max_norm=0.1, amp=False, scaler=None):
    model.train()
    criterion.train()
    history = []
    for samples, targets in data_loader:
        outputs = model(samples)
        loss_dict = criterion(outputs, targets)
        weight_dict = criterion.weight_dict
        losses = sum(loss_dict[k] * weight_dict[k] for k in loss_dict.keys() if k in weight_dict)
        history.append(losses.detach())

        # amp backward function
        if amp:
            optimizer.zero_grad()
            scaler.scale(losses).backward()
            if max_norm > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
        else:
            # original backward function
            losses.backward()
            if max_norm > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
    return history


data_loader = []
for _ in range(4):
    samples = torch.randn(2, 5, 8)
    targets = {"labels": torch.randint(0, 4, (2, 4)), "boxes": torch.rand(2, 4, 4)}
    data_loader.append((samples, targets))

model = TinyDETR()
criterion = SetCriterion()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
history = []
for epoch in range(2):
    history += train_one_epoch(model, criterion, data_loader, optimizer, max_norm=0.1)

result = {"losses": torch.stack(history), "params": [p.detach().clone() for p in model.parameters()]}
