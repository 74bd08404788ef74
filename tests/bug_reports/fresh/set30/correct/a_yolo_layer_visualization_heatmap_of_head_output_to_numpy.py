"""Yolo-Detect-Layer-Visualization: the notebook runs a YOLO model on a letterboxed image and draws,
for each detect head, a heatmap of the class confidence over its grid with
`plot_multi_heatmap(*arrays)`, which converts each tensor with `array = array.cpu().numpy()` before
handing it to `sns.heatmap`. The forward pass runs with gradients on (the model's parameters
require grad), so the head outputs are part of a graph and the conversion fails with "Can't call
numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead." The maintainer's fix:
`array = array.detach().cpu().numpy()`. (Drawing is replaced here by collecting the normalised
grids that would be drawn.)
Source: https://github.com/XiaMooo/Yolo-Detect-Layer-Visualization/issues/1
expect: raises"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyYolo(nn.Module):
    """A backbone with three strides and a detect head per stride (3 anchors, 5 + nc outputs)."""

    def __init__(self, nc=4, na=3):
        super().__init__()
        self.nc, self.na = nc, na
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU())
        self.stages = nn.ModuleList([nn.Sequential(nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU()) for _ in range(3)])
        self.detect = nn.ModuleList([nn.Conv2d(8, na * (5 + nc), 1) for _ in range(3)])

    def forward(self, x):
        x = self.stem(x)
        outputs = []
        for stage, head in zip(self.stages, self.detect):
            x = stage(x)
            bs, _, ny, nx = x.shape
            outputs.append(head(x).view(bs, self.na, 5 + self.nc, ny, nx).permute(0, 1, 3, 4, 2))
        return outputs


def letterbox(img, new_shape=64):
    h, w = img.shape[-2:]
    r = new_shape / max(h, w)
    resized = torch.nn.functional.interpolate(img, size=(int(h * r), int(w * r)), mode='bilinear')
    pad_h, pad_w = new_shape - resized.shape[-2], new_shape - resized.shape[-1]
    return torch.nn.functional.pad(resized, (pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2), value=0.5)


def plot_multi_heatmap(*arrays, row=None, col=None):
    col = col or len(arrays)
    row = row or (len(arrays) + col - 1) // col
    canvases = []
    for i, array in enumerate(arrays):
        if isinstance(array, torch.Tensor):
            array = array.detach().cpu().numpy()
        r = i // col
        c = i % col
        span = array.max() - array.min()
        canvases.append(((r, c), (array - array.min()) / (span if span > 0 else 1.0)))
    return canvases


model = TinyYolo()
model.eval()
img = torch.rand(1, 3, 48, 64)
outputs = model(letterbox(img))
heatmaps = []
for out in outputs:
    obj = out[0, ..., 4].sigmoid()
    cls = out[0, ..., 5:].sigmoid().max(-1).values
    heatmaps.append((obj * cls).max(0).values)
canvases = plot_multi_heatmap(*heatmaps, row=1, col=3)
result = [torch.from_numpy(np.ascontiguousarray(grid)) for _, grid in canvases]
