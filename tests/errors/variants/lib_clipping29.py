"""Mixed-precision helpers."""
import contextlib

import torch


@contextlib.contextmanager
def unscaled_and_clipped(scaler, optimizer, parameters, max_norm):
    """Run the block, then unscale the optimizer's gradients and clip them."""
    yield
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(parameters, max_norm)
