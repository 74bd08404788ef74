"""ADL016: a misspelt `requires_grad`, or the method `requires_grad_` overwritten,
where the object's gradients really change (or a call raises)."""

from __future__ import annotations

import ast
from functools import lru_cache

from autograd_doctor.lint import names as N
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL016", name="requires-grad-typo",
    summary="A misspelt `requires_grad` (`require_grad`...) or `model.requires_grad_ = False`: nothing is frozen or trained.",
    what_it_does="""Finds the same misspelt keywords in `torch.*` calls (`torch.zeros(3,
require_grad=True)`), and assignments of `True`/`False` to a misspelt
attribute (`require_grad`, `requires_grads`, `required_grad`,
`requires_gard`, `requires_gradient`...) or to the method `requires_grad_`
(`model.requires_grad_ = False`) where the value meant differs from the one
the object has:
* `... = False` on something whose parameters require grad: a parameter
  (`for p in model.parameters()`, the `.weight`/`.bias` of a module), a
  leaf made with `requires_grad=True`, or a module (an `nn` layer or a
  same-file `nn.Module` subclass, an argument annotated `nn.Module`, an
  object whose `.parameters()`, `.eval()`, `.train()`... this function
  calls, or whose parameters an optimizer gets);
* `... = True` on a tensor that does not require grad (a factory's result,
  a tensor computed without a graph).
`module.requires_grad = False`, spelt right, is reported too when the object
is known to be a module (a name bound to one, a layer held as an attribute:
`self.model.outc`, an item of a module container: `self.layers[0]`, but not
of an `nn.ParameterList` / `nn.ParameterDict`, whose items are parameters, the loop
variable of `for m in model.modules()` / `.children()` / `.named_modules()` /
`.named_children()`, the one parameter of a function the file hands only to
`<module>.apply(fn)`, a `torchvision.models` constructor's result) whose class
has no `requires_grad` setting of its own.""",
    why_bad="""Tensors and modules accept any new attribute, so `w.require_grad = True`
sets an unused attribute and `w.requires_grad` stays `False`: `w` silently
gets no gradient.  `model.requires_grad_ = False` replaces the module's
method with `False` and freezes nothing: the parameters still require grad,
an optimizer given them still trains them, and a later
`model.requires_grad_(True)` raises `TypeError: 'bool' object is not
callable`.  (`model.requires_grad = False` on a module freezes nothing
either: a module has no such attribute.)  As a keyword,
`torch.zeros(3, require_grad=True)` raises `TypeError`.""",
    example="""w = torch.zeros(3)
w.require_grad = True
teacher = Net()
teacher.requires_grad_ = False""",
    use_instead="""w = torch.zeros(3)
w.requires_grad = True
teacher = Net()
teacher.requires_grad_(False)""",
    fix_safety="""The keyword is renamed to `requires_grad`: safe (the call raised
before).  The attribute is renamed to `requires_grad` on a tensor or
parameter, and the assignment becomes `obj.requires_grad_(False)` on a
module: unsafe, since gradients then flow (or stop) as the code meant, which
changes what training does.""",
    known_problems="""`self.require_grad = ...` is not reported: a class's own
configuration attribute may well have that name.  A value that already is
what the line meant is not reported (`pe = torch.zeros(...); pe.require_grad
= False`: a fresh tensor requires no grad anyway), nor an object of unknown
kind (a function's argument that nothing shows to be a module or a tensor).""",
)

# Calls that only an nn.Module answers (optimizers have state_dict / zero_grad too).
_MODULE_METHODS = frozenset("""
parameters named_parameters modules named_modules children named_children buffers
named_buffers eval train register_buffer register_parameter
""".split())
# `Net(...).to(device).eval()`: chained calls that return the module itself.
_RETURNS_SELF = frozenset("to cuda cpu eval train float half double bfloat16 requires_grad_".split())
# `for m in model.modules():`: the methods whose items are modules (the second
# element of each pair for the `named_` ones).
_SUBMODULE_ITERATORS = frozenset("modules children named_modules named_children".split())
# Module containers whose items are parameters, not modules: `self.weights[i].requires_grad
# = False` on an `nn.ParameterList` freezes the parameter.
_PARAMETER_CONTAINERS = frozenset({"ParameterList", "ParameterDict"})
# `torchvision.models.<name>(...)` builds a model, except these helpers.
_TORCHVISION_NOT_MODELS = frozenset("get_weight get_model_weights get_model_builder list_models".split())


def on_call(checker, node, q) -> None:
    """`torch.zeros(3, require_grad=True)`: a misspelt keyword of a torch call."""
    if q.startswith("torch."):
        for k in node.keywords:
            if k.arg in N.REQUIRES_GRAD_TYPOS:
                checker.scope.note("ADL016", (k, k.arg))


def on_attribute_assign(checker, target, value, statement) -> None:
    """`obj.require_grad = <bool>` or `obj.requires_grad_ = <bool>`: note it with
    what the object is known to be at this point of the walk.  `module.requires_grad
    = False` (spelt right, on the wrong object: a module has no such attribute, its
    parameters do) is noted only when the object is known to be a module."""
    if not (target.attr in N.REQUIRES_GRAD_TYPOS or target.attr in ("requires_grad_", "requires_grad")):
        return
    if not (isinstance(value, ast.Constant) and isinstance(value.value, bool)):
        return
    obj = target.value
    if isinstance(obj, ast.Name) and obj.id == "self":
        return
    if target.attr == "requires_grad":
        if value.value is False and (_is_module_without_flag(checker, obj) or _applied_to_modules(checker, obj)):
            checker.scope.note("ADL016", (target, target.attr, False, "module", statement))
        return
    checker.scope.note("ADL016", (target, target.attr, value.value, _known_kind(checker, obj), statement))


def _is_module_without_flag(checker, obj) -> bool:
    """``obj`` is a module (a name bound to one, or a layer held as an attribute:
    `self.backbone`, `self.model.outc`), of a class that has no `requires_grad`
    attribute of its own (a same-file class may use one as a setting)."""
    cls = _module_class_of(checker, obj)
    if cls is None and _known_kind(checker, obj) != "module":
        return False
    if cls is None and (isinstance(obj, ast.Subscript) or isinstance(obj, ast.Name)
                        and _submodule_loop_variable(checker, obj)):
        # An item of a container or of `model.modules()` may be of any class of
        # the file: silent when one of them has a `requires_grad` setting.
        return not any(_has_own_flag(node) for node in checker.modules.module_class_nodes.values())
    node = checker.modules.module_class_nodes.get(cls or "")
    return node is None or not _has_own_flag(node)


def _applied_to_modules(checker, obj) -> bool:
    """``obj`` is the one parameter of a function the file hands only to
    `<module>.apply(fn)`, which calls it on every submodule (`def freeze(m):
    m.requires_grad = False`, then `self.gate.apply(freeze)`): every value it gets
    is a module.  Each `.apply(<name>)` of the file must have a receiver shown to be
    a module (``_module_receiver``), and no class of the file may have a
    `requires_grad` setting of its own (a submodule may be of any of them)."""
    if not isinstance(obj, ast.Name):
        return False
    function = _enclosing_function(checker.source, obj.lineno)
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    arguments = function.args
    if [a.arg for a in arguments.posonlyargs + arguments.args] != [obj.id] or arguments.vararg \
            or arguments.kwonlyargs or arguments.kwarg:
        return False
    if sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function.name
           for n in ast.walk(checker.tree)) > 1:
        return False  # two functions of that name: which one a call hands on is not known
    handed = [n for n in ast.walk(checker.tree) if isinstance(n, ast.Name) and n.id == function.name]
    applies = [n for n in ast.walk(checker.tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "apply" and len(n.args) == 1 and not n.keywords
               and isinstance(n.args[0], ast.Name) and n.args[0].id == function.name]
    if not applies or len(handed) != len(applies):
        return False  # the function is also called or handed elsewhere: its argument may be anything
    if any(_has_own_flag(node) for node in ast.walk(checker.tree) if isinstance(node, ast.ClassDef)):
        return False
    return all(_module_receiver(checker, call) for call in applies)


def _module_receiver(checker, call) -> bool:
    """The object of `<receiver>.apply(fn)` is a module: `self` in a module class,
    `self.<attr>` bound to a module in that class, an attribute name that every class
    of the file binding it on `self` binds to a module, reached from `self` or from a
    module (`self.layers[i].gate`, `model.stem`), or a name its function uses as a
    module (`model.eval()`, `model.parameters()`)."""
    receiver = call.func.value
    classes = [c for c in ast.walk(checker.tree) if isinstance(c, ast.ClassDef)]
    around = [c for c in classes if c.lineno <= call.lineno <= c.end_lineno]
    owner = max(around, key=lambda c: c.lineno).name if around else None
    if owner not in checker.modules.module_classes:
        owner = None
    if isinstance(receiver, ast.Name):
        if receiver.id == "self":
            return owner is not None
        return _module_in_function(checker, receiver, call.lineno)
    if not isinstance(receiver, ast.Attribute):
        return False
    root = receiver
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not isinstance(root, ast.Name) or (owner is None if root.id == "self"
                                          else not _module_in_function(checker, root, call.lineno)):
        return False  # the chain starts from no module
    binders = {c.name for c in classes for n in ast.walk(c)
               if isinstance(n, (ast.Assign, ast.AnnAssign)) for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
               if isinstance(t, ast.Attribute) and t.attr == receiver.attr
               and isinstance(t.value, ast.Name) and t.value.id == "self"}
    return bool(binders) and all(receiver.attr in checker.modules.module_specs.get(name, {}) for name in binders)


def _has_own_flag(class_node) -> bool:
    """The class reads or writes `self.requires_grad`: a setting of its own."""
    return any(isinstance(n, ast.Attribute) and n.attr == "requires_grad"
               and isinstance(n.value, ast.Name) and n.value.id == "self" for n in ast.walk(class_node))


def _module_class_of(checker, obj) -> str | None:
    """The class of the module ``obj`` holds: `self.head` from what `__init__` bound
    it to, `self.model.outc` through the same-file class `self.model` was built
    from, a name from the constructor call bound to it; None when not known."""
    scope = checker.scope
    if isinstance(obj, ast.Name):
        if obj.id == "self":
            return scope.owner_class
        bound = scope.binding(obj.id, checker.seq + 1)
        call = bound[1] if bound is not None else None
        while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and call.func.attr in _RETURNS_SELF:
            call = call.func.value
        spec = checker.modules.module_spec(call) if isinstance(call, ast.Call) else None
        return spec.kind if spec is not None else None
    if isinstance(obj, ast.Attribute):
        owner = _module_class_of(checker, obj.value)
        spec = checker.modules.module_specs.get(owner, {}).get(obj.attr) if owner else None
        return spec.kind if spec is not None else None
    return None


def _known_kind(checker, obj) -> str | None:
    """'requires grad' (a parameter or a leaf made to require grad), 'no grad' (a
    tensor known not to), 'module', or None (not known here; the module evidence
    of later calls is looked for when the scope ends)."""
    scope = checker.scope
    if isinstance(obj, ast.Name):
        name = obj.id
        if name in scope.parameter_vars or name in scope.grad_leaves:
            return "requires grad"
        if name in scope.tensors and name not in scope.graph and name not in scope.graph_arguments:
            return "no grad"
        if name in checker.modules.name_specs:
            return "module"
        bound = scope.binding(name, checker.seq + 1)
        if bound is not None and _constructs_module(checker, bound[1]):
            return "module"
        if bound is not None and bound[1] is None and _submodule_loop_variable(checker, obj):
            return "module"
    elif isinstance(obj, ast.Subscript):
        container = _module_class_of(checker, obj.value) or _name_spec_kind(checker, obj.value)
        if container in _PARAMETER_CONTAINERS:
            return "requires grad"  # `self.weights[i]` of an `nn.ParameterList`: a parameter
        if _known_kind(checker, obj.value) == "module" or container:
            return "module"  # `self.layers[0]`: an item of a ModuleList / Sequential
    elif isinstance(obj, ast.Attribute):
        if checker.layer_parameter(obj) or obj.attr in ("weight", "bias") \
                and _known_kind(checker, obj.value) == "module":
            return "requires grad"  # `dense.weight`, `self.head.weight`: a parameter
        if isinstance(obj.value, ast.Name) and obj.value.id == "self" and scope.module_class \
                and obj.attr in checker.modules.module_specs.get(scope.module_class, ()):
            return "module"
    text = checker.text(obj)
    if any(text in owners for owners in checker.training.optimizers.values()):
        return "module"
    return None


def _name_spec_kind(checker, obj) -> str | None:
    """The class of the module a plain name holds when its binding here is no
    constructor call: `for adapter in self.adapters:` over a container whose
    appended items are all `nn.ParameterDict`s gives `ParameterDict`."""
    spec = checker.modules.name_specs.get(obj.id) if isinstance(obj, ast.Name) else None
    return spec.kind if spec is not None else None


def _constructs_module(checker, value) -> bool:
    """`Net(...)` of a same-file nn.Module subclass or `nn.Linear(...)`, possibly
    followed by `.to(device)`, `.eval()`..."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr in _RETURNS_SELF:
        value = value.func.value
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name) and func.id in checker.modules.module_classes:
        return True
    q = checker.qualname(func) or ""
    if q.startswith("torchvision.models."):  # `resnet18(weights=...)`, `detection.fasterrcnn_...()`
        last = q.rsplit(".", 1)[-1]
        return last not in _TORCHVISION_NOT_MODELS and not last.endswith("_Weights")
    return q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and \
        not q.startswith("torch.nn.parameter") and q != "torch.nn.Parameter"


def _submodule_loop_variable(checker, obj: ast.Name) -> bool:
    """``obj`` is the loop variable of the innermost `for` around it that binds the
    name, and that loop runs over `X.modules()`, `X.children()`,
    `X._modules.values()` (the variable itself) or `X.named_modules()`,
    `X.named_children()`, `X._modules.items()` (the second of a pair): every
    item is a module."""
    loops = [n for n in ast.walk(_enclosing_function(checker.source, obj.lineno))
             if isinstance(n, (ast.For, ast.AsyncFor)) and n.body
             and n.body[0].lineno <= obj.lineno <= n.end_lineno
             and obj.id in {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}]
    if not loops:
        return False
    loop = max(loops, key=lambda n: n.lineno)
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
            and (it.func.attr in _SUBMODULE_ITERATORS or it.func.attr in ("items", "values")
                 and isinstance(it.func.value, ast.Attribute) and it.func.value.attr == "_modules")):
        return False
    target = loop.target
    if it.func.attr.startswith("named_") or it.func.attr == "items":  # `model._modules.items()`
        return isinstance(target, ast.Tuple) and len(target.elts) == 2 \
            and isinstance(target.elts[1], ast.Name) and target.elts[1].id == obj.id
    return isinstance(target, ast.Name)


def check_scope(checker, scope) -> None:
    for entry in scope.noted("ADL016"):
        node, spelled = entry[0], entry[1]
        if node.__class__.__name__ == "keyword":  # torch.zeros(3, require_grad=True)
            fix = Fix("spell it `requires_grad`",
                      (checker.edit(node, "requires_grad=" + checker.text(node.value)),), safe=True)
            checker.report("ADL016", node, f"`{spelled}` is a misspelling of `requires_grad`: "
                                           f"the call raises TypeError (unexpected keyword argument)", fix)
            continue
        _, _, meant, kind, statement = entry
        obj = node.value
        if kind is None and _module_in_function(checker, obj, node.lineno):
            kind = "module"
        elif kind is None and isinstance(obj, ast.Attribute) and obj.attr in ("weight", "bias") \
                and any(_module_in_function(checker, owner, node.lineno) for owner in _owners(obj.value)):
            kind = "requires grad"  # `decoder.embed.weight` of a module: a parameter
        freeze = None
        if meant and kind == "requires grad" and spelled in N.REQUIRES_GRAD_TYPOS:
            # a parameter requires grad unless frozen: a misspelt unfreeze matters when the
            # file freezes parameters (`p.requires_grad = False` over `.parameters()`,
            # `requires_grad_(False)`), which this line, meant to undo it, leaves frozen
            freeze = _parameter_freeze(checker)
            if freeze is None:
                continue
        elif meant and kind != "no grad" or not meant and kind not in ("requires grad", "module"):
            continue  # the object already has the value meant, or nothing is known of it
        _report_assignment(checker, node, spelled, meant, kind, statement, freeze)


def _parameter_freeze(checker):
    """The first statement of the file that freezes parameters, spelt right:
    `p.requires_grad = False` in a loop over `.parameters()` / `.named_parameters()`,
    or a call `x.requires_grad_(False)`.  Read once per file."""
    known = checker.notes.get("ADL016 freeze")
    if known is None:
        freezes = []
        for node in ast.walk(checker.tree):
            if isinstance(node, (ast.For, ast.AsyncFor)) and isinstance(node.iter, ast.Call) \
                    and isinstance(node.iter.func, ast.Attribute) \
                    and node.iter.func.attr in ("parameters", "named_parameters"):
                target = node.target.elts[-1] if isinstance(node.target, ast.Tuple) and node.target.elts \
                    else node.target
                if not isinstance(target, ast.Name):
                    continue
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Assign) and isinstance(inner.value, ast.Constant) \
                            and inner.value.value is False and any(
                                isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                and isinstance(t.value, ast.Name) and t.value.id == target.id
                                for t in inner.targets):
                        freezes.append(inner)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "requires_grad_" and len(node.args) == 1 \
                    and isinstance(node.args[0], ast.Constant) and node.args[0].value is False:
                freezes.append(node)
        known = checker.notes["ADL016 freeze"] = [min(freezes, key=lambda n: n.lineno) if freezes else None]
    return known[0]


def _report_assignment(checker, node, spelled: str, meant: bool, kind: str, statement, freeze=None) -> None:
    obj = checker.text(node.value)
    if meant and freeze is not None:
        effect = (f"parameters frozen on line {freeze.lineno} (`{checker.text(freeze)}`) stay frozen: "
                  f"`{obj}` gets no gradient where it was frozen")
    elif meant:
        effect = f"`{obj}` still requires no grad and gets no gradient"
    elif kind == "module":
        effect = f"nothing is frozen: the parameters of `{obj}` still require grad"
    else:
        effect = f"nothing is frozen: `{obj}` still requires grad"
    if spelled == "requires_grad_":
        what = f"this replaces the method `requires_grad_` of `{obj}` with `{meant}`"
    elif spelled == "requires_grad":
        what = "a module has no attribute `requires_grad` (its parameters do): this sets a new, unused attribute"
    else:
        what = f"`{spelled}` is a misspelling of `requires_grad`: this sets a new, unused attribute"
    if kind == "module" or spelled == "requires_grad_":
        alone = isinstance(statement, ast.Assign) and statement.targets == [node]
        fix = Fix(f"call `{obj}.requires_grad_({meant})`",
                  (checker.edit(statement, f"{obj}.requires_grad_({meant})"),), safe=False) \
            if alone else None
    else:
        fix = Fix("spell it `requires_grad`", (checker.edit(node, obj + ".requires_grad"),), safe=False)
    checker.report("ADL016", node, f"{what}, and {effect}", fix)


def _module_in_function(checker, obj, line: int) -> bool:
    """The function around ``line`` calls a method only modules have on ``obj``
    (`model.eval()`, `model.parameters()`), before or after the line, or takes
    ``obj`` as an argument annotated `nn.Module` (or a same-file module class)."""
    text = checker.text(obj)
    function = _enclosing_function(checker.source, line)
    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs:
            if a.arg == text and a.annotation is not None and _module_annotation(checker, a.annotation):
                return True
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _MODULE_METHODS and checker.text(node.func.value) == text:
            return True
    return False


def _owners(node) -> list:
    """`decoder.embed` -> [`decoder.embed`, `decoder`]: the object and the objects
    that hold it as an attribute (a submodule of a module is a module)."""
    owners = [node]
    while isinstance(node, ast.Attribute):
        node = node.value
        owners.append(node)
    return owners


def _module_annotation(checker, annotation) -> bool:
    """`nn.Module`, `torch.nn.Module`, `nn.Linear`, or a same-file module class."""
    if isinstance(annotation, ast.Name) and annotation.id in checker.modules.module_classes:
        return True
    q = checker.qualname(annotation) or ""
    return q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and q != "torch.nn.Parameter"


@lru_cache(maxsize=8)
def _functions(source: str) -> tuple:
    """The module and every function of ``source`` with its line range (parsed
    again only for a file with a candidate whose object is not known at the
    assignment)."""
    tree = ast.parse(source)
    return ((1, len(source.splitlines()) + 1, tree),) + tuple(
        (n.lineno, n.end_lineno, n) for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _enclosing_function(source: str, line: int):
    """The innermost function around ``line``, or the module."""
    around = [(start, n) for start, end, n in _functions(source) if start <= line <= end]
    return max(around, key=lambda t: t[0])[1]
