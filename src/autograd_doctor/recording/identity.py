"""Objects remembered by identity across time, without holding them alive.

`id(obj)` names an object only while it lives: CPython hands a freed block to the next object
of its size, so the id of an optimizer, a module or a parameter that died is soon a later one's
(an optimizer made anew each epoch takes its predecessor's address every other epoch). An id kept
in a set then says "seen", "stepped" or "reported" of an object never seen, and a diagnosis
appears or goes silent by the luck of the allocator. These containers keep a weak reference
beside each id and count an entry only while it refers to the object asked about. An object
that takes no weak reference is kept by its id alone, as before.

    >>> import torch
    >>> stepped = IdentitySet()
    >>> optimizer = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
    >>> stepped.add(optimizer)
    >>> optimizer in stepped, len(stepped)
    (True, 1)
    >>> del optimizer
    >>> len(stepped)
    0
"""

from __future__ import annotations

import weakref

_MISSING = object()


class IdentityMap:
    """A dict keyed by objects' identity; an entry leaves when its object dies (it is overwritten
    by the next object at that address, or never found again)."""

    __slots__ = ("_entries",)

    def __init__(self):
        self._entries: dict[int, tuple] = {}  # id -> (weak reference, or None: the id alone; value)

    # The methods below are called for every parameter of every module call the first steps
    # watch: each does its work without calling another (a Python call costs more than it does).
    def __setitem__(self, obj, value) -> None:
        try:
            reference = weakref.ref(obj)
        except TypeError:
            reference = None
        self._entries[id(obj)] = (reference, value)

    def get(self, obj, default=None):
        entry = self._entries.get(id(obj))
        if entry is None or (entry[0] is not None and entry[0]() is not obj):
            return default
        return entry[1]

    def __contains__(self, obj) -> bool:
        entry = self._entries.get(id(obj))
        return entry is not None and (entry[0] is None or entry[0]() is obj)

    def pop(self, obj, default=None):
        value = self.get(obj, _MISSING)
        if value is _MISSING:
            return default
        del self._entries[id(obj)]
        return value

    def clear(self) -> None:
        self._entries.clear()

    def live(self) -> list:
        """The objects remembered that are still alive (those kept by their id alone are not known)."""
        objects = [reference() for reference, _value in list(self._entries.values()) if reference is not None]
        return [obj for obj in objects if obj is not None]

    def __len__(self) -> int:
        """Entries whose object is alive."""
        return sum(1 for reference, _value in self._entries.values() if reference is None or reference() is not None)


class IdentitySet(IdentityMap):
    """A set of objects by identity (an IdentityMap whose values say nothing)."""

    __slots__ = ()

    def add(self, obj) -> None:
        try:
            reference = weakref.ref(obj)
        except TypeError:
            reference = None
        self._entries[id(obj)] = (reference, True)

    def update(self, objects) -> None:
        entries = self._entries
        for obj in objects:
            try:
                reference = weakref.ref(obj)
            except TypeError:
                reference = None
            entries[id(obj)] = (reference, True)

    def discard(self, obj) -> None:
        self.pop(obj)
