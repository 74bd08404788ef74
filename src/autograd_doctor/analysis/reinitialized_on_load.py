"""AD171: a module whose forward initialises its parameters from the first batch it sees (a
data-dependent initialisation: Glow's ActNorm) and remembers that it did in a plain Python
attribute (`self.initialized = True`). The attribute is not in the state dict: a module built
anew and given a checkpoint with `load_state_dict` has the flag False again, and its first
forward overwrites the loaded values with the statistics of the current batch.

Looked at when `load_state_dict` returns: for each class of the loaded module and its submodules
written in the user's files, a `forward` with `if not self.<flag>:` whose block writes into one
of the module's own parameters (`self.<p>.copy_(...)`, `self.<p>.data = ...`, `.fill_`) and sets
`self.<flag> = True`, where the instance's flag is a Python `False` and no buffer of that name
exists. The line named is the flag's assignment in `__init__`; the change needs two lines (the
flag registered as a buffer, and set with `fill_`), so it is advice.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import class_definition, location_of, statement_location
from autograd_doctor.recording.frames import in_installed_package

WRITES = ("copy_", "fill_", "zero_", "normal_", "uniform_", "mul_", "add_")


def reinitialized_on_load_diagnoses(module: torch.nn.Module, loaded: tuple) -> list[Diagnosis]:
    """AD171 for each class of `module` (and its submodules) that will initialise again what the
    load just gave it."""
    found = []
    seen = set()
    for sub in module.modules():
        kind = type(sub)
        if kind in seen:
            continue
        seen.add(kind)
        guard = _data_dependent_initialisation(kind)
        if guard is None:
            continue
        filename, flag, assignment, branch, parameter = guard
        value = sub.__dict__.get(flag)
        if type(value) is not bool or value or flag in sub._buffers:
            continue
        if parameter not in sub._parameters:
            continue
        found.append(_diagnosis(kind.__name__, filename, flag, assignment, branch, parameter, loaded))
    return found


def _diagnosis(class_name: str, filename: str, flag: str, assignment: ast.stmt, branch: ast.If, parameter: str,
               loaded: tuple) -> Diagnosis:
    primary = statement_location(filename, assignment, role="flag", note=f"self.{flag} is a plain attribute: "
                                 "load_state_dict() neither saves nor restores it")
    related = [statement_location(filename, branch, role="initialisation",
                                  note=f"the first forward after the load runs this again and overwrites "
                                       f"self.{parameter}, which the load just set"),
               location_of(loaded[0], role="load", note=f"loads the {class_name}'s trained values, with "
                                                         f"self.{flag} still False") if loaded else None]
    notes = [f"{class_name} initialises self.{parameter} from the first batch it sees and records that in self.{flag}; "
             "the state dict holds the parameters but not the flag, so a module built anew and loaded from a "
             "checkpoint initialises again and trains (or samples) from values the checkpoint never held"]
    helps = [Suggestion(f"keep the flag in a buffer, which the state dict carries: "
                        f"`self.register_buffer(\"{flag}\", torch.tensor(False))` here, and "
                        f"`self.{flag}.fill_(True)` where it is set")]
    return Diagnosis(code=codes.REINITIALIZED_AFTER_LOAD, title=codes.title(codes.REINITIALIZED_AFTER_LOAD),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _data_dependent_initialisation(kind: type):
    """(file, flag, the flag's `= False` in __init__, the `if not self.<flag>:` in forward, a
    parameter the block writes) for a class written in the user's files, or None."""
    found = class_definition(kind)
    if found is None or in_installed_package(found[0]):
        return None
    filename, definition = found
    methods = {n.name: n for n in definition.body if isinstance(n, ast.FunctionDef)}
    forward, init = methods.get("forward"), methods.get("__init__")
    if forward is None or init is None:
        return None
    for branch in ast.walk(forward):
        flag = _negated_flag(branch.test) if isinstance(branch, ast.If) else None
        if flag is None:
            continue
        block = ast.Module(body=branch.body, type_ignores=[])
        if not any(_sets_flag(n, flag, True) for n in ast.walk(block)):
            continue
        parameter = next((p for p in map(_written_attribute, ast.walk(block)) if p is not None), None)
        assignment = next((n for n in ast.walk(init) if _sets_flag(n, flag, False)), None)
        if parameter is not None and assignment is not None:
            return filename, flag, assignment, branch, parameter
    return None


def _self_attribute(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def _negated_flag(test: ast.expr) -> str | None:
    """`not self.<flag>` -> flag."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _self_attribute(test.operand)
    return None


def _sets_flag(node: ast.AST, flag: str, value: bool) -> bool:
    """`self.<flag> = <value>`."""
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and _self_attribute(node.targets[0]) == flag \
        and isinstance(node.value, ast.Constant) and node.value.value is value


def _written_attribute(node: ast.AST) -> str | None:
    """The `self.<p>` that `self.<p>.copy_(...)`, `self.<p>.data.copy_(...)` or `self.<p>.data = ...` writes."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES:
        target = node.func.value
        if isinstance(target, ast.Attribute) and target.attr == "data":
            target = target.value
        return _self_attribute(target)
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == "data":
            return _self_attribute(target.value)
    return None
