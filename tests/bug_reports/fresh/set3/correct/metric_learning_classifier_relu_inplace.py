"""Metric learning with an auxiliary classifier: the embedder's output feeds both the metric loss
(which normalizes it and saves it) and a classifier MLP that starts with `nn.ReLU(inplace=True)`,
which overwrites the embeddings the metric loss's backward needs.
Source: https://github.com/KevinMusgrave/powerful-benchmarker/issues/78 (fix: disable `inplace` in
the classifier's MLP).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
trunk = nn.Linear(10, 16)
embedder = nn.Sequential(nn.ReLU(), nn.Linear(16, 8))
classifier = nn.Sequential(nn.ReLU(inplace=False), nn.Linear(8, 4))
images, labels = torch.randn(6, 10), torch.tensor([0, 1, 2, 3, 0, 1])


def contrastive_loss(embeddings, labels, margin=0.5):
    normed = F.normalize(embeddings, dim=1)
    similarity = normed @ normed.T
    same = (labels[:, None] == labels[None, :]).float() - torch.eye(len(labels))
    different = 1 - same - torch.eye(len(labels))
    return ((1 - similarity) * same).sum() / same.sum() + (F.relu(similarity - margin) * different).sum() / different.sum()


embeddings = embedder(trunk(images))
metric_loss = contrastive_loss(embeddings, labels)
classifier_loss = F.cross_entropy(classifier(embeddings), labels)
loss = metric_loss + 0.5 * classifier_loss
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for m in (trunk, embedder, classifier) for p in m.parameters()]}
