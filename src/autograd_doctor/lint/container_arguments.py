"""forward() arguments that are lists of tensors, not tensors.

The walk takes every unannotated argument of a module's `forward()` for a
tensor (callers pass activations there).  GraphRNN's GraphSAGE passes
`forward(self, nodes_list, nodes_count_list)` a Python list of tensors and
replaces its elements, `nodes_list[0] = self.linear_projection(nodes_list[0])`:
read as a tensor, that is an indexed write into the tensor `F.linear` saved,
and ADL001 reported seven such lines.  The argument's own uses are the
evidence: a function that only ever indexes the name with integer constants
(`x[0]`, `x[-1]`; never `x` alone, a slice, a method of `x` or arithmetic on
it) treats it as a sequence, so an element assignment replaces an element.
A detection head's `for i in range(self.nl): x[i] = self.m[i](x[i])` (YOLOP,
yolov5-face: `x` is the list of feature maps) indexes it with a loop counter
instead (a `for` target over `range(...)`, or the count of `enumerate(...)`),
asks `len(x)`, and returns `x` as is (`return x if self.training else (z, x)`,
or YOLOv7's `out = x` / `out = (torch.cat(z, 1), x)` in branches, then `return out`):
none of these uses a tensor as a tensor either, and `x.append(...)` is a list's
own method.  Any other use (`x.shape`, `x[:, i]`, `x[i, j]`, `x * 2`, `f(x)`)
is a tensor's, and keeps `x` a tensor.
It is asked only at such an assignment (``Statements.indexed_container``), so
the walk costs nothing for any other forward().  A tensor argument written
that way (`x[0] = self.fc(x[0])` with every other use an integer index too)
goes unreported: the link "the argument is a tensor" has no evidence there.
"""

from __future__ import annotations

import ast


def integer_index(index) -> bool:
    """``0``, ``-1``: an integer constant (not a slice, a mask or a name)."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and type(index.value) is int


LIST_METHODS = frozenset({"append", "extend", "insert"})  # a list's, not a tensor's


def loop_counters(function: ast.AST) -> set:
    """Names a `for` loop binds to a count: `for i in range(...)`, `for i, m in
    enumerate(...)` (an integer on every iteration)."""
    counters = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.For) or not isinstance(node.iter, ast.Call) \
                or not isinstance(node.iter.func, ast.Name):
            continue
        target = node.target
        if node.iter.func.id == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
            target = target.elts[0]
        elif node.iter.func.id != "range":
            continue
        if isinstance(target, ast.Name):
            counters.add(target.id)
    return counters


def _returned_as_is(function: ast.AST, name: str) -> set:
    """ids of the mentions of ``name`` that a `return` hands back untouched: the
    value itself, an element of a returned tuple or list, a branch of a returned
    conditional expression (`return x if self.training else (z, x)`); also where it is
    put, so, into a name that is only ever returned as is (YOLO's detection heads:
    `out = x` or `out = (torch.cat(z, 1), x)` in branches, then `return out`)."""
    returned = {id(part) for node in ast.walk(function) if isinstance(node, ast.Return) and node.value is not None
                for part in _untouched_parts(node.value)}
    loads: dict[str, list] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, []).append(id(node))
    found = returned & set(loads.get(name, ()))
    for node in ast.walk(function):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        holder = node.targets[0].id
        if holder == name or not loads.get(holder) or not all(mention in returned for mention in loads[holder]):
            continue  # the holder is read some other way than returned as is
        found.update(id(part) for part in _untouched_parts(node.value) if isinstance(part, ast.Name)
                     and part.id == name)
    return found


def _untouched_parts(value: ast.AST) -> list:
    """The expressions a value hands on untouched: itself, the elements of a tuple or list,
    the branches of a conditional expression (recursively)."""
    parts, pending = [], [value]
    while pending:
        value = pending.pop()
        parts.append(value)
        if isinstance(value, (ast.Tuple, ast.List)):
            pending.extend(value.elts)
        elif isinstance(value, ast.IfExp):
            pending.extend((value.body, value.orelse))
    return parts


def only_indexed_by_integers(function: ast.AST, name: str) -> bool:
    """Every mention of ``name`` in ``function``'s body is a sequence's use:
    `name[<integer>]` or `name[<loop counter>]`, `len(name)`, `name.append(...)`,
    or `name` returned as is; and at least one is an index."""
    counters = loop_counters(function)
    allowed = _returned_as_is(function, name)
    indexed = 0
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and sequence_index(node.slice, counters):
            indexed += 1
            allowed.add(id(node.value))
        elif isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Name) \
                and node.args[0].id == name and isinstance(node.func, ast.Name) and node.func.id == "len":
            allowed.add(id(node.args[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in LIST_METHODS and isinstance(node.func.value, ast.Name) \
                and node.func.value.id == name:
            allowed.add(id(node.func.value))
    mentions = [node for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name]
    return indexed > 0 and all(id(node) in allowed for node in mentions)


def sequence_index(index, counters) -> bool:
    """An integer constant, or a loop counter of the function (``loop_counters``)."""
    return integer_index(index) or isinstance(index, ast.Name) and index.id in counters
