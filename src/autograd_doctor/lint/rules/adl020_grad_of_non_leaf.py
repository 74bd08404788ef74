"""ADL020: `.grad` read from a tensor that an op made from the leaf requiring grad."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL020", name="grad-of-non-leaf",
    summary="A tensor made by an op on the leaf that requires grad is used as a leaf: its `.grad` stays None, an optimizer refuses it.",
    what_it_does="""Finds a name bound to the result of an op on a tensor created with
`requires_grad=True` (or marked with `x.requires_grad = True` /
`x.requires_grad_()`), whose `.grad` the function reads after a `backward()`, or that it hands to a
`torch.optim` optimizer (`torch.optim.SGD([w])`, `[{"params": [w]}]`):
`img = torch.tensor(pixels, requires_grad=True).unsqueeze(0)`,
`w = torch.rand(3, 1, requires_grad=True).type(torch.float64)`,
`w = torch.randn(3, requires_grad=True) * 0.01`, `part = table[1:3]`,
`x.requires_grad = True; x = x.to(torch.float64)`.  Only ops that always make a
new tensor count: views, arithmetic, and conversions whose source dtype or device
is known to differ (`.double()` of a default-dtype factory, `.float()` or
`.type(torch.float)` of a factory made with `dtype=torch.float64`, `.cuda()` of
a factory made on the CPU, `.type(dtype)` with a top-level `dtype = torch.DoubleTensor`
that every branch of its one assignment converts, a `.to(device, dtype=torch.float64)` or
`.to(device, torch.float64)` whose dtype differs from the factory's, whatever the
device); `.to(device)`, a conversion to the dtype the factory
already has and `.contiguous()` may return the leaf itself and are not
reported.  Also a hand-written update that re-binds the leaf in the loop that
backpropagates (`w = w - lr * w.grad`, with gradients on, or under `no_grad()`,
where the new `w` does not require grad), when the loop reads `w.grad` after a
backward of the same path of its body, every binding of `w` in the loop comes
after that read on the same path, and nothing marks `w` again in the loop
(`w.requires_grad_()`): `w.grad` is None from the second iteration on.""",
    why_bad="""Only leaves get `.grad`.  The name holds the op's result, which has a
`grad_fn`; backward() fills the `.grad` of the leaf inside the expression, which
nothing can reach any more.  PyTorch warns ("The .grad attribute of a Tensor that
is not a leaf Tensor is being accessed") and returns None, and the next line
fails (`None.data`, `lr * None`) or the update silently does nothing.  An
optimizer raises at once: "ValueError: can't optimize a non-leaf Tensor".""",
    example="""w = torch.rand(3, 1, requires_grad=True).type(torch.float64)
loss.backward()
step = lr * w.grad      # w.grad is None""",
    use_instead="""w = torch.rand(3, 1).type(torch.float64).requires_grad_()
loss.backward()
step = lr * w.grad""",
    fix_safety="""Unsafe: `requires_grad=True` moves from the factory to a
`.requires_grad_()` at the end of the expression, so the name is the leaf.
Gradients now reach the name, which is the intent, but it is a change.  When the
leaf was marked through its name (`x.requires_grad = True`) there is no fix: the
help says to mark the result instead.""",
    known_problems="""An optimizer's list is also followed across methods of a plain class of the
file (`torch.optim.Adam(model.trainable())` of a method returning `[p * gain
for p in self.factors]`, a hand-written `parameters()` returning attributes bound
in `__init__` to a cast after `requires_grad=True`, a dtype parameter left at its
default by every construction); there the finding is the expression that makes
the non-leaf, without a fix.  The binding, the `backward()` (or a call of a same-file function that runs
one) and the read must be in one function,
and the name not bound again after the read.  A call of `retain_grad()` on the name anywhere in
the function silences it.""",
)

# Methods that may hand back their receiver itself (a leaf stays a leaf).
# (In-place methods, `name_`, return their receiver too: see `_always_new`.)
MAY_RETURN_SELF = frozenset("""
to type float double half bfloat16 cpu cuda contiguous detach retain_grad
pin_memory long int bool short char byte cfloat cdouble numpy item tolist coalesce
""".split())
# What a conversion method or a dtype argument converts to.
CONVERSION_DTYPES = {"double": "float64", "half": "float16", "bfloat16": "bfloat16", "float": "float32"}
DTYPE_ALIASES = {"float64": "float64", "double": "float64", "DoubleTensor": "float64",
                 "float32": "float32", "float": "float32", "FloatTensor": "float32",
                 "float16": "float16", "half": "float16", "HalfTensor": "float16",
                 "bfloat16": "bfloat16", "BFloat16Tensor": "bfloat16"}
# Factories whose result is float32 on the CPU unless `dtype=` / `device=` say otherwise.
DEFAULT_FLOAT_FACTORIES = frozenset({"rand", "randn", "zeros", "ones", "empty", "full", "normal"})


def on_name_assign(checker, name, value) -> None:
    """Every binding is noted (a re-binding ends what the earlier one said)."""
    made = None if checker.scope.grad_off else _made_from_leaf(checker, value)
    checker.scope.note("ADL020 bind", (checker.seq, name, value, made))
    if _gradient_update_of(value, name) and _leaf_name(checker, name):
        # `w = w - lr * w.grad`: a new tensor, an op's result (or, under no_grad, one
        # that does not require grad), where the loop reads `w.grad` next time
        checker.scope.note("ADL020 update rebind", (checker.seq, name, bool(checker.scope.grad_off)))


def _gradient_update_of(value, name: str) -> bool:
    """``value`` is `name - <expression reading name.grad>` (or `+`): the hand-written
    gradient step of ``name``, written out of place."""
    return isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Sub, ast.Add)) \
        and isinstance(value.left, ast.Name) and value.left.id == name \
        and any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.value, ast.Name)
                and n.value.id == name for n in ast.walk(value.right))


def on_attribute_assign(checker, target, value, statement) -> None:
    """`x.requires_grad = True` makes the tensor bound to `x` a leaf that requires grad;
    `self.positions = torch.linspace(..., requires_grad=True).view(...)` keeps a
    non-leaf on the object (``check_file``)."""
    if target.attr == "requires_grad" and isinstance(target.value, ast.Name) \
            and isinstance(value, ast.Constant) and value.value is True:
        checker.scope.note("ADL020 leaf", (checker.seq, target.value.id))
    elif isinstance(target.value, ast.Name) and target.value.id == "self" and checker.scope.owner_class:
        # (`__init__` is walked as if gradients were off: a view made there of a leaf
        # that requires grad is no leaf with a `.grad` either way)
        made = _made_from_leaf(checker, value)
        checker.notes["ADL020 attribute binds"].append(
            (checker.scope.owner_class, target.attr, checker.scope, checker.seq, value, made))


def on_method_call(checker, call, func) -> None:
    if func.attr == "retain_grad" and isinstance(func.value, ast.Name):
        checker.scope.note("ADL020 retain", func.value.id)
    elif func.attr in ("requires_grad_", "detach_") and isinstance(func.value, ast.Name):
        checker.scope.note("ADL020 marked again", (checker.seq, func.value.id))  # `w.requires_grad_()`


def on_call(checker, call, qualname) -> None:
    """`torch.optim.SGD([name, ...])` or `[{"params": [name]}]`: the optimizer takes
    only leaves ("can't optimize a non-leaf Tensor")."""
    if not qualname.startswith("torch.optim.") or qualname.rsplit(".", 1)[-1] not in N.OPTIMIZER_CLASSES \
            or not call.args or not isinstance(call.args[0], (ast.List, ast.Tuple)):
        return
    for element in call.args[0].elts:
        if isinstance(element, ast.Dict):
            element = next((v for k, v in zip(element.keys, element.values)
                            if isinstance(k, ast.Constant) and k.value == "params"), None)
            names = element.elts if isinstance(element, (ast.List, ast.Tuple)) else [element]
        else:
            names = [element]
        for name in names:
            if isinstance(name, ast.Name):
                checker.scope.note("ADL020 optimizer", (checker.seq, name.id, name))


def on_grad_read(checker, node) -> None:
    """`x.grad` read (not assigned); `self.x.grad` is kept for ``check_file``."""
    if isinstance(node.value, ast.Name):
        checker.scope.note("ADL020 read", (checker.seq, node.value.id, node))
    elif isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name) \
            and node.value.value.id == "self" and checker.scope.owner_class:
        checker.notes["ADL020 attribute reads"].append(
            (checker.scope.owner_class, node.value.attr, checker.scope, checker.seq, node))


def check_scope(checker, scope) -> None:
    _summarise_returns(checker, scope)
    binds = scope.noted("ADL020 bind")
    retained = set(scope.noted("ADL020 retain"))
    backwards = [seq for seq, _ in scope.backwards + scope.retain_backwards] + scope.helper_backwards
    reported = set()
    for seq, name, node in scope.noted("ADL020 optimizer"):
        made = _binding_seen(binds, name, seq)
        if made is None or name in reported:
            continue
        reported.add(name)
        value, (op_text, keyword, leaf) = made
        _report(checker, node, name, value, op_text, keyword,
                f"the optimizer refuses `{name}` (\"can't optimize a non-leaf Tensor\"): it is not a leaf "
                f"but the result of {op_text} on line {value.lineno}, made from the tensor that requires grad")
    for seq, name, node in scope.noted("ADL020 read"):
        made = _binding_seen(binds, name, seq)
        if made is None or name in reported or name in retained:
            continue
        bind_seq = max(b[0] for b in binds if b[1] == name and b[0] < seq)
        if not any(bind_seq < b < seq for b in backwards):
            continue
        reported.add(name)
        value, (op_text, keyword, leaf) = made
        _report(checker, node, name, value, op_text, keyword,
                f"`{name}.grad` stays None: `{name}` is not a leaf but the result of "
                f"{op_text} on line {value.lineno}, made from the tensor that requires grad; "
                "backward() fills the `.grad` of that leaf" +
                (f", `{leaf}`" if leaf and leaf != name else ", which nothing holds"))
    _check_loop_rebinds(checker, scope, binds, backwards, reported, retained)


def _check_loop_rebinds(checker, scope, binds, backwards, reported, retained) -> None:
    """A hand-written update that re-binds the leaf in the loop that backpropagates
    (`w = w - lr * w.grad`), read back through `.grad` in the next iteration: with
    gradients on the new `w` is an op's result (no leaf); under `no_grad` it is a
    tensor that does not require grad.  Either way `w.grad` is None from the second
    iteration on.  Evidence: the read lies in a loop, after a backward of the same
    path of the body; every binding of the name in the loop comes after the read,
    on the same path, the last one such an update of the name itself."""
    updates = {(seq, name): off for seq, name, off in scope.noted("ADL020 update rebind")}
    if not updates:
        return
    # a name marked after the update (`w.requires_grad_()`, `w.requires_grad = True`)
    # may be a leaf that requires grad again when the loop reads it: unknown
    marks = list(scope.noted("ADL020 marked again")) + list(scope.noted("ADL020 leaf"))
    for seq, name, node in scope.noted("ADL020 read"):
        if name in reported or name in retained:
            continue
        loops = [(s, e) for s, e in scope.finished_loops if s < seq < e]
        if not loops:
            continue
        start, end = max(loops)  # the innermost loop around the read
        inside = [b for b in binds if b[1] == name and start < b[0] < end]
        if not inside or any(b[0] < seq for b in inside):  # (the update itself reads at its own seq)
            continue
        last = max(inside, key=lambda b: b[0])
        if not scope.run_together(seq, last[0]):
            continue
        if (last[0], name) not in updates or any(m == name and m_seq > start for m_seq, m in marks):
            continue
        off = updates[(last[0], name)]
        if not any(start < b < seq and scope.run_together(b, seq) for b in backwards):
            continue
        reported.add(name)
        value = last[2]
        if off:
            why = (f"under `no_grad()` it is a new tensor that does not require grad, so the next "
                   f"iteration's backward does not fill `{name}.grad` (and fails when no other input requires grad)")
        else:
            why = (f"with gradients on it is the result of `{checker.text(value)}`" if len(checker.text(value)) <= 60
                   else "with gradients on it is the result of an arithmetic op") + \
                  f", not a leaf, so the next iteration's backward does not fill `{name}.grad`"
        checker.report(
            "ADL020", node,
            f"`{name}.grad` is None from the second iteration on: line {value.lineno} re-binds `{name}` to a "
            f"new tensor computed from it; {why}; update it in place under `torch.no_grad()` "
            f"(`{name} -= ...`) and clear `{name}.grad` after the update",
            related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                      f"`{name}` re-bound here, read in the next iteration")])


def _backward_between(scope, start: int, end: int) -> bool:
    """A `backward()` (or a call of a same-file function that runs one) in ``scope``
    between the seqs ``start`` and ``end``."""
    backwards = [seq for seq, _ in scope.backwards + scope.retain_backwards] + scope.helper_backwards
    return any(start < b < end for b in backwards)


def check_file(checker) -> None:
    """`self.positions.grad` read after a backward in a method, where the class keeps
    on the attribute a non-leaf made from a leaf that requires grad: every binding
    of the attribute in the class makes one (in `__init__`), but those the reading
    method itself makes after the read (`self.positions = self.positions - lr *
    self.positions.grad`, whatever it binds, comes too late for the read)."""
    from autograd_doctor.lint.optimizer_leaves import check_optimizers
    check_optimizers(checker)  # a list built across methods (r574, r554)
    reads = checker.notes["ADL020 attribute reads"]
    if not reads:
        return
    binds = checker.notes["ADL020 attribute binds"]
    reported = set()
    for cls, attr, scope, seq, node in reads:
        if (cls, attr) in reported:
            continue
        own = [b for b in binds if b[0] == cls and b[1] == attr]
        before = [b for b in own if not (b[2] is scope and b[3] > seq)]
        if not before or any(b[5] is None for b in before) or any(b[2] is scope for b in before) \
                or not _backward_between(scope, 0, seq):
            continue
        reported.add((cls, attr))
        _, _, _, _, value, (op_text, keyword, leaf) = before[0]
        name = f"self.{attr}"
        _report(checker, node, name, value, op_text, keyword,
                f"`{name}.grad` stays None: `{name}` is not a leaf but the result of "
                f"{op_text} on line {value.lineno}, made from the tensor that requires grad; "
                "backward() fills the `.grad` of that leaf, which nothing holds")


def _summarise_returns(checker, scope) -> None:
    """A top-level function whose every `return` gives a non-leaf made from a leaf
    that requires grad (`def init_weight(n, m): return torch.randn(n * m,
    requires_grad=True).view(n, m)`): its calls make one too (``_made_from_leaf``)."""
    if not scope.top_level or not scope.return_values:
        return  # (`init_weight` is walked as if gradients were off: its result is no leaf
        # with a `.grad` either way)
    made = [_made_from_leaf(checker, value) for _, value in scope.return_values]
    if all(m is not None for m in made):
        checker.notes["ADL020 non-leaf functions"].append((scope.name, made[0][0]))


def _binding_seen(binds, name, seq):
    """``(value, made)`` of the binding of ``name`` that the use at ``seq`` sees, when it
    made a non-leaf from a leaf and no binding follows the use (in a loop it would
    reach the use too)."""
    own = [b for b in binds if b[1] == name]
    before = [b for b in own if b[0] < seq]
    if not before or len(before) < len(own) or before[-1][3] is None:
        return None
    return before[-1][2], before[-1][3]


def _report(checker, node, name, value, op_text, keyword, message) -> None:
    fix = None
    if keyword is not None:
        fix = Fix("create the leaf at the end: drop `requires_grad=True` from the factory and "
                  "call `.requires_grad_()` on the result",
                  (checker.edit(value, _without_keyword(checker, value, keyword) + ".requires_grad_()"),),
                  safe=False)
    checker.report("ADL020", node,
                   message + ("" if fix else f"; set requires_grad on the result instead "
                              f"(`{name} = {checker.atom_text(value)}.detach().clone().requires_grad_()`)"),
                   fix, related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                                  f"`{name}` is bound to a non-leaf here")])


def _made_from_leaf(checker, value):
    """``(op text, the factory's requires_grad keyword or None, the leaf's name or
    None)`` when ``value`` is an op that always makes a new tensor, applied to a
    leaf that requires grad."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        helper = next((op for function, op in checker.notes["ADL020 non-leaf functions"]
                       if function == value.func.id), None)
        if helper is not None and value.func.id not in checker.scope.binds:
            return f"`{value.func.id}()` (which returns the result of {helper})", None, None
    node, steps = value, []
    while True:
        if isinstance(node, ast.Call) and checker.is_grad_leaf(node):
            root, root_name = node, None
            break
        if isinstance(node, ast.Name):
            if not _leaf_name(checker, node.id):
                return None
            root, root_name = None, node.id
            break
        if isinstance(node, ast.BinOp) and not steps:
            sides = [s for s in (node.left, node.right) if _is_leaf_expression(checker, s)]
            other = node.right if sides and sides[0] is node.left else node.left
            if len(sides) != 1 or not isinstance(other, (ast.Constant, ast.Name, ast.UnaryOp)):
                return None
            steps.append(node)
            node = sides[0]
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and checker.qualname(node.func) is None:
            steps.append(node)
            node = node.func.value
            continue
        if isinstance(node, ast.Subscript):  # a view or a copy: never the leaf itself
            steps.append(node)
            node = node.value
            continue
        if isinstance(node, ast.Call) and node.args and _torch_new_tensor_function(checker, node):
            steps.append(node)  # `torch.clamp(w, 0, 1)`: a function of the leaf, a new tensor
            node = node.args[0]
            continue
        return None
    if any(isinstance(s, ast.Call) and s.func.attr in ("detach", "detach_") for s in steps):
        return None  # `x1.clone().detach()`: cut from the leaf's graph, a leaf of its own
    certain = next((s for s in steps if _always_new(checker, s, root, root_name)), None)
    if certain is None:
        return None
    op_text = f"`{checker.text(certain.func)}()`" if isinstance(certain, ast.Call) \
        and checker.qualname(certain.func) is not None else \
        f"`.{certain.func.attr}()`" if isinstance(certain, ast.Call) else \
        "indexing" if isinstance(certain, ast.Subscript) else \
        f"`{checker.text(certain)}`" if len(checker.text(certain)) <= 60 else "an arithmetic op"
    keyword = None
    if root is not None and isinstance(root.func, (ast.Name, ast.Attribute)):
        keyword = next((k for k in root.keywords if k.arg == "requires_grad"), None)
    return op_text, keyword, root_name


# Functions of the torch namespace that always return a new tensor (never their
# first argument itself): `torch.as_tensor`, `torch.Tensor.to`-like calls and
# dropout (the identity when not training) are not among them.
_NEW_TENSOR_FUNCTIONS = frozenset("""
clamp clip sigmoid tanh exp log neg abs sqrt rsqrt relu softplus square reciprocal
exp2 expm1 log1p log2 log10 sin cos pow mul div add sub true_divide
""".split())


def _torch_new_tensor_function(checker, call) -> bool:
    """`torch.<f>(leaf, ...)` with ``f`` an element-wise function that makes a new tensor."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in _NEW_TENSOR_FUNCTIONS:
        return False
    q = checker.qualname(call.func)
    return q is not None and q in (f"torch.{call.func.attr}", f"torch.special.{call.func.attr}")


def _is_leaf_expression(checker, node) -> bool:
    return (isinstance(node, ast.Call) and checker.is_grad_leaf(node)) or \
        (isinstance(node, ast.Name) and _leaf_name(checker, node.id))


def _leaf_name(checker, name) -> bool:
    """The name holds a leaf that requires grad, marked in this function."""
    scope = checker.scope
    if name in scope.grad_leaves:
        return True
    marks = [seq for seq, marked in scope.noted("ADL020 leaf") if marked == name]
    if not marks:
        return False  # (the common case: the function's bindings need not be read)
    binds = [seq for seq, bound, *_ in scope.noted("ADL020 bind") if bound == name]
    return not binds or max(marks) > max(binds)


def _always_new(checker, step, root, root_name) -> bool:
    """The step can never hand back its receiver: arithmetic, a view, or a conversion
    whose source is known to differ (a default float32 factory made on the CPU)."""
    if isinstance(step, (ast.BinOp, ast.Subscript)):
        return True
    attr = step.func.attr
    if attr.endswith("_"):  # in place: the receiver itself (`requires_grad_()`, `uniform_()`)
        return False
    if attr not in MAY_RETURN_SELF:
        return attr in N.tensor_methods()
    source = _factory_dtype(checker, root, root_name)
    if attr == "to":
        # A dtype given besides the device (`.to(device=d, dtype=torch.float64)`,
        # `.to(d, torch.float64)`): converting the dtype copies on any device.
        dtype = next((k.value for k in step.keywords if k.arg == "dtype"), None)
        if dtype is None and len(step.args) >= 2:
            dtype = step.args[1]
        if dtype is not None:
            texts = _argument_texts(checker, dtype)
            if texts and all(_converts(source, text) for text in texts):
                return True
    if attr in ("to", "type") and step.args:
        texts = _argument_texts(checker, step.args[0])
        return bool(texts) and all(_converts(source, text) for text in texts)
    target = CONVERSION_DTYPES.get(attr)
    if source is not None and target is not None:
        return source != target  # `.double()` of a float32 factory: a copy
    return source == "float32" and attr == "cuda"


def _converts(source, text) -> bool:
    """`.to(text)` / `.type(text)` of a tensor of dtype ``source`` on the CPU always copies."""
    if source == "float32" and text.startswith(("cuda", "torch.cuda.")):
        return True  # a CPU factory moved to the GPU
    target = DTYPE_ALIASES.get(text.rsplit(".", 1)[-1])
    return source is not None and target is not None and source != target


def _argument_texts(checker, argument) -> list:
    """The texts a conversion's argument may stand for: itself, or, for a name the
    function never binds, every value a top-level assignment of the file gives it
    (`dtype = torch.DoubleTensor`, both branches of a conditional expression).  Empty
    when a value is unknown: a name bound elsewhere too, or not at the top level."""
    if not isinstance(argument, ast.Name):
        return [checker.text(argument).strip("'\"")]
    if any(bound == argument.id for _, bound, *_ in checker.scope.noted("ADL020 bind")):
        return []
    values = []
    for statement in checker.tree.body:
        targets = statement.targets if isinstance(statement, ast.Assign) else \
            [statement.target] if isinstance(statement, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == argument.id for t in targets):
            values.append(statement.value)
        elif any(argument.id in {n.id for n in ast.walk(t) if isinstance(n, ast.Name)} for t in targets):
            return []  # unpacked or otherwise bound: not one known value
    if len(values) != 1 or values[0] is None:
        return []
    value = values[0]
    branches = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
    if not all(isinstance(b, (ast.Attribute, ast.Constant)) for b in branches):
        return []
    return [checker.text(b).strip("'\"") for b in branches]


def _factory_dtype(checker, root, root_name) -> str | None:
    """The dtype of the factory the leaf came from: its `dtype=` (a torch dtype), or
    float32 for a default float factory on the CPU; None when unknown."""
    if root_name is not None:
        values = [v for _, bound, v, _ in checker.scope.noted("ADL020 bind") if bound == root_name]
        root = values[-1] if values else None
    if not isinstance(root, ast.Call):
        return None
    while isinstance(root.func, ast.Attribute) and root.func.attr == "requires_grad_" \
            and isinstance(root.func.value, ast.Call):
        root = root.func.value
    q = checker.qualname(root.func) or ""
    keywords = {k.arg: k.value for k in root.keywords}
    if not q.startswith("torch.") or "device" in keywords or "out" in keywords:
        return None
    if "dtype" in keywords:
        if (checker.qualname(keywords["dtype"]) or "").startswith("torch.") and \
                (q[6:] in DEFAULT_FLOAT_FACTORIES or q == "torch.tensor"):
            return DTYPE_ALIASES.get(checker.qualname(keywords["dtype"])[6:])
        return None
    return "float32" if q[6:] in DEFAULT_FLOAT_FACTORIES else None


def _without_keyword(checker, value, keyword) -> str:
    """The source of ``value`` with ``requires_grad=True`` taken out of its factory,
    parenthesised when a method call cannot follow it as is (`a * 0.01`)."""
    text, keyword_text = checker.text(value), checker.text(keyword)
    for form in (f", {keyword_text}", f"{keyword_text}, ", keyword_text):
        if form in text:
            text = text.replace(form, "", 1)
            break
    return f"({text})" if isinstance(value, ast.BinOp) else text
