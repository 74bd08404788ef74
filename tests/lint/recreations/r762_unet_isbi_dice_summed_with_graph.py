"""Unet (U-Net on the ISBI cell segmentation challenge), issue 4: GPU memory keeps growing during
training.  In `train.py`, `train(args, model, device, train_loader, optimizer, epoch)` computes
the training Dice coefficient per batch from `sig(output)` and adds it up with
`dice += dice_coeff(sig_output, target)`; `sig_output` is the model's output through the
sigmoid, so every batch's graph (the whole U-Net forward) stays reachable from `dice` until the
epoch's `dice_acc` is printed.
Re-created in my own words with the script's structure: the `UnetDataset` of images and binary
labels (here generated), the `toBinary` label transform, `dice_coeff`, a small `UNet(1, 1)`,
`BCEWithLogitsLoss`, and `train`/`test`/`main`.
Nothing raises: `bug_shows()` shows the epoch's Dice accuracy still attached to a graph.
Buggy line: `dice += dice_coeff(sig_output, target)`.
Source: https://github.com/laisimiao/Unet/issues/4
(code: https://github.com/laisimiao/Unet/blob/c043b2182f2c0c1c63f3e7f817e9452055d66cb6/train.py)"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.utils.data.dataset import Dataset


class UnetDataset(Dataset):
    def __init__(self, n=4, size=16):
        generator = torch.Generator().manual_seed(0)
        self.images = torch.rand(n, 1, size, size, generator=generator)
        self.labels = (self.images > 0.5).float()

    def __getitem__(self, index):
        return self.images[index], self.labels[index]

    def __len__(self):
        return len(self.images)


class DoubleConv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(in_ch, out_ch, 3, padding=1), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes):
        super().__init__()
        self.inc = DoubleConv(n_channels, 4)
        self.down = DoubleConv(4, 8)
        self.up = DoubleConv(12, 4)
        self.outc = nn.Conv2d(4, n_classes, 1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down(F.max_pool2d(x1, 2))
        x3 = F.interpolate(x2, scale_factor=2)
        return self.outc(self.up(torch.cat([x1, x3], dim=1)))


# https://github.com/pytorch/pytorch/issues/1249
def dice_coeff(pred, target):
    smooth = 1.
    num = pred.size(0)
    m1 = pred.view(num, -1)  # Flatten
    m2 = target.view(num, -1)  # Flatten
    intersection = (m1 * m2).sum()
    return (2. * intersection + smooth) / (m1.sum() + m2.sum() + smooth)


device = torch.device("cpu")
criterion = nn.BCEWithLogitsLoss()
sig = nn.Sigmoid()


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    dice = 0
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)  # This loss is per image
        sig_output = sig(output)
        dice += dice_coeff(sig_output, target)  # expect: ADL023
        loss.backward()
        optimizer.step()

    dice_acc = 100. * dice / len(train_loader)
    return dice_acc


def test(args, model, device, test_loader):
    model.eval()
    dice = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data.to(device))
            dice += dice_coeff(sig(output), target.to(device))
    return 100. * dice / len(test_loader)


def main(epochs=2):
    torch.manual_seed(0)
    args = SimpleNamespace(batch_size=2, lr=1e-4, log_interval=3)
    model = UNet(1, 1).to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    train_loader = torch.utils.data.DataLoader(UnetDataset(), batch_size=args.batch_size, shuffle=True)
    val_loader = torch.utils.data.DataLoader(UnetDataset(2), batch_size=1, shuffle=False)
    dice_acc = None
    for epoch in range(1, epochs + 1):
        dice_acc = train(args, model, device, train_loader, optimizer, epoch)
        test(args, model, device, val_loader)
    return dice_acc


def run():
    return main()


def bug_shows():
    return run().grad_fn is not None
