"""DeepLabv3.pytorch: a pull request ("Solve memory problems during
evaluation by not tracking gradients") answers an issue where the test
branch of `main.py` runs out of GPU memory.  With `--train` off, `main()`
loads the checkpoint, calls `model.eval()` and loops over the dataset one
image at a time, `outputs = model(inputs.unsqueeze(0))`, with gradients on;
the predictions go through `torch.max` and `inter_and_union` into two
meters.  Re-created with the same two branches of `main()` and a small
DeepLab-like network (backbone + ASPP head).  Nothing raises; every
forward of the test branch records a graph it never needs.
Buggy line: `outputs = model(inputs.unsqueeze(0))` (no `torch.no_grad()`).
Source: https://github.com/chenxi116/DeepLabv3.pytorch/pull/18"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class ASPP(nn.Module):
    def __init__(self, c_in, num_classes):
        super().__init__()
        self.branch1 = nn.Conv2d(c_in, 8, 1)
        self.branch2 = nn.Conv2d(c_in, 8, 3, padding=2, dilation=2)
        self.classifier = nn.Conv2d(16, num_classes, 1)

    def forward(self, x):
        return self.classifier(torch.cat([self.branch1(x), self.branch2(x)], 1))


class DeepLab(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.aspp = ASPP(8, num_classes)

    def forward(self, x):
        return self.aspp(torch.relu(self.bn1(self.conv1(x))))


class AverageMeter:
    def __init__(self):
        self.sum = 0

    def update(self, val):
        self.sum = self.sum + val


def inter_and_union(pred, mask, num_class):
    pred = np.asarray(pred, dtype=np.uint8).copy()
    mask = np.asarray(mask, dtype=np.uint8).copy()
    inter = pred * (pred == mask)
    area_inter, _ = np.histogram(inter, bins=num_class, range=(0, num_class))
    area_pred, _ = np.histogram(pred, bins=num_class, range=(0, num_class))
    area_mask, _ = np.histogram(mask, bins=num_class, range=(0, num_class))
    return area_inter, area_pred + area_mask - area_inter


def main(dataset, model, train=False, epochs=1):
    if train:
        criterion = nn.CrossEntropyLoss(ignore_index=255)
        model.train()
        optimizer = optim.SGD(model.parameters(), lr=0.00025, momentum=0.9)
        for epoch in range(epochs):
            for inputs, target in dataset:
                outputs = model(inputs.unsqueeze(0))
                loss = criterion(outputs, target.unsqueeze(0))
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
        return None
    model.eval()
    inter_meter = AverageMeter()
    union_meter = AverageMeter()
    for i in range(len(dataset)):
        inputs, target = dataset[i]
        outputs = model(inputs.unsqueeze(0))  # missed: ADL031
        _, pred = torch.max(outputs, 1)
        pred = pred.data.cpu().numpy().squeeze().astype(np.uint8)
        mask = target.numpy().astype(np.uint8)
        inter, union = inter_and_union(pred, mask, 3)
        inter_meter.update(inter)
        union_meter.update(union)
    iou = inter_meter.sum / (union_meter.sum + 1e-10)
    return iou


def bug_shows():
    """Every output of the test branch carries a graph back to the weights."""
    torch.manual_seed(0)
    dataset = [(torch.randn(3, 8, 8), torch.randint(0, 3, (8, 8))) for _ in range(2)]
    model = DeepLab()
    seen = []
    model.register_forward_hook(lambda m, i, o: seen.append(o.grad_fn is not None))
    main(dataset, model, train=False)
    return len(seen) == 2 and all(seen)
