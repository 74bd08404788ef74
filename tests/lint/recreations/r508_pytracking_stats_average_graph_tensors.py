"""pytracking's `LTRTrainer.cycle_dataset` runs the actor on each batch,
steps on the loss when the loader is a training loader, and then feeds the
actor's statistics to `_update_stats`, which adds each value into an
`AverageMeter`.  Some actors put the loss tensors themselves in their stats:
"The method `_update_stats()` is called with `val`, which is a `Tensor` with
gradients.  When use with `AverageMeter`, the gradient graph will be
accumulated during training and won't be released ... causing significant
memory leak".  Nothing raises.
Buggy line: `self.stats[loader.name][name].update(val, batch_size)` in `LTRTrainer._update_stats`.
Source: https://github.com/visionml/pytracking/pull/313"""
from collections import OrderedDict

import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class Loader:
    def __init__(self, name, batches, training=True):
        self.name, self.batches, self.training = name, batches, training

    def __iter__(self):
        return iter(self.batches)


class DiMPActor:
    def __init__(self, net, objective, loss_weight):
        self.net, self.objective, self.loss_weight = net, objective, loss_weight

    def __call__(self, data):
        target_scores, iou_pred = self.net(data["train_images"])
        loss_target_classifier = self.objective["test_clf"](target_scores, data["test_label"])
        loss_iou = self.objective["iou"](iou_pred, data["test_proposals_iou"])
        loss = self.loss_weight["test_clf"] * loss_target_classifier + self.loss_weight["iou"] * loss_iou
        stats = {"Loss/total": loss.item(), "Loss/iou": loss_iou.item(), "ClfTrain/test_loss": loss_target_classifier}
        return loss, stats


class LTRTrainer:
    def __init__(self, actor, loaders, optimizer):
        self.actor, self.loaders, self.optimizer = actor, loaders, optimizer
        self.stats = OrderedDict({loader.name: None for loader in self.loaders})

    def cycle_dataset(self, loader):
        self.actor.net.train(loader.training)
        torch.set_grad_enabled(loader.training)
        for i, data in enumerate(loader, 1):
            loss, stats = self.actor(data)
            if loader.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            batch_size = data["train_images"].shape[0]
            self._update_stats(stats, batch_size, loader)
        torch.set_grad_enabled(True)

    def _update_stats(self, new_stats: OrderedDict, batch_size, loader):
        if loader.name not in self.stats.keys() or self.stats[loader.name] is None:
            self.stats[loader.name] = OrderedDict({name: AverageMeter() for name in new_stats.keys()})
        for name, val in new_stats.items():
            if name not in self.stats[loader.name].keys():
                self.stats[loader.name][name] = AverageMeter()
            self.stats[loader.name][name].update(val, batch_size)  # missed: ADL028

    def train_epoch(self):
        for loader in self.loaders:
            self.cycle_dataset(loader)


class TrackNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.classifier = nn.Linear(8, 1)
        self.bb_regressor = nn.Linear(8, 1)

    def forward(self, x):
        f = self.backbone(x)
        return self.classifier(f).squeeze(1), self.bb_regressor(f).squeeze(1)


def bug_shows():
    """The training loader's running sum of the classifier loss holds the graphs of every batch."""
    torch.manual_seed(0)
    net = TrackNet()
    actor = DiMPActor(net, {"test_clf": nn.MSELoss(), "iou": nn.MSELoss()}, {"test_clf": 1.0, "iou": 1.0})
    batches = [{"train_images": torch.randn(3, 6), "test_label": torch.randn(3), "test_proposals_iou": torch.rand(3)}
               for _ in range(2)]
    trainer = LTRTrainer(actor, [Loader("train", batches)], torch.optim.SGD(net.parameters(), lr=0.01))
    trainer.train_epoch()
    meter = trainer.stats["train"]["ClfTrain/test_loss"]
    return torch.is_tensor(meter.sum) and meter.sum.grad_fn is not None
