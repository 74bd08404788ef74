"""Where each leaf that requires grad was created (`torch.zeros(3, requires_grad=True)`).

Filled by the doctor from the recorder's leaf-created events; read by the analysis when a
leaf is written in place (AD102 names the line that made it). Only weak references and
sites are kept: nothing here holds a tensor alive.
"""

from __future__ import annotations

import weakref

from autograd_doctor.recording.frames import Site

# id(tensor) -> (weak reference to it, its creation site); an entry leaves with its tensor.
_leaf_sites: dict[int, tuple] = {}


def remember_leaf_creation(tensor, site: Site | None) -> None:
    if site is None:
        return
    key = id(tensor)
    try:
        _leaf_sites[key] = (weakref.ref(tensor, lambda _ref, key=key: _leaf_sites.pop(key, None)), site)
    except TypeError:
        pass


def leaf_creation_site(tensor) -> Site | None:
    if tensor is None:
        return None
    entry = _leaf_sites.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    return None
