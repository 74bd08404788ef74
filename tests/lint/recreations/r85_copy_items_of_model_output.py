"""MONAI's `CopyItemsd` post-transform deep-copies a dictionary entry; applied
to the network's prediction during training (an event handler's post
transform), `copy.deepcopy` of a tensor with a graph raises "Only Tensors
created explicitly by the user (graph leaves) support the deepcopy protocol".
Source: https://github.com/Project-MONAI/MONAI/issues/1178"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class CopyItemsd:
    def __init__(self, keys, times, names):
        self.keys = keys
        self.times = times
        self.names = names

    def __call__(self, data):
        d = dict(data)
        for key, new_key in zip(self.keys * self.times, self.names):
            d[new_key] = copy.deepcopy(d[key])  # missed: ADL006
        return d


class SegNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 2, 1)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x)))


def train_step(model, optimizer, batch, post_transform):
    optimizer.zero_grad()
    batch["pred"] = model(batch["image"])
    batch = post_transform(batch)
    loss = F.cross_entropy(batch["pred"], batch["label"])
    loss.backward()
    optimizer.step()
    return batch


def run():
    torch.manual_seed(0)
    model = SegNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    batch = {"image": torch.randn(2, 1, 8, 8), "label": torch.randint(0, 2, (2, 8, 8))}
    train_step(model, optimizer, batch, CopyItemsd(keys=["pred"], times=1, names=["pred_raw"]))
