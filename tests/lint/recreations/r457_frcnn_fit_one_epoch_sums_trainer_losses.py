"""faster-rcnn-pytorch's `fit_one_epoch` calls the trainer's `train_step`,
which clears, backpropagates the total loss and steps, and returns the loss
terms as tensors; the epoch loop adds them to its totals,
`total_loss += total`, `rpn_loc_loss += rpn_loc`, ...  The totals keep every
batch's graph until the epoch ends: memory grows and the process is killed
after unfreezing ("killed" in the report); nothing raises.  The fix adds
`float(total)` (or `.item()`).
Buggy line: `total_loss += total` in `fit_one_epoch`.
Source: https://github.com/bubbliiiing/faster-rcnn-pytorch/issues/27"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FasterRCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(6, 8)
        self.rpn = nn.Linear(8, 4)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.backbone(x))
        return self.rpn(h), self.head(h)


class FasterRCNNTrainer(nn.Module):
    def __init__(self, model, optimizer):
        super().__init__()
        self.model = model
        self.optimizer = optimizer

    def forward(self, imgs, boxes):
        rpn_out, roi_out = self.model(imgs)
        rpn_loc = F.smooth_l1_loss(rpn_out, boxes)
        roi_loc = F.smooth_l1_loss(roi_out, boxes)
        return [rpn_loc, roi_loc, rpn_loc + roi_loc]

    def train_step(self, imgs, boxes):
        self.optimizer.zero_grad()
        losses = self.forward(imgs, boxes)
        losses[-1].backward()
        self.optimizer.step()
        return losses


def fit_one_epoch(train_util, batches):
    total_loss = 0
    rpn_loc_loss = 0
    roi_loc_loss = 0
    for imgs, boxes in batches:
        rpn_loc, roi_loc, total = train_util.train_step(imgs, boxes)
        total_loss += total  # expect: ADL028
        rpn_loc_loss += rpn_loc  # expect: ADL028
        roi_loc_loss += roi_loc  # expect: ADL028
    return total_loss / len(batches)


def bug_shows():
    """The epoch's mean loss still holds the batches' graphs."""
    torch.manual_seed(0)
    model = FasterRCNN()
    train_util = FasterRCNNTrainer(model, torch.optim.SGD(model.parameters(), lr=0.01))
    batches = [(torch.randn(4, 6), torch.randn(4, 4)) for _ in range(3)]
    return fit_one_epoch(train_util, batches).grad_fn is not None
