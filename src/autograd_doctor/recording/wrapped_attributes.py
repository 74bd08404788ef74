"""Attributes of torch's classes and modules replaced by recording wrappers while a doctor runs.

Several recorders watch calls that no hook reports (`clip_grad_norm_`, `GradScaler.unscale_`,
`module.requires_grad = ...`, `state_dict()` / `load_state_dict()`): each replaces the attribute
with a wrapper that calls the original from the user's frame (own_frames.call_as_caller) and
tells every active recorder. `WrappedAttributes` holds, for one such group, the recorders it
tells and the originals it replaced: the first `activate` installs the wrappers, the last
`deactivate` puts back each original the wrapper still stands in for (a wrapper replaced by
someone else since is left alone). An attribute a class inherits (`CheckpointFunction.apply`
from `autograd.Function`) is wrapped on that class, and deleted again at the end, so that the
class inherits it again. A wrapper marks itself with `_autograd_doctor_original`,
which also keeps a second group from wrapping a wrapper.
"""

from __future__ import annotations

import inspect
import threading
from typing import Callable

MARK = "_autograd_doctor_original"


def marked(wrapper, original):
    """`wrapper`, marked as standing in for `original`."""
    setattr(wrapper, MARK, original)
    return wrapper


class WrappedAttributes:
    """The recorders one group of wrappers tells, and the originals they replaced.

    `targets()` lists `(owner, name, make_wrapper)` at activation time (an owner that cannot be
    imported is simply not listed); `make_wrapper(original)` returns the marked wrapper."""

    def __init__(self, targets: Callable[[], list]):
        self._targets = targets
        self._lock = threading.Lock()
        # (owner, name, original, whether the owner only inherited it)
        self._originals: list[tuple[object, str, object, bool]] = []
        self.recorders: list = []

    def activate(self, recorder) -> None:
        with self._lock:
            self.recorders.append(recorder)
            if len(self.recorders) > 1:
                return
            for owner, name, make_wrapper in self._targets():
                original = vars(owner).get(name)
                inherited = original is None and isinstance(owner, type)
                if inherited:
                    original = inspect.getattr_static(owner, name, None)
                if original is None or hasattr(original, MARK):
                    continue
                self._originals.append((owner, name, original, inherited))
                setattr(owner, name, make_wrapper(original))

    def deactivate(self, recorder) -> None:
        with self._lock:
            if recorder in self.recorders:
                self.recorders.remove(recorder)
            if self.recorders:
                return
            while self._originals:
                owner, name, original, inherited = self._originals.pop()
                if getattr(vars(owner).get(name), MARK, None) is not original:
                    continue
                if inherited:
                    delattr(owner, name)
                else:
                    setattr(owner, name, original)
