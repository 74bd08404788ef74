"""AD216: `module.requires_grad = False` (recording/module_flags.py) froze nothing, and the
optimizer about to step trains the module's parameters.

Read just before an optimizer's step(): a recorded assignment whose module is alive, whose value
is False, while parameters of that module still require grad, have a gradient and are held by the
optimizer. The help calls the method that sets the parameters' flags, `requires_grad_(value)`,
where the attribute was assigned.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_location
from autograd_doctor.recording.gradient_states import grad_of


def requires_grad_attribute_diagnosis(optimizer, stack, recorder) -> Diagnosis | None:
    """AD216 before `optimizer.step()` (called from `stack`), or None."""
    flags = recorder.module_flags
    held = None  # the optimizer's parameters, walked only once a flag can be this problem (most steps: none)
    for flag in reversed(flags.flags):
        module = flag.module_ref()
        if module is None or flag.value or flag.reported or flag.site is None:
            continue
        if held is None:
            held = {id(p) for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())}
        trained = [p for p in module.parameters() if p.requires_grad and grad_of(p) is not None and id(p) in held]
        if not trained:
            continue
        flag.reported = True
        return _diagnosis(flag, module, len(trained), stack[0] if stack else None, type(optimizer).__name__)
    return None


def _diagnosis(flag, module, trained: int, step_site, optimizer_class: str) -> Diagnosis | None:
    site = flag.site
    scope = Scope(site.filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if statement is None:
        return None
    target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
    owner = segment(site.filename, target.value) if isinstance(target, ast.Attribute) \
        and target.attr == "requires_grad" else None
    name = owner or type(module).__name__
    primary = statement_location(site.filename, statement, role="flag",
                                 note=f"this sets an attribute named requires_grad on {name} "
                                      f"({type(module).__name__}); its parameters keep requires_grad=True")
    related = [location_of(step_site, role="step", note=f"{optimizer_class}.step() updates {trained} parameter(s) "
                                                        f"of {name} that were meant to be frozen")]
    notes = [f"a module has no requires_grad switch: assigning module.requires_grad = False adds a plain attribute "
             f"and freezes nothing, so {name}'s parameters get gradients and train (no error)"]
    helps = []
    if owner is not None and statement.lineno == statement.end_lineno:
        helps.append(Suggestion(
            f"call {name}.requires_grad_(...), which sets requires_grad on every parameter of {name}",
            f"{owner}.requires_grad_({segment(site.filename, statement.value)})",
            statement_location(site.filename, statement)))
    else:
        helps.append(Suggestion(f"set requires_grad on the parameters: {name}.requires_grad_(False), or "
                                "`for p in module.parameters(): p.requires_grad = False`"))
    return Diagnosis(code=codes.REQUIRES_GRAD_ON_MODULE, title=codes.title(codes.REQUIRES_GRAD_ON_MODULE),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["requires_grad_attribute_diagnosis"]
