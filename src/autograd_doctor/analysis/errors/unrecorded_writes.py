"""In-place writes that PyTorch refused and the recorder did not see, explained from the traceback.

While an optimizer step runs, the recorder hands torch its own methods back (the step makes
thousands of writes, none of which is a user's; recording/recorder.py, quiet steps). A function
of the user's that the step calls, a hook registered with `register_step_pre_hook` or
`register_step_post_hook`, then writes unrecorded, and PyTorch's refusal reaches the doctor with
nothing attached. The write's line is the innermost user frame of the traceback, and the
written tensor is read from that frame (names and attributes only: nothing is called); the
diagnosis is the one the recorder gives for the same write (analysis/diagnose.py)."""

from __future__ import annotations

import ast

from autograd_doctor.analysis.describe import written_name
from autograd_doctor.analysis.errors.context import ErrorContext, value_of
from autograd_doctor.recording.frames import Site


def leaf_written_unrecorded(context: ErrorContext, already):
    """AD102 for a write into a leaf that requires grad made where the recorder does not look."""
    import torch

    from autograd_doctor.analysis.diagnose import leaf_inplace_diagnosis

    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    written = written_name(frame.f_code.co_filename, line)
    try:
        expression = ast.parse(written, mode="eval").body if written else None
    except SyntaxError:
        return None
    target = value_of(frame, expression) if isinstance(expression, (ast.Name, ast.Attribute)) else None
    if not isinstance(target, torch.Tensor):
        return None
    return leaf_inplace_diagnosis(context.error, None, (target,), (Site(frame.f_code, -1, lineno=line),))


MATCHERS = [
    (r"^a (view of a )?leaf Variable that requires grad is being used in an in-place operation", leaf_written_unrecorded),
]
