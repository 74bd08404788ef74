"""AD316: an optimizer steps parameters that never get a gradient, because the user's `detach_()`
cuts the graph of the only result they take part in, while the optimizer's other parameters train.

`feature = goal_mlp(goal); feature.detach_()` (DenseTNT's trajectory head): the module runs every
iteration, its parameters are in the optimizer, and no gradient ever reaches them: they keep their
initial values and nothing fails. The other codes look for other shapes: an optimizer none of whose
parameters gets a gradient (AD214), a submodule the code never calls (AD164), a loss term cut
before it is added (AD206).

Recorded cheaply (recording/switches.py): the user's `detach_()` lines are already wrapped; at the
first few calls of each line whose tensor has a grad_fn, a bounded walk of the graph it is about to
lose notes the leaves requiring grad it reaches (weak references only). Judged once, when the doctor
stops: a line that cut a graph on at least two calls, whose leaves include parameters of an optimizer
that stepped which hold no gradient now, while another parameter of that optimizer does. A module
kept frozen on purpose has parameters in no optimizer, or that do not require grad (no leaf of the
graph), and a module detached in one place and trained through another has gradients: both silent.
Not judged when the program ended with an exception (`Doctor.stop(failed=True)`): a run cut short
has not shown its whole course.
The help removes the `detach_()` statement (unverified: nothing raised, no oracle re-runs here).
"""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_at, statement_location
from autograd_doctor.recording import switches

# Calls of a `detach_()` line that cut a graph before it is reported (several iterations).
EVIDENCE = 2


def cut_module_output_diagnoses(recorder) -> list[Diagnosis]:
    stepped = recorder.optimizer_clears.stepped.live()
    if not stepped:
        return []
    found = []
    for cut in switches.graph_cuts():
        if cut.calls < EVIDENCE:
            continue
        leaves = [ref() for ref in cut.leaves]
        leaves = [leaf for leaf in leaves if leaf is not None and leaf.requires_grad and leaf.grad is None]
        if not leaves:
            continue
        leaf_ids = {id(leaf) for leaf in leaves}
        for optimizer in stepped:
            parameters = [p for group in optimizer.param_groups for p in group.get("params", ())]
            untrained = [p for p in parameters if id(p) in leaf_ids]
            if not untrained:
                continue
            if not any(p.grad is not None for p in parameters if id(p) not in leaf_ids):
                continue  # nothing of this optimizer holds a gradient now: no contrast to go on
            diagnosis = _diagnosis(cut, optimizer, untrained, len(parameters))
            if diagnosis is not None:
                found.append(diagnosis)
            break
    return found


def _diagnosis(cut, optimizer, untrained: list, total: int) -> Diagnosis | None:
    site = cut.stack[0]
    filename, line = site.filename, site.lineno
    statement = statement_at(filename, line)
    shapes = ", ".join(str(list(p.shape)) for p in untrained[:4]) + (", ..." if len(untrained) > 4 else "")
    kind = type(optimizer).__name__
    count = f"{len(untrained)} parameter{'s' if len(untrained) != 1 else ''}"
    primary = location_of(site, role="detach",
                          note=f"cuts the graph of a result computed from {count} that {kind} steps")
    if primary is None:
        return None
    notes = [f"{count} of the {total} that {kind} steps ({shapes}) never received a gradient, while its "
             f"other parameters did: the only result they take part in loses its graph here "
             f"({cut.calls} calls), so step() skips them and they keep their initial values (no error)"]
    helps = []
    text = segment(filename, statement) if statement is not None else None
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "detach_" \
            and text is not None and "\n" not in text:
        helps.append(Suggestion(f"remove `{text}`, so that the loss sends gradients to the module that computed "
                                "this tensor (keep a detach only where that module must not train) "
                                "(unverified: nothing raised)", "pass", statement_location(filename, statement)))
    else:
        helps.append(Suggestion("detach a copy (`x.detach()`) where the value must not carry gradients, and keep "
                                "the graph of the result the loss needs"))
    return Diagnosis(code=codes.DETACHED_MODULE_OUTPUT, title=codes.title(codes.DETACHED_MODULE_OUTPUT),
                     severity="warning", primary=primary, related=[], notes=notes, help=helps)


__all__ = ["cut_module_output_diagnoses"]
