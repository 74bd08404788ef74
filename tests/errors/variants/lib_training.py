import torch


def make_optimizer(parameters, lr):
    """The optimizer every experiment of this project uses."""
    return torch.optim.Adam(parameters, lr=lr, betas=(0.9, 0.99))
