"""ADL025: an in-place write to the output of a module with a full backward hook."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.names import last_name, self_attribute
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL025", name="inplace-after-full-backward-hook",
    summary="In-place write to the output of a module that has a full backward hook.",
    what_it_does="""Finds an in-place activation or op that writes the output of a module
on which the file registers a full backward hook (`register_full_backward_hook`,
`register_full_backward_pre_hook`, or the global `register_module_full_backward_hook`).
The hook must be seen on that module: on `self.X`/`model.X`, on a module passed to a
class or function whose parameter gets the hook (`GradCAM(model, model.features)`),
on `dict(model.named_modules())["a.b.X"]`, on every element of a container
(`for op in cell.ops: op.register_full_backward_hook(...)`), on `model[i]` of a
`model = nn.Sequential(...)` bound once, or on every module of a
kind (`for m in model.modules(): if isinstance(m, nn.Conv2d): m.register_full_backward_hook(...)`),
or on every module without submodules (`if len(list(m.children())) == 0:`: each `torch.nn`
layer that is not a container, and each class of the file whose `__init__` builds no module).
The write must be seen on that module's output: the next layer of an `nn.Sequential`,
the next layer of a loop `for op in self.ops: x = op(x)`, or an in-place op on
`self.X(...)`'s result in the same class's `forward` (an in-place activation module,
`F.relu(h, inplace=True)`, `h.relu_()`, `h += ...`).  A loop that turns a kind of
activation in place (`for m in model.modules(): if type(m) in [nn.SiLU]: m.inplace = True`)
makes those activations in-place writers.  A hooked in-place layer writes its own
input, which the hook wraps too, and is reported as well.""",
    why_bad="""A full backward hook wraps the module's outputs in `BackwardHookFunction`,
whose outputs are views made inside a custom Function.  PyTorch refuses to write such
a view in place: the forward pass fails with "Output 0 of BackwardHookFunctionBackward
is a view and is being modified inplace".  Grad-CAM extractors, second-order optimizers
and gradient probes that hook layers of a model with `nn.ReLU(inplace=True)` fail so.""",
    example="""model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(inplace=True))
model[0].register_full_backward_hook(save_grad)""",
    use_instead="""model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(inplace=False))
model[0].register_full_backward_hook(save_grad)""",
    fix_safety="""Unsafe (only with `--unsafe-fixes`), as for ADL001 and ADL002: `inplace=True`
written at the module's construction or the functional call becomes `inplace=False`.
The activation's output has the same values, but what other aliases of the input see
changes.  A loop that forces `m.inplace = True`, an augmented assignment or a `relu_()`
get no fix.""",
    known_problems="""The hooked module and the write are matched by attribute name and by layer
kind across the file: a hook registered on one model and an in-place layer in another
model of the same file, behind a layer of the hooked kind, is reported.  A hook
registered through a name the file does not resolve (a module returned by a helper,
a name built at run time) is not seen, and nothing is reported.  The old
`register_backward_hook` does not wrap outputs and is not reported.""",
)

HOOK_METHODS = frozenset({"register_full_backward_hook", "register_full_backward_pre_hook"})
GLOBAL_HOOKS = frozenset({"register_module_full_backward_hook", "register_module_full_backward_pre_hook"})
ALL_KINDS = "*"
LEAF_KINDS = "<leaf>"  # every module without submodules: `if len(list(m.children())) == 0:`

# torch.nn activation classes -> position of `inplace` among their positional arguments
INPLACE_POSITION = {
    "ReLU": 0, "ReLU6": 0, "SiLU": 0, "Hardswish": 0, "Hardsigmoid": 0, "Mish": 0, "SELU": 0,
    "ELU": 1, "CELU": 1, "LeakyReLU": 1, "Hardtanh": 2, "Threshold": 2, "RReLU": 2,
}
# functionals that take `inplace=`, and the in-place functionals
INPLACE_KEYWORD_FUNCTIONS = frozenset({
    "relu", "relu6", "elu", "selu", "celu", "leaky_relu", "hardtanh", "hardswish",
    "hardsigmoid", "silu", "mish", "threshold", "rrelu"})
INPLACE_FUNCTIONS = frozenset(name + "_" for name in INPLACE_KEYWORD_FUNCTIONS)
CONTAINERS = frozenset({"Sequential", "ModuleList"})


# A call of a registration function, not its definition (torch's own module.py defines them).
_REGISTRATION_TEXT = re.compile(r"(?<!def )\bregister_(?:module_)?full_backward_(?:pre_)?hook\s*\(")


def check_file(checker) -> None:
    if "full_backward" not in checker.source or not _REGISTRATION_TEXT.search(checker.source):
        return  # most files register no full backward hook: no walk for them
    tree = checker.tree
    hooks = _Hooks()
    forced = {}  # activation kind -> the `m.inplace = True` statement that makes it in-place
    _collect(tree, hooks, forced)
    if not hooks.registrations:
        return
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    hooks.is_leaf = lambda call: _is_leaf_layer(checker, classes, call)
    writers = _InputWriters(classes, forced, checker)
    reported = set()

    def report(writer, target: str, registration, own_input: bool = False) -> None:
        node, fix = writer
        if id(node) in reported:
            return
        reported.add(id(node))
        what = (f"in-place write by `{target}` to its own input; `{target}` has a full backward hook "
                f"(registered at line {registration.lineno}), which wraps the inputs too: the hook makes "
                f"that input a view" if own_input else
                f"in-place write to the output of {target}, which has a full backward hook "
                f"(registered at line {registration.lineno}): the hook makes that output a view")
        checker.report("ADL025", node,
                       what + " of `BackwardHookFunction`, and writing it in place fails in the forward pass",
                       fix,
                       related=[(registration.lineno, checker.col(registration.lineno, registration.col_offset),
                                 0, "full backward hook registered here")])

    # the next layer of an `nn.Sequential(...)`
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and last_name(call.func) == "Sequential":
            for index, (before, after) in enumerate(zip(call.args, call.args[1:])):
                registration = hooks.of_layer(before) or hooks.elements.get((id(call), index))
                writer = registration and writers.of_layer(after)
                if writer:
                    report(writer, f"`{last_name(before.func)}`", registration)
                # a hooked in-place layer: its input (a graph output of the layer before) is wrapped too
                registration = hooks.of_layer(after) or hooks.elements.get((id(call), index + 1))
                writer = registration and isinstance(after, ast.Call) and \
                    last_name(after.func) in INPLACE_POSITION and writers.of_layer(after)
                if writer:
                    report(writer, last_name(after.func), registration, own_input=True)
    # a forward that writes `self.X(...)`'s result, or chains the layers of a hooked container
    for cls in classes.values():
        forward = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
        if forward is not None:
            _check_forward(cls, forward, hooks, writers, report)


class _Hooks:
    """What the file hooks: attribute names (`self.features`, the elements of `cell.ops`)
    and layer kinds (every `nn.Conv2d` of a model, or every module: ``ALL_KINDS``)."""

    def __init__(self):
        self.attributes: dict[str, ast.AST] = {}
        self.kinds: dict[str, ast.AST] = {}
        # (id of an `nn.Sequential(...)` call, position): `model[0]` of `model = nn.Sequential(...)`
        self.elements: dict[tuple, ast.AST] = {}
        self.registrations: list = []
        self.is_leaf = lambda call: False

    def of_layer(self, call):
        """The registration that hooks the layer built by ``call`` (by its kind)."""
        if not isinstance(call, ast.Call):
            return None
        return self.kinds.get(last_name(call.func)) or self.kinds.get(ALL_KINDS) or (
            self.kinds.get(LEAF_KINDS) if LEAF_KINDS in self.kinds and self.is_leaf(call) else None)

    def of_attribute(self, attribute: str, built):
        return self.attributes.get(attribute) or (self.of_layer(built) if built is not None else None)


def _collect(tree, hooks: _Hooks, forced: dict) -> None:
    # The registrations first: a file that only defines or documents these hooks (torch's own
    # module.py) registers none, and pays no map of parents.
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        last_name(node.func) in GLOBAL_HOOKS
        or isinstance(node.func, ast.Attribute) and node.func.attr in HOOK_METHODS)]
    if not found:
        return
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    for node in found:
        if last_name(node.func) in GLOBAL_HOOKS:
            hooks.kinds.setdefault(ALL_KINDS, node)
            hooks.registrations.append(node)
        else:
            hooks.registrations.append(node)
            _resolve_receiver(tree, parents, node.func.value, node, hooks)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and _forces_inplace(node):
            target = node.targets[0].value.id
            for kind in _kinds_of_loop_variable(parents, node, target) or ():
                if kind in INPLACE_POSITION:
                    forced.setdefault(kind, node)


def _forces_inplace(node: ast.Assign) -> bool:
    target = node.targets[0]
    return (isinstance(target, ast.Attribute) and target.attr == "inplace" and isinstance(target.value, ast.Name)
            and isinstance(node.value, ast.Constant) and node.value.value is True)


def _resolve_receiver(tree, parents, receiver, registration, hooks: _Hooks) -> None:
    attribute = _attribute_of(receiver)
    if attribute:
        hooks.attributes.setdefault(attribute, registration)
        return
    if isinstance(receiver, ast.Subscript) and isinstance(receiver.value, ast.Name):
        sequential = _only_sequential_bound(parents, registration, receiver.value.id, tree)
        position = receiver.slice
        if sequential is not None and isinstance(position, ast.Constant) and type(position.value) is int \
                and 0 <= position.value < len(sequential.args):
            hooks.elements.setdefault((id(sequential), position.value), registration)
        return
    if not isinstance(receiver, ast.Name):
        return
    name = receiver.id
    # a loop variable: over `model.modules()` (filtered by kind) or over a container attribute
    kinds = _kinds_of_loop_variable(parents, registration, name)
    if kinds is not None:
        for kind in kinds:
            hooks.kinds.setdefault(kind, registration)
        return
    loop = _enclosing_loop_over(parents, registration, name)
    if loop is not None:
        attribute = _attribute_of(_unwrap_enumerate(loop.iter))
        if attribute:
            hooks.attributes.setdefault(attribute, registration)
        return
    function = _enclosing_function(parents, registration)
    if function is None:
        return
    # `name = model.X` or `name = dict(model.named_modules())[p]` in the same function
    bound = [n.value for n in ast.walk(function) if isinstance(n, ast.Assign) and len(n.targets) == 1
             and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]
    if len(bound) > 1:
        return  # re-bound: which one is hooked is unknown
    if bound:
        value = bound[0]
        attribute = _attribute_of(value)
        if attribute:
            hooks.attributes.setdefault(attribute, registration)
        elif _is_named_modules_lookup(value) and isinstance(value.slice, ast.Name):
            for argument in _arguments_for(tree, parents, function, value.slice.id):
                if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                    last = argument.value.rsplit(".", 1)[-1]
                    if last and not last.isdigit():
                        hooks.attributes.setdefault(last, registration)
        return
    for argument in _arguments_for(tree, parents, function, name):
        attribute = _attribute_of(argument)
        if attribute:
            hooks.attributes.setdefault(attribute, registration)


def _only_sequential_bound(parents, node, name: str, tree):
    """The `nn.Sequential(...)` call that ``name`` is bound to in the function around
    ``node`` (or the module), when that is its only binding there."""
    scope = _enclosing_function(parents, node) or tree
    bound = [n.value for n in ast.walk(scope) if isinstance(n, (ast.Assign, ast.AnnAssign))
             and any(isinstance(t, ast.Name) and t.id == name
                     for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    if len(bound) == 1 and isinstance(bound[0], ast.Call) and last_name(bound[0].func) == "Sequential" \
            and not any(isinstance(a, ast.Starred) for a in bound[0].args):
        return bound[0]
    return None


def _attribute_of(node) -> str | None:
    """`a.X` -> X; `a.X[i]` -> X (an element of the container X)."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Attribute) and node.attr not in HOOK_METHODS:
        return node.attr
    return None


def _unwrap_enumerate(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "list") \
            and node.args:
        return node.args[0]
    return node


def _loop_binds(target, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target))


def _enclosing_loop_over(parents, node, name):
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        if isinstance(node, ast.For) and _loop_binds(node.target, name):
            return node
    return None


def _kinds_of_loop_variable(parents, node, name):
    """For ``name`` bound by `for name in model.modules()` (or `named_modules()`) around
    ``node``: the kinds an `isinstance(name, ...)` / `type(name) in [...]` test around
    ``node`` lets through, or every kind; None for any other binding."""
    loop = _enclosing_loop_over(parents, node, name)
    if loop is None:
        return None
    iterated = _unwrap_enumerate(loop.iter)
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) \
            and iterated.func.attr == "items":
        iterated = _unwrap_dict(iterated.func.value)
    if not (isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute)
            and iterated.func.attr in ("modules", "named_modules")):
        return None
    kinds = None
    walker = node
    while walker is not loop:
        parent = parents[walker]
        if isinstance(parent, ast.If):
            tested = _kinds_tested(parent.test, name) if walker in parent.body else None
            if tested is None and walker in parent.body and _leaf_test(parent.test, name):
                tested = {LEAF_KINDS}
            if tested is None:
                return set()  # another test (`if name == target:`): which modules pass is unknown
            kinds = tested if kinds is None else kinds & tested
        elif isinstance(parent, (ast.While, ast.Try, ast.With, ast.IfExp, ast.BoolOp)):
            return set()
        walker = parent
    return {ALL_KINDS} if kinds is None else kinds


def _unwrap_dict(node):
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict" and node.args:
        return node.args[0]
    return node


def _kinds_tested(test, name: str):
    """`isinstance(m, (A, B))`, `type(m) in [A, B]`, `type(m) == A` (also inside `and`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        found = [_kinds_tested(v, name) for v in test.values]
        if any(k is None for k in found):
            return None  # another condition (`and name == target`) narrows it in an unknown way
        return set.intersection(*found)
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
            and len(test.args) == 2 and isinstance(test.args[0], ast.Name) and test.args[0].id == name:
        return _class_names(test.args[1])
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Call) \
            and isinstance(test.left.func, ast.Name) and test.left.func.id == "type" and test.left.args \
            and isinstance(test.left.args[0], ast.Name) and test.left.args[0].id == name \
            and isinstance(test.ops[0], (ast.In, ast.Eq, ast.Is)):
        return _class_names(test.comparators[0])
    return None


def _leaf_test(test, name: str) -> bool:
    """`len(list(m.children())) == 0`, `not list(m.children())`, `not any(m.children())`:
    the modules without submodules (the layers a gradient probe hooks one by one)."""
    def children_of_name(node):
        node = node.args[0] if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("list", "any", "len", "tuple") and len(node.args) == 1 else node
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "children" and not node.args \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == name
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        operand = test.operand
        return children_of_name(operand) or (isinstance(operand, ast.Call) and children_of_name(operand))
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value == 0:
        left = test.left
        return isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len" \
            and len(left.args) == 1 and children_of_name(left.args[0])
    return False


def _is_leaf_layer(checker, classes: dict, call) -> bool:
    """A layer built by ``call`` has no submodules: a `torch.nn` layer other than a
    container, or a class of this file whose `__init__` builds no module (only
    parameters, buffers and numbers: `self.w = nn.Parameter(...)`)."""
    kind = last_name(call.func)
    if kind in classes:
        return not any(_builds_module(checker, classes, value)
                       for value in _built_attributes(classes[kind]).values())
    q = checker.qualname(call.func) or ""
    return q.startswith("torch.nn.") and q.count(".") == 2 and kind not in CONTAINERS | {"ModuleDict"}


def _builds_module(checker, classes: dict, value) -> bool:
    kind = last_name(value.func)
    if kind in classes:
        return True
    q = checker.qualname(value.func) or ""
    return q.startswith("torch.nn.") and kind not in ("Parameter", "ParameterList", "ParameterDict")


def _class_names(node) -> set:
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return {last_name(i) for i in items if last_name(i)}


def _is_named_modules_lookup(node) -> bool:
    """`dict(model.named_modules())[key]`."""
    if not isinstance(node, ast.Subscript):
        return False
    inner = _unwrap_dict(node.value)
    return inner is not node.value and isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
        and inner.func.attr == "named_modules"


def _enclosing_function(parents, node):
    while node in parents:
        node = parents[node]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
    return None


def _arguments_for(tree, parents, function, parameter: str) -> list:
    """What the calls of ``function`` in this file pass for ``parameter``: by name, or by
    position (a method's `self` left out; a class's `__init__` called as the class)."""
    names = [a.arg for a in function.args.args]
    if parameter not in names:
        return []
    owner = parents.get(function)
    if isinstance(owner, ast.ClassDef):
        position = names.index(parameter) - 1
        callee = owner.name if function.name == "__init__" else function.name
    else:
        position = names.index(parameter)
        callee = function.name
    found = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and last_name(call.func) == callee:
            keyword = next((k.value for k in call.keywords if k.arg == parameter), None)
            if keyword is not None:
                found.append(keyword)
            elif 0 <= position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
                found.append(call.args[position])
    return found


class _InputWriters:
    """Which layers write their input in place: an activation built with `inplace=True`
    (or of a kind a loop forces in place), a container whose first layer does, a
    same-file module class whose forward passes its input to such a layer.  Each
    answer is (the node to report, its fix or None)."""

    def __init__(self, classes: dict, forced: dict, checker):
        self.checker = checker
        self.classes = classes
        self.forced = forced
        self._class_answers: dict = {}

    def of_layer(self, call):
        if not isinstance(call, ast.Call):
            return None
        kind = last_name(call.func)
        if kind in INPLACE_POSITION:
            keyword = next((k for k in call.keywords if k.arg == "inplace"), None)
            if keyword is not None:
                if isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                    return call, Fix("construct the module with `inplace=False`",
                                     (self.checker.edit(keyword.value, "False"),), safe=False)
                return None
            position = INPLACE_POSITION[kind]
            if position < len(call.args):
                value = call.args[position]
                return (call, None) if isinstance(value, ast.Constant) and value.value is True else None
            forced = self.forced.get(kind)
            return (forced, None) if forced is not None else None
        if kind in CONTAINERS and call.args and kind == "Sequential":
            return self.of_layer(call.args[0])
        if kind in self.classes:
            return self.of_class(kind)
        return None

    def of_class(self, name: str):
        if name in self._class_answers:
            return self._class_answers[name]
        self._class_answers[name] = None  # a class built from itself
        cls = self.classes[name]
        forward = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
        answer = None
        if forward is not None and len(forward.args.args) >= 2:
            first = forward.args.args[1].arg
            built = _built_attributes(cls)
            for statement in forward.body:
                if any(isinstance(n, ast.Name) and n.id == first and isinstance(n.ctx, ast.Store)
                       for n in ast.walk(statement)):
                    break  # the input is re-bound: later uses see something else
                call = _first_call_on(statement, first)
                if call is not None:
                    attribute = self_attribute(call.func)
                    if attribute in built:
                        answer = self.of_layer(built[attribute])
                    break
        self._class_answers[name] = answer
        return answer


def _first_call_on(statement, name: str):
    """The call that takes ``name`` itself as its first argument, innermost first."""
    calls = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and n.args
             and isinstance(n.args[0], ast.Name) and n.args[0].id == name]
    return calls[-1] if calls else None


def _built_attributes(cls) -> dict:
    """`self.X = <call>` in the class's `__init__`: attribute -> the call."""
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    built = {}
    if init is None:
        return built
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            attribute = self_attribute(node.targets[0])
            if attribute:
                built[attribute] = node.value
    return built


def _check_forward(cls, forward, hooks: _Hooks, writers: _InputWriters, report) -> None:
    built = _built_attributes(cls)

    def hooked_call(node):
        """``node`` is `self.X(...)` with X hooked: (X, the registration)."""
        if isinstance(node, ast.Call):
            attribute = self_attribute(node.func)
            if attribute:
                registration = hooks.of_attribute(attribute, built.get(attribute))
                if registration is not None:
                    return attribute, registration
        return None

    hooked_names: dict = {}  # name bound to a hooked layer's output -> (X, registration)

    def hooked_value(node):
        if isinstance(node, ast.Name):
            return hooked_names.get(node.id)
        return hooked_call(node)

    for statement in _statements_in_order(forward.body):
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and node.args:
                source = hooked_value(node.args[0])
                if source is None:
                    continue
                attribute = self_attribute(node.func)
                if attribute in built:  # `self.act(h)`: a layer that writes its input
                    writer = writers.of_layer(built[attribute])
                    if writer and isinstance(statement, ast.Expr) and statement.value is node:
                        # as a statement the write is the call's only effect: with
                        # inplace=False it would compute a value and drop it
                        writer = (writer[0], None)
                    if writer:
                        report(writer, f"`self.{source[0]}`", source[1])
                elif last_name(node.func) in INPLACE_FUNCTIONS:
                    report((node, None), f"`self.{source[0]}`", source[1])
                elif last_name(node.func) in INPLACE_KEYWORD_FUNCTIONS:
                    keyword = next((k for k in node.keywords if k.arg == "inplace"), None)
                    if keyword and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                        fix = None if isinstance(statement, ast.Expr) and statement.value is node else \
                            Fix("pass `inplace=False`", (writers.checker.edit(keyword.value, "False"),), safe=False)
                        report((node, fix), f"`self.{source[0]}`", source[1])
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr.endswith("_") and not node.func.attr.endswith("__") \
                    and node.func.attr not in ("requires_grad_", "retain_grad_", "share_memory_"):
                source = hooked_value(node.func.value)
                if source is not None:
                    report((node, None), f"`self.{source[0]}`", source[1])
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            source = hooked_names.get(statement.target.id)
            if source is not None:
                report((statement, None), f"`self.{source[0]}`", source[1])
        if isinstance(statement, ast.For):
            _check_chained_loop(statement, built, hooks, writers, report)
        # bindings after the statement's own uses
        if isinstance(statement, ast.Assign):
            source = hooked_call(statement.value)
            for target in statement.targets:
                for name in (n.id for n in ast.walk(target) if isinstance(n, ast.Name)):
                    if source is not None and isinstance(target, ast.Name):
                        hooked_names[name] = source
                    else:
                        hooked_names.pop(name, None)


def _statements_in_order(body):
    for statement in body:
        yield statement
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(statement, field, None)
            if isinstance(inner, list) and not isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
                yield from _statements_in_order(inner)


def _check_chained_loop(loop, built, hooks: _Hooks, writers: _InputWriters, report) -> None:
    """`for op in self.X: x = op(x)`: each hooked layer's output is the next layer's input."""
    attribute = self_attribute(_unwrap_enumerate(loop.iter))
    if attribute is None or not isinstance(loop.target, ast.Name):
        return
    registration = hooks.attributes.get(attribute)
    container = built.get(attribute)
    if registration is None or container is None or last_name(container.func) not in CONTAINERS:
        return
    layer = loop.target.id
    chained = any(isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
                  and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Name)
                  and s.value.func.id == layer and s.value.args and isinstance(s.value.args[0], ast.Name)
                  and s.value.args[0].id == s.targets[0].id for s in loop.body)
    elements = container.args[0].elts if container.args and isinstance(container.args[0], (ast.List, ast.Tuple)) \
        else []
    if not chained:
        return
    for element in elements[1:]:  # the first layer's input is not a hooked output
        writer = writers.of_layer(element)
        if writer:
            report(writer, f"the layer before it in `self.{attribute}`", registration)
