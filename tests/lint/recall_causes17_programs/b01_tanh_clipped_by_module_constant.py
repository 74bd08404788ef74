"""Cause 1 (ADL001, r624/r641): a top-level helper clips its argument in place
under an `if` on a module-level setting; a caller passes it a tanh output,
which TanhBackward0 keeps.  Raises at backward."""
import torch
import torch.nn as nn

MAX_ACTIVATION = 0.95


def limit(h, scale):
    if MAX_ACTIVATION is not None:
        h.clamp_(max=MAX_ACTIVATION)
    return h * scale


def run():
    torch.manual_seed(0)
    layer = nn.Linear(4, 4)
    x = torch.randn(3, 4) * 5
    h = torch.tanh(layer(x))
    out = limit(h, 2.0)  # bug
    out.sum().backward()
