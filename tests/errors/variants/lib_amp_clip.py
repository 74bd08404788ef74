# helper module of clip_helper_unscales_every_micro_batch.py (a held-out variant)
import torch


def clip_gradients(scaler, optimizer, parameters, max_norm):
    """Unscale the optimizer's gradients and clip their norm (AMP's recipe for clipping)."""
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(parameters, max_norm)
