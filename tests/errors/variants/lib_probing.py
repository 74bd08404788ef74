"""Forward-mode probing helpers (a library module of the variant
dual_level_context_helper_called_without_with)."""
import contextlib

import torch.autograd.forward_ad as fwAD


@contextlib.contextmanager
def forward_mode():
    """Enter a forward-AD level for the duration of a with block."""
    with fwAD.dual_level():
        yield
