"""Regularisers for the conditional GAN trainer."""
import torch


def r1_penalty(discriminator, images, onehot):
    """R1: the squared norm of the discriminator's gradient at the real samples."""
    images = images.detach().requires_grad_(True)
    score = discriminator(images, onehot).sum()
    grads = torch.autograd.grad(score, (images,), create_graph=True)  # PRIMARY
    return sum(g.pow(2).flatten(1).sum(1).mean() for g in grads)
