"""Correct near twins of cause 2: `requires_grad` set on leaves (a detached
output, a value computed under `no_grad()`, a factory's result scaled by a
number, parameters), and `requires_grad_(True)` on a computed tensor (allowed:
it already requires grad)."""
import torch
import torch.nn as nn


def saliency(model, images):
    feats = model(images).detach()
    feats.requires_grad = True
    feats.sum().backward()
    return feats.grad


def frozen_copy(model, images):
    with torch.no_grad():
        target = model(images)
    target.requires_grad = False
    return target


def init_weights(n):
    w = torch.randn(n, n) * 0.01
    w.requires_grad = True
    return w


def freeze(model):
    for p in model.parameters():
        p.requires_grad = False


def mark(model, images):
    out = torch.tanh(model(images))
    out.requires_grad_(True)
    return out.sum()


def run():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    images = torch.randn(3, 4)
    saliency(model, images)
    frozen_copy(model, images)
    init_weights(3)
    mark(model, images).backward()
    freeze(model)
