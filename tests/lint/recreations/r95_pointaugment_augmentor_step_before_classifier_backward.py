"""PointAugment: the augmentor's loss is backpropagated with
`retain_graph=True` and the augmentor is stepped; then the classifier's loss,
built in the same iteration from `classifier(aug_pc)` where `aug_pc` is the
augmentor's output, is backpropagated, which goes back through the
augmentor's layers with their weights already updated ("modified by an
inplace operation" with current PyTorch; users asked about exactly these lines).
Source: https://github.com/liruihui/PointAugment/issues/8"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Augmentor(nn.Module):
    def __init__(self, dim=3, noise_dim=8):
        super().__init__()
        self.conv1 = nn.Conv1d(dim, 16, 1)
        self.rot = nn.Linear(16 + noise_dim, dim * dim)
        self.shift = nn.Conv1d(16 + noise_dim, dim, 1)

    def forward(self, pt, noise):
        feat = F.relu(self.conv1(pt))
        pooled = feat.max(dim=2)[0]
        rotation = self.rot(torch.cat([pooled, noise], dim=1)).view(-1, 3, 3)
        rotation = rotation + torch.eye(3)
        displacement = self.shift(torch.cat([feat, noise.unsqueeze(2).expand(-1, -1, pt.size(2))], dim=1))
        return torch.bmm(rotation, pt) + displacement


class PointNetCls(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.conv1 = nn.Conv1d(3, 16, 1)
        self.conv2 = nn.Conv1d(16, 32, 1)
        self.fc = nn.Linear(32, k)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        feat = F.relu(self.conv2(x)).max(dim=2)[0]
        return F.log_softmax(self.fc(feat), dim=1), None, feat


def aug_loss(pred_pc, pred_aug, target, pc_tran, aug_tran, ispn=True):
    cls_pc = F.nll_loss(pred_pc, target)
    cls_aug = F.nll_loss(pred_aug, target)
    return torch.abs(1.0 - torch.exp(cls_aug - 1.0 * cls_pc)).mean()


def cls_loss(pred_pc, pred_aug, target, pc_tran, aug_tran, pc_feat, aug_feat, ispn=True):
    cls_pc = F.nll_loss(pred_pc, target)
    cls_aug = F.nll_loss(pred_aug, target)
    feat_diff = 10.0 * F.mse_loss(pc_feat, aug_feat)
    return cls_pc + cls_aug + feat_diff


class Model:
    def __init__(self, learning_rate=1e-3, learning_rate_a=1e-3):
        self.classifier = PointNetCls()
        self.augmentor = Augmentor()
        self.optimizer_c = torch.optim.Adam(self.classifier.parameters(), lr=learning_rate)
        self.optimizer_a = torch.optim.Adam(self.augmentor.parameters(), lr=learning_rate_a)

    def train(self, loader, batch_size=4):
        classifier, augmentor = self.classifier, self.augmentor
        optimizer_c, optimizer_a = self.optimizer_c, self.optimizer_a
        for points, target in loader:
            points = points.transpose(2, 1).contiguous()
            noise = 0.02 * torch.randn(batch_size, 8)

            classifier = classifier.train()
            augmentor = augmentor.train()
            optimizer_a.zero_grad()
            aug_pc = augmentor(points, noise)

            pred_pc, pc_tran, pc_feat = classifier(points)
            pred_aug, aug_tran, aug_feat = classifier(aug_pc)
            augLoss = aug_loss(pred_pc, pred_aug, target, pc_tran, aug_tran)

            augLoss.backward(retain_graph=True)
            optimizer_a.step()  # expect: ADL003

            optimizer_c.zero_grad()
            clsLoss = cls_loss(pred_pc, pred_aug, target, pc_tran, aug_tran, pc_feat, aug_feat)
            clsLoss.backward(retain_graph=True)
            optimizer_c.step()


def run():
    torch.manual_seed(0)
    loader = [(torch.randn(4, 32, 3), torch.randint(0, 4, (4,))) for _ in range(2)]
    Model().train(loader)
