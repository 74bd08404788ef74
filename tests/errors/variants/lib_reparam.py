"""Weight reparametrisations (a library module of the variant
weight_norm_applied_after_optimizer_under_grad_scaler)."""
from torch import nn
from torch.nn.utils import parametrizations


def add_weight_norm(model):
    for module in model.modules():
        if isinstance(module, nn.Linear):
            parametrizations.weight_norm(module)
    return model
