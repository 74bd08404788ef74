# helper module of gradient_penalty_ones_of_batch_helper.py (a held-out variant)
import torch


def gradient_penalty(critic, real, fake):
    alpha = torch.rand(real.size(0), 1)
    mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    scores = critic(mixed)
    grads = torch.autograd.grad(scores, mixed, grad_outputs=torch.ones_like(scores), create_graph=True)[0]  # PRIMARY
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()
