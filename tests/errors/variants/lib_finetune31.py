"""Fine-tuning helpers."""


def freeze(module):
    for parameter in module.parameters():
        parameter.requires_grad_(False)


def trainable_parameters(model):
    parameters = [p for p in model.parameters() if p.requires_grad]
    return parameters[0] if len(parameters) == 1 else parameters  # PRIMARY
