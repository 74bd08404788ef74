"""AD101's help when one tensor is read before a helper's in-place write and again after it.

A helper writes in place into its argument (`logits.div_(temperature)`) and reads it again; before
the helper was called, another op read the same tensor and kept it for backward (`logsumexp`, `mul`
keep their inputs). The program makes two reads of one tensor, one of the old values and one of the
new. Writing out of place keeps that: the earlier read still sees the old values. Making the change
once before the first read is the other repair: both reads see the new values. Both run, and nothing
in the program says which the earlier read meant (OpenRLHF's accepted fix is the second, while the
out-of-place change keeps the program's own forward values), so the help is advice naming both.

The evidence, all read from the program's text at the failure, nothing recorded per op: the save is
of an input of the op that made it (not its output, which only the write itself reads), the written
name is a parameter of the function that writes, that function does not read it before the write
(so the saving read came before the call), and reads it after the write.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.fixes import written_root
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, statement_at


def _input_slot(slot: str | None) -> bool:
    """The slot holds an input of the op that saved it (`self`, `other`, `mat2`, ...)."""
    return bool(slot) and slot != "result" and not slot.startswith("saved_tensors[")


def _loads(function: ast.AST, name: str) -> list[ast.Name]:
    return [node for node in ast.walk(function)
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)]


def read_before_and_after(write, slot: str | None) -> str | None:
    """The written name when the write is a helper's write into its argument that an earlier op
    read and saved before the helper ran, and that the helper reads again after the write; None
    otherwise."""
    site = write.site if write is not None else None
    if site is None or write.optimizer or write.module_class or not _input_slot(slot):
        return None
    tree = parse_file(site.filename)
    statement = statement_at(site.filename, site.lineno) if tree is not None else None
    root = written_root(statement) if statement is not None else None
    if not isinstance(root, ast.Name):
        return None
    function = enclosing_function(tree, site.lineno)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    arguments = function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    if not any(argument.arg == root.id for argument in arguments):
        return None
    inside = {id(node) for node in ast.walk(statement)}
    loads = [node for node in _loads(function, root.id) if id(node) not in inside]
    if any(node.lineno < statement.lineno for node in loads):
        return None  # the helper itself read it first: the order is the helper's own
    if any(isinstance(node, (ast.For, ast.While)) and node.lineno <= statement.lineno <= (node.end_lineno or 0)
           for node in ast.walk(function)):
        return None  # in a loop, a later iteration's write comes before its reads too
    if not any(node.lineno > (statement.end_lineno or statement.lineno) for node in loads):
        return None
    return root.id


def two_reads_advice(name: str, write, save_site, helps: list[Suggestion]) -> list[Suggestion]:
    """The advice that replaces the out-of-place change: both repairs, neither applied."""
    function = _function_name(write.site)
    out_of_place = next((h.replacement.strip() for h in helps if h.replacement), None)
    if save_site is not None and save_site.filename == write.site.filename:
        earlier = f"the read at line {save_site.lineno}, which kept `{name}` for backward"
    elif save_site is not None:
        earlier = f"the read at {save_site.filename}:{save_site.lineno}, which kept `{name}` for backward"
    else:
        earlier = f"the op that read `{name}` and kept it for backward before {function}() was called"
    caller = write.stack[1] if len(write.stack) > 1 else None
    where = f" (in the caller: before the tensor passed at line {caller.lineno} is first read)" \
        if caller is not None and caller.filename == write.site.filename else ""
    first = (f"if {earlier} was meant to see the values before this write, write out of place"
             + (f": `{out_of_place}`" if out_of_place else " (the op without its trailing `_`, under the same name)"))
    second = (f"if every read was meant to see the written values, make this change once, out of place, before "
              f"the first read of the tensor{where}, and drop this write: the out-of-place line alone keeps the "
              "earlier read on the old values; autograd-doctor cannot tell which of the two the program means")
    return [Suggestion(first), Suggestion(second)]


def _function_name(site) -> str:
    tree = parse_file(site.filename)
    function = enclosing_function(tree, site.lineno) if tree is not None else None
    return getattr(function, "name", "the helper")


__all__ = ["read_before_and_after", "two_reads_advice"]
