"""Which methods of a held module's class use none of its layers or parameters.

ADL003 takes `self.critic.build_inputs(batch)` for a value computed from the
critic's parameters: a method of a module, given input.  pymarl2's
`OffPGLearner.train_critic` builds `inputs = self.critic._build_inputs(batch,
bs, max_t)` before its loop of critic steps, then calls `self.critic(inputs[:,
t])` anew in each iteration; `_build_inputs` (in another file) only stacks batch
fields and `th.eye(self.n_agents)`, so no graph of the critic is old when the
step comes.  The link needs evidence, and the method's code is the evidence:
when every assignment of the receiver in the file builds one class
(`self.critic = OffPGCritic(...)`) and the repository defines that class with
the method, a method that uses the module's attributes only as sizes and flags
(arguments of a factory such as `torch.eye`/`torch.zeros`, of a shape method
such as `repeat`/`reshape`/`view`, of `range`; in a comparison or an `if` test;
a loop or comprehension over its layers that reads each only for sizes, `[torch.zeros(n,
layer.n_out) for layer in self.layers]`) computes nothing from the parameters.  A layer called (`self.fc(x)`), an
attribute used as an operand (`x @ self.weight`, `F.linear(x, self.w)`), `self`
itself handed on, an inherited method or a class that cannot be found keeps the
link, as before.

Classes are matched by name in the linted file first, then in the files of the
repository (``submodules.py``) whose text defines the class; each file is
parsed once (cached), and only when ADL003 would otherwise take the link.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.submodules import file_text, repository_files
from autograd_doctor.lint.names import last_name

# Methods whose arguments are sizes, dimensions or repeat counts.
_SHAPE_METHODS = frozenset("""
repeat reshape view expand tile unsqueeze squeeze permute flatten unflatten transpose
narrow size new_zeros new_ones new_full new_empty repeat_interleave chunk split
""".split())
# Factories whose arguments are sizes, fill values, devices and dtypes: no graph.
_SIZE_FACTORIES = frozenset("""
arange zeros ones empty full rand randn randint randperm linspace logspace eye
""".split())
# Conversions whose argument is a device or a dtype (`x.to(self.device)`).
_CONVERSIONS = frozenset({"to", "cuda", "type"})
_SIZE_BUILTINS = frozenset({"range", "len", "int", "float", "bool"})
# Methods that `nn.Module.__call__` or the module itself runs with its layers.
_LAYER_METHODS = frozenset({"forward", "__call__"})


def uses_no_layer(receiver: ast.expr, method: str, tree: ast.Module, filename: str) -> bool:
    """Whether ``receiver.method(...)`` surely computes nothing from the receiver's
    parameters: the receiver's class is known (every assignment of it in ``tree``
    builds the same class) and its own definition of ``method`` uses the module
    only for sizes and flags."""
    if method in _LAYER_METHODS or method.startswith("__"):
        return False
    definitions = _class_definitions(receiver, tree, filename)
    if not definitions and not _assigned(receiver, tree):
        definitions = _classes_defining(method, tree, filename)
    return bool(definitions) and all(_size_only(c, method) for c in definitions)


def _assigned(receiver: ast.expr, tree: ast.Module) -> bool:
    """Whether ``tree`` assigns ``receiver`` anywhere (else it is a function's
    parameter or an attribute set in another file)."""
    target = _dotted(receiver)
    return target is None or any(
        isinstance(node, (ast.Assign, ast.AnnAssign)) and any(_dotted(t) == target for t in _targets(node))
        for node in ast.walk(tree))


def _classes_defining(method: str, tree: ast.Module, filename: str) -> list:
    """Every class of the file and of its repository that defines ``method`` itself:
    for a receiver no assignment in the file builds (`def train(self, net)`), the
    classes whose method the call may run."""
    word = re.compile(r"^\s*def\s+%s\b" % re.escape(method), re.M)
    paths = [path for path in repository_files(filename) if word.search(file_text(path))]
    classes = [c for path in paths for c in _classes(path)]
    if not paths:
        classes = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)]
    return [c for c in classes if any(isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == method
                                      for m in c.body)]


def returns_own_parameters(receiver: ast.expr, tree: ast.Module, filename: str) -> bool:
    """Whether calling the module ``receiver`` returns its own parameters, leaves
    without a graph: its class's `forward` only returns attributes that its
    `__init__` sets to an `nn.Parameter`, `nn.ParameterDict` or `nn.ParameterList`
    (DGL's `RelGraphEmbed.forward` returns `self.embeds`)."""
    definitions = _class_definitions(receiver, tree, filename)
    return bool(definitions) and all(_forward_returns_parameters(c) for c in definitions)


def _class_definitions(receiver: ast.expr, tree: ast.Module, filename: str) -> list:
    """The definitions of the one class every assignment of ``receiver`` in
    ``tree`` builds, from the file or else the repository; [] when unknown.
    `embed_layer = embed_layer.to(device)` keeps the object, so builds nothing."""
    target = _dotted(receiver)
    if target is None:
        return []
    classes = {_built_class(node.value) for node in ast.walk(tree)
               if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
               and any(_dotted(t) == target for t in _targets(node))
               and not _moved(node.value, target)}
    if len(classes) != 1 or None in classes:
        return []
    cls = classes.pop()
    definitions = [c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and c.name == cls]
    if not definitions:
        word = re.compile(r"^\s*class\s+%s\b" % re.escape(cls), re.M)
        found = {path: [c for c in _classes(path) if c.name == cls]
                 for path in repository_files(filename) if word.search(file_text(path))}
        # a class of the file's own folder (`from model import RelGraphEmbed` in an
        # example) is the one imported, not its namesakes in other examples
        here = os.path.dirname(os.path.abspath(filename))
        beside = [cs for path, cs in found.items() if os.path.dirname(os.path.abspath(path)) == here]
        definitions = [c for cs in (beside or found.values()) for c in cs]
    return definitions


_PARAMETER_CLASSES = frozenset({"Parameter", "ParameterDict", "ParameterList"})


def _forward_returns_parameters(cls: ast.ClassDef) -> bool:
    """``cls.forward`` returns, in every `return`, one attribute of the module that
    ``cls.__init__`` only ever sets to a parameter or a parameter container."""
    methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
    forward, init = methods.get("forward"), methods.get("__init__")
    if forward is None or init is None or forward.decorator_list or not forward.args.args:
        return False
    me = forward.args.args[0].arg
    returns = [r for r in ast.walk(forward) if isinstance(r, ast.Return)]
    returned = {r.value.attr for r in returns if isinstance(r.value, ast.Attribute)
                and isinstance(r.value.value, ast.Name) and r.value.value.id == me}
    if not returns or len(returned) != 1 or any(
            not isinstance(r.value, ast.Attribute) for r in returns):
        return False
    attr = returned.pop()
    built = [_built_class(node.value) for node in ast.walk(cls)
             if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None
             and any(isinstance(t, ast.Attribute) and t.attr == attr for t in _targets(node))]
    return bool(built) and all(b in _PARAMETER_CLASSES for b in built)


def _moved(value, target: str) -> bool:
    """`target.to(device)` / `target.cuda()` / `target.type(dtype)`: the same module."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr in _CONVERSIONS and _dotted(value.func.value) == target


def _dotted(node) -> str | None:
    """`self.critic` -> "self.critic"; anything but names and attributes: None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def _targets(node) -> list:
    return node.targets if isinstance(node, ast.Assign) else [node.target]


def _built_class(value) -> str | None:
    """`Critic(...)` / `critics.Critic(...)`: the class name; anything else: None."""
    if not isinstance(value, ast.Call):
        return None
    func = value.func
    name = last_name(func)
    return name if name[:1].isupper() else None


@lru_cache(maxsize=1024)
def _classes(path: str) -> tuple:
    try:
        tree = ast.parse(file_text(path))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    return tuple(c for c in ast.walk(tree) if isinstance(c, ast.ClassDef))


def _size_only(cls: ast.ClassDef, method: str) -> bool:
    """``cls`` defines ``method`` itself, undecorated, and every use of its first
    parameter is an attribute read in a size or flag position."""
    found = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
             and m.name == method]
    if len(found) != 1 or found[0].decorator_list or not found[0].args.args:
        return False
    function = found[0]
    me = function.args.args[0].arg
    parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
    probes = _parameter_probes(function, me)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == me and node is not function.args.args[0]:
            if not _in_size_position(node, parents) and not _probed(node, parents) and \
                    not _iterated_for_sizes(node, parents):
                return False
        elif isinstance(node, ast.Name) and node.id in probes and isinstance(node.ctx, ast.Load):
            if not _probe_use(node, parents):
                return False
    return True


# What a method may do with one of the module's parameters without computing from
# its values: make a new tensor of the same dtype and device (`weight.new_zeros(n, h)`,
# PyTorch's word-language-model `init_hidden`), or read where it lives.
_NEW_TENSOR_METHODS = frozenset({"new", "new_zeros", "new_ones", "new_full", "new_empty"})
_PLACE_ATTRIBUTES = frozenset({"device", "dtype", "is_cuda", "data"})


def _first_parameter(node, me: str) -> bool:
    """`next(self.parameters())`: one of the module's parameters, as a value."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "next" \
        and len(node.args) == 1 and isinstance(node.args[0], ast.Call) and not node.args[0].args \
        and isinstance(node.args[0].func, ast.Attribute) and node.args[0].func.attr == "parameters" \
        and isinstance(node.args[0].func.value, ast.Name) and node.args[0].func.value.id == me


def _parameter_probes(function, me: str) -> set:
    """Names bound only to `next(self.parameters())` (or its `.data`) in ``function``."""
    bound = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value.value if isinstance(node.value, ast.Attribute) and node.value.attr == "data" \
                else node.value
            bound.setdefault(node.targets[0].id, []).append(_first_parameter(value, me))
    return {name for name, probes in bound.items() if all(probes)}


def _probed(name: ast.Name, parents: dict) -> bool:
    """``name`` (the module) is read only as `next(self.parameters())`, used as a probe."""
    attribute = parents.get(id(name))
    call = parents.get(id(attribute))
    first = parents.get(id(call))
    if not isinstance(first, ast.Call) or not _first_parameter(first, name.id):
        return False
    holder = parents.get(id(first))
    if isinstance(holder, ast.Assign):
        return True  # bound to a name, whose every use ``_probe_use`` checks
    if isinstance(holder, ast.Attribute) and holder.attr == "data":
        holder, first = parents.get(id(holder)), holder
        if isinstance(holder, ast.Assign):
            return True
    return _probe_use(first, parents)


def _probe_use(node, parents: dict) -> bool:
    """``node`` (a parameter) only gives a new tensor's dtype and device, or where it lives."""
    parent = parents.get(id(node))
    if not isinstance(parent, ast.Attribute) or parent.value is not node:
        return False
    if parent.attr in _PLACE_ATTRIBUTES - {"data"}:
        return True
    call = parents.get(id(parent))
    return parent.attr in _NEW_TENSOR_METHODS and isinstance(call, ast.Call) and call.func is parent


def _iterated_for_sizes(name: ast.Name, parents: dict) -> bool:
    """``name`` (the module) is read only as the iterable of a loop or comprehension
    over its layers whose variable is used only for sizes and flags:
    `[torch.zeros(n, layer.hidden_size) for layer in self.layers]` (an RNN's initial
    states, one per layer)."""
    chain = parents.get(id(name))
    if not isinstance(chain, ast.Attribute):
        return False
    while isinstance(parents.get(id(chain)), ast.Attribute) and parents[id(chain)].value is chain:
        chain = parents[id(chain)]  # `self.encoder.layers`
    holder = parents.get(id(chain))
    if not isinstance(holder, (ast.comprehension, ast.For)) or holder.iter is not chain \
            or not isinstance(holder.target, ast.Name):
        return False
    scope = parents.get(id(holder)) if isinstance(holder, ast.comprehension) else holder
    variable = holder.target.id
    uses = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == variable
            and isinstance(n.ctx, ast.Load)]
    return all(_in_size_position(use, parents) for use in uses)


def _in_size_position(name: ast.Name, parents: dict) -> bool:
    node = parents.get(id(name))
    if not isinstance(node, ast.Attribute):
        return False  # `self` handed on or called
    child = node
    while True:
        parent = parents.get(id(child))
        if isinstance(parent, ast.Attribute) and parent.value is child:
            child = parent  # `self.args.n_agents`
        elif isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Tuple, ast.List, ast.keyword)):
            child = parent
        else:
            break
    if isinstance(parent, (ast.Compare, ast.BoolOp)):
        return True
    if isinstance(parent, ast.FormattedValue) and parent.value is child:
        return True  # formatted into a message (`raise ValueError(f"... {self.kind}")`): text, no graph
    if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is child:
        return True
    if isinstance(parent, ast.Call) and parent.func is not child:
        func = parent.func
        if isinstance(func, ast.Name):
            return func.id in _SIZE_BUILTINS or func.id in _SIZE_FACTORIES
        if isinstance(func, ast.Attribute):
            return func.attr in _SHAPE_METHODS | _SIZE_FACTORIES | _CONVERSIONS or _legacy_new_sizes(parent)
    return False


def _legacy_new_sizes(call: ast.Call) -> bool:
    """`weight.new(self.depth, n, self.hidden)`: the legacy constructor given two or
    more positional arguments takes them as sizes (a new, uninitialised tensor).  With
    one argument it may take data instead, and `p.new(self.weight)` is an alias of the
    parameter that keeps its graph, so one argument is no size."""
    return isinstance(call.func, ast.Attribute) and call.func.attr == "new" and len(call.args) >= 2 \
        and not any(isinstance(a, ast.Starred) for a in call.args)
