"""IGOS++ explains a classifier by optimising a mask; its backtracking line
search keeps a boolean vector `indices` of the images whose step size is
still too large and narrows it in place with the test of those images only:
`indices[indices] = losses > base_losses[indices] + ...`.  The write's index
is the written tensor itself, and on current PyTorch it fails ("unsupported
operation: some elements of the input tensor and the written-to tensor
refer to a single memory location").  The fix indexes with a copy,
`indices[indices.clone()] = ...`.
Buggy line: `indices[indices] = ...` in `line_search`.
Expected finding: ADL010 there.
Source: https://github.com/khorrams/IGOS_pp/issues/2"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def integrated_gradient(model, images, blurred, masks, category, steps=4):
    total_grads = torch.zeros_like(masks)
    for i in range(1, steps + 1):
        m = (masks * i / steps).requires_grad_(True)
        x = images * m + blurred * (1 - m)
        score = F.softmax(model(x), dim=1)[torch.arange(images.size(0)), category].sum()
        total_grads += torch.autograd.grad(score, m)[0]
    return total_grads / steps


def line_search(masks, total_grads, loss_func, alpha=8.0, beta=0.0001, decay=0.2, max_iter=10):
    t = (total_grads ** 2).flatten(1).sum(1)
    alphas = torch.ones(masks.size(0)) * alpha
    base_losses = loss_func(masks)
    indices = torch.ones(masks.size(0), dtype=torch.bool)
    for _ in range(max_iter):
        masks_new = torch.clamp(masks - alphas[:, None, None, None] * total_grads, 0, 1)
        losses = loss_func(masks_new)[indices]
        indices[indices] = losses > base_losses[indices] - alphas[indices] * beta * t[indices]  # expect: ADL010
        alphas[indices] *= decay
        if indices.sum() == 0:
            break
    return alphas


def igos(model, images, blurred, category, iterations=2):
    masks = torch.ones(images.size(0), 1, images.size(2), images.size(3)) * 0.5

    def loss_func(m):
        with torch.no_grad():
            x = images * m + blurred * (1 - m)
            return F.softmax(model(x), dim=1)[torch.arange(images.size(0)), category] + m.flatten(1).mean(1)

    for _ in range(iterations):
        total_grads = integrated_gradient(model, images, blurred, masks, category)
        alphas = line_search(masks, total_grads, loss_func)
        masks = torch.clamp(masks - alphas[:, None, None, None] * total_grads, 0, 1)
    return masks


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    images = torch.rand(3, 3, 6, 6)
    igos(model, images, torch.zeros_like(images), torch.tensor([0, 1, 2]))
