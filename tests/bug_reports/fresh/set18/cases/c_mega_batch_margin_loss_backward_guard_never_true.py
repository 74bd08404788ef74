"""A retrieval encoder trained with a mega-batch margin loss (sentence-transformers'
`MegaBatchMarginLoss`): every anchor is pushed towards its positive and away from the hardest
other positive of the whole batch. To save memory the loss runs over mini-batches of anchors,
backpropagating each mini-batch's loss inside the loop and returning the last one for the
trainer's backward(). The guard that decides "not the last mini-batch" compares the end index
with the rows of the mini-batch's score matrix instead of the number of anchors, so it is never
true: no backward() runs in the loop, the returned loss is the last mini-batch's alone, and the
earlier mini-batches train nothing; nothing fails.
Source: https://github.com/huggingface/sentence-transformers/pull/3854 ("the per-mini-batch
backward was guarded by `if end_idx < len(cos_scores):` ... the guard is never True ... every
earlier mini-batch contributed nothing to the update"; fixed in #3862).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

MINI_BATCH, MARGIN = 4, 0.5

encoder = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 8))
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.5)
anchors = torch.randn(12, 16)
positives = anchors + 0.3 * torch.randn(12, 16)


def mega_batch_margin_loss(encoder, anchors, positives):
    with torch.no_grad():
        all_positives = F.normalize(encoder(positives), dim=-1)
    for start in range(0, len(anchors), MINI_BATCH):
        end = start + MINI_BATCH
        anchor = F.normalize(encoder(anchors[start:end]), dim=-1)
        positive = F.normalize(encoder(positives[start:end]), dim=-1)
        scores = anchor @ all_positives.T - 2 * torch.eye(len(anchors))[start:end]
        hardest_negative = scores.max(dim=1).values
        loss = F.relu(MARGIN - (anchor * positive).sum(-1) + hardest_negative).mean()
        if end < len(scores):
            loss.backward()
    return loss


losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = mega_batch_margin_loss(encoder, anchors, positives)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in encoder.parameters()]}
