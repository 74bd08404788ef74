"""Where each leaf that requires grad was created (`torch.zeros(3, requires_grad=True)`).

Filled by the doctor from the recorder's leaf-created events; read by the analysis when a
leaf is written in place (AD102 names the line that made it). Only weak references and
sites are kept: nothing here holds a tensor alive.
"""

from __future__ import annotations

import weakref

from autograd_doctor.recording.frames import Site

# id(tensor) -> (weak reference to it, its creation site, its creation number); an entry leaves
# with its tensor. The numbers order the creations: "made since" a moment is a number above the
# count read then (independent of addresses and of when garbage is collected).
_leaf_sites: dict[int, tuple] = {}
_created = 0


def remember_leaf_creation(tensor, site: Site | None) -> None:
    global _created
    if site is None:
        return
    key = id(tensor)
    _created += 1
    try:
        _leaf_sites[key] = (weakref.ref(tensor, lambda _ref, key=key: _leaf_sites.pop(key, None)), site, _created)
    except TypeError:
        pass


def creation_count() -> int:
    """How many leaves have been remembered so far (a mark for `leaves_with_gradients`)."""
    return _created


def leaf_creation_site(tensor) -> Site | None:
    if tensor is None:
        return None
    entry = _leaf_sites.get(id(tensor))
    if entry is not None and entry[0]() is tensor:
        return entry[1]
    return None


def leaves_with_gradients(since: int) -> list[tuple]:
    """(tensor, creation site) of the leaves remembered after the mark `since` (a creation_count())
    that have a gradient now, at most 256; the caller reads them and lets them go (nothing here
    keeps them)."""
    found = []
    for reference, site, number in list(_leaf_sites.values()):
        tensor = reference() if number > since else None
        if tensor is not None and tensor.grad is not None:
            found.append((tensor, site))
            if len(found) >= 256:
                break
    return found
