"""Hierarchical multiple-instance learning for whole-slide images (pathology): a bag of patch
features is pooled by a coarse and a fine attention branch, each with its own classifier, and an
attention-matching loss ties the two attention maps together. The trainer computes
`loss_attention = compute_attention_matching_loss(...)` but only logs it
(`metrics['loss_attention'] += loss_attention.data.cpu().numpy()`): the total loss that is
back-propagated is the two classification losses, so the matching term never trains anything and
nothing fails. The maintainer: "it was indeed a typo", the fix adds `loss_attention` to the total
loss.
Source: https://github.com/ChengJin-git/HMIL/issues/4
expect: silent"""
from collections import defaultdict
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AttentionBranch(nn.Module):
    def __init__(self, in_dim, hidden_dim, n_classes):
        super().__init__()
        self.attention = nn.Sequential(nn.Linear(in_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))
        self.classifier = nn.Linear(in_dim, n_classes)

    def forward(self, patches):
        attention = F.softmax(self.attention(patches).squeeze(-1), dim=-1)
        slide_feature = torch.bmm(attention.unsqueeze(1), patches).squeeze(1)
        return self.classifier(slide_feature), attention


class HMIL(nn.Module):
    def __init__(self, in_dim=12, hidden_dim=8, n_coarse=2, n_fine=4):
        super().__init__()
        self.coarse = AttentionBranch(in_dim, hidden_dim, n_coarse)
        self.fine = AttentionBranch(in_dim, hidden_dim, n_fine)

    def forward(self, patches):
        logits_coarse, attention_coarse = self.coarse(patches)
        logits_fine, attention_fine = self.fine(patches)
        return logits_coarse, logits_fine, attention_coarse, attention_fine


def compute_attention_matching_loss(attention_coarse, attention_fine, cfg):
    return cfg.attention_weight * F.kl_div(attention_fine.clamp(min=1e-8).log(), attention_coarse,
                                           reduction="batchmean")


def train_one_epoch(model, bags, optimizer, cfg, metrics):
    for patches, label_coarse, label_fine in bags:
        logits_coarse, logits_fine, batch_attention_coarse, batch_attention_fine = model(patches)
        loss_coarse = F.cross_entropy(logits_coarse, label_coarse)
        loss_fine = F.cross_entropy(logits_fine, label_fine)
        loss_attention = compute_attention_matching_loss(batch_attention_coarse, batch_attention_fine, cfg)
        loss = loss_coarse + loss_fine + loss_attention
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        metrics["loss"] += loss.item()
        metrics["loss_attention"] += loss_attention.data.cpu().numpy()


cfg = SimpleNamespace(attention_weight=0.5)
model = HMIL()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
bags = [(torch.randn(4, 20, 12), torch.randint(0, 2, (4,)), torch.randint(0, 4, (4,))) for _ in range(3)]
history = []
for epoch in range(3):
    metrics = defaultdict(float)
    train_one_epoch(model, bags, optimizer, cfg, metrics)
    history.append([metrics["loss"], float(metrics["loss_attention"])])

result = {"history": torch.tensor(history), "params": [p.detach().clone() for p in model.parameters()]}
