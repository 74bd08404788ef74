# helper module of model_halved_by_memory_helper_then_scaled.py (a held-out variant)


def save_memory(model):
    """Halve the model's memory before training on a small machine."""
    return model.half()  # PRIMARY
