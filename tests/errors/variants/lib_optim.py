# helper module of frozen_encoder_in_manual_sgd_helper.py (a held-out variant)
import torch


@torch.no_grad()
def sgd_step(parameters, lr):
    for p in parameters:
        p.sub_(lr * p.grad)  # PRIMARY
