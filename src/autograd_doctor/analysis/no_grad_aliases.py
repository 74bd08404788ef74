"""AD155: a `with torch.no_grad():` block whose only statements give existing tensors new names.

`with torch.no_grad(): mu_stop, logvar_stop = mu, logvar` (an IWAE trained with the DReG estimator,
held-out set 13) reads as "stop the gradient", but no_grad only stops recording the operations run
inside the block, and an assignment runs none: the new names are the same tensors, with their
history, and every use of them still sends gradient into what made them. Nothing fails; the
gradient is the one the stop was meant to remove.

Looked at when a step() starts, from what the run recorded: a no_grad with block that the user's
code entered, whose body only binds names to names, and whose right-hand names held tensors that
require grad when the block was entered. Reported once per block. The help detaches each value.
"""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, statement_location
from autograd_doctor.recording import switches


class NoGradAliases:
    """Per run: the with blocks already reported."""

    def __init__(self) -> None:
        self._reported: set = set()
        # Entries recorded before this run (the recording keeps them across sessions, for
        # notebooks): a block entered again in this run is stored as a new entry object.
        self._earlier = list(switches.mode_entries("no_grad"))

    def at_step(self, optimizer, step_stack) -> Diagnosis | None:
        for entry in switches.mode_entries("no_grad"):
            key = (entry.filename, entry.line)
            if entry.decorator or not entry.names_requiring_grad or key in self._reported \
                    or any(entry is earlier for earlier in self._earlier):
                continue
            found = _aliasing_block(entry.filename, entry.line)
            if found is None:
                continue
            block, pairs = found
            if not all(value in entry.names_requiring_grad for _, value in pairs):
                continue
            self._reported.add(key)
            return _diagnosis(entry.filename, block, pairs, step_stack, type(optimizer).__name__)
        return None


def _is_no_grad(item: ast.withitem) -> bool:
    call = item.context_expr
    return isinstance(call, ast.Call) and not call.args and not call.keywords and (
        (isinstance(call.func, ast.Attribute) and call.func.attr == "no_grad")
        or (isinstance(call.func, ast.Name) and call.func.id == "no_grad"))


def _names(node: ast.AST) -> list[str] | None:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple) and all(isinstance(element, ast.Name) for element in node.elts):
        return [element.id for element in node.elts]
    return None


def _aliasing_block(filename: str, line: int) -> tuple[ast.With, list[tuple[str, str]]] | None:
    """The `with torch.no_grad():` statement on `line` when its body only binds names to names,
    with the (new name, existing name) pairs it binds."""
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.With) and node.lineno == line and len(node.items) == 1
                and _is_no_grad(node.items[0]) and node.items[0].optional_vars is None):
            continue
        pairs = []
        for statement in node.body:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                return None
            targets, values = _names(statement.targets[0]), _names(statement.value)
            if targets is None or values is None or len(targets) != len(values):
                return None
            pairs.extend(zip(targets, values))
        return (node, pairs) if pairs else None
    return None


def _diagnosis(filename: str, block: ast.With, pairs: list[tuple[str, str]], step_stack,
               optimizer_class: str) -> Diagnosis:
    targets = ", ".join(target for target, _ in pairs)
    values = ", ".join(value for _, value in pairs)
    primary = statement_location(filename, block, role="aliased",
                                 note=f"{targets} {'is' if len(pairs) == 1 else 'are'} {values} itself: "
                                      "no_grad() detaches nothing that already exists")
    related = []
    if step_stack:
        related.append(location_of(step_stack[0], role="step",
                                   note=f"{optimizer_class}.step() applies the gradients that went through them"))
    notes = [
        f"torch.no_grad() stops autograd from recording the operations run inside the block; an assignment runs "
        f"none, so {targets} {'is' if len(pairs) == 1 else 'are'} the same tensor{'' if len(pairs) == 1 else 's'} "
        f"as {values}, history included, and every use of {targets} still sends gradient into what made {values}",
    ]
    detached = ", ".join(f"{value}.detach()" for _, value in pairs)
    helps = [Suggestion(f"detach the values: {targets} then hold the same numbers without history, which is what "
                        "the stop-gradient means",
                        f"{targets} = {detached}", statement_location(filename, block))]
    return Diagnosis(code=codes.NO_GRAD_ALIAS, title=codes.title(codes.NO_GRAD_ALIAS), severity="warning",
                     primary=primary, related=related, notes=notes, help=helps)
