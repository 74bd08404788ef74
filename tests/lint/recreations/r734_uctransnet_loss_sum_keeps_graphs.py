"""UCTransNet (medical image segmentation), `Train_one_epoch.py`: `train_one_epoch` sums the batch
losses into `loss_sum += len(images) * out_loss` -- the loss tensor itself, with its graph -- and
divides it into `average_loss` on every batch, for the epoch's printout and the return value; the
backward runs only `if model.training`.  Every batch's graph stays reachable from `loss_sum` for
the whole epoch (the sibling repository's report of GPU memory growing until it is exhausted).
Re-created in my own words with the script's structure: a config module's values, a small
segmentation net, a Dice+BCE criterion with `_show_dice`, `iou_on_batch`, `print_summary`, and
the epoch function with its sums over time, loss, IoU and Dice.
Nothing raises: `bug_shows()` shows the epoch's average loss still attached to a graph.
Buggy line: `loss_sum += len(images) * out_loss`.
Source: https://github.com/McGregorWwww/UCTransNet/blob/4cf4b3c8230fb1c3b977406be32c78b2a9066306/Train_one_epoch.py"""
import time
from types import SimpleNamespace

import torch
import torch.nn as nn

config = SimpleNamespace(batch_size=2, print_frequency=1, vis_frequency=10, tensorboard=False)


class TinyUNet(nn.Module):
    def __init__(self, n_channels=3, n_classes=1):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(n_channels, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, n_classes, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(self.up(self.down(x)))


class WeightedDiceBCE(nn.Module):
    def __init__(self, dice_weight=0.5, bce_weight=0.5):
        super().__init__()
        self.dice_weight = dice_weight
        self.bce_weight = bce_weight
        self.bce = nn.BCELoss()

    def _dice(self, preds, masks):
        inter = (preds * masks).sum()
        return (2 * inter + 1e-5) / (preds.sum() + masks.sum() + 1e-5)

    def _show_dice(self, preds, masks):
        return self._dice((preds > 0.5).float(), masks).item()

    def forward(self, preds, masks):
        return self.dice_weight * (1 - self._dice(preds, masks)) + self.bce_weight * self.bce(preds, masks)


def iou_on_batch(masks, preds):
    hard = (preds > 0.5).float()
    inter = (hard * masks).sum().item()
    union = ((hard + masks) > 0).float().sum().item()
    return inter / max(union, 1.0)


def print_summary(epoch, i, nb_batch, loss, loss_name, batch_time, average_loss, average_time, iou,
                  average_iou, dice, average_dice, mode, lr, logger):
    summary = '   [' + str(mode) + '] Epoch: [{0}][{1}/{2}]  '.format(epoch, i, nb_batch)
    summary += 'Loss:{:.3f} (Avg {:.4f}) Dice:{:.4f} (Avg {:.4f}) '.format(loss, average_loss, dice, average_dice)
    logger.append(summary)


def train_one_epoch(loader, model, criterion, optimizer, writer, epoch, lr_scheduler, model_type, logger):
    logging_mode = 'Train' if model.training else 'Val'

    end = time.time()
    time_sum, loss_sum = 0, 0
    dice_sum, iou_sum = 0.0, 0.0

    dices = []
    for i, (sampled_batch, names) in enumerate(loader, 1):
        loss_name = criterion._get_name()

        images, masks = sampled_batch['image'], sampled_batch['label']

        preds = model(images)
        out_loss = criterion(preds, masks.float())

        if model.training:
            optimizer.zero_grad()
            out_loss.backward()
            optimizer.step()

        train_iou = iou_on_batch(masks, preds)
        train_dice = criterion._show_dice(preds, masks.float())

        batch_time = time.time() - end
        dices.append(train_dice)

        time_sum += len(images) * batch_time
        loss_sum += len(images) * out_loss  # expect: ADL023
        iou_sum += len(images) * train_iou
        dice_sum += len(images) * train_dice

        if i == len(loader):
            average_loss = loss_sum / (config.batch_size * (i - 1) + len(images))
            average_time = time_sum / (config.batch_size * (i - 1) + len(images))
            train_iou_average = iou_sum / (config.batch_size * (i - 1) + len(images))
            train_dice_avg = dice_sum / (config.batch_size * (i - 1) + len(images))
        else:
            average_loss = loss_sum / (i * config.batch_size)
            average_time = time_sum / (i * config.batch_size)
            train_iou_average = iou_sum / (i * config.batch_size)
            train_dice_avg = dice_sum / (i * config.batch_size)

        end = time.time()

        if i % config.print_frequency == 0:
            print_summary(epoch + 1, i, len(loader), out_loss, loss_name, batch_time,
                          average_loss, average_time, train_iou, train_iou_average,
                          train_dice, train_dice_avg, logging_mode,
                          lr=min(g["lr"] for g in optimizer.param_groups), logger=logger)

    if lr_scheduler is not None:
        lr_scheduler.step()
    return average_loss, train_dice_avg


def run():
    torch.manual_seed(0)
    model = TinyUNet()
    criterion = WeightedDiceBCE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = [({'image': torch.rand(2, 3, 8, 8), 'label': (torch.rand(2, 1, 8, 8) > 0.5).float()}, ['a', 'b'])
              for _ in range(3)]
    model.train()
    return train_one_epoch(loader, model, criterion, optimizer, None, 0, None, 'UCTransNet', [])


def bug_shows():
    average_loss, _ = run()
    return average_loss.grad_fn is not None
