"""Prototype Mean Teacher: prototypes detached in place before the contrast loss and before backward.
Source: https://github.com/imatif17/Prototype-Mean-Teacher/issues/14 (detach after loss_c, out of place)."""
import itertools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PrototypeHead(nn.Module):
    def __init__(self, n_classes=3, n_features=16, contra=True):
        super().__init__()
        self.n_classes = n_classes
        self.contra = contra
        self.prototype_s1 = None
        self.prototype_s2 = None
        self.prototype_t = None

    def class_means(self, features, labels):
        return torch.stack([features[labels == c].mean(dim=0) for c in range(self.n_classes)])

    def forward(self, feat_s1, feat_s2, feat_t, labels_s, labels_t):
        self.prototype_s1 = self.class_means(feat_s1, labels_s)
        self.prototype_s2 = self.class_means(feat_s2, labels_s)
        self.prototype_t = self.class_means(feat_t, labels_t)

        loss_pro1 = F.cosine_similarity(self.prototype_s1, self.prototype_t).abs().mean()
        loss_pro2 = F.cosine_similarity(self.prototype_s2, self.prototype_t).abs().mean()
        loss_pro3 = F.cosine_similarity(self.prototype_s1, self.prototype_s2).abs().mean()
        loss = -(loss_pro1 + loss_pro2 + loss_pro3) / 3

        loss_c = 0
        if self.contra:
            for i, j in itertools.combinations(list(range(len(self.prototype_s1))), 2):
                loss_c += F.cosine_similarity(self.prototype_s1[i].view(-1, 1), self.prototype_s1[j].view(-1, 1)).abs().mean()
            loss_c = loss_c / math.comb(len(self.prototype_s1), 2)
        self.prototype_t = self.prototype_t.detach()
        self.prototype_s1 = self.prototype_s1.detach()
        self.prototype_s2 = self.prototype_s2.detach()
        return loss, loss_c


backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
classifier = nn.Linear(16, 3)
head = PrototypeHead()
optimizer = torch.optim.SGD(list(backbone.parameters()) + list(classifier.parameters()), lr=0.05)
source = torch.randn(30, 10)
labels_s = torch.arange(30) % 3
target = torch.randn(30, 10) + 0.5
labels_t = torch.arange(30) % 3
losses = []
for step in range(4):
    optimizer.zero_grad()
    feat_s1 = backbone(source)
    feat_s2 = backbone(source + 0.1 * torch.randn_like(source))
    feat_t = backbone(target)
    loss_det = F.cross_entropy(classifier(feat_s1), labels_s)
    loss_pro, loss_c = head(feat_s1, feat_s2, feat_t, labels_s, labels_t)
    loss = loss_det + 0.1 * loss_pro + 0.1 * loss_c
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in backbone.parameters()]}
