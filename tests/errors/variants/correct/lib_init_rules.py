"""Initialisation rules (a library module of the variant
init_rule_through_module_apply_uses_apply_on_weights)."""
import math

import torch
from torch import nn


def clipped_uniform_init(module):
    """Kaiming-uniform weights, then every weight folded into [-bound/2, bound/2]."""
    if isinstance(module, nn.Linear):
        bound = 1.0 / math.sqrt(module.in_features)
        module.weight.detach().apply_(lambda w: max(-bound / 2, min(bound / 2, w)))  # PRIMARY
        nn.init.zeros_(module.bias)
