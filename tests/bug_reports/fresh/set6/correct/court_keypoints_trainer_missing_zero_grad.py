"""Tennis-court keypoint detection from broadcast video frames: a heatmap network trained by a base
trainer whose loop calls `backward()` and `step()` but never `optimizer.zero_grad()`, so every
step applies the sum of all gradients so far (no error).
Source: https://github.com/yastrebksv/TennisCourtDetector/issues/7 ("Why there is no
optimizer.zero_grad() in base_trainer.py? There must be smt wrong"; maintainer: "You are right,
thanks! I fixed it.").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_KEYPOINTS = 4


class HeatmapNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                  nn.Conv2d(16, N_KEYPOINTS, 3, padding=1))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


def gaussian_heatmaps(points, size=16, sigma=1.5):
    ys, xs = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    return torch.exp(-((xs[None, None] - points[..., 0, None, None]) ** 2
                       + (ys[None, None] - points[..., 1, None, None]) ** 2) / (2 * sigma ** 2))


def train(model, loader, optimizer):
    model.train()
    losses = []
    for frames, heatmaps in loader:
        out = model(frames)
        loss = F.mse_loss(out, heatmaps)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    return losses


loader = [(torch.rand(2, 3, 16, 16), gaussian_heatmaps(torch.randint(0, 16, (2, N_KEYPOINTS, 2)).float()))
          for _ in range(4)]
model = HeatmapNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = train(model, loader, optimizer)
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
