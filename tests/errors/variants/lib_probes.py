"""Directional derivatives with forward-mode AD, used by directional_derivative_helper_without_dual_level."""
import torch.autograd.forward_ad as fwAD


def directional_derivative(model, x, direction):
    dual = fwAD.make_dual(x, direction)  # PRIMARY
    out = model(dual)
    return fwAD.unpack_dual(out).tangent
