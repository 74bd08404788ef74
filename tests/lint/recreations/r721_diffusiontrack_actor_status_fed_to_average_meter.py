"""DiffusionTrack (diffusion-based visual tracking), issue 2: memory kept growing during training
until the process was killed ("训练时内存占用一直增加").  The answer in the thread: the losses are
logged without `.item()` -- `DiffusionTrackActor.compute_losses` returns `status =
loss_dict.copy()`, the per-term losses with their graphs, and `LTRTrainer._update_stats` feeds
every entry to an `AverageMeter`, whose `update` does `self.sum += val * n`: every batch's graph
is chained into the meters for the whole run.
Re-created in my own words with the repository's structure: a network whose `forward` dispatches
on `mode` ('encoder', 'prepare_target', 'decoder', 'compute_loss'), an actor with `forward_pass`
and `compute_losses` returning `(loss, status)`, meters kept per loader in an `OrderedDict`, and
the trainer's `cycle_dataset` loop.
Nothing raises: `bug_shows()` shows a meter's running sum still attached to a graph.
Buggy line: `self.stats[loader.name][name].update(val, batch_size)` with `val` from the actor.
Source: https://github.com/VISION-SJTU/DiffusionTrack/issues/2"""
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class DiffusionTracker(nn.Module):
    def __init__(self, dim=8, num_boxes=4):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.box_head = nn.Linear(dim + 4 + 1, 4)
        self.num_boxes = num_boxes

    def forward(self, mode, images_list=None, targets=None, xz=None, boxes=None, t=None,
                outputs=None, new_targets=None):
        if mode == 'encoder':
            return torch.cat([self.backbone(im).flatten(1) for im in images_list], dim=0).mean(0, keepdim=True)
        if mode == 'prepare_target':
            ts = torch.rand(targets.shape[0], self.num_boxes, 1)
            noises = torch.randn(targets.shape[0], self.num_boxes, 4)
            diffused = targets[:, None, :] + ts * noises
            return targets, diffused, noises, ts
        if mode == 'decoder':
            feat = xz.expand(boxes.shape[0], boxes.shape[1], -1)
            return torch.sigmoid(self.box_head(torch.cat([feat, boxes, t], dim=-1)))
        if mode == 'compute_loss':
            pred = outputs.mean(1)
            loss_dict = {'loss_bbox': F.l1_loss(pred, new_targets),
                         'loss_giou': (1 - torch.cosine_similarity(pred, new_targets, dim=-1)).mean()}
            weight_dict = {'loss_bbox': 5.0, 'loss_giou': 2.0}
            return loss_dict, weight_dict
        raise ValueError(mode)


class DiffusionTrackActor:
    def __init__(self, net):
        self.net = net

    def __call__(self, data):
        outputs, new_targets = self.forward_pass(data)
        loss, status = self.compute_losses(outputs, new_targets)
        return loss, status

    def train(self, mode=True):
        self.net.train(mode)

    def forward_pass(self, data):
        n, b = data['search_images'].shape[:2]
        search_list = data['search_images'].view(-1, *data['search_images'].shape[2:]).split(b, dim=0)
        template_list = data['template_images'].view(-1, *data['template_images'].shape[2:]).split(b, dim=0)
        feature_xz = self.net(images_list=template_list + search_list, mode='encoder')
        targets = data['search_anno'].permute(1, 0, 2).reshape(-1, data['search_anno'].shape[2])
        new_targets, diffused_boxes, noises, ts = self.net(targets=targets, mode='prepare_target')
        outputs = self.net(xz=feature_xz, boxes=diffused_boxes, t=ts, mode='decoder')
        return outputs, new_targets

    def compute_losses(self, outputs, new_targets, return_status=True):
        loss_dict, weight_dict = self.net(outputs=outputs, new_targets=new_targets, mode='compute_loss')
        new_loss_dict = {}
        for k in loss_dict.keys():
            if k in weight_dict:
                new_loss_dict[k] = loss_dict[k] * weight_dict[k]
        losses = sum(new_loss_dict.values())
        status = loss_dict.copy()
        status['total_loss'] = losses.clone().detach().item()
        if return_status:
            return losses, status
        return losses


class LTRLoader(list):
    def __init__(self, name, batches, training=True):
        super().__init__(batches)
        self.name = name
        self.training = training
        self.epoch_interval = 1
        self.stack_dim = 1


class LTRTrainer:
    def __init__(self, actor, loaders, optimizer):
        self.actor = actor
        self.loaders = loaders
        self.optimizer = optimizer
        self.stats = OrderedDict({loader.name: None for loader in self.loaders})
        self.epoch = 0

    def cycle_dataset(self, loader):
        self.actor.train(loader.training)
        torch.set_grad_enabled(loader.training)
        for i, data in enumerate(loader, 1):
            loss, stats = self.actor(data)
            if loader.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            batch_size = data['template_images'].shape[loader.stack_dim]
            self._update_stats(stats, batch_size, loader)
        torch.set_grad_enabled(True)

    def train_epoch(self):
        for loader in self.loaders:
            if self.epoch % loader.epoch_interval == 0:
                self.cycle_dataset(loader)

    def _update_stats(self, new_stats, batch_size, loader):
        if loader.name not in self.stats.keys() or self.stats[loader.name] is None:
            self.stats[loader.name] = OrderedDict({name: AverageMeter() for name in new_stats.keys()})
        for name, val in new_stats.items():
            if name not in self.stats[loader.name].keys():
                self.stats[loader.name][name] = AverageMeter()
            self.stats[loader.name][name].update(val, batch_size)  # missed: ADL023, loss tensors reach a meter's in-place sum through a dict returned by another class's method (`status = loss_dict.copy()` from the actor's `compute_losses`) and iterated with `.items()` in the trainer


def make_batch(b=2):
    return {'template_images': torch.randn(1, b, 3, 8, 8), 'search_images': torch.randn(1, b, 3, 8, 8),
            'search_anno': torch.rand(1, b, 4)}


def run():
    torch.manual_seed(0)
    net = DiffusionTracker()
    actor = DiffusionTrackActor(net)
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-4)
    trainer = LTRTrainer(actor, [LTRLoader('train', [make_batch() for _ in range(3)])], optimizer)
    trainer.train_epoch()
    return trainer


def bug_shows():
    trainer = run()
    return trainer.stats['train']['loss_giou'].sum.grad_fn is not None
