"""Module classes whose instances the repository only ever uses without gradients.

``repository_callers.py`` matches a method by its name alone: a method with a
common name (`sample`, which many other classes define and call with gradients
on), or one reached by calling the instance (its class's `forward`), has no
evidence there, and a file that trains anywhere (a `fit` method of the same
class) is not asked.  Mammoth's diffusion sampler (`DiffusionCA.sample`,
`models/cgil_utils/diffusion.py`) updates its sample in place after a layer kept
it for backward (`out = self.net(x, t); x -= c * out`): a hazard only if a
backward went through a sample.  Its class's `forward` returns
`self.sample(n)`; the repository builds the class in one place, `self.distributions
= nn.ModuleList([DiffusionCA(...) for ...])` in `Prompter.__init__`, and reads
`self.distributions` only in methods decorated `@torch.no_grad()`, where the
instance is called (`curr_dist(256)`) and its results detached.

The evidence, repository-wide, by the class's name as the project's files build
and use it (matched without resolving names, like ``submodules.py``):

* every mention of the class's name builds an instance (`super(C, self)`, an
  annotation and an `isinstance` test aside), and each instance is kept in
  `self.X` of a class (also inside `nn.ModuleList` / `nn.ModuleDict` /
  `nn.Sequential`, a list, a dict or a comprehension, through `.to(...)`,
  `.eval()`, or `self.X.append(...)`), or bound to a plain name.  A subclass, a
  class attribute read (`C.from_config(...)`), the class decorated (registered,
  and maybe built without its name), or an instance built anywhere else
  (passed to a call, returned) is unknown;
* every read of that holder, `self.X` in the holder's class, its bases and its
  subclasses, `obj.X` of any other object (`torch.distributions`, a module's
  attribute, is no holder), or the plain name in its function (in its whole
  file, and imported by no other file, for a module-level name), either calls the
  instance (`self.X(...)`, `self.X[i](...)`, or one of the methods that reach the
  method asked about) in code that runs without gradients (under
  `torch.no_grad()` / `inference_mode()` / `set_grad_enabled(False)`, in a
  function decorated so, or in a function that its own file only calls so,
  ``callers.py``, and the rest of the repository too, ``repository_callers.py``;
  never inside `torch.enable_grad()`), or uses it without
  calling those methods (`self.X[i].fit(...)`, `self.X.parameters()`, `len(self.X)`).
  A read bound to a local name (`m = self.X[i]`, `for m in self.X:`) is
  followed through that name's reads in the same function; a read returned,
  passed to a call or kept elsewhere is unknown;
* inside the class, the method is reached only through methods that are called
  as methods (`self.sample(n)`, not handed on as a callback, not from a nested
  function or lambda), none of which turns gradients back on (`enable_grad`,
  `set_grad_enabled`) or is called by a framework (`training_step`).

At least one read must call the instance (or one of those methods) without
gradients: a class that nothing in the repository builds (a library's), or
builds and never calls, has no evidence.
ADL001 asks only for a method with a finding about to be reported; the files
that name the class or the holder are parsed once each, and the `class` lines
of the repository's files read once with a regular expression (both cached).
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache
from typing import NamedTuple

from autograd_doctor.lint import names as N
from autograd_doctor.lint.callers import _top_level_aliases, grad_off_callees, mentions
from autograd_doctor.lint.repository_callers import called_only_without_gradients
from autograd_doctor.lint.submodules import file_text, repository_files
from autograd_doctor.lint.names import self_attribute

# Methods that a framework calls with gradients on, whatever the repository's code says.
_FRAMEWORK_METHODS = frozenset({"training_step", "validation_step", "test_step", "predict_step",
                                "compute_loss", "main"})
_CONTAINERS = frozenset({"ModuleList", "ModuleDict", "Sequential", "list", "tuple", "dict"})
# nn.Module methods that return the module itself: their result is the instance again.
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "double", "half", "bfloat16",
                           "requires_grad_", "type", "share_memory"})
_APPENDS = frozenset({"append", "extend", "insert"})
_HARMLESS_CALLS = frozenset({"len", "isinstance", "id", "type", "hasattr"})
_GRAD_ON = frozenset({"enable_grad", "set_grad_enabled"})
# Calling these runs the module's forward (or hands it to code that may).
_CALLING_METHODS = frozenset({"forward", "__call__", "apply", "register_forward_hook",
                              "register_forward_pre_hook"})


def runs_only_without_gradients(cls: str, method: str, filename: str, tree: ast.Module) -> bool:
    """Whether ``cls.method`` (``cls`` defined in ``tree``, the file ``filename``) runs
    only without gradients: every instance the repository builds is only called without
    them, and the class reaches the method only through such calls (module docstring)."""
    reached = _methods_reaching(tree, cls, method)
    if reached is None:
        return False
    own_path = os.path.abspath(filename) if filename and not filename.startswith("<") else None
    own = _own_facts(tree, filename)
    if own is None:
        return False
    files = tuple(p for p in repository_files(filename) if p != own_path)
    return _instances_only_without_gradients(cls, reached | _CALLING_METHODS, own, files)


# ----- inside the class ------------------------------------------------------------


def _methods_reaching(tree: ast.Module, cls: str, method: str) -> frozenset | None:
    """The methods of ``cls`` that reach ``method`` through `self.<name>(...)` calls
    (``method`` included); None when one of them is handed on uncalled, called from a
    nested function, turns gradients back on, or is called by a framework."""
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == cls]
    if len(classes) != 1 or classes[0].decorator_list:
        return None  # a decorated class may be registered, and built without its name
    methods = {m.name: m for m in classes[0].body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if method not in methods:
        return None
    callers: dict = {name: set() for name in methods}  # name -> methods calling self.<name>
    handed_on: set = set()
    for caller in methods.values():
        for name, called in _self_mentions(caller, methods):
            if called:
                callers[name].add(caller.name)
            else:
                handed_on.add(name)
    reached, todo = {method}, [method]
    while todo:
        for caller in callers[todo.pop()]:
            if caller not in reached:
                reached.add(caller)
                todo.append(caller)
    if reached & handed_on or reached & _FRAMEWORK_METHODS:
        return None
    if any(_turns_gradients_on(methods[name]) for name in reached):
        return None
    return frozenset(reached)


def _self_mentions(function, methods: dict):
    """(method name, called directly in the function's own code) for each `self.<method>`."""
    called = set()
    todo = list(function.body) + function.decorator_list
    nested = []
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            nested.append(node)  # runs later, from anywhere: a callback
            continue
        if isinstance(node, ast.Call):
            called.add(id(node.func))
        if self_attribute(node) and node.attr in methods:
            yield node.attr, id(node) in called
        todo.extend(ast.iter_child_nodes(node))
    for inner in nested:
        for node in ast.walk(inner):
            if self_attribute(node) and node.attr in methods:
                yield node.attr, False


def _turns_gradients_on(function) -> bool:
    return any(N.last_name(node) in _GRAD_ON for node in ast.walk(function)
               if isinstance(node, (ast.Name, ast.Attribute)))


# ----- what one file says ----------------------------------------------------------


class _Facts(NamedTuple):
    tree: ast.Module
    path: str        # the file ("" for a source without one)
    parents: dict    # id(node) -> its parent node
    places: dict     # id(node) -> (gradients: "off" / "on" / None, enclosing function node, class name)
    named: dict      # name -> Name nodes with that id and Attribute nodes with that attr
    aliases: dict    # the file's imported names (``callers.py``)
    grad_off: frozenset  # functions the file only calls without gradients (``callers.py``)
    bases: dict      # class -> its base names


def _facts(tree: ast.Module, path: str) -> _Facts | None:
    parents: dict = {}
    places: dict = {}
    named: dict = {}
    bases: dict = {}
    aliases = _top_level_aliases(tree)
    todo = [(tree, None, None, None)]
    try:
        while todo:
            node, gradients, function, cls = todo.pop()
            places[id(node)] = (gradients, function, cls)
            if isinstance(node, ast.Name):
                named.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Attribute):
                named.setdefault(node.attr, []).append(node)
            inner = _inner_state(node, gradients, function, cls, aliases, bases)
            for field, value in ast.iter_fields(node):
                children = value if isinstance(value, list) else [value]
                state = inner if field == "body" else (gradients, function, cls)
                if isinstance(node, ast.Lambda) and field == "body":
                    state = (None, None, cls)  # a lambda may be called anywhere later
                for child in children:
                    if isinstance(child, ast.AST):
                        parents[id(child)] = node
                        todo.append((child, *state))
        callees = grad_off_callees(mentions(tree))
    except RecursionError:
        return None
    return _Facts(tree, path, parents, places, named, aliases, callees, bases)


def _inner_state(node, gradients, function, cls, aliases, bases):
    """The state of ``node``'s body: a function's, a class's, a `with` block's."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        gradients = None  # a function runs when it is called, not where it is defined
        for d in node.decorator_list:
            gradients = _switch(d, aliases) or gradients
        return gradients, node, cls
    if isinstance(node, ast.ClassDef):
        bases[node.name] = frozenset(N.last_name(b) for b in node.bases)
        return gradients, None, node.name
    if isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            gradients = _switch(item.context_expr, aliases) or gradients
        return gradients, function, cls
    return gradients, function, cls


def _switch(expr, aliases) -> str | None:
    """"off" for `torch.no_grad()` and the like; "on" for `torch.enable_grad()` and for
    `set_grad_enabled(flag)` / `inference_mode(flag)` that may not turn them off; None
    for anything else."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    if N.turns_grad_off(N.qualified_name(target, aliases), expr):
        return "off"
    if N.last_name(target) in ("enable_grad", "set_grad_enabled", "inference_mode"):
        return "on"
    return None


def _without_gradients(facts: _Facts, node) -> bool:
    """The code around ``node`` runs without gradients: a `no_grad` block or decorator,
    or a function its file only calls so and whose every mention in the repository is
    such a call (``repository_callers.py``), and no `enable_grad` in between."""
    gradients, function, _ = facts.places[id(node)]
    if gradients is not None:
        return gradients == "off"
    return function is not None and function.name in facts.grad_off \
        and called_only_without_gradients(function.name, facts.path, facts.tree)


_LINTED: list = [None, None]  # the linted file's tree and its facts: asked once per method


def _own_facts(tree: ast.Module, path: str) -> _Facts | None:
    if _LINTED[0] is not tree:
        _LINTED[:] = [tree, _facts(tree, path)]
    return _LINTED[1]


def _within(facts: _Facts, function, outer) -> bool:
    """``function`` is ``outer`` or defined inside it (a closure sees its names); any
    function is inside the module (``outer`` None)."""
    if outer is None:
        return True
    while function is not None:
        if function is outer:
            return True
        function = facts.places[id(function)][1]
    return False


@lru_cache(maxsize=1024)
def _file_facts(path: str) -> _Facts | None:
    try:
        return _facts(ast.parse(file_text(path)), path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _sources(word: str, own: _Facts, files: tuple) -> list:
    """The facts of the linted file and of each repository file whose text has ``word``."""
    pattern = re.compile(r"\b%s\b" % re.escape(word))
    return [own] + [_file_facts(p) for p in files if pattern.search(file_text(p))]


# ----- the instances ---------------------------------------------------------------


def _instances_only_without_gradients(cls: str, reached: frozenset, own: _Facts, files: tuple) -> bool:
    """Every instance of ``cls`` is built into a holder whose reads use it only without
    gradients, and at least one of them calls it so (an instance built and never called
    is no evidence that the project runs the method at all)."""
    walk = _Walk()
    for facts in _sources(cls, own, files):
        if facts is None:
            return False  # a file that does not parse: unknown
        for node in facts.named.get(cls, ()):
            if _harmless_mention(facts, node):
                continue
            call = facts.parents.get(id(node))
            if not (isinstance(call, ast.Call) and call.func is node):
                return False  # a subclass, a class attribute, the class handed on
            holder = _kept_in(facts, call)
            if holder is None or not _holder_used_without_gradients(facts, holder, reached, own, files, walk):
                return False
    return walk.calls > 0


def _harmless_mention(facts: _Facts, node) -> bool:
    """`super(C, self)`, an `isinstance(x, C)` test, a type annotation."""
    parent = facts.parents.get(id(node))
    if isinstance(parent, ast.Call) and parent.func is not node \
            and N.last_name(parent.func) in ("super", "isinstance", "issubclass"):
        return True
    child = node
    while parent is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.arg) and parent.annotation is child:
            return True
        child, parent = parent, facts.parents.get(id(parent))
    if isinstance(parent, ast.AnnAssign) and parent.annotation is child:
        return True
    return isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and parent.returns is child


def _kept_in(facts: _Facts, call: ast.Call):
    """Where the instance built by ``call`` is kept: ("attribute", X, class) for
    `self.X`, ("name", n, function or None) for a plain name; None elsewhere."""
    cur = call
    while True:
        parent = facts.parents.get(id(cur))
        if isinstance(parent, ast.keyword):
            cur, parent = parent, facts.parents.get(id(parent))
        if isinstance(parent, (ast.List, ast.Tuple, ast.Set)) \
                or (isinstance(parent, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) and parent.elt is cur) \
                or (isinstance(parent, ast.DictComp) and parent.value is cur) \
                or (isinstance(parent, ast.Dict) and any(v is cur for v in parent.values)):
            cur = parent
        elif isinstance(parent, ast.Call) and parent.func is not cur \
                and N.last_name(parent.func) in _CONTAINERS:
            cur = parent
        elif isinstance(parent, ast.Attribute) and parent.attr in _RETURNS_SELF \
                and isinstance(facts.parents.get(id(parent)), ast.Call) \
                and facts.parents[id(parent)].func is parent:
            cur = facts.parents[id(parent)]
        else:
            break
    if isinstance(parent, ast.Assign) and parent.value is cur and len(parent.targets) == 1:
        target = parent.targets[0]
    elif isinstance(parent, ast.AnnAssign) and parent.value is cur:
        target = parent.target
    elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) \
            and parent.func.attr in _APPENDS and any(a is cur for a in parent.args):
        target = parent.func.value
    else:
        return None
    if self_attribute(target):
        owner = facts.places[id(target)][2]
        return ("attribute", target.attr, owner) if owner else None
    if isinstance(target, ast.Name):
        return "name", target.id, facts.places[id(target)][1]
    return None


class _Walk:
    """The reads followed so far (local names, per function) and the calls found."""

    def __init__(self):
        self.seen: set = set()
        self.calls = 0

    def called(self, facts: _Facts, call) -> bool:
        if not _without_gradients(facts, call):
            return False
        self.calls += 1
        return True


def _holder_used_without_gradients(facts: _Facts, holder, reached, own, files, walk: _Walk) -> bool:
    kind, name, where = holder
    if kind == "name":
        if where is None and _imported_elsewhere(name, files):
            return False
        reads = [n for n in facts.named.get(name, ()) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Load) and (where is None or _within(facts, facts.places[id(n)][1], where))]
        return all(_use_without_gradients(facts, n, reached, walk) for n in reads)
    related = _related_classes(where, own, files)
    for other in _sources(name, own, files):
        if other is None:
            return False
        for node in other.named.get(name, ()):
            if not isinstance(node, ast.Attribute) or not isinstance(node.ctx, ast.Load):
                continue
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript, ast.Call)):
                root = root.func if isinstance(root, ast.Call) else root.value
            if isinstance(root, ast.Name) and root.id == "self" and node.value is root:
                if other.places[id(node)][2] not in related:
                    continue  # `self.X` of a class that is no K: another object's
            elif isinstance(root, ast.Name) and root.id in other.aliases:
                continue  # a module's attribute (`torch.distributions`)
            if not _use_without_gradients(other, node, reached, walk):
                return False
    return True


def _use_without_gradients(facts: _Facts, node, reached, walk: _Walk) -> bool:
    """The read ``node`` of an instance (or of its holder) calls the instance, or one
    of the ``reached`` methods, only in code without gradients, and does not let it go."""
    cur = node
    parent = facts.parents.get(id(cur))
    while isinstance(parent, ast.Subscript) and parent.value is cur:
        cur, parent = parent, facts.parents.get(id(parent))
    if isinstance(parent, ast.Call) and parent.func is cur:
        return walk.called(facts, parent)
    if isinstance(parent, ast.Attribute) and parent.value is cur:
        call = facts.parents.get(id(parent))
        called = isinstance(call, ast.Call) and call.func is parent
        if called and parent.attr in _RETURNS_SELF:
            return _use_without_gradients(facts, call, reached, walk)
        if parent.attr in reached:
            return called and walk.called(facts, call)
        return True  # another method, an attribute: the method asked about is not run
    if isinstance(parent, ast.Expr) or (isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert))
                                        and parent.test is cur):
        return True
    if isinstance(parent, (ast.Compare, ast.BoolOp)) or (isinstance(parent, ast.UnaryOp)
                                                         and isinstance(parent.op, ast.Not)):
        return True
    if isinstance(parent, ast.Call) and N.last_name(parent.func) in _HARMLESS_CALLS:
        return True
    if isinstance(parent, ast.Call) and N.last_name(parent.func) in ("enumerate", "reversed", "iter") \
            and parent.args and parent.args[0] is cur:
        loop = facts.parents.get(id(parent))
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.comprehension)) and loop.iter is parent:
            target = loop.target
            if N.last_name(parent.func) == "enumerate":
                if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
                    return False
                target = target.elts[1]
            return _aliases_without_gradients(facts, target, node, reached, walk)
        return False
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)) and parent.iter is cur:
        return _aliases_without_gradients(facts, parent.target, node, reached, walk)
    if isinstance(parent, ast.Assign) and parent.value is cur:
        return all(_aliases_without_gradients(facts, t, node, reached, walk) for t in parent.targets)
    return False  # returned, passed to a call, kept elsewhere: unknown


def _aliases_without_gradients(facts: _Facts, target, read, reached, walk: _Walk) -> bool:
    """Every read of the local name(s) ``target`` binds, in ``read``'s function, is a use
    without gradients; a target that is not a plain name keeps the instance elsewhere."""
    if isinstance(target, ast.Name):
        names = [target.id]
    elif isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        names = [e.id for e in target.elts]
    else:
        return False
    function = facts.places[id(read)][1]
    for name in names:
        if (id(facts), id(function), name) in walk.seen:
            continue
        walk.seen.add((id(facts), id(function), name))
        for node in facts.named.get(name, ()):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and _within(facts, facts.places[id(node)][1], function) \
                    and not _use_without_gradients(facts, node, reached, walk):
                return False
    return True


def _imported_elsewhere(name: str, files: tuple) -> bool:
    pattern = re.compile(r"\bimport\b[^\n]*\b%s\b" % re.escape(name))
    return any(pattern.search(file_text(p)) for p in files)


# ----- classes related by inheritance ----------------------------------------------

_CLASS_LINE = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)


def _related_classes(cls: str, own: _Facts, files: tuple) -> frozenset:
    """``cls``, its bases and its subclasses, by name, through the repository's
    `class` lines: a `self.X` read in any of them may be that of an instance."""
    bases = dict(_repository_bases(files))
    for name, names in own.bases.items():
        bases[name] = bases.get(name, frozenset()) | names
    related, todo = {cls}, [cls]
    while todo:  # bases, and their bases
        for base in bases.get(todo.pop(), ()):
            if base not in related:
                related.add(base)
                todo.append(base)
    below, changed = {cls}, True
    while changed:  # subclasses, and theirs
        changed = False
        for name, names in bases.items():
            if name not in below and names & below:
                below.add(name)
                changed = True
    return frozenset(related | below)


@lru_cache(maxsize=64)
def _repository_bases(files: tuple) -> dict:
    bases: dict = {}
    for path in files:
        for name, listed in _CLASS_LINE.findall(file_text(path)):
            names = frozenset(part.split("=")[-1].strip().split(".")[-1] for part in listed.split(",")
                              if part.strip())
            bases[name] = bases.get(name, frozenset()) | names
    return bases
