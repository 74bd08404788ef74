"""AD214: an optimizer keeps stepping after backward() calls, and none of its parameters has ever
had a gradient: every loss so far was computed from something else than the tensors it holds (a
copy of them made with detach()/clone(), as a functional inner loop with `copy_initial_weights=True`
starts from, or another model), so every step() is skipped for each parameter (no error).

Read just before step(): a backward() ran since the optimizer's previous step, every parameter
requires grad (frozen ones are AD215's) and none has a gradient, and this optimizer has never
stepped with a gradient (`trained`, kept by the doctor and filled by frozen_step.py). Reported at
the second such step, once per optimizer: one step before the first backward reaches it can be a
warm-up.
"""

from __future__ import annotations

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of
from autograd_doctor.recording.identity import IdentityMap, IdentitySet

# Steps of an optimizer that has never trained, each after a backward(), before it is reported.
STEPS_BEFORE_REPORT = 2


class GradientlessSteps:
    """Counts, per optimizer, the steps taken after a backward() with no gradient on any parameter."""

    def __init__(self):
        # By identity: an optimizer made anew each epoch takes a freed one's id.
        self._counts = IdentityMap()
        self._reported = IdentitySet()

    def cover(self, optimizers) -> None:
        """Optimizers whose empty steps another diagnosis has explained (AD211: the loss's cut took
        their model off the graph): not reported again here."""
        self._reported.update(optimizers)

    def at_step(self, optimizer, stack, recorder, trained: IdentitySet) -> Diagnosis | None:
        if optimizer in trained or optimizer in self._reported or not stack:
            return None
        parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())]
        if not parameters or not all(p.requires_grad and p.grad is None for p in parameters):
            return None
        since = recorder.gradient_clips.last_step.get(optimizer, 0)
        backwards = [call for call in recorder.backward_calls if call.seq > since and call.site is not None]
        if not backwards:
            return None
        steps = self._counts[optimizer] = self._counts.get(optimizer, 0) + 1
        if steps < STEPS_BEFORE_REPORT:
            return None
        self._reported.add(optimizer)
        return _diagnosis(optimizer, parameters, backwards[-1].site, stack[0], steps)


def _diagnosis(optimizer, parameters: list, backward_site, step_site, steps: int) -> Diagnosis:
    optimizer_class = type(optimizer).__name__
    primary = location_of(step_site, role="step", note=f"{optimizer_class}.step() changes nothing: none of its "
                                                       f"{len(parameters)} parameters has a gradient")
    related = [location_of(backward_site, role="backward", note="this backward() reached none of them")]
    notes = [f"{steps} steps of this optimizer so far each followed a backward(), and none of its parameters has "
             "ever had a gradient: the losses were computed from other tensors than the ones it holds, such as "
             "copies of them (p.detach().clone(), a functional inner loop that copies the initial weights) or "
             "another model's parameters, so step() skips every parameter (no error)"]
    helps = [Suggestion("compute the loss from the optimizer's own parameters (start an inner loop from them, not "
                        "from detached copies: copy_initial_weights=False in higher), or give the optimizer the "
                        "tensors the loss is computed from")]
    return Diagnosis(code=codes.GRADIENTLESS_OPTIMIZER_STEPS, title=codes.title(codes.GRADIENTLESS_OPTIMIZER_STEPS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)
