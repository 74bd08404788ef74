"""bubbliiiing/yolo3-pytorch's `fit_one_epoch` adds each batch's loss tensor
to the epoch totals: "train.py中 total_loss += loss 和val_loss += loss，这种写法是
pytorch 0.4之前的写法，0.4之后要改为 += loss.item()" -- the totals keep every
training batch's graph (and, since validation runs the model with gradients
on in this version, every validation batch's too); with a small batch size
the GPU runs out of memory.  Nothing raises here.
Buggy line: `total_loss += loss` in `fit_one_epoch`.
Source: https://github.com/bubbliiiing/yolo3-pytorch/issues/3"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class YoloBody(nn.Module):
    def __init__(self, d=6, out=5):
        super().__init__()
        self.backbone = nn.Linear(d, 8)
        self.head = nn.Linear(8, out)

    def forward(self, x):
        return self.head(F.leaky_relu(self.backbone(x), 0.1))


class YOLOLoss(nn.Module):
    def forward(self, output, targets):
        return F.mse_loss(output, targets)


def fit_one_epoch(net, yolo_loss, epoch, epoch_size, epoch_size_val, gen, genval, Epoch, optimizer, history=None):
    total_loss = 0
    val_loss = 0
    net.train()
    for iteration, batch in enumerate(gen):
        if iteration >= epoch_size:
            break
        images, targets = batch[0], batch[1]
        optimizer.zero_grad()
        outputs = net(images)
        loss = yolo_loss(outputs, targets)
        loss.backward()
        optimizer.step()
        total_loss += loss  # expect: ADL023
    net.eval()
    for iteration, batch in enumerate(genval):
        if iteration >= epoch_size_val:
            break
        images_val, targets_val = batch[0], batch[1]
        optimizer.zero_grad()
        outputs = net(images_val)
        loss = yolo_loss(outputs, targets_val)
        val_loss += loss
    if history is not None:
        history.append((total_loss / (epoch_size + 1), val_loss / (epoch_size_val + 1)))
    print("Epoch:" + str(epoch + 1) + "/" + str(Epoch))


def bug_shows():
    """Both epoch totals hold graphs."""
    torch.manual_seed(0)
    gen = [(torch.randn(2, 6), torch.randn(2, 5)) for _ in range(2)]
    net = YoloBody()
    history = []
    fit_one_epoch(net, YOLOLoss(), 0, 2, 2, gen, gen, 1, torch.optim.Adam(net.parameters(), 1e-3), history=history)
    return history[0][0].grad_fn is not None and history[0][1].grad_fn is not None
