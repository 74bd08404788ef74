"""Streaming multi-view 3D detection (exiawsh/StreamPETR): the head keeps a memory queue of the
top-k object queries of past frames (`post_update_memory`) and concatenates it with the current
frame's queries, and training is "stream training": one frame per iteration, one `backward()`
per frame. With the `.detach()` calls removed from `post_update_memory` (the user asked why they
are there), the memory carried into the next frame still belongs to the previous frame's graph,
whose saved tensors that frame's `backward()` has already freed, so the second iteration fails.
The maintainer: "The memory tensor needs to be detached when using stream training, because of
the RuntimeError: Trying to backward through the graph a second time ... If you use sliding
window training, the detach operation is not necessary."
Source: https://github.com/exiawsh/StreamPETR/issues/63
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

DIM, NUM_QUERY, TOPK, NUM_CLASSES = 16, 8, 4, 3


def topk_gather(feat, indexes):
    return feat.gather(1, indexes.unsqueeze(-1).expand(-1, -1, feat.shape[-1]))


class StreamPETRHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.query_embedding = nn.Embedding(NUM_QUERY, DIM)
        self.img_proj = nn.Linear(DIM, DIM)
        self.attn = nn.MultiheadAttention(DIM, 2, batch_first=True)
        self.cls_branch = nn.Linear(DIM, NUM_CLASSES)
        self.reg_branch = nn.Linear(DIM, 3)
        self.memory_embedding = None
        self.memory_reference_point = None

    def reset_memory(self):
        self.memory_embedding = None
        self.memory_reference_point = None

    def pre_update_memory(self, batch_size):
        if self.memory_embedding is None:
            self.memory_embedding = torch.zeros(batch_size, TOPK, DIM)
            self.memory_reference_point = torch.zeros(batch_size, TOPK, 3)

    def post_update_memory(self, outs_dec, reference_points, cls_scores):
        rec_score = cls_scores.sigmoid().max(dim=-1).values
        _, topk_indexes = torch.topk(rec_score, TOPK, dim=1)
        rec_memory = topk_gather(outs_dec, topk_indexes).detach()
        rec_reference_points = topk_gather(reference_points, topk_indexes).detach()
        self.memory_embedding = rec_memory
        self.memory_reference_point = rec_reference_points

    def forward(self, img_feats):
        batch_size = img_feats.shape[0]
        self.pre_update_memory(batch_size)
        queries = self.query_embedding.weight.unsqueeze(0).expand(batch_size, -1, -1)
        tgt = torch.cat([queries, self.memory_embedding], dim=1)
        memory = self.img_proj(img_feats)
        outs_dec, _ = self.attn(tgt, memory, memory)
        outs_dec = outs_dec + tgt
        cls_scores = self.cls_branch(outs_dec)
        reference_points = self.reg_branch(outs_dec)
        self.post_update_memory(outs_dec, reference_points, cls_scores)
        return cls_scores[:, :NUM_QUERY], reference_points[:, :NUM_QUERY]


class Petr3D(nn.Module):
    def __init__(self):
        super().__init__()
        self.img_backbone = nn.Sequential(nn.Linear(8, DIM), nn.ReLU(), nn.Linear(DIM, DIM))
        self.pts_bbox_head = StreamPETRHead()

    def forward_train(self, img, gt_labels, gt_centers):
        cls_scores, centers = self.pts_bbox_head(self.img_backbone(img))
        loss_cls = F.cross_entropy(cls_scores.reshape(-1, NUM_CLASSES), gt_labels.reshape(-1))
        loss_bbox = F.l1_loss(centers, gt_centers)
        return loss_cls + loss_bbox


def make_stream(frames=5, batch=2, tokens=6):
    return [(torch.randn(batch, tokens, 8), torch.randint(0, NUM_CLASSES, (batch, NUM_QUERY)),
             torch.randn(batch, NUM_QUERY, 3)) for _ in range(frames)]


model = Petr3D()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
losses = []
for clip in range(2):
    model.pts_bbox_head.reset_memory()
    for img, gt_labels, gt_centers in make_stream():
        loss = model.forward_train(img, gt_labels, gt_centers)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in model.parameters()]}
