"""A classifier trained without ever clearing the gradients: each backward() adds to what the
previous steps already applied, so every step applies the sum of all gradients so far."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(6, 10), nn.ReLU(), nn.Linear(10, 3))
opt = torch.optim.SGD(classifier.parameters(), lr=0.1)
batches = [(torch.randn(16, 6), torch.randint(0, 3, (16,))) for _ in range(4)]
for features, labels in batches:
    logits = classifier(features)
    F.cross_entropy(logits, labels).backward()  # PRIMARY
    opt.step()
result = [p.detach().clone() for p in classifier.parameters()]
