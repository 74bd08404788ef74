"""Label-smoothed cross-entropy for semantic segmentation (BloodAxe/pytorch-toolbelt,
losses/soft_ce.py `SoftCrossEntropyLoss`): with `ignore_index` set, the smoothing term zeroes the
log-probabilities of ignored pixels with `log_prb *= not_ignored_mask.unsqueeze(dim=1)`. log_prb is
the output of `F.log_softmax`, which autograd saved to compute its own gradient, so the first
`loss.backward()` of a training step raises "one of the variables needed for gradient computation
has been modified by an inplace operation".
Source: https://github.com/BloodAxe/pytorch-toolbelt/issues/45 ("When I use the
SoftCrossEntropyLoss, I got the error: RuntimeError: one of the variables needed for gradient
computation has been modified by an inplace operation"); the loss was rewritten in commit f50e025
with out-of-place masking.
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

CLASSES, SIZE, BATCH, IGNORE_INDEX = 4, 6, 2, 255


class SoftCrossEntropyLoss(nn.Module):
    def __init__(self, smooth_factor, ignore_index):
        super().__init__()
        self.smooth_factor = smooth_factor
        self.ignore_index = ignore_index

    def forward(self, input, target):
        num_classes = input.size(1)
        log_prb = F.log_softmax(input, dim=1)
        ce_loss = F.nll_loss(log_prb, target.long(), ignore_index=self.ignore_index)

        not_ignored_mask = (target != self.ignore_index).to(input.dtype)
        log_prb = log_prb * not_ignored_mask.unsqueeze(dim=1)
        smooth_loss = -log_prb.sum(dim=1).mean()
        return self.smooth_factor * smooth_loss / num_classes + (1 - self.smooth_factor) * ce_loss


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, CLASSES, 1))
criterion = SoftCrossEntropyLoss(smooth_factor=0.1, ignore_index=IGNORE_INDEX)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images = torch.randn(BATCH, 3, SIZE, SIZE)
masks = torch.randint(0, CLASSES, (BATCH, SIZE, SIZE))
masks[:, :, :2] = IGNORE_INDEX  # unlabeled border pixels

losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = criterion(model(images), masks)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
