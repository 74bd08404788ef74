"""AD154: L-BFGS was given a closure that runs no backward().

`optimizer.step(closure)` lets L-BFGS evaluate the objective as often as its line search needs:
each call of the closure must compute the loss at the current parameters and backpropagate it, and
L-BFGS reads the new gradients from `.grad`. A closure that returns a loss computed before the
step (`def closure(): return loss`) hands every evaluation the same value and leaves the gradients
as they were: the search stops early or follows gradients of a point it has left, and nothing
fails. Judged when the doctor stops, from the steps the recording saw (recording/closure_steps.py).
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import block_holding
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import display_path, location_of, parse_file, segment, source_line, statement_at

ADVICE = ("compute the loss inside the closure: zero the gradients, run the forward pass, call backward() and "
          "return the loss, so that each evaluation is made at the current parameters")


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
        helps = _closure_computing_the_loss(step.step_site.filename, primary.line) or [Suggestion(ADVICE)]
        found[step.step_site] = Diagnosis(code=codes.STALE_CLOSURE, title=codes.title(codes.STALE_CLOSURE),
                                          severity="warning", primary=primary, related=related, notes=notes,
                                          help=helps)
    return list(found.values())


def _closure_computing_the_loss(filename: str, line: int) -> list[Suggestion]:
    """The change, when the source shows it: `optimizer.step(closure)` whose closure (a `def` in the
    same block, or a lambda) only returns a name, and right before the closure the statements that
    compute that name (with the backward() and zero_grad() among them). They move into the
    closure; the step's result is bound to the name, which later lines may read."""
    step = statement_at(filename, line)
    tree = parse_file(filename)
    call = step.value if isinstance(step, (ast.Expr, ast.Assign)) else None
    if tree is None or not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "step" and len(call.args) == 1):
        return []
    block = block_holding(tree, step)
    if block is None:
        return []
    index = next(i for i, statement in enumerate(block) if statement is step)
    closure = call.args[0]
    if isinstance(closure, ast.Lambda) and isinstance(closure.body, ast.Name):
        loss, definition, end_of_run = closure.body.id, None, index
        if any(isinstance(node, ast.Name) and node.id == "closure" for node in ast.walk(tree)):
            return []
    elif isinstance(closure, ast.Name):
        definition = next((statement for statement in block[:index] if isinstance(statement, ast.FunctionDef)
                           and statement.name == closure.id), None)
        body = definition.body if definition is not None else []
        if not (len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Name)
                and not definition.args.args):
            return []
        loss, end_of_run = body[0].value.id, block.index(definition)
    else:
        return []
    run = _statements_computing(block[:end_of_run], loss)
    if not run or not any(_method_call(statement, "backward") for statement in run):
        return []
    base = run[0].col_offset
    inner = " " * (definition.body[0].col_offset - base if definition is not None else 4)
    moved = [inner + line[base:] for statement in run
             for line in (source_line(filename, n) for n in range(statement.lineno, statement.end_lineno + 1))]
    header = source_line(filename, definition.lineno)[base:] if definition is not None else "def closure():"
    if not any(_method_call(statement, "zero_grad") for statement in run):
        # Else each evaluation would add its gradients to the previous one's.
        moved.insert(0, f"{inner}{segment(filename, call.func.value)}.zero_grad()")
    between = [source_line(filename, n)[base:] for n in range(definition.end_lineno + 1, step.lineno)
               if source_line(filename, n).strip()] if definition is not None else []
    if step.lineno != step.end_lineno:
        return []
    step_text = source_line(filename, step.lineno)[step.col_offset:]  # with its comment
    if isinstance(closure, ast.Lambda):
        step_text = step_text.replace(segment(filename, closure), "closure")
    if isinstance(step, ast.Expr):
        step_text = f"{loss} = {step_text}"
    replacement = "\n".join([header, *moved, f"{inner}return {loss}", *between, step_text])
    location = Location(display_path(filename), run[0].lineno, base, end_line=step.end_lineno,
                        source=source_line(filename, run[0].lineno).strip())
    return [Suggestion(f"compute `{loss}` inside the closure, with its backward(): L-BFGS then evaluates the "
                       "loss and its gradients at each trial point; the step returns the first evaluation's loss",
                       replacement, location)]


def _method_call(statement: ast.stmt, method: str) -> bool:
    return (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == method)


def _statements_computing(statements: list, name: str) -> list:
    """The last statements of `statements`, in order, that compute `name` (and what it is computed
    from), zero the gradients or call backward(); stopping at the first that does none of these."""
    needed, run = {name}, []
    for statement in reversed(statements):
        if _method_call(statement, "backward") or _method_call(statement, "zero_grad"):
            run.append(statement)
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else None
        if targets is None:
            break
        assigned = {node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)}
        if not assigned & needed or statement.value is None:
            break
        run.append(statement)
        needed |= {node.id for node in ast.walk(statement.value) if isinstance(node, ast.Name)}
    return run[::-1]


__all__ = ["stale_closure_diagnoses"]
