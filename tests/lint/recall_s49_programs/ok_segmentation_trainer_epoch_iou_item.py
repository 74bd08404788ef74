"""The near twin of r788: the epoch's IoU adds `iou_score(...).item()`, a number."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def iou_score(probs, target, eps=1e-6):
    intersection = (probs * target).sum(dim=(1, 2, 3))
    union = probs.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3)) - intersection
    return ((intersection + eps) / (union + eps)).mean()


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
            epoch_iou += iou_score(torch.sigmoid(logits), masks).item()
        return epoch_iou / len(self.loader)


def run():
    torch.manual_seed(0)
    images = torch.rand(6, 1, 8, 8)
    masks = (images > 0.5).float()
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
    return SegmentationTrainer(model, DataLoader(TensorDataset(images, masks), batch_size=2)).train_one_epoch()
