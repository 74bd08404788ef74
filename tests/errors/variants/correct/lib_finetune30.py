"""Fine-tuning helpers."""


def freeze_backbone(model):
    """Keep the pretrained features fixed; only the task head trains."""
    model.backbone.requires_grad_(False)  # PRIMARY
    return model
