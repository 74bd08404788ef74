"""Take autograd-doctor's own frames out of a user's exception traceback.

The doctor wraps torch functions while it watches (recording/patches.py) and, in the
Hugging Face callback, the training step; an exception raised through those wrappers
carries their frames. A front end that holds the user's exception before anything
prints it (the pytest plugin, the IPython extension, the callbacks) calls
`hide_own_frames(error)`: the traceback then lists the frames it lists without the
doctor, and a debugger started on it stops in the same places.

Traceback entries are relinked in place (`tb_next` is writable), so every holder of
the traceback (pytest's ExceptionInfo, `sys.last_traceback`) sees the same frames.
A frame that raises a bare `raise` after `hide_own_frames` adds no entry of its own,
which is how a wrapper of ours that catches and re-raises leaves no trace.
"""

from __future__ import annotations

import os
from types import FrameType, TracebackType

OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_own_frame(frame: FrameType) -> bool:
    filename = frame.f_code.co_filename
    return not filename.startswith("<") and os.path.abspath(filename).startswith(OWN_DIR)


def without_own_frames(tb: TracebackType | None) -> TracebackType | None:
    """The first entry of `tb` that is not ours, its chain relinked past our entries;
    `tb` itself when every entry is ours (nothing of the user's would be left).

    Example::

        >>> without_own_frames(None) is None
        True
    """
    kept = []
    entry = tb
    while entry is not None:
        if not is_own_frame(entry.tb_frame):
            kept.append(entry)
        entry = entry.tb_next
    if not kept:
        return tb
    for outer, inner in zip(kept, kept[1:] + [None]):
        if outer.tb_next is not inner:
            outer.tb_next = inner
    return kept[0]


def hide_own_frames(error: BaseException) -> None:
    """Drop our frames from the traceback of `error` and of the exceptions chained to it
    (`__cause__`, `__context__`, the members of an exception group). Never fails."""
    pending, seen = [error], set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        try:
            current.__traceback__ = without_own_frames(current.__traceback__)
        except Exception:
            pass
        pending.extend((current.__cause__, current.__context__))
        pending.extend(getattr(current, "exceptions", None) or ())


__all__ = ["hide_own_frames", "without_own_frames", "is_own_frame", "OWN_DIR"]
