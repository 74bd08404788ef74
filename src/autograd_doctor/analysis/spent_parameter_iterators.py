"""AD242: an optimizer parameter group built from an iterator an earlier group had read to the end.

`hypernet_params = filter(lambda p: id(p) not in backbone_ids, model.parameters())`, passed to
`Adam([{"params": hypernet_params, ...}, ...])` and again to the Adam built anew each epoch to
decay the learning rate (hyperIQA's solver): a filter object is an iterator, the first optimizer
reads it to the end, and every later one gets an empty group. Those parameters keep getting
gradients and are never stepped after the first epoch; nothing fails.

Judged when the doctor stops, from the groups recording/optimizer_groups.py saw built: a group
given the very iterator object an earlier group got tensors from, and which got none itself. The
line to change is where the iterator is made (the latest assignment of the name the group's
"params" is written with, before the construction that read it); the help makes it a list there,
so every optimizer built from it holds the same parameters. The constructions are labels.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.source_scope import Scope
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_location


def spent_iterator_diagnoses(recorder) -> list[Diagnosis]:
    found, seen = [], set()
    for finding in recorder.optimizer_groups.findings:
        site = finding.site
        if site is None or (site.filename, site.lineno, finding.group_index) in seen:
            continue
        seen.add((site.filename, site.lineno, finding.group_index))
        diagnosis = _diagnosis(finding)
        if diagnosis is not None:
            found.append(diagnosis)
    return found


def _group_source(statement: ast.stmt, index: int) -> ast.AST | None:
    """The expression written as group `index`'s "params" in the optimizer construction."""
    for call in (node for node in ast.walk(statement) if isinstance(node, ast.Call)):
        argument = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "params"), None)
        if isinstance(argument, (ast.List, ast.Tuple)) and index < len(argument.elts):
            group = argument.elts[index]
            if isinstance(group, ast.Dict):
                for key, value in zip(group.keys, group.values):
                    if isinstance(key, ast.Constant) and key.value == "params":
                        return value
        elif isinstance(argument, ast.Name) and index == 0:
            return argument
    return None


def _diagnosis(finding) -> Diagnosis | None:
    site, earlier = finding.site, finding.earlier_site
    filename = site.filename
    scope = Scope(filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if statement is None:
        return None
    source = _group_source(statement, finding.group_index)
    given = segment(filename, source) if source is not None else "an iterator"
    where = f"line {earlier.lineno}" if earlier is not None and earlier.filename == filename else "an earlier construction"
    construction = statement_location(
        filename, statement, role="optimizer",
        note=f"group {finding.group_index} of this {finding.optimizer_class} gets {given}, which the optimizer built "
             f"at {where} already read to the end: the group is empty")
    related = [construction]
    if earlier is not None:
        related.append(location_of(earlier, role="read", note=f"reads {given} to the end ({finding.earlier_count} "
                                                              "tensors): the optimizer that got them"))
    notes = [f"{given} is a {finding.iterator_type} object, an iterator: it can be read once. The first optimizer "
             "built from it took its tensors; this one got none, so those parameters keep getting gradients and are "
             "never stepped by it (no error: torch refuses an optimizer without parameters, not an empty group)"]
    helps = []
    primary = construction
    made = None
    if isinstance(source, ast.Name):
        before = earlier.lineno if earlier is not None and earlier.filename == filename else statement.lineno
        made = scope.latest_assignment(source.id, before)
    if made is not None:
        binding, value = made
        made_location = statement_location(filename, binding, role="made",
                                           note=f"{given} is made here, as an iterator that can be read once")
        if isinstance(binding, ast.Assign) and len(binding.targets) == 1 and binding.lineno == binding.end_lineno \
                and isinstance(value, (ast.Call, ast.GeneratorExp)):
            primary = made_location
            inner = segment(filename, value)
            if isinstance(value, ast.GeneratorExp) and not inner.startswith("("):
                inner = f"({inner})"
            helps.append(Suggestion(
                f"make {given} a list where it is made, so that every optimizer built from it holds the same "
                "parameters", f"{given} = list({inner})", statement_location(filename, binding)))
        else:
            related.append(made_location)
    if not helps:
        helps.append(Suggestion("give each optimizer a list of the parameters (`list(...)` once, where they are "
                                "chosen), not an iterator an earlier optimizer may have read to the end"))
    return Diagnosis(code=codes.OPTIMIZER_GROUP_FROM_SPENT_ITERATOR,
                     title=codes.title(codes.OPTIMIZER_GROUP_FROM_SPENT_ITERATOR), severity="warning",
                     primary=primary, related=[r for r in related if r is not None and r is not primary], notes=notes,
                     help=helps)


__all__ = ["spent_iterator_diagnoses"]
