"""Segmentation with a loss-predicting uncertainty head (after ENSTA-U2IS-AI/LDU): next to the
class logits, the network predicts for each pixel how large that pixel's segmentation loss is, and
is trained on it with an auxiliary regression loss. The reporter's segmentation version used the
per-pixel cross-entropy of the same forward pass as the target without `.detach()`, so the
auxiliary loss also moves the segmentation logits (towards whatever loss value the head happens to
predict) instead of training the head alone: the uncertainty head "collapsed" and the segmentation
gradients are wrong. Nothing is raised.
Source: https://github.com/ENSTA-U2IS-AI/LDU/issues/10 ("It is because in the L_unc loss function,
the result of the L_task loss function does not have detach() ... after modification:
loss_uncer = criterion_uncer(uncer.squeeze(dim=1), loss_task.detach())").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, SIZE, BATCH = 3, 8, 2


class SegmentationWithUncertainty(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3, padding=1)
        self.classifier = nn.Conv2d(8, CLASSES, 1)
        self.uncertainty = nn.Conv2d(8, 1, 1)

    def forward(self, images):
        features = torch.relu(self.body(images))
        return self.classifier(features), self.uncertainty(features)


model = SegmentationWithUncertainty()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images = torch.randn(BATCH, 3, SIZE, SIZE)
labels = torch.randint(0, CLASSES, (BATCH, SIZE, SIZE))
criterion_uncer = nn.MSELoss()

losses = []
for step in range(3):
    optimizer.zero_grad()
    logits, uncer = model(images)
    loss_task = F.cross_entropy(logits, labels, reduction="none")  # per-pixel segmentation loss
    loss_uncer = criterion_uncer(uncer.squeeze(dim=1), loss_task.detach())
    loss = loss_task.mean() + 0.5 * loss_uncer
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
