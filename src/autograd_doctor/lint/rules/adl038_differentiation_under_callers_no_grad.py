"""ADL038: a function that differentiates a value it computes itself
(`loss.backward()`, `torch.autograd.grad(out, ...)`) is called inside a
`torch.no_grad()` / `torch.inference_mode()` block: the value has no graph
there and the differentiation raises."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.enum_members import members_differ
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.names import GRAD_OFF_NAMES as _GRAD_OFF, last_name
from autograd_doctor.lint.walk import child_nodes, own_nodes

RULE = Rule(
    code="ADL038", name="differentiation-under-callers-no-grad",
    summary="A function that backpropagates (or calls `autograd.grad` on) a value it computes is called under `no_grad()` / `inference_mode()`: that value has no graph and the call raises.",
    what_it_does="""Finds a call, written inside a `with torch.no_grad():` or `with
torch.inference_mode():` block (not inside a nested `enable_grad()` block), of
a function of the same file that differentiates a value it computes itself,
with evidence for each link:
- the call names the function: `f(...)` for a function (not a method), or
  `obj.f(...)` / `self.f(...)` for a method, when the file defines that name
  once (one `def`, anywhere in the file);
- the function calls `V.backward(...)` or `torch.autograd.grad(V, ...)`
  (also `V.sum()`, `V.mean()`, ... and `V[...]` as the output), where `V` is a
  local name bound once in the function, to a value that contains a call
  (a module, `F.*`, `torch.*`, a method of a tensor), not a parameter;
- nothing in the function turns gradients back on (`torch.enable_grad()`,
  `set_grad_enabled(...)`; `requires_grad_()` on an input is not enough) and it
  is not decorated with `torch.enable_grad()`; the differentiation is not
  under a test of the mode (`if self.training:`, `if torch.is_grad_enabled():`,
  `if loss.requires_grad:`), nor under a test of a flag parameter that the
  call passes as a constant failing it (`run_epoch(loader, train=False)` with
  `if train: loss.backward()`; a constant default left out counts the same),
  or a comparison of the parameter that the call's constant, or its member of
  a project enumeration, fails (`run(phase=Phase.VAL)` with `if phase ==
  Phase.TRAIN: loss.backward()`, where `Phase` is an `enum.Enum` whose members
  have distinct literal values).
Under `no_grad()` (and `inference_mode()`) every op's result has no graph, so
the value computed in the function does not require grad, whatever its inputs
are.""",
    why_bad="""`backward()` on a value without a graph raises `RuntimeError: element 0
of tensors does not require grad and does not have a grad_fn`, and
`torch.autograd.grad` raises the same.  Evaluation loops are wrapped in
`no_grad()` to save memory; a loss that differentiates (an input-gradient
penalty, a Jacobian norm, a physics residual) or a hook that backpropagates
then fails only in evaluation.  Frameworks do the same: Lightning runs
`validation_step` / `test_step` under `inference_mode()`.""",
    example="""def penalised_loss(model, x, y):
    x = x.clone().requires_grad_(True)
    out = model(x)
    (g,) = torch.autograd.grad(out.sum(), x, create_graph=True)
    return F.mse_loss(out, y) + g.pow(2).mean()

with torch.no_grad():
    val = penalised_loss(model, x, y).item()""",
    use_instead="""with torch.enable_grad():   # or call it outside the no_grad block
    val = penalised_loss(model, x, y).item()""",
    fix_safety="""No fix: whether to evaluate with gradients on (`enable_grad()` around the
call) or to leave the differentiating term out of the evaluation is the
user's choice.""",
    known_problems="""Only calls that name a function of the same file, defined once, are
followed; a model called as `self.model(x)` whose `forward` differentiates is
not resolved to its class, and a function defined in another file is not read.
A function that differentiates a value handed to it (a parameter) is silent:
the value may carry a graph made before the block.""",
)

_GRAD_ON = ("enable_grad", "set_grad_enabled")
# methods that give back a value held elsewhere (it may carry an older graph)
_HELD = frozenset({"pop", "popleft", "get", "__getitem__", "values", "items", "copy"})
# a differentiation under a test of the mode runs only when gradients are on
_GUARDS = frozenset({"training", "is_grad_enabled", "requires_grad", "grad_fn", "is_inference_mode_enabled"})
_REDUCE = frozenset({"sum", "mean", "squeeze", "flatten", "view", "reshape", "norm"})


# a differentiation: `.backward(`, `autograd.grad(`, or a bare `grad(` (not `no_grad(`,
# `enable_grad(`: every file with a grad-off block names one of those)
# a `with` statement that opens a grad-off block (decorators are not read)
_GRAD_OFF_WITH = re.compile(r"with\s[^\n:]*\b(?:no_grad|inference_mode)\(")
_DIFFERENTIATES = re.compile(r"\.backward\(|autograd\.grad\(|(?<![\w.])grad\(")


def _worth(checker) -> bool:
    src = checker.source
    if "no_grad(" not in src and "inference_mode(" not in src:
        return False
    if ".backward(" not in src and "autograd.grad(" not in src \
            and src.count("grad(") == src.count("_grad(") + src.count(".grad("):
        return False  # every `grad(` is part of a longer name: no differentiation (substring tests, no regex scan)
    return _GRAD_OFF_WITH.search(src) is not None and _DIFFERENTIATES.search(src) is not None


def _is_grad_off(expr) -> bool:
    return isinstance(expr, ast.Call) and last_name(expr.func) in _GRAD_OFF


def _walk_own(node):
    """The nodes of a function (body, arguments, decorators), not of nested functions or classes."""
    return own_nodes(child_nodes(node))


def _root(expr):
    """`out` of `out`, `out.sum()`, `out[0]`, `out.mean(1)`."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _REDUCE:
            expr = expr.func.value
        elif isinstance(expr, ast.Subscript):
            expr = expr.value
        else:
            return expr


def _computed(value) -> bool:
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call)]
    return bool(calls) and not any(last_name(c.func) in _HELD for c in calls)


def _differentiates(fn):
    """The backward / autograd.grad calls on a value the function computes, in line order."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    if fn.args.vararg:
        params.add(fn.args.vararg.arg)
    if fn.args.kwarg:
        params.add(fn.args.kwarg.arg)
    binds: dict[str, list] = {}
    sites = []
    for n in _walk_own(fn):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for name in ast.walk(t):
                    if isinstance(name, ast.Name):
                        binds.setdefault(name.id, []).append(n.value if isinstance(t, ast.Name) else None)
        elif isinstance(n, (ast.AugAssign, ast.AnnAssign)) and isinstance(n.target, ast.Name):
            binds.setdefault(n.target.id, []).append(None)
        elif isinstance(n, (ast.For, ast.With, ast.comprehension)):
            target = getattr(n, "target", None)
            for name in ast.walk(target) if target is not None else ():
                if isinstance(name, ast.Name):
                    binds.setdefault(name.id, []).append(None)
        elif isinstance(n, ast.Call):
            name = last_name(n.func)
            if name in _GRAD_ON:
                return []
            if (name == "backward" and isinstance(n.func, ast.Attribute)):
                sites.append((n, _root(n.func.value)))
            elif (name == "grad" and isinstance(n.func, ast.Attribute)
                  and last_name(n.func.value) == "autograd" and n.args):
                sites.append((n, _root(n.args[0])))
    guarded = [(n.lineno, n.end_lineno) for n in _walk_own(fn) if isinstance(n, (ast.If, ast.IfExp))
               and any(isinstance(x, (ast.Name, ast.Attribute)) and last_name(x) in _GUARDS for x in ast.walk(n.test))]
    found = []
    for call, root in sorted(sites, key=lambda s: s[0].lineno):
        if not isinstance(root, ast.Name) or root.id in params:
            continue
        if any(a <= call.lineno <= b for a, b in guarded):
            continue
        values = binds.get(root.id, [])
        if len(values) == 1 and values[0] is not None and _computed(values[0]):
            found.append(call)
    return found


def _flag_tests(test):
    """(parameter-name, truth it must have, compared value) that a test's true branch
    requires: `if train:` (compared value None), `if not train:`, `if train and step %
    k == 0:`, and a comparison of the parameter with a constant or an attribute
    (`if phase == Phase.TRAIN:`, `if mode != "eval":`, `if mode is None:`), where
    the truth is whether the two are equal."""
    if isinstance(test, ast.Name):
        return [(test.id, True, None)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name):
        return [(test.operand.id, False, None)]
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [flag for value in test.values for flag in _flag_tests(value)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 \
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
        left, right = test.left, test.comparators[0]
        if isinstance(right, ast.Name) and not isinstance(left, ast.Name):
            left, right = right, left
        identity = isinstance(test.ops[0], (ast.Is, ast.IsNot))
        if identity and isinstance(right, ast.Constant) and not any(right.value is v for v in (None, True, False)):
            return []  # `x is "train"`: whether equal constants are one object is CPython's choice
        if isinstance(left, ast.Name) and isinstance(right, (ast.Constant, ast.Attribute)):
            return [(left.id, isinstance(test.ops[0], (ast.Eq, ast.Is)), right)]
    return []


def _required_flags(fn, site):
    """(parameter, truth, compared value) the function's own `if` tests require for `site` to run:
    the site in an `if` body needs what the test requires; in its `else`, a single
    flag test (`if train: ... else: site`) needs the flag's opposite.  Only parameters
    the function never re-binds count."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    rebound = {t.id for n in _walk_own(fn) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
               for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
               for t in ast.walk(target) if isinstance(t, ast.Name)}
    flags = []
    for node in _walk_own(fn):
        if not isinstance(node, ast.If):
            continue
        tests = _flag_tests(node.test)
        if any(site in ast.walk(stmt) for stmt in node.body):
            flags.extend(tests)
        elif len(tests) == 1 and any(site in ast.walk(stmt) for stmt in node.orelse):
            flags.append((tests[0][0], not tests[0][1], tests[0][2]))
    for block in _statement_lists(fn):
        # `if not learn: return ...` before the site in the same block: the site needs `learn`
        for index, stmt in enumerate(block):
            if isinstance(stmt, ast.If) and not stmt.orelse and isinstance(stmt.body[-1], (ast.Return, ast.Raise)):
                tests = _flag_tests(stmt.test)
                if len(tests) == 1 and any(site in ast.walk(later) for later in block[index + 1:]):
                    flags.append((tests[0][0], not tests[0][1], tests[0][2]))
    return [(name, truth, compared) for name, truth, compared in flags if name in params and name not in rebound]


def _statement_lists(fn):
    """Every statement list of the function (its body, the bodies of its compound
    statements), not of nested functions or classes."""
    lists = [fn.body]
    for node in _walk_own(fn):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                lists.append(block)
        for handler in getattr(node, "handlers", ()):
            lists.append(handler.body)
    return lists


def _argument(call, fn, name):
    """The expression a call passes for parameter `name` (written, or the default it
    leaves); None when not known (`**kwargs`, a starred argument, no default)."""
    for keyword in call.keywords:
        if keyword.arg is None:
            return None  # `**kwargs`: anything may be passed
        if keyword.arg == name:
            return keyword.value
    if any(isinstance(a, ast.Starred) for a in call.args):
        return None
    positional = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if isinstance(call.func, ast.Attribute) and positional and positional[0] in ("self", "cls"):
        positional = positional[1:]  # `obj.f(...)`: the first parameter is the object
    if name in positional:
        index = positional.index(name)
        if index < len(call.args):
            return call.args[index]
        defaults = fn.args.defaults
        offset = len(fn.args.posonlyargs + fn.args.args) - len(defaults)
        full_index = [a.arg for a in fn.args.posonlyargs + fn.args.args].index(name)
        return defaults[full_index - offset] if full_index >= offset else None
    kwonly = [a.arg for a in fn.args.kwonlyargs]
    if name in kwonly:
        return fn.args.kw_defaults[kwonly.index(name)]
    return None


def _equal(argument, compared, checker) -> bool | None:
    """Whether the value a call passes equals the value a test compares it with: two
    constants, or two members of one enumeration of the project (enum_members.py);
    None when not known."""
    if isinstance(argument, ast.Constant) and isinstance(compared, ast.Constant):
        return argument.value == compared.value
    if isinstance(argument, ast.Attribute) and isinstance(compared, ast.Attribute):
        differ = members_differ(argument, compared, checker.tree, checker.filename)
        return None if differ is None else not differ
    return None


def _reached_by(call, fn, site, checker) -> bool:
    """False when the call passes a constant (or leaves a constant default) that fails a
    test the site runs under: `loop(train=False)` never reaches `if train: loss.backward()`,
    nor `loop(phase=Phase.VAL)` `if phase == Phase.TRAIN: loss.backward()`."""
    for name, truth, compared in _required_flags(fn, site):
        argument = _argument(call, fn, name)
        if compared is None:
            if isinstance(argument, ast.Constant) and bool(argument.value) != truth:
                return False
        elif _equal(argument, compared, checker) is (not truth):
            return False
    return True


def _definitions(function_nodes) -> dict:
    """Name -> the defs of that name, from the defs the walk collected."""
    defs: dict[str, list] = {}
    for node in function_nodes:
        defs.setdefault(node.name, []).append(node)
    return defs


def _methods(class_nodes) -> set:
    return {n.name for c in class_nodes for n in c.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _calls_under_grad_off(with_nodes):
    """(call, with-node) for calls written in a no_grad / inference_mode block, from the with
    statements the walk collected."""
    for node in with_nodes:
        if not any(_is_grad_off(item.context_expr) for item in node.items):
            continue
        stack = list(node.body)
        while stack:
            n = stack.pop()
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(n, (ast.With, ast.AsyncWith)) and any(
                    isinstance(i.context_expr, ast.Call) and last_name(i.context_expr.func) in _GRAD_ON
                    for i in n.items):
                continue
            if isinstance(n, ast.Call):
                yield n, node
            stack.extend(ast.iter_child_nodes(n))


def check_file(checker) -> None:
    if not _worth(checker):
        return
    calls = list(_calls_under_grad_off(checker.with_nodes))
    if not calls:
        return
    defs = _definitions(checker.function_nodes)
    methods = _methods(checker.class_nodes)
    sites: dict[str, object] = {}
    for call, block in calls:
        func = call.func
        if isinstance(func, ast.Name) and func.id not in methods:
            name = func.id
        elif isinstance(func, ast.Attribute) and func.attr in methods:
            name = func.attr
        else:
            continue
        fns = defs.get(name, [])
        if len(fns) != 1:
            continue
        fn = fns[0]
        if any(last_name(d.func if isinstance(d, ast.Call) else d) in _GRAD_ON for d in fn.decorator_list):
            continue
        if name not in sites:
            sites[name] = _differentiates(fn)
        site = next((s for s in sites[name] if _reached_by(call, fn, s, checker)), None)
        if site is None:
            continue
        mode = next(last_name(i.context_expr.func) for i in block.items if _is_grad_off(i.context_expr))
        what = "backward()" if last_name(site.func) == "backward" else "torch.autograd.grad()"
        checker.report(
            "ADL038", call,
            f"`{name}()` is called under `torch.{mode}()` (line {block.lineno}), but it runs "
            f"{what} on line {site.lineno} on a value it computes: under `{mode}()` that value "
            f"has no graph, so the call raises 'element 0 of tensors does not require grad'; call "
            f"it outside the block or wrap the call in `torch.enable_grad()`")
