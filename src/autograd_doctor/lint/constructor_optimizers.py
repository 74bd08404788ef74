"""Optimizers handed to a class's constructor by the file's own code (ADL003).

`trainer = GANTrainer(generator, critic, optim.RMSprop(generator.parameters()), c_opt)`
with `c_opt = optim.RMSprop(critic.parameters())`, and a constructor that stores each
argument once on the object (`self.G = generator`, `self.g_opt = g_optimizer`): the
optimizer held as `self.g_opt` steps the module held as `self.G`.  Keywords a
constructor does not name go on to a same-file base class's constructor when it
passes them with `super().__init__(**kwargs)`.

Claimed only with evidence for every link: every instantiation of the class in the
file binds the optimizer argument to an optimizer construction (the argument itself,
or a name assigned once in the calling function) over `x.parameters()` of a name `x`
that the same instantiation passes as a module argument stored on the object, and
all instantiations agree.  An instantiation with `*args` / `**kwargs`, a class that
another class of the file derives from, an attribute bound more than once in the
class or its bases, or a name re-bound in the caller: nothing is claimed."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.walk import child_nodes, own_nodes


def constructor_optimizer_owners(checker, owner_class: str, attribute: str) -> set:
    """The attributes (`{"self.G"}`) whose parameters the optimizer held as
    `self.<attribute>` by instances of ``owner_class`` updates; empty when unknown."""
    cache = getattr(checker, "_constructor_optimizers", None)
    if cache is None:
        cache = checker._constructor_optimizers = {}
    if owner_class not in cache:
        cache[owner_class] = _relations(checker, owner_class)
    return set(cache[owner_class].get(attribute, ()))


def _relations(checker, owner_class: str) -> dict:
    tree = checker.tree
    classes = {c.name: c for c in tree.body if isinstance(c, ast.ClassDef)}
    if owner_class not in classes:
        return {}
    # a same-file subclass runs these methods on objects built otherwise
    for c in classes.values():
        if any(isinstance(b, ast.Name) and b.id == owner_class for b in c.bases):
            return {}
    chain = _chain(classes, owner_class)
    stored = _stored_arguments(chain)
    if not stored:
        return {}
    relations: dict = {}
    calls = list(_instantiations(tree, owner_class))
    if not calls:
        return {}
    for call, scope in calls:
        bound = _bind(classes, owner_class, call)
        if bound is None:
            return {}
        modules = {}  # caller's name -> attribute it is stored under
        for attr, key in stored.items():
            value = bound.get(key)
            if isinstance(value, ast.Name):
                modules.setdefault(value.id, set()).add(attr)
        for attr, key in stored.items():
            value = bound.get(key)
            if value is None:
                continue
            built = _optimizer_over(checker, scope, value)
            if built is None:
                continue
            if _stores(scope, built) > 1 or len(modules.get(built, ())) != 1:
                relations.setdefault(attr, []).append(None)
                continue
            relations.setdefault(attr, []).append(next(iter(modules[built])))
    out = {}
    for attr, found in relations.items():
        # every instantiation gives this argument an optimizer over one stored module, the same one
        if len(found) == len(calls) and None not in found and len(set(found)) == 1:
            out[attr] = {f"self.{found[0]}"}
    return out


def _chain(classes: dict, name: str) -> list:
    """The class and the same-file bases its constructor passes keywords on to."""
    chain, seen = [], set()
    while name in classes and name not in seen:
        seen.add(name)
        chain.append(classes[name])
        bases = [b.id for b in classes[name].bases if isinstance(b, ast.Name) and b.id in classes]
        name = bases[0] if len(bases) == 1 else None
    return chain


def _init(cls):
    return next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)


def _parameters(init) -> list:
    a = init.args
    return [p.arg for p in a.posonlyargs + a.args][1:] + [p.arg for p in a.kwonlyargs]


def _stored_arguments(chain) -> dict:
    """attribute -> (class name, parameter) for `self.attr = parameter` in a
    constructor of the chain, the attribute's only binding in the chain and the
    parameter never re-bound in that constructor."""
    bindings: dict = {}
    for cls in chain:
        init = _init(cls)
        params = set(_parameters(init)) if init is not None else set()
        rebound = {n.id for n in ast.walk(init) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} \
            if init is not None else set()
        inside = {id(n) for n in ast.walk(init)} if init is not None else set()
        for statement in ast.walk(cls):
            if isinstance(statement, ast.Assign):
                targets, value = statement.targets, statement.value
            elif isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
                targets, value = [statement.target], None
            else:
                continue
            for target in targets:
                pairs = [(target, value)]
                if isinstance(target, (ast.Tuple, ast.List)):
                    pairs = list(zip(target.elts, value.elts)) \
                        if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                        else [(e, None) for e in target.elts]
                for t, v in pairs:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        ok = id(statement) in inside and isinstance(v, ast.Name) and v.id in params \
                            and v.id not in rebound
                        bindings.setdefault(t.attr, []).append((cls.name, v.id) if ok else None)
    return {attr: found[0] for attr, found in bindings.items() if len(found) == 1 and found[0] is not None}


def _passes_keywords_on(init) -> bool:
    """`super().__init__(**kwargs)` (or `Base.__init__(self, **kwargs)`) with the
    constructor's own `**kwargs` and nothing else."""
    if init is None or init.args.kwarg is None:
        return False
    name = init.args.kwarg.arg
    for n in ast.walk(init):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__":
            plain_super = isinstance(n.func.value, ast.Call) and isinstance(n.func.value.func, ast.Name) \
                and n.func.value.func.id == "super" and not n.args
            explicit = isinstance(n.func.value, ast.Name) and len(n.args) == 1 and \
                isinstance(n.args[0], ast.Name) and n.args[0].id == "self"
            if (plain_super or explicit) and len(n.keywords) == 1 and n.keywords[0].arg is None and \
                    isinstance(n.keywords[0].value, ast.Name) and n.keywords[0].value.id == name:
                return True
    return False


def _bind(classes: dict, name: str, call) -> dict | None:
    """(class name, parameter) -> argument expression at an instantiation."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    chain = _chain(classes, name)
    init = _init(chain[0])
    if init is None:
        return None
    positional = [p.arg for p in init.args.posonlyargs + init.args.args][1:]
    if len(call.args) > len(positional) and init.args.vararg is None:
        return None
    bound = {(chain[0].name, p): a for p, a in zip(positional, call.args)}
    for k in call.keywords:
        for i, cls in enumerate(chain):
            cinit = _init(cls)
            if cinit is not None and k.arg in _parameters(cinit):
                bound[(cls.name, k.arg)] = k.value
                break
            if not _passes_keywords_on(cinit) or i + 1 == len(chain):
                break
    return bound


def _instantiations(tree, name: str):
    """`name(...)` calls with the innermost function (or the module) they are in."""
    def walk(scope, node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from walk(child, child)
            elif isinstance(child, (ast.ClassDef, ast.Lambda)):
                yield from walk(scope, child)
            else:
                if isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == name:
                    yield child, scope
                yield from walk(scope, child)
    yield from walk(tree, tree)


def _stores(scope, name: str) -> int:
    return sum(1 for n in own_nodes(child_nodes(scope)) if isinstance(n, ast.Name) and n.id == name
               and isinstance(n.ctx, ast.Store))


def _optimizer_over(checker, scope, value) -> str | None:
    """The name `x` of `Optimizer(x.parameters(), ...)`, the argument itself or the
    value of a name the calling scope assigns once."""
    if isinstance(value, ast.Name):
        if _stores(scope, value.id) != 1:
            return None
        assigned = [n for n in own_nodes(child_nodes(scope)) if isinstance(n, ast.Assign) and len(n.targets) == 1
                    and isinstance(n.targets[0], ast.Name) and n.targets[0].id == value.id]
        if len(assigned) != 1:
            return None
        value = assigned[0].value
    if not isinstance(value, ast.Call):
        return None
    q = checker.qualname(value.func) or ""
    short = value.func.attr if isinstance(value.func, ast.Attribute) else \
        value.func.id if isinstance(value.func, ast.Name) else ""
    if not (q.startswith("torch.optim.") and short[:1].isupper() or short in N.OPTIMIZER_CLASSES):
        return None
    params = value.args[0] if value.args else next((k.value for k in value.keywords if k.arg == "params"), None)
    if isinstance(params, ast.Call) and not params.args and not params.keywords and \
            isinstance(params.func, ast.Attribute) and params.func.attr == "parameters" and \
            isinstance(params.func.value, ast.Name):
        return params.func.value.id
    return None
