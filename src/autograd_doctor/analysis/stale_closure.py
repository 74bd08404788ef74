"""AD154: L-BFGS was given a closure that runs no backward().

`optimizer.step(closure)` lets L-BFGS evaluate the objective as often as its line search needs:
each call of the closure must compute the loss at the current parameters and backpropagate it, and
L-BFGS reads the new gradients from `.grad`. A closure that returns a loss computed before the
step (`def closure(): return loss`) hands every evaluation the same value and leaves the gradients
as they were: the search stops early or follows gradients of a point it has left, and nothing
fails. Judged when the doctor stops, from the steps the recording saw (recording/closure_steps.py).
"""

from __future__ import annotations

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import display_path, location_of, source_line


def stale_closure_diagnoses(recorder) -> list[Diagnosis]:
    found: dict = {}  # the step() site -> its diagnosis
    for step in recorder.closure_steps.without_backward:
        if step.step_site is None or step.step_site in found:
            continue
        primary = location_of(step.step_site, role="step",
                              note="L-BFGS calls the closure again at each trial point; this one runs no backward()")
        if primary is None:
            continue
        related = []
        code = step.closure_code
        if code is not None:
            related.append(Location(file=display_path(code.co_filename), line=code.co_firstlineno, column=0,
                                    source=source_line(code.co_filename, code.co_firstlineno).strip(),
                                    role="closure", note="returns a loss without computing it or its gradients again"))
        notes = ["L-BFGS evaluates the closure several times per step and reads the gradients its backward() "
                 "leaves in .grad: a closure that returns a loss computed before the step gives every evaluation "
                 "the same loss and the same gradients, so the search stops early or follows a point it has left "
                 "(no error)"]
        helps = [Suggestion("compute the loss inside the closure: zero the gradients, run the forward pass, call "
                            "backward() and return the loss, so that each evaluation is made at the current "
                            "parameters")]
        found[step.step_site] = Diagnosis(code=codes.STALE_CLOSURE, title=codes.title(codes.STALE_CLOSURE),
                                          severity="warning", primary=primary, related=related, notes=notes,
                                          help=helps)
    return list(found.values())


__all__ = ["stale_closure_diagnoses"]
