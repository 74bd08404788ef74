# helper module of loss_helper_under_project_quiet_decorator.py (a held-out variant)
import functools

import torch


def quiet(function):
    """Runs `function` without autograd's bookkeeping (written for the evaluation helpers)."""

    @functools.wraps(function)
    def without_autograd(*args, **kwargs):
        with torch.no_grad():
            return function(*args, **kwargs)

    return without_autograd
