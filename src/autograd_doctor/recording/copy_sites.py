"""Where the tensors made by `copy.deepcopy` were made: a deep copy of a module (or of a tensor)
has new leaves with the same shapes and values and no graph back to the original.

Filled by the recorder when a `copy.deepcopy` call returns; read by the analysis when
`torch.autograd.grad` finds its inputs unused because the output was computed from the copy
(AD305 then names the deepcopy). Only weak references and sites are kept: nothing here holds a
tensor alive.
"""

from __future__ import annotations

import weakref

import torch

from autograd_doctor.recording.frames import Site

# id(tensor) -> (weak reference to it, the deepcopy call's site); an entry leaves with its tensor.
_copy_sites: dict[int, tuple] = {}
MAX_REMEMBERED = 10_000


def remember_deepcopy(result, site: Site | None) -> None:
    """Remember the tensors of a deepcopy's result: the tensor itself, or a module's parameters."""
    if site is None:
        return
    if isinstance(result, torch.Tensor):
        tensors = [result]
    elif isinstance(result, torch.nn.Module):
        tensors = list(result.parameters())
    else:
        return
    for tensor in tensors[: MAX_REMEMBERED - len(_copy_sites)]:
        key = id(tensor)
        try:
            _copy_sites[key] = (weakref.ref(tensor, lambda _ref, key=key: _copy_sites.pop(key, None)), site)
        except TypeError:
            pass


def deepcopy_site(tensor) -> Site | None:
    """The site of the `copy.deepcopy` call that made this tensor, or None."""
    entry = _copy_sites.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    return None
