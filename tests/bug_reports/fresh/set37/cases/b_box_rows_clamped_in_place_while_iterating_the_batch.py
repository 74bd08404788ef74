"""Box regression where the predicted boxes are clipped to the image in place, one image at a time,
by iterating over the batch tensor (pytorch/pytorch#47899, "Tensor iteration changes behavior in
1.7 with no hint"): `for boxes in pred_boxes: boxes[:, 0].clamp_(...)`. Since PyTorch 1.7
iterating a tensor calls `unbind`, whose outputs are views made by one function that returns
several views, so the in-place clamp raises "Output 0 of UnbindBackward0 is a view and is being
modified inplace. This view is the output of a function that returns multiple views. Such
functions do not allow the output views to be modified inplace." The workaround given in the
thread iterates with indices instead (`for i in range(len(pred_boxes)): boxes = pred_boxes[i]`),
which keeps the same in-place clip on ordinary views.
Source: https://github.com/pytorch/pytorch/issues/47899
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

batch, n_boxes, feat_dim = 2, 5, 8
img_w, img_h = 1.0, 0.8


class BoxHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(feat_dim, n_boxes * 4)

    def forward(self, feats):
        return torch.sigmoid(self.fc(feats)).view(-1, n_boxes, 4) * 1.2 - 0.1


head = BoxHead()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
feats = torch.randn(batch, feat_dim)
target = torch.rand(batch, n_boxes, 4) * 0.8

losses = []
for step in range(3):
    pred_boxes = head(feats)
    for boxes in pred_boxes:
        boxes[:, 0].clamp_(min=0, max=img_w)
        boxes[:, 1].clamp_(min=0, max=img_h)
        boxes[:, 2].clamp_(min=0, max=img_w)
        boxes[:, 3].clamp_(min=0, max=img_h)
    loss = F.smooth_l1_loss(pred_boxes, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in head.parameters()]}
