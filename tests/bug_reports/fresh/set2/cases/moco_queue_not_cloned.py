"""MoCo: the negatives' logits use `self.queue` directly, and the enqueue then writes the new keys
into it in place before backward.
Source: https://github.com/facebookresearch/moco/issues/21 (answer: the queue is modified in place
by the enqueue, so a clone is necessary).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder_q = nn.Linear(6, 4)
encoder_k = nn.Linear(6, 4)
queue = F.normalize(torch.randn(4, 8), dim=0)
x_q, x_k = torch.randn(2, 6), torch.randn(2, 6)

q = F.normalize(encoder_q(x_q), dim=1)
with torch.no_grad():
    k = F.normalize(encoder_k(x_k), dim=1)
l_pos = (q * k).sum(1, keepdim=True)
l_neg = torch.einsum("nc,ck->nk", q, queue)
logits = torch.cat([l_pos, l_neg], dim=1) / 0.07
queue[:, 0:2] = k.T
loss = F.cross_entropy(logits, torch.zeros(2, dtype=torch.long))
loss.backward()
result = {"loss": loss.detach(), "grads": [p.grad for p in encoder_q.parameters()]}
