"""A saliency script makes the input image a leaf that requires grad, cuts it
into tiles and passes each tile through the network separately.  Each tile
is a slice (a view) of the leaf, and the tile is rescaled in place before
the forward pass, `tile *= scale`: writing into a view of a leaf that
requires grad raises ("a view of a leaf Variable that requires grad is
being used in an in-place operation"; older versions failed later, in
backward, with "leaf variable has been moved into the graph interior").
The fix rescales out of place: `tile = tile * scale`.
Buggy line: `tile *= scale` in `tile_saliency`.
Expected finding: ADL014 there.
Source: https://github.com/pytorch/pytorch/issues/39150"""
import torch
import torch.nn as nn


def iter_tiles(image, size):
    _, _, h, w = image.shape
    for top in range(0, h, size):
        for left in range(0, w, size):
            yield image[:, :, top:top + size, left:left + size]


def tile_saliency(model, image, size=4, scale=10.0):
    image = image.clone().requires_grad_(True)
    total = 0
    for tile in iter_tiles(image, size):
        tile *= scale  # missed: ADL014
        total = total + model(tile).max(dim=1).values.sum()
    total.backward()
    return image.grad.abs()


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 5))
    tile_saliency(model, torch.rand(1, 3, 8, 8))
