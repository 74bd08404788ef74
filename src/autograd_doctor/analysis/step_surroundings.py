"""What the checks made at an optimizer's step() share: a count of each optimizer's first steps
(the checks look at a few only, so that a long run costs nothing after them) and the modules bound
around the step (the names of the frames of the step's stack, and the attributes of a `self` that
is not itself a module: a trainer holding the model)."""

from __future__ import annotations

import weakref

import torch

from autograd_doctor.analysis.source_scope import frame_locals, frame_values, live_frame


class FirstSteps:
    """Counts each optimizer's step() calls, holding the optimizers weakly."""

    def __init__(self, limit: int):
        self.limit = limit
        self._seen: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> steps counted

    def take(self, optimizer) -> int | None:
        """The number of this step (0 for the first) while it is one of the first `limit`, counting
        it; None after them, or for an optimizer that cannot be weakly referenced."""
        try:
            seen = self._seen.get(optimizer, 0)
            if seen >= self.limit:
                return None
            self._seen[optimizer] = seen + 1
        except TypeError:
            return None
        return seen

    def stop(self, optimizer) -> None:
        """Look at no further step of this optimizer (its problem was reported)."""
        try:
            self._seen[optimizer] = self.limit
        except TypeError:
            pass


def modules_around(stack, limit: int, submodules: bool = False) -> list[torch.nn.Module]:
    """The modules bound around step(): in the frames of `stack` (locals and globals) and on a
    `self` there that is not a module; with `submodules`, every module inside them too. At most
    `limit`, each once."""
    found, seen = [], set()
    for site in stack or ():
        frame = live_frame(site)
        if frame is None:
            continue
        values = list(frame_values(frame).values())
        # frame_locals, not frame.f_locals: before Python 3.13 reading f_locals leaves a snapshot on
        # a running frame that keeps each local tensor alive after the program drops it.
        owner = frame_locals(frame).get("self")
        if owner is not None and not isinstance(owner, torch.nn.Module):
            values += list(getattr(owner, "__dict__", {}).values())
        for value in values:
            if not isinstance(value, torch.nn.Module):
                continue
            for module in value.modules() if submodules else (value,):
                if id(module) not in seen and len(found) < limit:
                    seen.add(id(module))
                    found.append(module)
    return found
