import contextlib

import torch


@contextlib.contextmanager
def frozen_statistics(model):
    """Run the model with its BatchNorm statistics frozen (evaluation mode)."""
    was_training = model.training
    model.eval()
    yield  # PRIMARY
    model.train(was_training)
