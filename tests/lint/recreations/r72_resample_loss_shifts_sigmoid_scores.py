"""Distribution-Balanced loss: `logit_reg_functions` shifts the class scores
it is given in place (`logits += self.neg_bias`).  With a head whose scores
come out of a sigmoid, the write lands on the sigmoid's output, which its
backward needs ("output 0 of SigmoidBackward0, is at version 1").
Source: https://github.com/wutong16/DistributionBalancedLoss/issues/20"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ResampleLoss(nn.Module):
    def __init__(self, class_freq, neg_class_freq, logit_reg=dict(neg_scale=5.0, neg_bias=0.1),
                 focal=dict(focal=True, balance_param=2.0, gamma=2), loss_weight=1.0):
        super().__init__()
        self.loss_weight = loss_weight
        self.focal = focal["focal"]
        self.gamma = focal["gamma"]
        self.balance_param = focal["balance_param"]
        self.class_freq = class_freq
        self.neg_class_freq = neg_class_freq
        self.train_num = self.class_freq[0] + self.neg_class_freq[0]
        self.logit_reg = logit_reg
        self.neg_scale = logit_reg["neg_scale"] if "neg_scale" in logit_reg else 1.0
        neg_bias = logit_reg["neg_bias"] if "neg_bias" in logit_reg else 0.0
        self.neg_bias = -torch.log(self.train_num / self.class_freq - 1) * neg_bias / self.neg_scale

    def forward(self, cls_score, label):
        weight = torch.ones_like(cls_score)
        cls_score, weight = self.logit_reg_functions(label.float(), cls_score, weight)
        if self.focal:
            logpt = -F.binary_cross_entropy_with_logits(cls_score.clone(), label, reduction="none")
            pt = torch.exp(logpt)
            loss = F.binary_cross_entropy_with_logits(cls_score, label.float(), weight=weight, reduction="none")
            loss = ((1 - pt) ** self.gamma) * loss
            loss = self.balance_param * loss
        else:
            loss = F.binary_cross_entropy_with_logits(cls_score, label.float(), weight=weight)
        return self.loss_weight * loss.mean()

    def logit_reg_functions(self, labels, logits, weight=None):
        if not self.logit_reg:
            return logits, weight
        if "neg_bias" in self.logit_reg:
            logits += self.neg_bias  # reported at the call of `criterion`
        if "neg_scale" in self.logit_reg:
            logits = logits * (1 - labels) * self.neg_scale + logits * labels
            weight = weight / self.neg_scale * (1 - labels) + weight * labels
        return logits, weight


class MultiLabelHead(nn.Module):
    def __init__(self, in_features, num_classes):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_features, 16), nn.ReLU())
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        return torch.sigmoid(self.fc(self.backbone(x)))


def run():
    torch.manual_seed(0)
    model = MultiLabelHead(6, 4)
    criterion = ResampleLoss(torch.tensor([10.0, 20.0, 5.0, 40.0]), torch.tensor([90.0, 80.0, 95.0, 60.0]))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, labels = torch.randn(8, 6), torch.randint(0, 2, (8, 4)).float()
    loss = criterion(model(x), labels)  # expect: ADL001
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
