"""Lipschitz helpers: divide a layer's weight by an estimate of its spectral norm."""
import torch


def spectral_estimate(weight, u, steps=3):
    for _ in range(steps):
        v = torch.nn.functional.normalize(weight.t() @ u, dim=0)
        u = torch.nn.functional.normalize(weight @ v, dim=0)
    return (u @ weight @ v).detach(), u.detach()


def lipschitz_project(layer, u):
    sigma, u = spectral_estimate(layer.weight, u)
    if sigma > 1.0:
        layer.weight.div_(sigma)  # PRIMARY
    return u
