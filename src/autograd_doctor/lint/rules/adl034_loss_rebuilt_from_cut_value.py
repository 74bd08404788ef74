"""ADL034: a loss rebuilt as a new tensor from a value cut from the graph
(`.item()`, `.detach()`, `.data`, NumPy, `float()`), then backpropagated."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL034", name="loss-rebuilt-from-cut-value",
    summary="A loss made as a new tensor from `.item()` / `.detach()` / NumPy values trains nothing.",
    what_it_does="""Finds `name = torch.tensor(v, ...)` (also `torch.Tensor`, `torch.FloatTensor`,
`torch.from_numpy`, `torch.as_tensor`, `Variable(v, ...)`, with methods such
as `.mean()` or `.requires_grad_()` after it) where `v` is a value cut from
the graph: `t.item()`, `t.tolist()`, `t.numpy()`, `t.detach()`, `t.data`,
`float(t)`, a NumPy or other non-torch function of such values, or a name
bound to one earlier in the function; or where `v` still carries the graph
(the constructor itself copies it out: `torch.tensor(loss, requires_grad=True)`
of a loss summed with `loss += criterion(model(x), y)` from a number); and
`name.backward()` is then called on
that very binding in the same function.  Without `requires_grad=True` (or a
later `name.requires_grad_()` / `name.requires_grad = True`) the backward
fails; with it, the finding needs an optimizer `step()` after the backward.
Across functions of the file: `loss = helper(...)` (a top-level function, a
method of `self`, or a method of the object a class holds as `self.attr =
Cls(...)`), `loss.backward()` on that binding and a `step()` after it, where the
helper's only `return` is `Variable(v, requires_grad=True)` or `torch.tensor(v,
requires_grad=True)` of a value computed from names (not a constant); the
finding is at the helper's constructor.""",
    why_bad="""The new tensor is a leaf with no path to the model: `torch.tensor`,
`from_numpy` and friends copy values, and the value was already cut.  Its
`backward()` either fails ("element 0 of tensors does not require grad and does
not have a grad_fn") or, when the new tensor was made with
`requires_grad=True` to silence that error, fills only its own `.grad`: every
parameter's gradient stays `None` and `optimizer.step()` changes nothing.""",
    example="""out = model(x)
loss = torch.tensor(loss_fn(out, y).item(), requires_grad=True)
loss.backward()
optimizer.step()""",
    use_instead="""out = model(x)
loss = loss_fn(out, y)
loss.backward()
optimizer.step()""",
    fix_safety="No fix: the loss has to be written with torch operations on the model's output.",
    known_problems="""A value carries the graph when it is known to (a module's output, an op on
one) or is a name summed from a number with `+=` / `-=` of such values in the
same function; a graph handed in by a caller is not known.
Only a backward on the new tensor's own name counts, in the same function or
on the binding of a helper's result above; a loss combined with other terms
first is not followed, nor a helper with several `return`s (one may be a
constant leaf for an empty batch, on purpose) or one defined or called in
another file.  A value cut in another function is not known to be cut.""",
)

_CONSTRUCTORS = frozenset({"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor",
                           "torch.from_numpy", "torch.as_tensor", "torch.autograd.Variable",
                           "torch.autograd.variable.Variable"})
_CUT_METHODS = frozenset({"item", "tolist", "numpy", "detach"})
# methods that keep a value what it is (cut or not) on the way
_KEEPS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "squeeze", "unsqueeze", "view",
                    "reshape", "flatten", "clone", "contiguous", "mean", "sum", "type", "astype",
                    "requires_grad_"})


def _cuts(scope) -> dict:
    return scope.__dict__.setdefault("_adl034_cuts", {})


def _cut_node(checker, node):
    """The node that cuts ``node``'s value from the graph (``node`` as a whole has
    none), or None when there is no such evidence."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _KEEPS and node.func.attr not in _CUT_METHODS:
        node = node.func.value
    if isinstance(node, ast.Name):
        entry = _cuts(checker.scope).get(node.id)
        if entry is not None:
            bound, cut = entry
            binding = checker.scope.binding(node.id, checker.seq + 1)
            if binding is not None and binding[1] is bound:
                return cut
        return None
    if isinstance(node, ast.Attribute) and node.attr == "data" and not checker.is_const(node.value):
        return node
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _CUT_METHODS and not node.args \
                and not checker.is_const(func.value):
            return node
        if isinstance(func, ast.Name) and func.id in ("float", "int") and len(node.args) == 1 \
                and (checker.is_tensor(node.args[0]) or checker.is_graph(node.args[0])):
            return node
        q = checker.qualname(func) or ""
        if q.startswith("torch.") or checker.called_module(node) is not None:
            return None
        # a NumPy (or other non-torch) function of cut values: `np.mean(err)`, `dice(p, m)`
        operands = list(node.args) + [k.value for k in node.keywords]
        if isinstance(func, ast.Attribute) and checker.qualname(func) is None:
            operands.append(func.value)
        return _cut_of_operands(checker, operands)
    if isinstance(node, ast.BinOp):
        return _cut_of_operands(checker, [node.left, node.right])
    if isinstance(node, ast.UnaryOp):
        return _cut_node(checker, node.operand)
    if isinstance(node, ast.Subscript):  # an element of cut values (`values[i]` of a NumPy array)
        return _cut_node(checker, node.value)
    return None


def _cut_of_operands(checker, operands):
    if any(isinstance(o, ast.Starred) or checker.is_graph(o) for o in operands):
        return None
    cut = None
    for operand in operands:
        found = _cut_node(checker, operand)
        if found is not None and cut is None:
            cut = found
    return cut


_ACCUMULATING = (ast.Add, ast.Sub, ast.Mult, ast.Div)


def _accumulates_graph(checker, name: str) -> bool:
    """``name`` was last bound to a number (`total = 0`) or to a value carrying the
    graph, and an augmented assignment since then (`total += criterion(model(x), y)`)
    added such a value with gradients on: it now carries that graph."""
    entries = checker.scope.bind_values.get(name, ())
    start = max((i for i, entry in enumerate(entries) if not isinstance(entry[1], ast.AugAssign)), default=None)
    if start is None:
        return False
    first = entries[start][1]
    if not (checker.is_number(first) or checker.is_graph(first)):
        return False
    return any(isinstance(node, ast.AugAssign) and isinstance(node.op, _ACCUMULATING) and not grad_off
               and checker.is_graph(node.value) for _, node, grad_off in entries[start + 1:])


def _accumulated_cut(checker, name: str):
    """The cut node when ``name`` was last bound to a number (`E = 0`) and every
    augmented assignment since then (`E += (i + 1) * values[i]`) added a value cut
    from the graph (`.item()`, NumPy of `.detach()`): the total is a plain number
    made of cut values.  None when any addition carries the graph or is unknown."""
    entries = checker.scope.bind_values.get(name, ())
    start = max((i for i, entry in enumerate(entries) if not isinstance(entry[1], ast.AugAssign)), default=None)
    if start is None or not checker.is_number(entries[start][1]):
        return None
    first_cut = None
    for _, node, _ in entries[start + 1:]:
        if not (isinstance(node, ast.AugAssign) and isinstance(node.op, _ACCUMULATING)):
            return None
        if checker.is_graph(node.value):
            return None
        cut = _cut_node(checker, node.value)
        if cut is None:
            return None
        first_cut = first_cut or cut
    return first_cut


def _rescaled_from(checker, name: str, value):
    """``value`` is arithmetic of ``name`` itself with Python numbers only
    (`loss = -loss / len(rewards)`): rebinding ``name`` to it keeps the same leaf
    copy, with no new path to a parameter."""
    names = [n for n in ast.walk(value) if isinstance(n, ast.Name) and n.id == name]
    if len(names) != 1:
        return False

    def numbers_around(node) -> bool:
        if isinstance(node, ast.Name) and node.id == name:
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, _ACCUMULATING):
            return all(numbers_around(side) if any(n is names[0] for n in ast.walk(side))
                       else checker.is_number(side) for side in (node.left, node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return numbers_around(node.operand)
        return False

    return numbers_around(value)


def _carries_graph(checker, node) -> bool:
    """``node`` (the constructor's argument) still carries an autograd graph: known
    to (checker.is_graph), a name summed up from such values, or arithmetic and
    value-keeping methods over one of them."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _KEEPS and node.func.attr not in _CUT_METHODS:
        node = node.func.value
    if isinstance(node, ast.Name):
        return checker.is_graph(node) or _accumulates_graph(checker, node.id)
    if isinstance(node, ast.BinOp):
        return _carries_graph(checker, node.left) or _carries_graph(checker, node.right)
    if isinstance(node, ast.UnaryOp):
        return _carries_graph(checker, node.operand)
    return checker.is_graph(node)


def _constructor(checker, value):
    """(constructor call, requires_grad) when ``value`` is a new tensor made by a
    constructor (then methods), else None."""
    requires = False
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
            checker.qualname(value.func) is None and value.func.attr in _KEEPS:
        if value.func.attr == "requires_grad_" and not checker.false_arg(value):
            requires = True
        value = value.func.value
    if not isinstance(value, ast.Call) or not value.args:
        return None
    q = checker.qualname(value.func) or ""
    if q not in _CONSTRUCTORS:
        return None
    if any(k.arg == "requires_grad" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
           for k in value.keywords):
        if not any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant)
                   and k.value.value is True for k in value.keywords):
            return None  # `requires_grad=flag`: unknown
        requires = True
    return value, requires


def _worth(checker) -> bool:
    flag = getattr(checker, "_adl034", None)
    if flag is None:
        src = checker.source
        # a backward, and a constructor that could rebuild a loss
        flag = checker._adl034 = ".backward(" in src and (
            "tensor(" in src or "Tensor(" in src or "from_numpy(" in src or "Variable(" in src)
    return flag


_MARKS = _CUT_METHODS | {"data"}
_TEXT_MARKS = re.compile("|".join(sorted(_MARKS | {"float", "int"})))


def _mentions_cut(checker, value, cuts) -> bool:
    # A walk of every assigned value was the rule's main cost (lint cost): first the
    # text of the value's lines, where a cut marker's name or a cut name must appear
    # (ASCII text: a non-ASCII identifier may be another spelling of a name)
    lines = checker.lines[value.lineno - 1:value.end_lineno or value.lineno]
    text = lines[0] if len(lines) == 1 else "".join(lines)
    if text.isascii() and _TEXT_MARKS.search(text) is None and not (cuts and any(n in text for n in cuts)):
        return False
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute):
            if node.attr in _MARKS:
                return True
        elif isinstance(node, ast.Name) and (node.id in cuts or node.id in ("float", "int")):
            return True
    return False


def on_name_assign(checker, name, value) -> None:
    scope = checker.scope
    if scope.grad_off or scope.function is None:
        return
    worth = getattr(checker, "_adl034", None)
    if not (_worth(checker) if worth is None else worth):
        return
    cuts = _cuts(scope)
    made = _constructor(checker, value)
    if made is not None:
        call, requires = made
        cut = _cut_node(checker, call.args[0]) if _mentions_cut(checker, value, cuts) else None
        if cut is None and _carries_graph(checker, call.args[0]):
            cut = call  # the constructor itself copies the graph's values into a new leaf
        if cut is None and isinstance(call.args[0], ast.Name):
            cut = _accumulated_cut(checker, call.args[0].id)
        if cut is not None:
            scope.note("ADL034", (name, value, call, cut, requires))
        cuts.pop(name, None)
        return
    if not _mentions_cut(checker, value, cuts):  # cheap: no cut marker, no name bound to a cut value
        if cuts:
            cuts.pop(name, None)
        return
    cut = _cut_node(checker, value)
    if cut is not None:
        cuts[name] = (value, cut)
    else:
        cuts.pop(name, None)


def _turned_on_later(scope, name: str) -> bool:
    """`name.requires_grad_()` or `name.requires_grad = True` anywhere in the function."""
    for node in ast.walk(scope.function):
        if isinstance(node, ast.Attribute) and node.attr in ("requires_grad", "requires_grad_") \
                and isinstance(node.value, ast.Name) and node.value.id == name:
            return True
    return False


def check_scope(checker, scope) -> None:
    if scope.backward_receivers and scope.steps and _worth(checker):
        _check_returned_leaves(checker, scope)
    noted = scope.noted("ADL034")
    if not noted:
        return
    for name, value, call, cut, requires in noted:
        requires = requires or _turned_on_later(scope, name)
        for seq, backward, recv in scope.backward_receivers:
            if backward.args or any(k.arg in ("gradient", "inputs") for k in backward.keywords):
                continue
            base = recv
            while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) \
                    and base.func.attr in _KEEPS:
                base = base.func.value
            if not (isinstance(base, ast.Name) and base.id == name):
                continue
            entry = scope.binding(name, seq)
            # `loss = -loss / n` in between rebinds the same copy, scaled by numbers
            while entry is not None and entry[1] is not value and _rescaled_from(checker, name, entry[1]):
                entry = scope.binding(name, entry[0])
            if entry is None or entry[1] is not value:
                continue
            step = next((s for s in scope.steps if s[0] > seq and not scope.exclusive(seq, s[0])), None)
            if requires and step is None:
                continue
            if id(cut) in scope.reported:
                break
            scope.reported.add(id(cut))
            _report(checker, name, call, cut, backward, step, requires)
            break


def _report(checker, name, call, cut, backward, step, requires) -> None:
    cut_text = checker.text(cut)
    if len(cut_text) > 60:
        cut_text = cut_text[:57] + "..."
    where = "" if cut.lineno == call.lineno else f" (line {cut.lineno})"
    if cut is call:
        copied = checker.text(call.args[0])
        copied = copied if len(copied) <= 60 else copied[:57] + "..."
        made = (f"`{name}` is a new tensor that `{checker.text(call.func)}()` copies from `{copied}`, "
                "which carries the graph: the copy is cut from it")
    else:
        made = f"`{name}` is a new tensor made from `{cut_text}`{where}, a value cut from the graph"
    if requires:
        why = (f"; `requires_grad=True` makes it a leaf of its own, so `{checker.text(backward.func)}()` "
               f"on line {backward.lineno} reaches no parameter and `{step[2]}.step()` on line "
               f"{step[1].lineno} changes nothing")
    else:
        why = (f": `{checker.text(backward.func)}()` on line {backward.lineno} will fail (element 0 of "
               f"tensors does not require grad and does not have a grad_fn)")
    checker.report("ADL034", cut,
                   made + why + "; compute the loss with torch operations on the model's output, "
                   "without `.item()`, `.detach()`, `.data` or NumPy on the way")


def _check_returned_leaves(checker, scope) -> None:
    """A loss made a new leaf in another function of the file: `loss =
    helper(...)` (a top-level function, a method of `self`, or a method of an object
    the class holds as `self.attr = Cls(...)`), backpropagated on that binding and
    followed by a step, where every `return` of the helper is `Variable(v,
    requires_grad=True)` / `torch.tensor(v, requires_grad=True)` of a value computed
    in it (not a constant: `torch.tensor(0.0, requires_grad=True)` for an empty batch
    is a leaf on purpose)."""
    for seq, backward, recv in scope.backward_receivers:
        if backward.args or any(k.arg in ("gradient", "inputs") for k in backward.keywords):
            continue
        if not isinstance(recv, ast.Name):
            continue
        entry = scope.binding(recv.id, seq)
        if entry is None or not isinstance(entry[1], ast.Call):
            continue
        helper = _called_function(checker, scope, entry[1])
        made = _returned_leaf(checker, helper) if helper is not None else None
        if made is None:
            continue
        step = next((s for s in scope.steps if s[0] > seq and not scope.exclusive(seq, s[0])), None)
        if step is None or id(made) in scope.reported:
            continue
        scope.reported.add(id(made))
        copied = checker.text(made.args[0])
        copied = copied if len(copied) <= 60 else copied[:57] + "..."
        checker.report(
            "ADL034", made,
            f"`{helper.name}()` returns a new tensor that `{checker.text(made.func)}()` makes from "
            f"`{copied}` with `requires_grad=True`: a leaf of its own, cut from the graph; "
            f"`{recv.id}` (line {entry[1].lineno}) is that leaf, so `{checker.text(backward.func)}()` "
            f"on line {backward.lineno} reaches no parameter and `{step[2]}.step()` on line "
            f"{step[1].lineno} changes nothing; return the loss itself, computed with torch "
            "operations on the model's output",
            related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                      "backward of the returned leaf")])


def _called_function(checker, scope, call):
    """The `def` of the file that ``call`` runs: `name(...)` a top-level function,
    `self.m(...)` a method of the enclosing class, `self.attr.m(...)` a method of
    the class of the file that the enclosing class binds `self.attr` to."""
    func = call.func
    tree = checker.tree
    if isinstance(func, ast.Name):
        return _definition(tree.body, func.id)
    if not isinstance(func, ast.Attribute):
        return None
    owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == scope.owner_class), None) \
        if scope.owner_class else None
    if owner is None:
        return None
    receiver = func.value
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        return _definition(owner.body, func.attr)
    if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self":
        classes = {node.value.func.id for node in ast.walk(owner)
                   if isinstance(node, ast.Assign) and len(node.targets) == 1
                   and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == receiver.attr
                   and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"
                   and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)}
        if len(classes) != 1:
            return None
        cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name in classes), None)
        return _definition(cls.body, func.attr) if cls is not None else None
    return None


def _definition(body, name):
    return next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)


def _returned_leaf(checker, function):
    """The constructor call of every `return` of ``function``, when each makes a new
    leaf with `requires_grad=True` from a value computed there (and there is one)."""
    returns = [n for n in _own_nodes(function) if isinstance(n, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        return None
    made = _constructor(checker, returns[0].value)
    if made is None or not made[1]:
        return None
    call = made[0]
    if not any(isinstance(n, ast.Name) for n in ast.walk(call.args[0])):
        return None  # a constant leaf
    return call


def _own_nodes(function):
    todo = list(function.body)
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))

