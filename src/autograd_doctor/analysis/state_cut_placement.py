"""AD103 where the stepped weights were saved by an earlier iteration's forward, reached through a
state a module carries, and the program's own cut of that state runs in the loop around the loop
of backward() and step() (mobile-vod-bottleneck-lstm#25, set 36).

An LSTM kept on the module (`self.hidden_state = new_h` in forward) carries each frame's graph into
the next; the program has a call that detaches it (`net.detach_hidden()`, whose method calls
`.detach_()` on those attributes), but right after the inner loop that runs backward() and
`step()` for every frame, once per clip. From the second frame on, backward() goes back into the
previous frame's graph, whose weights `step()` changed: "modified by an inplace operation". The
help moves that call to the end of the inner loop's body: every backward() then stops at the state
it was given, with the same forward values (a detach changes no value).

Evidence, all required: every tensor a module under the called object keeps on an attribute and
that reaches the node that saved the stepped weight is detached by the call (its method, or one
method it calls on a submodule, `.detach_()`s that attribute or assigns it a `.detach()`); the call
is the statement right after the inner loop in the outer loop's body. Anything else: None.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.backward_twice import _class_definition, _stateful_submodules
from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import frame_values, live_frame
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, segment, source_line, statement_location

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def misplaced_state_cut(node, backward_site, optimizer_name: str) -> tuple[Suggestion, Location] | None:
    """(the help, the cut's location as the primary) or None."""
    frame = live_frame(backward_site)
    if frame is None or node is None:
        return None
    try:
        values = frame_values(frame)
    finally:
        del frame
    filename = backward_site.filename
    tree = parse_file(filename)
    if tree is None:
        return None
    scope = enclosing_function(tree, backward_site.lineno)
    loops = [loop for loop in ast.walk(scope) if isinstance(loop, _LOOPS)
             and loop.lineno <= backward_site.lineno <= loop.end_lineno]
    if len(loops) < 2:
        return None
    loops.sort(key=lambda loop: loop.lineno)
    inner = loops[-1]
    outer = next((loop for loop in reversed(loops[:-1]) if inner in loop.body), None)
    if outer is None:
        return None
    position = outer.body.index(inner)
    if position + 1 >= len(outer.body):
        return None
    cut = outer.body[position + 1]
    found = _cut_call(cut, values)
    if found is None:
        return None
    top, cut_attributes = found
    carriers = _stateful_submodules(top, [node])
    if not carriers or any(attribute not in cut_attributes for _, _, attribute in carriers):
        return None  # a state the call leaves carried would still bring the old graph in
    return _move_into(filename, inner, cut, carriers, optimizer_name)


def _cut_call(statement: ast.stmt, values: dict) -> tuple[torch.nn.Module, set[str]] | None:
    """`model.method()` on a module of the frame whose method cuts attributes of its modules' state:
    (the module, the attributes cut)."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    call = statement.value
    if call.args or call.keywords or not isinstance(call.func, ast.Attribute) \
            or not isinstance(call.func.value, ast.Name):
        return None
    top = values.get(call.func.value.id)
    if not isinstance(top, torch.nn.Module):
        return None
    cut = _attributes_cut(top, call.func.attr, depth=0)
    return (top, cut) if cut else None


def _attributes_cut(module: torch.nn.Module, method_name: str, depth: int) -> set[str]:
    found = _class_definition(module)
    if found is None or depth > 2:
        return set()
    method = next((m for m in found[1].body if isinstance(m, ast.FunctionDef) and m.name == method_name), None)
    if method is None or len(method.args.args) != 1:
        return set()
    cut: set[str] = set()
    for node in ast.walk(method):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            receiver = node.func.value
            if node.func.attr == "detach_" and isinstance(receiver, ast.Attribute) and _under_self(receiver):
                cut.add(receiver.attr)
            elif not node.args and not node.keywords and isinstance(receiver, ast.Attribute) \
                    and _under_self(receiver) and node.func.attr != "detach":
                path = _self_path(receiver)
                try:
                    submodule = module.get_submodule(path) if path else None
                except AttributeError:
                    submodule = None
                if isinstance(submodule, torch.nn.Module):
                    cut |= _attributes_cut(submodule, node.func.attr, depth + 1)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and _detaches(node.value):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and _under_self(target):
                    cut.add(target.attr)
    return cut


def _under_self(node: ast.AST) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _self_path(node: ast.Attribute) -> str | None:
    """`self.a.b` -> "a.b"."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join(reversed(parts)) if isinstance(node, ast.Name) and node.id == "self" else None


def _detaches(call: ast.Call) -> bool:
    """`x.detach()` (or a chain that starts with it, `x.detach().clone()`)."""
    node = call
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "detach" and not node.args:
            return True
        node = node.func.value
    return False


def _move_into(filename: str, inner: ast.AST, cut: ast.stmt, carriers: list,
               optimizer_name: str) -> tuple[Suggestion, Location] | None:
    last = inner.body[-1]
    if isinstance(last, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.Try)) or inner.orelse:
        return None
    for number in range(inner.end_lineno + 1, cut.lineno):
        if source_line(filename, number).strip():
            return None  # something (a comment) between the loop and the call: not moved blind
    inner_indent = source_line(filename, last.lineno)[: last.col_offset]
    cut_indent = source_line(filename, cut.lineno)[: cut.col_offset]
    lines = []
    for number, indent in [*((n, inner_indent) for n in range(last.lineno, last.end_lineno + 1)),
                           *((n, cut_indent) for n in range(cut.lineno, cut.end_lineno + 1))]:
        text = source_line(filename, number)
        if text.strip() and not text.startswith(indent):
            return None
        lines.append(text[len(indent):])
    call_text = segment(filename, cut)
    if not call_text:
        return None
    location = statement_location(filename, last)
    location.end_line = cut.end_lineno
    location.end_column = cut.end_col_offset
    state = ", ".join(sorted({attribute for _, _, attribute in carriers}))
    help = Suggestion(
        f"call {call_text} at the end of every iteration of the loop at line {inner.lineno}, after "
        f"{optimizer_name}.step(), not once after that loop: the state it detaches ({state}) carries each "
        "iteration's graph into the next, so this backward() went back into the previous iteration's graph, "
        f"whose weights {optimizer_name}.step() had changed (a detach changes no value)",
        "\n".join(lines), location, cuts_carried_graph=True)
    primary = statement_location(filename, cut, role="cut", note=f"detaches {state} once per pass of the outer loop, "
                                 f"not after each {optimizer_name}.step()")
    return help, primary
