"""Anchor-free detector head trained with a generalized focal loss (RangiLyu/nanodet, GFLHead.loss):
when no anchor of a batch is assigned to an object (a batch of background images, or early
warm-up batches), the head replaces its three losses with fresh zero tensors,
`torch.tensor(0.)`. Their sum has no graph, and `loss.backward()` raises "element 0 of tensors
does not require grad and does not have a grad_fn".
Source: https://github.com/RangiLyu/nanodet/issues/7 ("when I changed the warmup steps ... an
error occurred"; the fix that was merged makes the three zero losses
`torch.tensor(0, dtype=torch.float32, requires_grad=True)`, so such a batch backpropagates nothing).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CHANNELS, CELLS, CLASSES = 6, 10, 3


class DetectionHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.cls = nn.Linear(CHANNELS, CLASSES)
        self.reg = nn.Linear(CHANNELS, 4)

    def forward(self, features):
        return self.cls(features), F.relu(self.reg(features))

    def loss(self, cls_scores, box_preds, labels, box_targets):
        positive = labels >= 0
        num_positive = int(positive.sum())
        if num_positive <= 0:
            loss_cls = torch.tensor(0.0)
            loss_box = torch.tensor(0.0)
            return loss_cls + loss_box
        one_hot = F.one_hot(labels[positive], CLASSES).float()
        loss_cls = F.binary_cross_entropy_with_logits(cls_scores[positive], one_hot)
        loss_box = F.l1_loss(box_preds[positive], box_targets[positive])
        return loss_cls + loss_box


head = DetectionHead()
optimizer = torch.optim.SGD(head.parameters(), lr=0.05, momentum=0.9)

features = torch.randn(4, CELLS, CHANNELS)
labels = torch.randint(0, CLASSES, (4, CELLS))
labels[:, ::2] = -1  # background cells
labels[2] = -1  # a batch of background images: no cell is assigned to an object
box_targets = torch.rand(4, CELLS, 4)

losses = []
for step in range(4):
    optimizer.zero_grad()
    cls_scores, box_preds = head(features[step])
    loss = head.loss(cls_scores, box_preds, labels[step], box_targets[step])
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in head.parameters()]}
