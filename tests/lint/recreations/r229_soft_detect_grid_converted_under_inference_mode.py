"""RDD's keypoint detector keeps its soft-argmax offset grid as a plain
attribute and converts it to the score map's device and dtype on each call:
`self.hw_grid = self.hw_grid.to(patches)`.  When the first call that needs a
conversion runs in the trainer's validation pass, under
`torch.inference_mode()` (here with bfloat16 autocast, as in training), the
converted grid is an inference tensor and stays on the module; the next
training step's soft-argmax `x_exp @ self.hw_grid` must save it for backward
and fails ("Inference tensors cannot be saved for backward").  The fix
registers the grid as a buffer (converted with the module), or converts a
local copy (`hw_grid = self.hw_grid.to(patches)`), or validates under
`torch.no_grad()`.
Buggy line: `self.hw_grid = self.hw_grid.to(patches)` in
`SoftDetect.detect_keypoints`, first run by `validate` under inference mode.
Expected finding: none of the rules covers it (a tensor made under
`inference_mode` kept on a module that later trains).
Source: https://github.com/xtcpete/rdd/issues/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SoftDetect(nn.Module):
    def __init__(self, radius=2, temperature=0.1):
        super().__init__()
        self.radius = radius
        self.kernel_size = 2 * radius + 1
        self.temperature = temperature
        self.unfold = nn.Unfold(kernel_size=self.kernel_size, padding=radius)
        x = torch.linspace(-radius, radius, self.kernel_size)
        self.hw_grid = torch.stack(torch.meshgrid([x, x], indexing='ij')).view(2, -1).t()[:, [1, 0]]

    def detect_keypoints(self, scores_map, num_points=4):
        b, c, h, w = scores_map.shape
        scores_nograd = scores_map.detach()
        indices_keypoints = torch.topk(scores_nograd.view(b, -1), num_points).indices
        patches = self.unfold(scores_map)
        self.hw_grid = self.hw_grid.to(patches)  # missed:
        keypoints = []
        for b_idx in range(b):
            patch = patches[b_idx].t()
            patch_scores = patch[indices_keypoints[b_idx]]
            max_v = patch_scores.max(dim=1).values.detach()[:, None]
            x_exp = ((patch_scores - max_v) / self.temperature).exp()
            xy_residual = x_exp @ self.hw_grid / x_exp.sum(dim=1)[:, None]
            kpts = torch.stack([indices_keypoints[b_idx] % w, indices_keypoints[b_idx] // w], dim=1) + xy_residual
            keypoints.append(kpts)
        return keypoints


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 3, padding=1))
        self.softdetect = SoftDetect()

    def forward(self, images):
        scores_map = torch.sigmoid(self.backbone(images))
        return self.softdetect.detect_keypoints(scores_map)


def keypoint_loss(keypoints, targets):
    return sum(F.mse_loss(k.float(), t) for k, t in zip(keypoints, targets))


class Trainer:
    def __init__(self, model, train_batches, val_batches):
        self.model = model
        self.train_batches = train_batches
        self.val_batches = val_batches
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def validate(self):
        self.model.eval()
        with torch.inference_mode(), torch.autocast('cpu', dtype=torch.bfloat16):
            total = sum(float(keypoint_loss(self.model(images), targets)) for images, targets in self.val_batches)
        self.model.train()
        return total

    def train(self):
        self.validate()
        for images, targets in self.train_batches:
            self.optimizer.zero_grad()
            with torch.autocast('cpu', dtype=torch.bfloat16):
                loss = keypoint_loss(self.model(images), targets)
            loss.backward()
            self.optimizer.step()


def run():
    torch.manual_seed(0)
    batch = (torch.rand(2, 1, 8, 8), [torch.rand(4, 2) * 8 for _ in range(2)])
    Trainer(Detector(), [batch], [batch]).train()
