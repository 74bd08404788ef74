"""Per-sample input Jacobians of a convolutional feature extractor (sensitivity analysis at
inference): `vmap(jacrev(layers))(x)` calls the network on one sample at a time without its batch
dimension, and BatchNorm2d rejects a 3D input.
Source: https://github.com/pytorch/functorch/issues/867 ("Why is using vmap(jacrev) for BatchNorm2d
in non-tracking mode not working?": "ValueError: expected 4D input (got 3D input)"; inside vmap the
function sees one sample, so it must add the batch dimension itself).
expect: raises"""
import torch
import torch.nn as nn
from torch.func import jacrev, vmap

torch.manual_seed(0)
layers = nn.Sequential(
    nn.Conv2d(3, 3, kernel_size=3),
    nn.BatchNorm2d(3, track_running_stats=False),
)
x = torch.randn(4, 3, 6, 6)

jacobians = vmap(jacrev(lambda sample: layers(sample[None])[0]))(x)
sensitivity = jacobians.abs().sum(dim=(1, 2, 3))
result = {"jacobians": jacobians, "sensitivity": sensitivity}
