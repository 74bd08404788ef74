"""Fine-tuning utilities."""
from torch import nn


def freeze_norms(model):
    """Keep the pretrained normalisation layers as they are."""
    for module in model.modules():
        if isinstance(module, nn.LayerNorm):
            module.requires_grad_(False)
    return model
