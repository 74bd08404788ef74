"""FCGF's trainer validates every few epochs in `_valid_epoch`: the model is
put in eval mode and each validation pair is run through it to compute
features and the feature-match ratio, but nothing runs under
`torch.no_grad()`, so every validation batch builds a full autograd graph
(the reporter: "when performing the validation you can wrap the code in
with torch.no_grad() ... It helps reduce the memory consumption and makes
the validation faster"; the author agreed to update it).  Nothing raises.
Buggy line: `F0 = self.model(xyz0)` in `ContrastiveLossTrainer._valid_epoch`.
Source: https://github.com/chrischoy/FCGF/issues/15"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0.0, 0, 0.0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class FeatureNet(nn.Module):
    def __init__(self, in_dim=3, out_dim=8):
        super().__init__()
        self.block = nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, out_dim))

    def forward(self, x):
        return F.normalize(self.block(x), dim=1)


class AlignmentTrainer:
    def __init__(self, config, data_loader, val_data_loader=None):
        torch.manual_seed(0)
        self.config = config
        self.model = FeatureNet()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=config["lr"], momentum=0.8)
        self.data_loader = data_loader
        self.val_data_loader = val_data_loader
        self.last_features = None

    def train(self):
        for epoch in range(1, self.config["max_epoch"] + 1):
            self._train_epoch(epoch)
            if self.val_data_loader is not None and epoch % self.config["val_epoch_freq"] == 0:
                self._valid_epoch()


class ContrastiveLossTrainer(AlignmentTrainer):
    def contrastive_hardest_negative_loss(self, F0, F1, pos_margin=0.1, neg_margin=1.4):
        pos = (F0 - F1).pow(2).sum(1)
        dist = torch.cdist(F0, F1)
        neg = dist + torch.eye(len(F0)) * 1e3
        return F.relu(pos - pos_margin).mean() + F.relu(neg_margin - neg.min(1).values).pow(2).mean()

    def _train_epoch(self, epoch):
        self.model.train()
        for xyz0, xyz1 in self.data_loader:
            self.optimizer.zero_grad()
            F0 = self.model(xyz0)
            F1 = self.model(xyz1)
            loss = self.contrastive_hardest_negative_loss(F0, F1)
            loss.backward()
            self.optimizer.step()

    def _valid_epoch(self):
        self.model.eval()
        hit_ratio_meter = AverageMeter()
        loss_meter = AverageMeter()
        for xyz0, xyz1 in self.val_data_loader:
            F0 = self.model(xyz0)  # expect: ADL031
            F1 = self.model(xyz1)
            nn_idx = torch.cdist(F0, F1).argmin(1)
            hit_ratio = (nn_idx == torch.arange(len(F0))).float().mean()
            hit_ratio_meter.update(hit_ratio.item())
            loss_meter.update(self.contrastive_hardest_negative_loss(F0, F1).item())
            self.last_features = F0
        self.model.train()
        return {"loss": loss_meter.avg, "feat_match_ratio": hit_ratio_meter.avg}


def bug_shows():
    """The validation features carry a graph: each validation batch keeps its activations for no backward."""
    pairs = [(torch.randn(6, 3), torch.randn(6, 3)) for _ in range(2)]
    trainer = ContrastiveLossTrainer({"lr": 0.01, "max_epoch": 1, "val_epoch_freq": 1}, pairs, pairs)
    trainer.train()
    return trainer.last_features.grad_fn is not None
