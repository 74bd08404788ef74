"""AD169: `target.load_state_dict(target.state_dict())`, a module loading its own state: every
tensor is copied onto itself, and the module (a target network) keeps the values it had
(recording/state_snapshots.py decides that the dict holds the module's own tensors, that the
module is in no optimizer that stepped, and that a module of its class in the caller's frame is).

The line to change is the load. Where one module of the class is trained and bound in that
frame, and the argument is written `<receiver>.state_dict(...)`, the help loads that module's
state instead (`target.load_state_dict(online.state_dict())`); otherwise it advises. The program
raised nothing, so the change is not verified: it changes what the target holds.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment, statement_location


def own_state_load_diagnosis(event) -> Diagnosis | None:
    """AD169 for an `OwnStateLoaded` event, or None when the load's line is unknown."""
    loaded = event.loaded[0] if event.loaded else None
    if loaded is None:
        return None
    who = f"`{event.receiver}`" if event.receiver else f"this {event.module_type}"
    primary = location_of(loaded, role="load", note=f"the dict is {who}'s own state_dict(): "
                                                     "each tensor is copied onto itself")
    notes = [f"state_dict() returns the module's own tensors (detached, sharing their memory): loading it back "
             f"into the same module changes nothing, so {who} keeps the values it had",
             f"{who} is in no optimizer that stepped, while a {event.module_type} bound here is trained"
             + (f" (`{event.twin}`)" if event.twin else "") + ": a target network refreshed from itself "
             "instead of from the network being trained never follows it"]
    helps = []
    change = _load_from_twin(loaded, event.receiver, event.twin)
    if change is not None:
        replacement, statement = change
        helps.append(Suggestion(f"load the state of the {event.module_type} being trained, `{event.twin}`",
                                replacement, statement_location(loaded.filename, statement)))
    else:
        helps.append(Suggestion(f"load the state_dict() of the {event.module_type} that is trained (the online "
                                "network), not of the module itself"))
    return Diagnosis(code=codes.OWN_STATE_LOADED, title=codes.title(codes.OWN_STATE_LOADED), severity="warning",
                     primary=primary, notes=notes, help=helps)


def _load_from_twin(site, receiver: str | None, twin: str | None) -> tuple[str, ast.stmt] | None:
    """The load statement with its argument's `<receiver>.state_dict(...)` owner replaced by
    `twin`, and the statement; None unless the line reads exactly so."""
    if receiver is None or twin is None:
        return None
    scope = Scope(site.filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if statement is None:
        return None
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "load_state_dict" and node.args):
            continue
        argument = node.args[0]
        if not (isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute)
                and argument.func.attr == "state_dict"):
            return None
        owner = argument.func.value
        if segment(site.filename, owner) != receiver or segment(site.filename, node.func.value) != receiver:
            return None
        replacement = replace_node_text(site.filename, statement, owner, twin)
        return (replacement, statement) if replacement is not None else None
    return None
