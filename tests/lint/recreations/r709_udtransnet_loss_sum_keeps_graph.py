"""UDTransNet (medical image segmentation), issue 21: GPU memory kept growing during training
until it ran out ("为什么我在训练的时候显存会一直增加到爆了").  The answer in the thread: in
`train_one_epoch`, `loss_sum += len(images) * out_loss` accumulates the loss tensor itself (with
its graph) over the whole epoch, and the running average computed from it keeps every batch's
graph; change it to `out_loss.item()`.  The same function serves training and validation: the
backward runs only `if model.training`.
Re-created in my own words with the function's structure (the loss computed by a criterion with
a `_show_dice` helper, the running sums of time, loss and dice, the average computed on every
batch, the summary printing), a small segmentation model and random batches.
Nothing raises: `bug_shows()` shows the epoch's average loss still attached to a graph.
Buggy line: `loss_sum += len(images) * out_loss`.
Source: https://github.com/McGregorWwww/UDTransNet/issues/21"""
import time

import torch
import torch.nn as nn

batch_size = 2
print_frequency = 10


class WeightedDiceBCE(nn.Module):
    def __init__(self):
        super().__init__()
        self.bce = nn.BCEWithLogitsLoss()

    def _show_dice(self, inputs, targets):
        inputs = (torch.sigmoid(inputs) > 0.5).float()
        return (2 * (inputs * targets).sum() / (inputs.sum() + targets.sum() + 1e-5)).item()

    def forward(self, inputs, targets):
        probs = torch.sigmoid(inputs)
        dice = 1 - 2 * (probs * targets).sum() / (probs.sum() + targets.sum() + 1e-5)
        return 0.5 * dice + 0.5 * self.bce(inputs, targets)


def train_one_epoch(loader, model, criterion, optimizer, epoch, lr_scheduler):
    logging_mode = 'Train' if model.training else 'Val'
    end = time.time()
    time_sum, loss_sum = 0, 0
    dice_sum = 0.0
    dices = []
    for i, (sampled_batch, names) in enumerate(loader, 1):
        images, masks = sampled_batch['image'], sampled_batch['label']
        preds = model(images)
        out_loss = criterion(preds, masks.float())
        if model.training:
            optimizer.zero_grad()
            out_loss.backward()
            optimizer.step()
        train_dice = criterion._show_dice(preds, masks.float())
        batch_time = time.time() - end
        dices.append(train_dice)
        time_sum += len(images) * batch_time
        loss_sum += len(images) * out_loss  # expect: ADL023
        dice_sum += len(images) * train_dice
        if i == len(loader):
            average_loss = loss_sum / (batch_size * (i - 1) + len(images))
            train_dice_avg = dice_sum / (batch_size * (i - 1) + len(images))
        else:
            average_loss = loss_sum / (i * batch_size)
            train_dice_avg = dice_sum / (i * batch_size)
        end = time.time()
        if i % print_frequency == 0:
            print(logging_mode, epoch, i, float(average_loss), train_dice_avg)
    if lr_scheduler is not None:
        lr_scheduler.step()
    return average_loss, train_dice_avg


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loader = [({'image': torch.randn(2, 3, 8, 8), 'label': (torch.rand(2, 1, 8, 8) > 0.5)}, ['a', 'b']) for _ in range(3)]
    model.train()
    return train_one_epoch(loader, model, WeightedDiceBCE(), optimizer, 0, None)


def bug_shows():
    average_loss, _ = run()
    return average_loss.grad_fn is not None
