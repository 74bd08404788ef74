# helper module of truncated_init_with_apply_helper.py (a held-out variant)
import torch


def truncate_weights(module, bound):
    """Clip every weight of `module` into [-bound, bound], value by value."""
    for name, p in module.named_parameters():
        if name.endswith("weight"):
            p.detach().apply_(lambda v: max(-bound, min(bound, v)))  # PRIMARY
