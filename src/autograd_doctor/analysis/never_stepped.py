"""AD221: an optimizer whose gradients are computed and cleared, and which never steps.

`optimizer_d.zero_grad(); loss_d.backward()` without `optimizer_d.step()`: the gradients are
computed every iteration and the next `zero_grad()` throws them away; the parameters never change
and nothing fails (a GAN whose discriminators are never updated). Judged once, when the doctor
stops, from what ran (recording/optimizer_clears.py): an optimizer that never stepped while its
`zero_grad()` cleared gradients a backward() had computed, at least twice, and whose parameters no
optimizer that stepped holds (SAM's wrapper clears, its base optimizer steps). Optimizers that lost
their gradients to the same backward() statement are one report, whose help adds their step()
calls right after it (in the order their zero_grad() calls were made).
"""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_at, statement_location

# zero_grad() calls that threw gradients away before an optimizer that never stepped is reported.
EVIDENCE = 2


def never_stepped_diagnoses(recorder) -> list[Diagnosis]:
    log = recorder.optimizer_clears
    groups: dict = {}  # the backward() site -> [(optimizer class, the zero_grad() site)]
    for entry in log.by_optimizer.values():
        optimizer = entry.optimizer_ref()
        if optimizer is None or optimizer in log.stepped or len(entry.thrown_away) < EVIDENCE:
            continue
        if any(p in log.stepped_parameters for group in optimizer.param_groups for p in group["params"]):
            continue  # another optimizer steps these parameters (a wrapper and its base optimizer)
        latest = entry.thrown_away[-1]
        if latest.backward_site is None or latest.clear_site is None:
            continue
        groups.setdefault(latest.backward_site, []).append((type(optimizer).__name__, latest.clear_site))
    return [d for d in (_diagnosis(site, cleared) for site, cleared in groups.items()) if d is not None]


def _receiver(clear_site) -> str | None:
    """`optimizer_d` for the statement `optimizer_d.zero_grad()`."""
    statement = statement_at(clear_site.filename, clear_site.lineno)
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "zero_grad":
        return segment(clear_site.filename, statement.value.func.value)
    return None


def _diagnosis(backward_site, cleared: list) -> Diagnosis | None:
    filename = backward_site.filename
    backward_statement = statement_at(filename, backward_site.lineno)
    if backward_statement is None:
        return None
    cleared.sort(key=lambda item: (item[1].filename, item[1].lineno))
    receivers = [_receiver(site) for _kind, site in cleared]
    named = ", ".join(f"{r}.step()" if r else f"{kind}.step()" for r, (kind, _site) in zip(receivers, cleared))
    verb = "is" if len(cleared) == 1 else "are"
    primary = statement_location(filename, backward_statement, role="backward",
                                 note=f"computes gradients that no step() applies: {named} {verb} never called")
    related = [location_of(site, role="zero_grad", note="clears them again before any step()")
               for _kind, site in cleared]
    notes = ["zero_grad() clears the gradients and step() applies them; here the optimizer's step() never ran while "
             "its zero_grad() threw away gradients a backward() had computed, iteration after iteration: the "
             "parameters it holds never change (no error)"]
    text = segment(filename, backward_statement)
    same_block = all(r is not None and site.filename == filename for r, (_kind, site) in zip(receivers, cleared))
    if text is not None and "\n" not in text and same_block:
        steps = "\n".join(f"{r}.step()" for r in receivers)
        helps = [Suggestion(f"call {named} after this backward(), so that the gradients it computes are applied",
                            f"{text}\n{steps}", statement_location(filename, backward_statement))]
    else:
        helps = [Suggestion(f"call {named} after the backward() that computes its gradients, before the next "
                            "zero_grad()")]
    return Diagnosis(code=codes.OPTIMIZER_NEVER_STEPPED, title=codes.title(codes.OPTIMIZER_NEVER_STEPPED),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["never_stepped_diagnoses"]
