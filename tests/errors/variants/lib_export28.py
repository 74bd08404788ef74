"""Export helpers: trace a model for serving, then keep training the traced copy."""
import torch


def trace_for_serving(model, example):
    return torch.jit.trace(model, (example,))
