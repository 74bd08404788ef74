"""Gradient-norm logging for grad_norm_logged_after_scaler_step_at_accumulation_boundary."""
import torch


def unscaled_grad_norm(scaler, optimizer, parameters):
    scaler.unscale_(optimizer)
    return torch.nn.utils.get_total_norm([p.grad for p in parameters if p.grad is not None])
