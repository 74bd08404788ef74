"""Parameters that every call in the file fills with a module the file builds.

A training loop is often written as a function of the network it trains,
`def train_epoch(model, optimizer, batches)`, called once from `main()` with
`model = SpikingClassifier()`; a trainer object is given its networks in its
constructor, `SLUTrainer(BinarySLUTagger(), SlotNamePredictor())`.  Inside,
`model(x)` is a call of that network, with its parameters and the graph they
start, but the walk sees only a parameter.  A parameter counts as that module
when the function (a top-level function called by name, or a class's
`__init__` called through the class name) is defined once in the file, every
mention of its name is a call (or its definition), and every call passes, at
that parameter, the same module: a constructor call of a same-file
`nn.Module` class or of an `nn` layer, or a name whose every binding in the
calling function (or at the top of the file) is one.  A call that passes
`*args`/`**kwargs`, a mention that is not a call, or two different classes
keep the parameter unknown.  Names are matched without resolving them, like
``arguments.py``.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from autograd_doctor.lint.arguments import _bind, _bindings, nested_statements, paired_display
from autograd_doctor.lint.walk import own_nodes

_NN_PREFIXES = ("nn.", "torch.nn.")


def module_parameters(tree: ast.Module, source: str, trains: bool) -> dict:
    """(class or None, function name) -> {parameter: a constructor call it receives}."""
    if not trains or (".step(" not in source and "optim" not in source
                      and ("autograd.grad" not in source or "nn.Module" not in source)):
        return {}  # only training code (and explainers of a network) calls its networks through parameters
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    functions = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.setdefault(node.name, []).append((None, node, False))
    for cls in classes:
        init = next((b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
        if init is not None:
            functions.setdefault(cls.name, []).append((cls.name, init, True))
    lines = source.splitlines()
    # cheap first: only a function that calls a parameter (`model(x)`) or keeps one on
    # `self` (`self.net = net`) can use a network it is given
    layer_attributes = _LayerAttributes(source)  # `self.embedding = ...` in the classes, read if needed
    wanted = {name for name, defs in functions.items() if len(defs) == 1
              and _uses_a_parameter_as_network(defs[0][1], defs[0][2], lines, layer_attributes)}
    wanted = {name for name in wanted if _call_count(name, source) and not _mentioned_otherwise(name, source)}
    if not wanted:
        return {}
    module_classes = _module_classes(classes)
    if not module_classes and "nn." not in source:
        return {}
    top_bindings = _top_bindings(tree)
    calls = defaultdict(list)  # name -> [(call, bindings of the calling code)]
    calls_text = tuple(f"{name}(" for name in wanted)
    holders = [tree] + [n for n in nested_statements(tree.body) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                        and any(t in "\n".join(lines[n.lineno - 1: n.end_lineno]) for t in calls_text)]
    factories = _Factories(functions, module_classes)
    for holder in holders:
        known = None
        for node in own_nodes(holder.body, enter_classes=True):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in wanted:
                if known is None:
                    known = top_bindings if isinstance(holder, ast.Module) else _bindings(holder)
                    known = factories.unpacked(holder, known)
                calls[node.func.id].append((node, known))
    out = {}
    for name in wanted:
        found = calls.get(name)
        if not found or len(found) != _call_count(name, source):
            continue  # a call we did not see (in a lambda, a class body): unknown
        owner, function, method = functions[name][0]
        params = _parameters(function, method)
        given = None
        for call, known in found:
            passed = _modules_passed(call, params, known, module_classes)
            given = passed if given is None else {
                p: c for p, c in given.items() if p in passed and _same_class(c, passed[p])}
            if not given:
                break
        if given:
            out[(owner, function.name)] = given
    return out


def _module_classes(classes) -> set:
    """Same-file classes built on `nn.Module` (or on such a same-file class)."""
    found: set = set()
    changed = True
    while changed:
        changed = False
        for cls in classes:
            if cls.name in found:
                continue
            for base in cls.bases:
                text = ast.unparse(base)
                if text.endswith("Module") or text in found:
                    found.add(cls.name)
                    changed = True
                    break
    return found


class _LayerAttributes:
    """The attributes the file's classes assign on `self`, found the first time asked."""

    def __init__(self, source: str) -> None:
        self.source, self.found = source, None

    def names(self) -> set:
        if self.found is None:
            self.found = set(_SELF_ATTRIBUTE.findall(self.source))
        return self.found


def _uses_a_parameter_as_network(function, method: bool, lines, layer_attributes) -> bool:
    """The function calls a parameter (`model(x)`), keeps one (`self.net = net`,
    `self.model = model.eval()`) or
    calls one of its layers (`model.embedding(tokens)`, an attribute that some class
    of the file assigns on `self`; `optimizer.step()` is none)."""
    text = "\n".join(lines[function.lineno - 1: function.end_lineno])
    parameters = _parameters(function, method)
    if any(f"{p}(" in text or f"= {p}\n" in text for p in parameters):
        return True
    if any(f"= {p}.{m}(" in text for p in parameters for m in _KEEPS_THE_MODULE):
        return True  # `self.model = model.eval()`
    receivers = None  # the names whose methods the text calls, found once
    for p in parameters:
        if f"{p}." in text:
            if receivers is None:
                attributes = layer_attributes.names()
                receivers = {r for r, attr in _METHOD_CALL.findall(text) if attr in attributes}
            if p in receivers:
                return True
    return False


# nn.Module methods that return the module itself (modules.RETURN_THE_MODULE's usual ones)
_KEEPS_THE_MODULE = ("eval", "train", "to", "cuda", "cpu", "float", "double", "half")
_DEFINITION_LEAD = re.compile(r"(^|\s)(class|def)$")
_METHOD_CALL = re.compile(r"\b(\w+)\.(\w+)\(")
_SELF_ATTRIBUTE = re.compile(r"\bself\.(\w+)\s*=[^=]")


def _mentioned_otherwise(name: str, source: str) -> bool:
    """``name`` used as a value somewhere (`callbacks=[name]`, `fn = name`, `map(name,
    ...)`): a callback may be called from anywhere.  Read from the text: a mention
    that is no call and that code surrounds (not a word in a docstring or comment)."""
    start = source.find(name)
    while start >= 0:
        end = start + len(name)
        before = source[start - 1] if start else " "
        after = source[end] if end < len(source) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            rest = source[end:end + 8].lstrip(" \t")
            lead = source[max(0, start - 8): start].rstrip(" \t")
            if _DEFINITION_LEAD.search(lead):
                pass  # its own definition: `class PyTorchDeep:` (a class without bases)
            elif not rest.startswith("(") and (rest[:1] in (",", ")", "]", ":", "}") or
                                             (rest[:1] == "=" and rest[:2] != "==") or
                                             lead.endswith(("=", "(", "[", ",", "return"))):
                return True
        start = source.find(name, end)
    return False


def _call_count(name: str, source: str) -> int:
    """Textual calls `name(` (not its `def`/`class` line, not `obj.name(`, not a name
    quoted in prose: "a `fit()` function" in a docstring or comment)."""
    count, start = 0, source.find(name)
    while start >= 0:
        end = start + len(name)
        before = source[start - 1] if start else " "
        if not (before.isalnum() or before in "_.`") and not (end < len(source) and (source[end].isalnum() or source[end] == "_")):
            rest = source[end:end + 8].lstrip(" \t")
            if rest.startswith("(") and not source[max(0, start - 6): start].endswith(("def ", "class ")):
                count += 1
        start = source.find(name, end)
    return count


def _parameters(function, method: bool) -> list:
    args = function.args.posonlyargs + function.args.args
    if method:
        args = args[1:]  # `self`
    return [a.arg for a in args if a.annotation is None] + \
        [a.arg for a in function.args.kwonlyargs if a.annotation is None]


def _modules_passed(call, params, known, module_classes) -> dict:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return {}
    given = dict(zip(params, call.args))
    given.update((k.arg, k.value) for k in call.keywords if k.arg in params)
    out = {}
    for param, value in given.items():
        ctor = _constructor(value, known, module_classes)
        if ctor is not None:
            out[param] = ctor
    return out


def _constructor(value, known, module_classes):
    """The module constructor call ``value`` surely is, or None."""
    if isinstance(value, ast.Name):
        bound = known.get(value.id) or ()
        ctors = [_constructor(v, {}, module_classes) if isinstance(v, ast.Call) else None for v in bound]
        if ctors and all(c is not None for c in ctors) and all(_same_class(ctors[0], c) for c in ctors):
            return ctors[0]
        return None
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    if isinstance(func, ast.Name) and func.id in module_classes:
        return value
    text = ast.unparse(func)
    if text.startswith(_NN_PREFIXES) and text.rsplit(".", 1)[-1][:1].isupper():
        return value
    return None


class _Factories:
    """`model, optimizer = build()`: a name unpacked from a call of a top-level
    function of the file (defined once) whose every `return` is a tuple display
    with, at that position, a module constructor (or a name every binding of the
    function makes one, of one class).  The unpacked name is then bound to that
    constructor, as if the caller had written it; anything else stays unknown."""

    def __init__(self, functions, module_classes) -> None:
        self.functions, self.module_classes, self.cache = functions, module_classes, {}

    def returned(self, name: str, position: int, size: int):
        key = (name, position, size)
        if key not in self.cache:
            self.cache[key] = self._returned(name, position, size)
        return self.cache[key]

    def _returned(self, name, position, size):
        defs = self.functions.get(name) or ()
        if len(defs) != 1 or defs[0][0] is not None:
            return None
        function = defs[0][1]
        returns = [n for n in own_nodes(function.body) if isinstance(n, ast.Return)]
        if not returns:
            return None
        known = _bindings(function)
        found = None
        for ret in returns:
            value = ret.value
            if not isinstance(value, ast.Tuple) or len(value.elts) != size or \
                    any(isinstance(e, ast.Starred) for e in value.elts):
                return None
            ctor = _constructor(value.elts[position], known, self.module_classes)
            if ctor is None or (found is not None and not _same_class(found, ctor)):
                return None
            found = ctor
        return found

    def unpacked(self, holder, known: dict) -> dict:
        body = holder.body
        out = None
        for node in own_nodes(body, enter_classes=False):
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and isinstance(node.targets[0], (ast.Tuple, ast.List))
                    and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)):
                continue
            elts = node.targets[0].elts
            if any(isinstance(e, ast.Starred) for e in elts):
                continue
            for position, target in enumerate(elts):
                if not isinstance(target, ast.Name) or None not in (known.get(target.id) or ()):
                    continue
                ctor = self.returned(node.value.func.id, position, len(elts))
                if ctor is None:
                    continue
                if out is None:
                    out = defaultdict(list, {k: list(v) for k, v in known.items()})
                bound = out[target.id]
                bound[bound.index(None)] = ctor
        return known if out is None else out


def _same_class(a, b) -> bool:
    return ast.unparse(a.func) == ast.unparse(b.func)


def _top_bindings(tree) -> dict:
    """Name -> every value bound to it by the file's own top-level code (an
    `if __name__ == "__main__":` block included, functions and classes not)."""
    out: dict = defaultdict(list)
    for node in own_nodes(tree.body, enter_classes=True):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id].append(node.value)
                elif paired_display(t, node.value) is not None:
                    _bind(out, t, node.value)  # `G, D = Generator(), Discriminator()`
                else:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            out[n.id].append(None)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            target = node.target if not isinstance(node, ast.With) else None
            for n in ast.walk(target) if target is not None else ():
                if isinstance(n, ast.Name):
                    out[n.id].append(node.value if isinstance(node, ast.AnnAssign) else None)
    return out
