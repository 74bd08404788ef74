"""AD181: a stateful optimizer built anew at every iteration over parameters that keep training.

`optimizer_d = torch.optim.Adam(discriminator.parameters(), ...)` inside the batch loop: each
iteration's Adam starts its moments and step count at zero while the parameters carry on from
the previous iteration's update, so every update is an Adam first step (a sign step of size lr)
and the configured optimizer never runs. Nothing fails.

Judged when the doctor stops, from the takeovers the step hooks recorded
(recording/optimizer_takeovers.py): at least EVIDENCE new optimizers whose first step() ran at
the same call site, each taking over a parameter that the previous optimizer of that site had
stepped exactly once, holding state for it, and that nothing wrote into since. A schedule that
builds again on purpose lets each optimizer take many steps (per epoch, per task), or puts the
parameters back first (test-time adaptation: `load_state_dict`, a new copy of the model).

The construction is read from the source: in the loop around the step() call, the assignment of
the step's receiver to a call. The help moves it before the outermost loop whose body binds
nothing it reads (the same optimizer settings, built once).
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import loaded_names, stored_names
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, segment, source_line, statement_at, \
    statement_location

# Optimizers replaced after a single step at one site before it is reported.
EVIDENCE = 2


def rebuilt_optimizer_diagnoses(recorder) -> list[Diagnosis]:
    by_site: dict = {}  # the step() site -> [Takeover]
    for takeover in recorder.optimizer_takeovers.takeovers:
        if takeover.step_site is None or takeover.previous_site != takeover.step_site:
            continue
        by_site.setdefault(takeover.step_site, []).append(takeover)
    found = []
    for site, takeovers in by_site.items():
        if len(takeovers) < EVIDENCE or any(t.previous_steps != 1 for t in takeovers):
            continue
        diagnosis = _diagnosis(site, takeovers[0].class_name, len(takeovers))
        if diagnosis is not None:
            found.append(diagnosis)
    return found


def _receiver(step_statement: ast.stmt | None) -> ast.AST | None:
    """`optimizer_d` for the statement `optimizer_d.step()`."""
    call = step_statement.value if isinstance(step_statement, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "step":
        return call.func.value
    return None


def _loops_around(tree: ast.AST, line: int) -> list:
    """The loops whose body covers `line`, innermost first."""
    loops = [node for node in ast.walk(tree) if isinstance(node, (ast.For, ast.While)) and node.body
             and node.body[0].lineno <= line <= (node.end_lineno or node.lineno)]
    return sorted(loops, key=lambda loop: loop.lineno, reverse=True)


def _construction(filename: str, loop: ast.AST, receiver_text: str, before_line: int) -> ast.Assign | None:
    """The last `receiver = SomeOptimizer(...)` directly in the loop's body before `before_line`."""
    found = None
    for statement in loop.body:
        if statement.lineno >= before_line:
            break
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.value, ast.Call) and segment(filename, statement.targets[0]) == receiver_text:
            found = statement
    return found


def _bound_in(loop: ast.AST) -> set[str]:
    names = set(stored_names(loop.target)) if isinstance(loop, ast.For) else set()
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def _diagnosis(site, class_name: str, count: int) -> Diagnosis | None:
    filename = site.filename
    tree = parse_file(filename)
    step_statement = statement_at(filename, site.lineno)
    receiver = _receiver(step_statement)
    receiver_text = segment(filename, receiver) if receiver is not None else None
    loops = _loops_around(tree, site.lineno) if tree is not None else []
    construction = None
    if receiver_text and loops:
        construction = _construction(filename, loops[0], receiver_text, step_statement.lineno)
    step_location = location_of(site, role="step", note=f"each new {class_name} takes one step here and is replaced")
    notes = [f"{class_name} keeps state per parameter (moments, a step count, a momentum buffer); a new one starts "
             f"it at zero. {count + 1} optimizers built here took one step each over the same parameters, which "
             "carried on training: every update is a first step and the configured optimizer never runs (no error)"]
    advice = Suggestion("build the optimizer once, before the training loop, and keep it across iterations (to "
                        "start afresh on purpose, e.g. per task, put the parameters back as well)")
    if construction is None:
        if step_location is None:
            return None
        return Diagnosis(code=codes.OPTIMIZER_REBUILT_EACH_STEP, title=codes.title(codes.OPTIMIZER_REBUILT_EACH_STEP),
                         severity="warning", primary=step_location, related=[], notes=notes, help=[advice])
    primary = statement_location(filename, construction, role="built",
                                 note=f"a new {class_name} is built at every iteration of the loop")
    helps = [advice]
    outer = _outermost_free_loop(loops, construction)
    if outer is not None:
        replacement = _moved_before(filename, outer, construction)
        location = Location(primary.file, outer.lineno, outer.col_offset, end_line=construction.end_lineno)
        helps.insert(0, Suggestion(f"build {receiver_text} once, before the loop, so that its state carries over "
                                   "from step to step", replacement=replacement, location=location))
    return Diagnosis(code=codes.OPTIMIZER_REBUILT_EACH_STEP, title=codes.title(codes.OPTIMIZER_REBUILT_EACH_STEP),
                     severity="warning", primary=primary, related=[r for r in (step_location,) if r is not None],
                     notes=notes, help=helps)


def _outermost_free_loop(loops: list, construction: ast.Assign):
    """The outermost loop (innermost first in `loops`, each directly in the next one's body) whose
    body binds no name the construction reads; None when the innermost one does."""
    reads = set(loaded_names(construction.value))
    chosen = None
    for index, loop in enumerate(loops):
        if index and loops[index - 1] not in loop.body:
            break
        if _bound_in(loop) & reads:
            break
        chosen = loop
    return chosen


def _moved_before(filename: str, loop: ast.AST, construction: ast.Assign) -> str:
    """The lines from the loop's header to the construction, the construction first, at the loop's
    indentation."""
    column = loop.col_offset
    moved = [source_line(filename, n) for n in range(construction.lineno, construction.end_lineno + 1)]
    kept = [source_line(filename, n) for n in range(loop.lineno, construction.lineno)]
    indent = construction.col_offset - column
    moved = [line[column + indent:] if line[:column + indent].strip() == "" else line.lstrip() for line in moved]
    kept = [line[column:] if line[:column].strip() == "" else line.lstrip() for line in kept]
    return "\n".join(line.rstrip() for line in moved + kept)


__all__ = ["rebuilt_optimizer_diagnoses"]
