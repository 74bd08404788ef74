"""Which modules ran their forward since a backward() started (a global forward pre-hook).

The gradient-path check (analysis/gradient_path.py) starts a tracker before each of the
first few backward() calls: a parameter of a module that ran but got no gradient is a cut
path (AD301). Only ids of modules are kept.
"""

from __future__ import annotations

import weakref

import torch

# The key of the running tracker in the recorder's state.
STATE_KEY = "gradient_path_tracker"


class ModuleForwardTracker:
    """Ids of the modules whose forward ran while the tracker is on; it removes its hook when
    its recorder is gone, stopped, or has a newer tracker."""

    def __init__(self, recorder, from_start: bool = False):
        self.recorder_ref = weakref.ref(recorder)
        self.ran: set[int] = set()
        self.from_start = from_start  # on since the doctor started: it saw the first forward
        self.handle = torch.nn.modules.module.register_module_forward_pre_hook(self._hook)

    def _hook(self, module, args):
        recorder = self.recorder_ref()
        if recorder is None or recorder.state.get(STATE_KEY) is not self or not is_active(recorder):
            self.stop()
            return None
        self.ran.add(id(module))
        return None

    def stop(self):
        if self.handle is not None:
            self.handle.remove()
            self.handle = None


def is_active(recorder) -> bool:
    """Whether `recorder` is recording now (its doctor is on)."""
    try:
        from autograd_doctor.recording import patches

        return recorder in patches._active
    except Exception:
        return False
