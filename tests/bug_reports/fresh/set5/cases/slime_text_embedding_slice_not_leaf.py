"""Few-shot segmentation by optimizing text embeddings (SLiMe-style): the tokens to learn are
taken as a slice of the full text embedding and passed to the optimizer; the slice is a view
made by an autograd op, not a leaf.
Source: https://github.com/aliasgharkhani/SLiMe/issues/10 ("Optimize Text embedding error: can't
optimize a non-leaf Tensor"; "'embeddings_to_optimize' is a slice of the original
'text_embedding'").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
image_features = torch.randn(16, 6)
mask = (torch.rand(16) > 0.5).long()
attention = nn.Linear(6, 6)
for p in attention.parameters():
    p.requires_grad_(False)

text_embedding = torch.randn(4, 6, requires_grad=True)
embeddings_to_optimize = text_embedding[1:3]
optimizer = torch.optim.Adam([embeddings_to_optimize], lr=0.1)

losses = []
for step in range(5):
    tokens = torch.cat([text_embedding[:1].detach(), embeddings_to_optimize, text_embedding[3:].detach()])
    logits = attention(image_features) @ tokens[1:3].t()
    loss = F.cross_entropy(logits, mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "tokens": embeddings_to_optimize.detach()}
