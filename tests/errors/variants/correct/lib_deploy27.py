"""Deployment helpers for tta_entropy_adaptation_after_lib_wraps_forward_in_no_grad."""
import torch


def prepare_for_serving(model):
    """Evaluation mode, and a forward that records no graph (cheaper requests)."""
    model.eval()
    # requests run under torch.no_grad() at the call site: the model itself stays differentiable  # PRIMARY
    return model
