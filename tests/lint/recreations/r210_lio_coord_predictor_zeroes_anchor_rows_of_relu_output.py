"""LIO (look-into-object) adds a self-supervised relative-coordinate head to
a classifier: `RelativeCoordPredictor` predicts, for every position of the
feature map, its polar coordinates relative to the most discriminative
position, with `nn.Sequential(nn.Linear(2 * C, 2), nn.ReLU())`.  It then
zeroes the prediction at the anchor position in place,
`preds_coord[basic_index, reduced_x_max_index, :] = 0.`, on a view of the
ReLU's output, which `ReLU` keeps for its backward: training fails at
`loss.backward()` ("one of the variables needed for gradient computation has
been modified by an inplace operation").  The fix masks out of place
(`preds_coord = preds_coord * keep`).
Buggy line: `preds_coord[basic_index, reduced_x_max_index, :] = 0.` in
`RelativeCoordPredictor.forward`.
Expected finding: ADL001 there.
Source: https://github.com/JDAI-CV/LIO/issues/9"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class RelativeCoordPredictor(nn.Module):
    def __init__(self, in_dim, size=3):
        super().__init__()
        self.in_dim = in_dim
        self.size = size
        self.predictor = nn.Sequential(
            nn.Linear(2 * in_dim, 2),
            nn.ReLU(),
        )
        self.basic_label = torch.from_numpy(self.build_basic_label(size)).float()
        self.dist_loss_f = nn.MSELoss(reduction='none')

    def forward(self, x, mask):
        N, C, H, W = x.shape
        reduced_x = x.view(N, C, H * W).transpose(1, 2).contiguous()

        mask = mask.view(N, H * W)
        thresholds = torch.mean(mask, dim=1, keepdim=True)
        binary_mask = (mask > thresholds).float().view(N, H, W)

        masked_x = x * binary_mask.view(N, 1, H, W)
        masked_x = masked_x.view(N, C, H * W).transpose(1, 2).contiguous()
        _, reduced_x_max_index = torch.max(torch.mean(masked_x, dim=-1), dim=-1)

        basic_index = torch.from_numpy(np.array([i for i in range(N)]))
        max_features = reduced_x[basic_index, reduced_x_max_index, :]
        max_features_to_concat = max_features.unsqueeze(1).expand((N, H * W, C))

        discriminative_feature = torch.cat((max_features_to_concat, reduced_x), dim=-1)
        discriminative_feature = discriminative_feature.view(N * H * W, 2 * C)
        preds_coord = self.predictor(discriminative_feature)
        preds_coord = preds_coord.view(N, H * W, 2)
        preds_coord[basic_index, reduced_x_max_index, :] = 0.  # expect: ADL001
        preds_coord = preds_coord.view(N, H, W, 2)

        label = self.basic_label.unsqueeze(0).expand((N, H, W, 2)).reshape(N, H * W, 2)
        basic_anchor = label[basic_index, reduced_x_max_index, :].unsqueeze(1)
        relative_coord = (label - basic_anchor) / self.size
        relative_dist = torch.sqrt(torch.sum(relative_coord ** 2, dim=-1))
        relative_angle = torch.atan2(relative_coord[:, :, 1], relative_coord[:, :, 0])
        relative_angle = (relative_angle / np.pi + 1) / 2

        preds_dist, preds_angle = preds_coord[:, :, :, 0], preds_coord[:, :, :, 1]
        dist_loss = self.dist_loss_f(preds_dist.reshape(N, H, W), relative_dist.view(N, H, W))
        gap_angle = preds_angle.reshape(N, H * W) - relative_angle
        gap_angle = gap_angle - torch.mean(gap_angle, dim=-1, keepdim=True)
        angle_loss = torch.pow(gap_angle.view(N, H, W), 2)
        return dist_loss + angle_loss

    def build_basic_label(self, size):
        return np.array([[(i, j) for j in range(size)] for i in range(size)])


class LIOClassifier(nn.Module):
    def __init__(self, num_classes=4, channels=6, size=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(size))
        self.mask_head = nn.Conv2d(channels, 1, 1)
        self.coord_predictor = RelativeCoordPredictor(channels, size)
        self.classifier = nn.Linear(channels, num_classes)

    def forward(self, images):
        feature = self.backbone(images)
        mask = torch.sigmoid(self.mask_head(feature))
        coord_loss = self.coord_predictor(feature, mask)
        logits = self.classifier(feature.mean(dim=(2, 3)))
        return logits, coord_loss.mean()


def train(model, loader, epochs=1):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    for epoch in range(epochs):
        for images, labels in loader:
            optimizer.zero_grad()
            logits, coord_loss = model(images)
            loss = F.cross_entropy(logits, labels) + coord_loss
            loss.backward()
            optimizer.step()


def run():
    torch.manual_seed(0)
    train(LIOClassifier(), [(torch.randn(2, 3, 6, 6), torch.tensor([0, 3]))])
