"""AD203 for a call given `out=` one of its own inputs: "unsupported operation: some elements of the
input tensor and the written-to tensor refer to a single memory location".

`torch.index_select(rows, 0, order, out=rows)` (a buffer shuffled without a copy) writes the rows
it still has to read. The recorder explains the in-place methods it wraps (`a[1:].sub_(a[:-1])`,
analysis/diagnose.py's overlap_error_diagnosis); a torch function's `out=` argument is not wrapped
by the default capture, so the message arrives here without a diagnosis. The call's `out=` and one
of its tensor arguments are read from the raising frame (live values, nothing of the user's runs)
and must share memory. The help binds the call's result, computed without `out=`, to the name or
attribute that `out=` named: the values the call means, in new memory, where every later read of
that name sees them. Where another local of the frame holds that memory too, or the name is a
parameter of the function (the caller's tensor is the one meant), a rebound name would not reach
it: the help stays advice.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.errors.build import diagnosis, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, value_of
from autograd_doctor.analysis.fixes import _call_without_keyword, _plain
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, segment, statement_location
from autograd_doctor.recording.events import storage_key


def out_is_an_input(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    for call in sorted((n for n in ast.walk(statement) if isinstance(n, ast.Call)),
                       key=lambda n: (n.lineno, n.col_offset)):
        out_keyword = next((k for k in call.keywords if k.arg == "out"), None)
        if out_keyword is None:
            continue
        out = value_of(frame, out_keyword.value)
        memory = storage_key(out) if isinstance(out, torch.Tensor) else None
        if memory is None:
            continue
        inputs = [argument for argument in call.args if _tensor_on(frame, argument, memory)]
        if not inputs:
            continue
        destination, source = segment(filename, out_keyword.value), segment(filename, inputs[0])
        location.role, location.note = "modified", f"out={destination} is also the input {source}"
        notes = [f"out={destination} and the input {source} are the same memory: the call writes elements it "
                 "has still to read, and PyTorch refuses it"]
        without_out = _call_without_keyword(filename, call, "out")
        rebindable = isinstance(statement, ast.Expr) and statement.value is call and _plain(out_keyword.value) \
            and not _a_parameter(frame, out_keyword.value) \
            and not _memory_held_by_another_local(frame, out_keyword.value, memory)
        if without_out is None or destination is None or not rebindable:
            helps = [Suggestion(f"compute the result without out= and bind it to {destination}, or give the call "
                                f"a copy of its input ({source}.clone())")]
        else:
            # The statements right after it that give a call its own input as out= in the same way
            # (`torch.index_select(b.returns, 0, order, out=b.returns)` after the states) would raise
            # next: they are rebound in the same change.
            rebound, last = [f"{destination} = {without_out}"], statement
            for following in _following_statements(filename, statement):
                again = _rebinding_of_own_input(filename, frame, following)
                if again is None:
                    break
                rebound.append(again)
                last = following
            change = statement_location(filename, statement)
            change.end_line, change.end_column = last.end_lineno, last.end_col_offset
            helps = [Suggestion(f"bind the result, computed without out=, to {destination}: new memory, with the "
                                "values the call means (its whole input read first)"
                                + (f"; the {len(rebound) - 1} statement(s) after it that do the same are rebound "
                                   "too" if len(rebound) > 1 else ""),
                                "\n".join(rebound), change)]
        return diagnosis(codes.OVERLAPPING_INPLACE, location, notes=notes, help=helps)
    return None


def _following_statements(filename: str, statement: ast.stmt) -> list[ast.stmt]:
    """The statements after `statement` in the block that holds it."""
    tree = parse_file(filename)
    for node in ast.walk(tree) if tree is not None else ():
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(item is statement for item in block):
                return block[next(i for i, item in enumerate(block) if item is statement) + 1:]
    return []


def _rebinding_of_own_input(filename: str, frame, statement: ast.stmt) -> str | None:
    """`dest = call(...)` for a statement that is only a call given, as out=, the very expression
    of one of its positional arguments (a name or an attribute chain, not a parameter of the
    function); None for any other statement."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call):
        return None
    out_keyword = next((k for k in call.keywords if k.arg == "out"), None)
    if out_keyword is None or not _plain(out_keyword.value) or _a_parameter(frame, out_keyword.value):
        return None
    destination = segment(filename, out_keyword.value)
    if destination is None or all(segment(filename, argument) != destination for argument in call.args):
        return None
    without_out = _call_without_keyword(filename, call, "out")
    return f"{destination} = {without_out}" if without_out else None


def _tensor_on(frame, node: ast.expr, memory: int) -> bool:
    value = value_of(frame, node)
    return isinstance(value, torch.Tensor) and storage_key(value) == memory


def _a_parameter(frame, destination: ast.expr) -> bool:
    """`out=rows` where rows is a parameter of the function: the caller's tensor is the one the
    write was for, and rebinding the local name would not change it."""
    if not isinstance(destination, ast.Name):
        return False
    code = frame.f_code
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    return frame.f_globals is not frame.f_locals and destination.id in parameters


def _memory_held_by_another_local(frame, destination: ast.expr, memory: int) -> bool:
    """Whether a local tensor of the frame, other than the one `destination` starts from, is on
    that memory (a view kept by another name): it would keep the old values after the rebinding."""
    root = destination
    while isinstance(root, ast.Attribute):
        root = root.value
    for name, value in list(frame.f_locals.items()):
        if isinstance(root, ast.Name) and name == root.id:
            continue
        if isinstance(value, torch.Tensor) and storage_key(value) == memory:
            return True
    return False


MATCHERS = [
    (r"some elements of the input tensor and the written-to tensor refer to a single memory location",
     out_is_an_input),
]
