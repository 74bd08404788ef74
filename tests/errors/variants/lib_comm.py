"""Gradient exchange helpers of a federated-averaging sketch (for the variant
federated_flat_gradient_split_back)."""
import torch


def flatten_gradients(gradients):
    return torch.cat([g.reshape(-1) for g in gradients])


def load_flat_gradient(model, flat):
    pieces = torch.split(flat, [p.numel() for p in model.parameters()])
    for p, piece in zip(model.parameters(), pieces):
        p.grad = piece  # PRIMARY
