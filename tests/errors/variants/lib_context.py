import contextlib

import torch


@contextlib.contextmanager
def frozen_statistics(model):
    """Run the model with its BatchNorm statistics frozen (evaluation mode)."""
    was_training = model.training
    model.eval()
    with torch.no_grad():  # PRIMARY
        yield
    model.train(was_training)
