"""AD153: zero_grad() clears gradients that no step() has applied yet, at one backward() site
whose gradients other steps do apply.

Gradient accumulation calls backward() on several micro-batches and step() once: the gradients
add up in `.grad` until the step uses them, and only then are they cleared. A `zero_grad()` left
at the top of every micro-batch clears what the previous micro-batches computed, so each step
applies the last micro-batch's gradient alone (divided by the accumulation factor), and nothing
fails. Judged once, when the doctor stops, from what ran (recording/optimizer_clears.py): for an
optimizer that stepped, a backward() call site (its user stack) whose gradients a `zero_grad()`
cleared before any step at least twice, and at least as often as a step applied them. A site whose
gradients no step ever applies (a GAN's discriminator loss reaching the generator, cleared by the
generator's `zero_grad()`) is a choice, not this mistake, and is not reported.
"""

from __future__ import annotations

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of

# zero_grad() calls that cleared a site's unapplied gradients before it is reported.
EVIDENCE = 2


def cleared_before_step_diagnoses(recorder) -> list[Diagnosis]:
    log = recorder.optimizer_clears
    found: dict = {}  # the zero_grad() site -> its diagnosis (one per line, however many optimizers)
    for entry in log.by_optimizer.values():
        optimizer = entry.optimizer_ref()
        if optimizer is None or optimizer not in log.stepped:
            continue
        for key, cleared in entry.cleared_unapplied.items():
            applied = entry.applied.get(key, 0)
            if cleared.count < EVIDENCE or applied < 1 or cleared.count < applied:
                continue
            if cleared.clear_site is None or cleared.backward_site is None or cleared.clear_site in found:
                continue
            diagnosis = _diagnosis(cleared, applied)
            if diagnosis is not None:
                found[cleared.clear_site] = diagnosis
    return list(found.values())


def _diagnosis(cleared, applied: int) -> Diagnosis | None:
    primary = location_of(cleared.clear_site, role="zero_grad",
                          note="clears gradients that step() has not applied yet")
    if primary is None:
        return None
    backward = location_of(cleared.backward_site, role="backward",
                           note=f"its gradients were cleared before a step {cleared.count} times, "
                                f"applied by a step {applied} times")
    notes = ["gradients add up in .grad over the backward() calls before a step(), and zero_grad() "
             "throws them away: clearing them between backward() and the step() that should apply "
             "them leaves that step the last micro-batch's gradient alone (no error)"]
    helps = [Suggestion("clear the gradients only after step() has applied them: move this zero_grad() "
                        "right after the step() (or delete it where the gradients are already cleared "
                        "after the step)")]
    return Diagnosis(code=codes.CLEARED_BEFORE_STEP, title=codes.title(codes.CLEARED_BEFORE_STEP),
                     severity="warning", primary=primary,
                     related=[backward] if backward is not None else [], notes=notes, help=helps)


__all__ = ["cleared_before_step_diagnoses"]
