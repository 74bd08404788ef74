"""Fresh shape of cause 3 of r762 (ADL023: a helper's result on the model's output summed
across the training loop with its graph).  Source: https://github.com/laisimiao/Unet/issues/4, re-written in my own words as a trainer class
would write it: `SegmentationTrainer.train_one_epoch` backpropagates the BCE loss of
`self.model(images)` and adds `iou_score(torch.sigmoid(logits), masks)` -- a function of the
file that computes the soft IoU with tensor arithmetic -- into `epoch_iou`, bound before the
loop.  Every batch's forward graph stays reachable from `epoch_iou` until the epoch ends.
Nothing raises: `bug_shows()` shows the epoch's IoU still attached to a graph.
Buggy line: `epoch_iou += iou_score(torch.sigmoid(logits), masks)`."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def iou_score(probs, target, eps=1e-6):
    intersection = (probs * target).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) - intersection
    return ((intersection + eps) / (union + eps)).mean()


class TinySegNet(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.encode = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(channels, 1, 1)

    def forward(self, x):
        return self.head(self.encode(x))


class SegmentationTrainer:
    def __init__(self, model, loader, lr=1e-2):
        self.model = model
        self.loader = loader
        self.criterion = nn.BCEWithLogitsLoss()
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)

    def train_one_epoch(self):
        self.model.train()
        epoch_iou = 0.0
        for images, masks in self.loader:
            self.optimizer.zero_grad()
            logits = self.model(images)
            loss = self.criterion(logits, masks)
            loss.backward()
            self.optimizer.step()
            epoch_iou += iou_score(torch.sigmoid(logits), masks)  # expect: ADL023
        return epoch_iou / len(self.loader)

    def fit(self, epochs):
        epoch_iou = None
        for epoch in range(epochs):
            epoch_iou = self.train_one_epoch()
            print(f"epoch {epoch}: train IoU {float(epoch_iou):.3f}")
        return epoch_iou


def run():
    torch.manual_seed(0)
    images = torch.rand(6, 1, 8, 8)
    masks = (images > 0.5).float()
    trainer = SegmentationTrainer(TinySegNet(), DataLoader(TensorDataset(images, masks), batch_size=2))
    return trainer.fit(2)


def bug_shows():
    return run().grad_fn is not None
