"""HAMIL (hybrid attention multiple instance learning), `train_cls.py`: `train_deep` averages the
three deep-supervision losses of each batch and adds the result into `loss_epoch += loss` -- the
tensor itself, with its graph -- for the whole epoch, only calling `.item()` when printing at the
end: every batch's graph stays reachable from `loss_epoch` until the epoch ends.
Re-created in my own words with the script's structure: a network returning three logits (side
classifiers on two depths and a final head), the multi-label soft-margin losses averaged, the
per-class accuracy kept with numpy, and the epoch loop.
Nothing raises: `bug_shows()` shows the epoch's running loss still attached to a graph.
Buggy line: `loss_epoch += loss`.
Source: https://github.com/HiLab-git/HAMIL/blob/02fdf162a29508096aea6dc01354b2e868648f19/train_cls.py"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepSupervisedNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.stage4 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.stage5 = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier_b4 = nn.Conv2d(8, num_classes, 1)
        self.classifier_b5 = nn.Conv2d(8, num_classes, 1)
        self.extra_convs = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, num_classes, 1))

    def forward(self, x):
        x = self.stage4(x)
        logit_b4 = self.classifier_b4(x).mean(dim=(2, 3))
        x = self.stage5(x)
        logit_b5 = self.classifier_b5(x).mean(dim=(2, 3))
        logit_b6 = self.extra_convs(x).mean(dim=(2, 3))
        return logit_b6, logit_b5, logit_b4


def train_deep(model, optimizer, train_dataloader):
    model.train()
    loss_epoch = 0
    cls_acc = 0
    count = 0
    for img, label, _ in train_dataloader:
        logit_b6, logit_b5, logit_b4 = model(img)
        loss1 = F.multilabel_soft_margin_loss(logit_b6, label)
        loss2 = F.multilabel_soft_margin_loss(logit_b5, label)
        loss3 = F.multilabel_soft_margin_loss(logit_b4, label)
        loss = (loss1 + loss2 + loss3) / 3

        loss_epoch += loss  # expect: ADL023
        label_cpu = label.cpu().detach().numpy()
        logit_cpu = logit_b6.cpu().detach().numpy() > 0
        cls_acc += np.sum(label_cpu == logit_cpu, axis=0)
        count += label_cpu.shape[0]

        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"train loss:{loss_epoch.item()/len(train_dataloader)}")
    return sum(cls_acc) / count / 3, loss_epoch


def run():
    torch.manual_seed(0)
    model = DeepSupervisedNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loader = [(torch.randn(2, 3, 16, 16), (torch.rand(2, 3) > 0.5).float(), None) for _ in range(3)]
    return train_deep(model, optimizer, loader)


def bug_shows():
    _, loss_epoch = run()
    return loss_epoch.grad_fn is not None
