"""Which `nn.Module` classes of a repository are built as another module's part.

A `forward()`'s tensor arguments were taken to carry a graph, whatever its
callers pass.  Time-Series-Library's `models/PAttn.py` normalises `x_enc` in
place at the top of `Model.forward` (`x_enc /= stdev`, after `torch.var(x_enc)`
kept it): a hazard only if `x_enc` carried a graph, but the model is built at
top level by the experiment scripts and fed data batches.  The graph link needs
evidence from the repository: the class is built inside another module's class
(`self.block = Block(...)`, `self.layers.append(Block())`, in any method of a
class that defines `forward` or derives from a `...Module`), or inside
`nn.Sequential` / `nn.ModuleList` / `nn.ModuleDict` anywhere; a subclass with
that evidence counts for its base.  A class only built at top level, or by a
trainer that is no module, has none, and its forward's argument-only hazards
are silent.  Classes are matched by name, like ``callers.py``.

A part kept in `self.X` of its building class (`self.X = Part()`, `self.X =
nn.ModuleDict({k: Part() ...})`, `self.X.append(Part())`) is evidence only
through the builder's use of it, with gradients on: a call of `self.X(...)`,
or of the loop variable of `for m in self.X` (`.values()`, `.items()`), that
passes a value the builder computed is evidence; one that only hands on the
builder's own `forward()` arguments is evidence when the builder is itself fed
a graph (the same question, one level up); a part the builder never calls,
or calls only under `torch.no_grad()`, is none.  Sample Factory's
`RunningMeanStdInPlace` normalises its argument in place after `x.var()` kept
it: `ActorCritic` holds one and never calls it (the learner does, on data),
and `RunningMeanStdDictInPlace` hands its own argument to those in its
`nn.ModuleDict`, while its builder calls it under `no_grad`.  A layer after
another inside `nn.Sequential(...)` is fed that layer's output: evidence by
itself, as is a part built anywhere else (a local, `add_module`).

The repository is the nearest folder above the file with `.git`,
`pyproject.toml`, `setup.py` or `setup.cfg`, else the folder above its
outermost package (an installed package: the package itself, not `site-packages`); one
with over 5,000 Python files is not searched.  Files that mention the class are parsed once and
summarised (cached); only a file with such a waiting hazard asks.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache
from typing import NamedTuple

from autograd_doctor.lint.files import DEFAULT_EXCLUDE
from autograd_doctor.lint.names import GRAD_OFF_NAMES as _GRAD_OFF, last_name, self_attribute

_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_MAX_FILES = 5000  # past this, a repository is not searched: no evidence


def built_as_part(cls: str, filename: str, tree: ast.Module | None = None) -> bool:
    """Whether the module class ``cls`` (defined in ``filename``) is built as a
    part of another module somewhere in its repository (or in ``tree``, the
    linted file itself, when it is not on disk)."""
    own = summarise(tree) if tree is not None else None
    files = ()
    if filename and not filename.startswith("<"):
        files = _repository_files(_repository(os.path.dirname(os.path.abspath(filename))))
    return _has_evidence(cls, own, files, set())


def repository_files(filename: str) -> tuple:
    """The Python files of the repository that holds ``filename`` (none for a
    source without a file, or a repository too large to search)."""
    if not filename or filename.startswith("<"):
        return ()
    return _repository_files(_repository(os.path.dirname(os.path.abspath(filename))))


def file_text(path: str) -> str:
    return _text(path)


def repository_root(folder: str) -> str:
    """The repository that holds ``folder`` (see the module's docstring)."""
    return _repository(folder)


def _has_evidence(cls: str, own, files, seen: set) -> bool:
    """``cls`` is built as a part, or a subclass of it is (its forward may be ``cls``'s)."""
    seen.add(cls)
    word = re.compile(r"\b%s\b" % re.escape(cls))
    found = [s for s in [own] + [_file_summary(p) for p in files if word.search(_text(p))] if s]
    if any(cls in summary.parts for summary in found):
        return True
    for summary in found:
        for builder, part, holder in summary.held:
            if part != cls:
                continue
            use = summary.uses.get(builder, {}).get(holder)
            if use == _COMPUTED:
                return True
            if use == _HANDED_ON and builder not in seen and _has_evidence(builder, own, files, seen):
                return True
    subclasses = {sub for summary in found for sub, names in summary.bases.items() if cls in names}
    return any(_has_evidence(sub, own, files, seen) for sub in sorted(subclasses - seen))


@lru_cache(maxsize=4096)
def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


@lru_cache(maxsize=4096)
def _file_summary(path: str):
    try:
        return summarise(ast.parse(_text(path)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Summary(NamedTuple):
    """What one file says about module classes built as parts."""
    bases: dict     # class -> its base names
    parts: frozenset  # classes built as a part where that is evidence by itself
    held: tuple     # (building class, part class, `self.<holder>` it is kept in)
    uses: dict      # building class -> holder -> _COMPUTED or _HANDED_ON
    # building class -> holder -> ((position or keyword, origins), ...) per argument of
    # each call: origins None for a value the builder computed, else the builder's
    # forward() parameters (names and positions) the value is handed on from
    position_uses: dict = {}


# How a building class calls a part it holds, with gradients on: with values it
# computed (a layer's output: the part is fed a graph), or only with its own
# forward()'s arguments handed on (the part is fed one if the builder is).
_COMPUTED, _HANDED_ON = "computed", "handed on"
_HOLDER_METHODS = frozenset({"append", "extend", "insert", "update"})


def summarise(tree: ast.Module) -> Summary:
    """The file's classes, the classes it builds as another module's part, and,
    for a part kept in `self.<holder>` of a module class, how that class uses it."""
    bases: dict[str, frozenset] = {}
    parts: set[str] = set()
    held: list = []
    uses: dict = {}
    position_uses: dict = {}
    in_modules: set = set()  # calls inside module classes: counted there, through holders
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = frozenset(last_name(b) for b in node.bases)
            bases[node.name] = names
            if _is_module_class(node, names):
                holders = _holders(node)
                defaults = _class_defaults(node)
                factories = _factory_calls(node)
                for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
                    in_modules.add(id(call))
                    name = last_name(call.func)
                    # `def __init__(self, act_layer=Mish): self.act = act_layer(inplace=True)`
                    name = defaults.get(name, name)
                    if name == node.name or id(call) in factories:
                        continue
                    if id(call) in holders:
                        held.append((node.name, name, holders[id(call)]))
                    else:
                        parts.add(name)
                held.extend((node.name, part, holder) for part, holder in _factory_held(node, factories))
                uses[node.name] = _holder_uses(node)
                position_uses[node.name] = _holder_position_uses(node)
        elif isinstance(node, ast.Call) and last_name(node.func) in _CONTAINERS \
                and id(node) not in in_modules:
            for arg in list(node.args) + [k.value for k in node.keywords]:
                parts.update(_called_names(arg))
    return Summary(bases, frozenset(parts), tuple(held), uses, position_uses)


def _factory_calls(cls: ast.ClassDef) -> set:
    """Calls in the class's own class methods and static methods (fairseq's `build_model`:
    `encoder = Encoder(args); return cls(args, encoder)`): they build a whole, not a part of
    an instance's computation, so they are no evidence by themselves; the instance that
    holds what they built shows how it is fed (its `self.X(...)` calls)."""
    out = set()
    for method in cls.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                last_name(d) in ("classmethod", "staticmethod") for d in method.decorator_list):
            out.update(id(n) for n in ast.walk(method) if isinstance(n, ast.Call))
    return out


def _factory_held(cls: ast.ClassDef, factories: set) -> list:
    """(part class, holder) for a part a factory method builds and hands to the class's own
    constructor (`encoder = Encoder(args); return cls(args, encoder)`), which keeps that
    argument in `self.<holder>` (`def __init__(self, args, encoder): self.encoder = encoder`)."""
    init = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__init__"), None)
    if init is None or not factories:
        return []
    positional = [a.arg for a in init.args.posonlyargs + init.args.args][1:]
    kept = {}  # __init__ parameter -> holder
    for stmt in ast.walk(init):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name):
            holder = self_attribute(stmt.targets[0])
            if holder is not None:
                kept[stmt.value.id] = holder
    out = []
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                not any(id(n) in factories for n in ast.walk(method) if isinstance(n, ast.Call)):
            continue
        built = {}  # local -> class it was bound to
        for stmt in ast.walk(method):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                    isinstance(stmt.targets[0], ast.Name) and isinstance(stmt.value, ast.Call):
                built[stmt.targets[0].id] = last_name(stmt.value.func)
        for call in (n for n in ast.walk(method) if isinstance(n, ast.Call)):
            if last_name(call.func) not in ("cls", cls.name):
                continue
            pairs = list(zip(positional, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg]
            for param, value in pairs:
                part = built.get(value.id) if isinstance(value, ast.Name) else \
                    last_name(value.func) if isinstance(value, ast.Call) else None
                if part and param in kept:
                    out.append((part, kept[param]))
    return out


def _class_defaults(cls: ast.ClassDef) -> dict:
    """Parameters of the class's methods whose default is a class named in the file
    (`act_layer=Mish`): calling the parameter builds that class by default."""
    out = {}
    for method in cls.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = method.args
            positional = args.posonlyargs + args.args
            pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) + \
                [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                if isinstance(default, ast.Name) and default.id[:1].isupper():
                    out[arg.arg] = default.id
    return out


def _holders(cls: ast.ClassDef) -> dict:
    """Calls inside ``self.X = ...`` / ``self.X: T = ...`` / ``self.X += ...`` /
    ``self.X.append(...)`` statements of the class: call id -> ``X``."""
    out = {}
    for stmt in ast.walk(cls):
        holder, value = None, None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            holder, value = self_attribute(stmt.targets[0]), stmt.value
        elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
            holder, value = self_attribute(stmt.target), stmt.value
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                and isinstance(stmt.value.func, ast.Attribute) \
                and stmt.value.func.attr in _HOLDER_METHODS:
            holder, value = self_attribute(stmt.value.func.value), stmt.value
            value = ast.Tuple(elts=list(stmt.value.args) + [k.value for k in stmt.value.keywords])
        if holder is None or value is None:
            continue
        for call in ast.walk(value):
            if isinstance(call, ast.Call):
                out[id(call)] = holder
    # a layer after another in `nn.Sequential(...)` is fed that layer's output
    # whoever calls the whole: evidence by itself, as before
    for seq in ast.walk(cls):
        if isinstance(seq, ast.Call) and last_name(seq.func) == "Sequential":
            for arg in seq.args[1:]:
                for call in ast.walk(arg):
                    out.pop(id(call), None)
    return out


def _holder_uses(cls: ast.ClassDef) -> dict:
    """holder -> how the class's methods call it with gradients on: `self.X(...)`, or
    a call of the loop variable of `for m in self.X` (`.values()`, `.items()`,
    `enumerate(self.X)`); calls under `torch.no_grad()` / `inference_mode()` or in
    methods decorated with them do not count."""
    uses: dict = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        off = any(last_name(d.func if isinstance(d, ast.Call) else d) in _GRAD_OFF
                  for d in method.decorator_list)
        params = {a.arg for a in method.args.posonlyargs + method.args.args + method.args.kwonlyargs} - {"self"}
        if method.args.vararg:
            params.add(method.args.vararg.arg)
        rebound = {n.id for n in ast.walk(method) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        handed = params - rebound
        for holder, call in _calls_of_holders(method.body, off, {}):
            values = list(call.args) + [k.value for k in call.keywords]
            if method.name == "forward" and all(_handed_on(v, handed) for v in values):
                uses.setdefault(holder, _HANDED_ON)
            else:
                uses[holder] = _COMPUTED
    return uses


def _holder_position_uses(cls: ast.ClassDef) -> dict:
    """holder -> ((position or keyword, origins), ...): what each call of the part
    (as ``_holder_uses`` finds them) passes at each position.  origins None: a value
    the method computed (evidence there); a frozenset: the forward()'s own parameters
    the value hands on (names and positions after `self`; evidence where the builder
    is fed there); a constant, or a value after `*args` / in `**kwargs`: nothing."""
    uses: dict = {}
    for method in cls.body:
        if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        off = any(last_name(d.func if isinstance(d, ast.Call) else d) in _GRAD_OFF
                  for d in method.decorator_list)
        positional = [a.arg for a in method.args.posonlyargs + method.args.args][1:]
        params = set(positional) | {a.arg for a in method.args.kwonlyargs}
        if method.args.vararg:
            params.add(method.args.vararg.arg)
        rebound = {n.id for n in ast.walk(method) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        handed = params - rebound
        for holder, call in _calls_of_holders(method.body, off, {}):
            places = uses.setdefault(holder, [])
            landings = []
            for i, arg in enumerate(call.args):
                if isinstance(arg, ast.Starred):
                    break  # later positions unknown
                landings.append((i, arg))
            landings += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            for where, value in landings:
                if isinstance(value, ast.Constant):
                    continue
                if method.name == "forward" and _handed_on(value, handed):
                    names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name) and n.id in handed}
                    origins = frozenset(names) | frozenset(
                        positional.index(n) for n in names if n in positional)
                    places.append((where, origins))
                else:
                    places.append((where, None))
    return {holder: tuple(places) for holder, places in uses.items()}


def part_positions(cls: str, filename: str, tree: ast.Module | None = None) -> set:
    """The positions and keywords (``"*"``: every one) at which the module class ``cls``
    (defined in ``filename``) is fed a graph as another module's part: a holder's call
    that passes a computed value there, or hands on there its own forward()'s argument
    where its class is itself fed so.  Empty: no evidence."""
    own = summarise(tree) if tree is not None else None
    files = ()
    if filename and not filename.startswith("<"):
        files = _repository_files(_repository(os.path.dirname(os.path.abspath(filename))))
    return _positions(cls, own, files, {})


def _positions(cls: str, own, files, memo: dict) -> set:
    if cls in memo:
        return memo[cls]
    memo[cls] = set()  # a cycle gives no evidence
    word = re.compile(r"\b%s\b" % re.escape(cls))
    found = [s for s in [own] + [_file_summary(p) for p in files if word.search(_text(p))] if s]
    if any(cls in summary.parts for summary in found):
        memo[cls] = {"*"}
        return memo[cls]
    out: set = set()
    for summary in found:
        for builder, part, holder in summary.held:
            if part != cls:
                continue
            places = summary.position_uses.get(builder, {}).get(holder, ())
            for where, origins in places:
                if where in out:
                    continue
                if origins is None:
                    out.add(where)
                elif origins:
                    fed = _positions(builder, own, files, memo)
                    if "*" in fed or origins & fed:
                        out.add(where)
    subclasses = {sub for summary in found for sub, names in summary.bases.items() if cls in names}
    for sub in sorted(subclasses):
        out |= _positions(sub, own, files, memo)
    memo[cls] = out
    return out


def _calls_of_holders(body, off: bool, loop_names: dict):
    """(holder, call) for each call of a held part in ``body`` made with gradients on."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            inner = off or any(_grad_off_context(item.context_expr) for item in stmt.items)
            yield from _calls_of_holders(stmt.body, inner, loop_names)
            continue
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            names = dict(loop_names)
            names.update(_loop_targets(stmt.target, stmt.iter))
            yield from _calls_of_holders(stmt.body + stmt.orelse, off, names)
            continue
        if isinstance(stmt, (ast.If, ast.While, ast.Try)):
            for block in ("body", "orelse", "finalbody"):
                yield from _calls_of_holders(getattr(stmt, block, []), off, loop_names)
            for handler in getattr(stmt, "handlers", []):
                yield from _calls_of_holders(handler.body, off, loop_names)
            test = getattr(stmt, "test", None)
            stmt = ast.Expr(value=test) if test is not None else None
            if stmt is None:
                continue
        if off:
            continue
        names = dict(loop_names)  # `[head(x) for head in self.heads]`
        for node in ast.walk(stmt):
            if isinstance(node, ast.comprehension):
                names.update(_loop_targets(node.target, node.iter))
        for call in (n for n in ast.walk(stmt) if isinstance(n, ast.Call)):
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr == "forward":
                func = func.value  # `self.block.forward(x)`
            if isinstance(func, ast.Subscript):
                func = func.value  # `self.blocks[i](x)`
            holder = self_attribute(func)
            if holder is None and isinstance(func, ast.Name):
                holder = names.get(func.id)
            if holder is not None:
                yield holder, call


def _loop_targets(target, iterated) -> dict:
    """Loop variables that stand for parts of a holder: name -> holder (`for m in
    self.X`, `enumerate(self.X)`, `for a, b in zip(self.X, self.Y)`)."""
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) \
            and iterated.func.id == "zip" and isinstance(target, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(iterated.args):
        out = {}
        for elt, arg in zip(target.elts, iterated.args):
            out.update(_loop_targets(elt, arg))
        return out
    holder = _iterated_holder(iterated)
    if holder is None:
        return {}
    return {n.id: holder for n in ast.walk(target) if isinstance(n, ast.Name)}


def _grad_off_context(expr) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    name = last_name(expr.func)
    if name in _GRAD_OFF:
        return True
    return name == "set_grad_enabled" and bool(expr.args) and \
        isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False


def _iterated_holder(node) -> str | None:
    """``X`` for `self.X`, `self.X.values()`, `self.X.items()`, `enumerate(self.X)`."""
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("values", "items", "children") \
                and not node.args:
            return self_attribute(node.func.value)
        if isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "reversed") and node.args:
            return self_attribute(node.args[0])
        return None
    return self_attribute(node)


def _handed_on(value, handed: set) -> bool:
    """The value is one of the method's own arguments, never re-bound, or a part of
    one (`x[k]`, `x.field`), with no call in it: it carries whatever the caller passed."""
    if any(isinstance(n, ast.Call) for n in ast.walk(value)):
        return False
    while isinstance(value, (ast.Subscript, ast.Attribute, ast.Starred)):
        value = value.value
    return (isinstance(value, ast.Name) and value.id in handed) or isinstance(value, ast.Constant)


def _is_module_class(node: ast.ClassDef, bases) -> bool:
    return any(b.endswith("Module") for b in bases) or any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward"
        for s in node.body)


def _called_names(node) -> set:
    return {last_name(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}


@lru_cache(maxsize=256)
def _repository(folder: str) -> str:
    parts = folder.split(os.sep)
    for i, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):  # an installed package: itself
            return os.sep.join(parts[: i + 2])
    here = folder
    while True:
        if any(os.path.exists(os.path.join(here, m)) for m in _ROOT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    while os.path.isfile(os.path.join(folder, "__init__.py")):  # the outermost package
        folder = os.path.dirname(folder)
    return folder


@lru_cache(maxsize=64)
def _repository_files(root: str) -> tuple:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in DEFAULT_EXCLUDE and not d.startswith(".")]
        out.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
        if len(out) > _MAX_FILES:
            return ()
    return tuple(sorted(out))
