"""Which layers a project module class's `forward` computes each returned position from.

ADL003 reads a twin critic's `forward` per position (`q1, q2 = self.critic(s, a)`:
`q1` from `linear1-3`, `q2` from `linear4-6`) through the walk's own summaries
(summaries.py) when the class is defined in the linted file.  Rafael1s's SAC
agents import the same `QNetwork` from `model.py` (set AO, docs/lint.md): this
module reads such a class in its own file, found as ``clearing.project_class``
finds one, without the walk.

The reading is syntactic and errs towards more layers per position (a position
that may share a layer with another keeps ADL003's claim):

* every `return` of the class's own `forward` is a tuple display of one length,
  no starred element; a position's layers are the `self.<attr>` its expression
  reads, following every binding of each local name in `forward` (all of them,
  whatever the path);
* each `self.<attr>` read is bound once in the class, in `__init__`, to a
  constructor call (`nn.Linear(...)`, `nn.Sequential(...)`), or to a constant; a
  constructor that reads other attributes (`nn.Sequential(self.linear1, ...)`)
  counts them too, so a layer shared that way shows in both positions, and two
  positions built from one bare name handed to a constructor that may keep it
  (`nn.Sequential(trunk, ...)`, `SoftQNet(encoder, ...)`) give no answer;
* anything else gives no answer: a `self` handed on, a method of `self`
  called (it may use any layer), `super()`, an attribute bound to a name (an
  argument, perhaps one module bound twice), a `forward` inherited.

One reading per class of a project file (cached with the parsed tree).
"""

from __future__ import annotations

import ast
from functools import lru_cache

from autograd_doctor.lint.clearing import parsed_file, project_class
from autograd_doctor.lint.walk import own_nodes
from autograd_doctor.lint.names import self_attribute


def forward_position_layers(qualname: str, filename: str) -> tuple | None:
    """Per position of the tuple that `forward` of the project class ``qualname``
    (as the linted file ``filename`` imports it) returns: the frozenset of
    `self.<attr>` names it is computed from; None when not known."""
    found = project_class(qualname, filename)
    if found is None:
        return None
    return _position_layers(found[0], found[1])


@lru_cache(maxsize=256)
def _position_layers(path: str, cls: ast.ClassDef) -> tuple | None:
    methods = {b.name: b for b in cls.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))}
    forward, init = methods.get("forward"), methods.get("__init__")
    if forward is None or init is None:
        return None
    attributes = _attribute_sources(cls, init)
    returns = [r.value for r in own_nodes(forward.body) if isinstance(r, ast.Return)]
    if not returns or not all(isinstance(r, ast.Tuple) for r in returns):
        return None
    length = len(returns[0].elts)
    if length < 2 or any(len(r.elts) != length or any(isinstance(e, ast.Starred) for e in r.elts)
                         for r in returns):
        return None
    bindings = _local_bindings(forward)
    tree = parsed_file(path)
    if bindings is None or tree is None:
        return None
    # a module the file builds at its top, or one the caller passes, may be read by
    # several positions: reading one (calling an argument) gives no answer
    file_modules = _names_bound_to_calls(tree)
    arguments = {a.arg for a in forward.args.posonlyargs + forward.args.args + forward.args.kwonlyargs}
    per_position = []
    for position in range(length):
        layers = _layers_read([r.elts[position] for r in returns], bindings, attributes, set(methods),
                              file_modules, arguments)
        if not layers:
            return None
        per_position.append(frozenset(layers))
    handed = [{m for m in layers if m.startswith("name ")} for layers in per_position]
    if any(a & b for i, a in enumerate(handed) for b in handed[i + 1:]):
        return None  # two positions built from one handed-on name: perhaps one module
    return tuple(frozenset(m for m in layers if not m.startswith("name ")) for layers in per_position)


def _attribute_sources(cls: ast.ClassDef, init) -> dict:
    """attr -> the other attributes its value reads (`self.head = nn.Sequential(self.body,
    ...)`: {"body"}), for each `self.<attr>` bound once in the class, in `__init__`, to a
    call that is no `self.<method>(...)` or to a constant; an attribute bound otherwise
    is left out (reading it gives no answer)."""
    bound: dict[str, list] = {}
    for node in ast.walk(cls):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for t in ast.walk(target):
                if self_attribute(t) is not None and isinstance(t.ctx, ast.Store):
                    bound.setdefault(t.attr, []).append((node, target))
    in_init = {id(n) for n in ast.walk(init)}
    sources = {}
    for attr, assigns in bound.items():
        if len(assigns) != 1:
            continue
        node, target = assigns[0]
        if id(node) not in in_init or not isinstance(node, ast.Assign) or target is not node.targets[0] \
                or len(node.targets) != 1 or self_attribute(target) is None:
            continue
        value = node.value
        if isinstance(value, ast.Constant):
            sources[attr] = frozenset()
        elif isinstance(value, ast.Call) and self_attribute(value.func) is None:
            read = {a for a in (self_attribute(n) for n in ast.walk(value)) if a}
            sources[attr] = frozenset(read | _names_handed_on(value))
    return sources


def _names_handed_on(value) -> set:
    """`name <x>` for each bare name handed as a whole to a constructor that may keep
    it (`nn.Sequential(trunk, head)`, `SoftQNet(encoder, dims)`): two layers built with
    the same name may share one module.  A `torch.nn` layer class other than a
    container (`nn.Linear(n_in + n_act, hidden)`) takes sizes, and builds its own
    parameters."""
    found = set()
    for call in (n for n in ast.walk(value) if isinstance(n, ast.Call)):
        func = ast.unparse(call.func)
        kind = func.rsplit(".", 1)[-1]
        if func.startswith(("nn.", "torch.nn.")) and kind[:1].isupper() and kind not in _CONTAINERS:
            continue
        for arg in list(call.args) + [k.value for k in call.keywords]:
            if isinstance(arg, ast.Starred):
                arg = arg.value
            if isinstance(arg, ast.Name):
                found.add(f"name {arg.id}")
    return found


_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})


def _local_bindings(function) -> dict | None:
    """name -> the expressions bound to it anywhere in ``function`` (a tuple target
    binds each of its names to the whole value); None for a binding whose value the
    reading does not follow (a `for`, `with`, comprehension variable leaking...)."""
    bindings: dict[str, list] = {}
    for node in own_nodes(function.body):
        if isinstance(node, ast.Assign):
            pairs = [(t, node.value) for t in node.targets]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            if node.value is None:
                continue
            pairs = [(node.target, node.value)]
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                pairs.append((node.target, node.target))
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            pairs = [(node.target, node.iter)]
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            pairs = [(i.optional_vars, i.context_expr) for i in node.items if i.optional_vars is not None]
        elif isinstance(node, ast.NamedExpr):
            pairs = [(node.target, node.value)]
        else:
            continue
        for target, value in pairs:
            for t in ast.walk(target):
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store):
                    bindings.setdefault(t.id, []).append(value)
                elif isinstance(t, (ast.Attribute, ast.Subscript)) and isinstance(t.ctx, ast.Store):
                    root = t
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    if isinstance(root, ast.Name) and root.id != "self":
                        bindings.setdefault(root.id, []).append(value)  # `out[k] = self.head(h)`
                    elif isinstance(root, ast.Name):
                        return None  # `self.<attr> = ...` in forward: state, not read here
    return bindings


def _names_bound_to_calls(tree: ast.Module) -> frozenset:
    """Names the file binds at its top to a call (`shared = nn.Linear(4, 4)`): a
    module that several positions may read."""
    return frozenset(t.id for node in tree.body if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                     for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name))


def _layers_read(expressions, bindings: dict, attributes: dict, methods: set, file_modules,
                 arguments) -> set | None:
    """The `self.<attr>` names the expressions are computed from, through the local
    bindings; None when something read gives no answer (a module the file built at
    its top read by name, a forward argument called)."""
    found, seen, work = set(), set(), list(expressions)
    while work:
        node = work.pop()
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in arguments \
                    and n.func.id not in bindings:
                return None
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                if n.id in ("self", "super"):
                    if not _is_attribute_base(n, node):
                        return None  # `helper(self, x)`, `super().forward(x)`
                elif n.id in bindings:
                    if n.id not in seen:
                        seen.add(n.id)
                        work.extend(bindings[n.id])
                elif n.id in file_modules and n.id not in arguments:
                    return None
            attr = self_attribute(n)
            if attr is None:
                continue
            if attr in methods or attr not in attributes:
                return None
            found.add(attr)
            found.update(attributes[attr])
    return found


def _is_attribute_base(name: ast.Name, root) -> bool:
    """``name`` (`self`) is read as the base of an attribute (`self.linear1`) in ``root``."""
    return any(isinstance(n, ast.Attribute) and n.value is name for n in ast.walk(root))
