"""AD217: `best = model.state_dict()` kept as a snapshot, and `model.load_state_dict(best)`
later restored nothing (recording/state_snapshots.py decides that the load was of the module's
own tensors, written since the snapshot was taken).

The line to change is the `state_dict()` call: the help keeps copies there,
`{name: value.clone() for name, value in model.state_dict().items()}` (what
`copy.deepcopy(model.state_dict())` gives, without an import).
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment, statement_location


def stale_snapshot_diagnosis(event) -> Diagnosis | None:
    """AD217 for a `StaleSnapshotLoaded` event, or None when the snapshot's line is unknown."""
    taken = event.taken[0] if event.taken else None
    loaded = event.loaded[0] if event.loaded else None
    if taken is None:
        return None
    primary = location_of(taken, role="snapshot", note="state_dict() returns the module's own tensors, not copies")
    related = [location_of(loaded, role="load", note=f"this loads the {event.module_type}'s current values "
                                                     "into themselves: nothing changes")]
    changed = "all" if event.changed == event.sampled else f"{event.changed} of the {event.sampled} sampled"
    notes = [f"the dict holds detached views of the {event.module_type}'s parameters and buffers, which share "
             f"their memory: every in-place update since the snapshot (optimizer steps) changed it too ({changed} "
             "entries were written since), so it holds the latest values, not the ones of the moment it was taken"]
    helps = []
    call = _state_dict_call(taken)
    if call is not None:
        statement, node = call
        owner = segment(taken.filename, node.func.value)
        arguments = segment(taken.filename, node)[len(segment(taken.filename, node.func)):]
        copied = f"{{name: value.clone() for name, value in {owner}.state_dict{arguments}.items()}}"
        replacement = replace_node_text(taken.filename, statement, node, copied)
        if replacement is not None:
            helps.append(Suggestion("keep a copy of each tensor when taking the snapshot (as "
                                    "copy.deepcopy(model.state_dict()) does)", replacement,
                                    statement_location(taken.filename, statement)))
    if not helps:
        helps.append(Suggestion("keep copies: copy.deepcopy(model.state_dict()), or "
                                "{name: value.clone() for name, value in model.state_dict().items()}"))
    return Diagnosis(code=codes.STALE_STATE_SNAPSHOT, title=codes.title(codes.STALE_STATE_SNAPSHOT),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _state_dict_call(site) -> tuple[ast.stmt, ast.Call] | None:
    """The statement at `site` and its `owner.state_dict(...)` call, if the line has one."""
    scope = Scope(site.filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if statement is None:
        return None
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "state_dict" \
                and node.lineno <= site.lineno <= node.end_lineno:
            return statement, node
    return None
