"""A near twin: the helper itself returns a number (`.item()` of its result), so the sum of
its results in the training loop keeps no graph."""
import torch
import torch.nn as nn


def dice_score(probs, target, smooth=1.0):
    intersection = (probs * target).sum()
    return ((2.0 * intersection + smooth) / (probs.sum() + target.sum() + smooth)).item()


def train(model, batches, optimizer):
    criterion = nn.BCEWithLogitsLoss()
    dice = 0
    for images, masks in batches:
        optimizer.zero_grad()
        output = model(images)
        loss = criterion(output, masks)
        dice += dice_score(torch.sigmoid(output), masks)
        loss.backward()
        optimizer.step()
    return dice / len(batches)


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
    batches = [(x, (x > 0.5).float()) for x in torch.rand(3, 2, 1, 8, 8)]
    return train(model, batches, torch.optim.SGD(model.parameters(), lr=0.1))
