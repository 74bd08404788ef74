"""A text classifier with frozen pretrained embeddings and an encoder under the reentrant activation
checkpoint: the checkpoint's only input (the embeddings' output) does not require grad, so its
result has no grad history and the encoder never trains, while the head does."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
embedding = nn.Embedding(20, 8)
embedding.weight.requires_grad_(False)
encoder = nn.Sequential(nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 8))
head = nn.Linear(8, 2)
optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-2)
batches = [(torch.randint(0, 20, (4, 5)), torch.randint(0, 2, (4,))) for _ in range(3)]
for tokens, labels in batches:
    hidden = checkpoint(encoder, embedding(tokens), use_reentrant=True)  # PRIMARY
    loss = F.cross_entropy(head(hidden.mean(1)), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*encoder.parameters(), *head.parameters()]]
