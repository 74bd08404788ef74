"""`if` blocks that run only without gradients: the parameter they test keeps its
default in every call from code with gradients.

lerobot's TD-MPC policy samples `action = torch.tanh(self._pi(z))` and then, only
`if std > 0:`, adds exploration noise in place (`action += ...`), which would
break TanhBackward0.  The training loss calls `self.model.pi(z_preds)` (std stays
0.0); only planning and value estimation, decorated with `@torch.no_grad()`,
pass `std`.  So the in-place branch never runs with gradients.

An `if` counts when its test reads one parameter against a constant (`p`,
`p > 0`, `p is not None`, ...) and is false at the parameter's default, the
function is defined once in the file and only ever called there (every mention
a call), at least one call from code without gradients passes the parameter,
and no other call passes it: not by keyword, not in the positions up to it,
not through `*args` or `**kwargs`.  Calls are matched by name as in
callers.py; a function called elsewhere (another file) is not seen.
"""

from __future__ import annotations

import ast
import operator

_COMPARE = {ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Lt: operator.lt, ast.LtE: operator.le,
            ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Is: operator.is_, ast.IsNot: operator.is_not}


def grad_off_branches(walk, grad_off: frozenset) -> frozenset:
    """ids of the `if` nodes whose body only runs without gradients.  ``walk`` is
    callers.mentions(tree) (None when the file never switches gradients off) and
    ``grad_off`` the functions it only calls without gradients."""
    if walk is None:
        return frozenset()
    found = set()
    for name, defs in walk.definitions.items():
        # cheap tests first: one definition with defaults, called from grad-off code
        if len(defs) != 1 or name in grad_off or not (defs[0].args.defaults or any(
                defs[0].args.kw_defaults)):
            continue
        calls = walk.calls.get(name)
        if not calls or not any(off or caller in grad_off for _, off, caller in calls):
            continue
        if not all(called for called, _, _ in walk.mentions[name]):
            continue  # a callback or attribute of the same name: calls unseen
        for test_node, parameter in _parameter_tests(defs[0]):
            if _left_at_default_with_gradients(defs[0], parameter, walk.calls[name], grad_off):
                found.add(id(test_node))
    return frozenset(found)


def parameter_defaults(func) -> dict:
    """Parameter name -> its default expression."""
    args = func.args
    defaults = dict(zip([a.arg for a in args.posonlyargs + args.args][::-1], args.defaults[::-1]))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults


def parameter_positions(func) -> dict:
    """Parameter name -> (its position counted without a leading `self`/`cls`, or None
    for a keyword-only one; its default expression, or None)."""
    args = func.args
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    shift = 1 if positional and positional[0].arg in ("self", "cls") else 0
    out = {a.arg: (i - shift, d) for i, (a, d) in enumerate(zip(positional, defaults))}
    out.update((a.arg, (None, d)) for a, d in zip(args.kwonlyargs, args.kw_defaults))
    return out


def false_constant(node) -> bool:
    """A default that keeps an option off: `False`, `None`, `0` or `""` (not `0.0`)."""
    return isinstance(node, ast.Constant) and node.value in (False, None, 0, "") \
        and not isinstance(node.value, float)


def off_by_default(test, defaults: dict) -> bool:
    """The `if` test reads a parameter against a constant and is false at its default
    (`if use_cache:` with `use_cache=False`): its block runs only when a caller asks."""
    return _test_at(test, defaults)[1] is False


def _parameter_tests(func):
    """(`if` node, parameter name) for each `if` false at the parameter's default."""
    defaults = parameter_defaults(func)
    for node in ast.walk(func):
        if isinstance(node, ast.If):
            parameter, value = _test_at(node.test, defaults)
            if parameter is not None and value is False:
                yield node, parameter


def _test_at(test, defaults):
    """The parameter the test reads and the test's value at its default (else None)."""
    if isinstance(test, ast.Name) and isinstance(defaults.get(test.id), ast.Constant):
        return test.id, bool(defaults[test.id].value)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
            and isinstance(test.comparators[0], ast.Constant) and type(test.ops[0]) in _COMPARE \
            and isinstance(defaults.get(test.left.id), ast.Constant):
        try:
            value = _COMPARE[type(test.ops[0])](defaults[test.left.id].value, test.comparators[0].value)
        except TypeError:
            return None, None
        return test.left.id, bool(value)
    return None, None


def _left_at_default_with_gradients(func, parameter, calls, grad_off) -> bool:
    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    method = bool(positional) and positional[0] in ("self", "cls")
    # Arguments a call must fill positionally to reach the parameter; for a method
    # one fewer (`self` is bound), counted that way for any call form to be safe.
    reach = positional.index(parameter) - method + 1 if parameter in positional else None
    passed_without_gradients = False
    for call, off, caller in calls:
        passes = any(k.arg in (parameter, None) for k in call.keywords) or \
            any(isinstance(a, ast.Starred) for a in call.args) or \
            (reach is not None and len(call.args) >= reach)
        if off or caller in grad_off:
            passed_without_gradients |= passes
        elif passes:
            return False
    return passed_without_gradients
