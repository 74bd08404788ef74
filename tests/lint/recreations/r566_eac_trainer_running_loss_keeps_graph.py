"""Erasing Attention Consistency (facial expression recognition under noisy
labels): an issue reports a memory leak in `train()` of `src/main.py`; the
epoch's statistics are accumulated from tensors that still carry the graph
(`running_loss += loss`, `correct_sum += correct_num`), and printing them
shows `<add_backward>`.  The reporter fixed it with `.detach()`.  Re-created
as the same trainer shape: a ResNet-like model returning logits and an
attention map, the flip-consistency loss of two views, the optimizer and the
scheduler, and the per-epoch accumulators returned to `main()`.  Nothing
raises; the epoch's `running_loss` keeps every iteration's graph alive.
Buggy line: `running_loss += loss` (a loss tensor summed with its graph).
Source: https://github.com/zyh-uaiaaaa/Erasing-Attention-Consistency/issues/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes=7):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        feature = self.features(x)
        output = self.fc(feature.mean(dim=(2, 3)))
        hm = torch.einsum("bchw,kc->bkhw", feature, self.fc.weight)
        return output, hm


def ac_loss(hm1, hm2):
    return F.mse_loss(hm1, hm2.flip(3))


def train(lam, model, train_loader, optimizer, scheduler):
    running_loss = 0.0
    iter_cnt = 0
    correct_sum = 0
    model.train()
    for imgs1, labels, imgs2 in train_loader:
        output, hm1 = model(imgs1)
        output_flip, hm2 = model(imgs2)
        loss1 = nn.CrossEntropyLoss()(output, labels)
        flip_loss_l = ac_loss(hm1, hm2)
        loss = loss1 + lam * flip_loss_l

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        iter_cnt += 1
        _, predicts = torch.max(output, 1)
        correct_num = torch.eq(predicts, labels).sum()
        correct_sum += correct_num
        running_loss += loss  # expect: ADL023

    scheduler.step()
    running_loss = running_loss / iter_cnt
    acc = correct_sum.float() / float(iter_cnt * labels.size(0))
    return acc, running_loss


def bug_shows():
    """The epoch loss returned to main() still holds the graph of every iteration."""
    torch.manual_seed(0)
    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.9)
    loader = []
    for _ in range(3):
        imgs = torch.randn(4, 3, 8, 8)
        loader.append((imgs, torch.randint(0, 7, (4,)), imgs.flip(3)))
    _, running_loss = train(5.0, model, loader, optimizer, scheduler)
    return running_loss.requires_grad and running_loss.grad_fn is not None
