"""The code after an early return that a call with default arguments takes.

ProDiff's attention (fairseq's, through NATSpeech; set AC) begins with

    if self.enable_torch_version and incremental_state is None and not static_kv \\
            and reset_attn_weight is None:
        return F.multi_head_attention_forward(...)

where ``__init__`` set ``self.enable_torch_version = hasattr(F,
"multi_head_attention_forward")``.  On any torch the project supports the test
holds for a call that leaves those parameters at their defaults, so the rest of
the function (its own attention, with `q *= self.scaling` on a `chunk` view)
runs only for a caller that passes a non-default value (incremental decoding),
or on a torch without that function.  Nothing shows that such a call runs with
gradients on, so an in-place write there lacks the link "runs with gradients":
writes recorded after such a `return` count as made without gradients
(``Scope.default_returned``; the rules that report writes stay silent).

A test counts when it is a conjunction (`and`) whose every part is true at the
function's defaults or on the installed torch:

- a parameter tested against a constant (`p is None`, `not p`, `p`, `p == 0`),
  true at its default (defaults.py's reading of `if p:`);
- a torch feature test, `hasattr(M, "name")` with `M` a torch module
  (`torch`, `torch.nn.functional` as `F`, ...): taken as true (the linter cannot
  import torch; where the name is missing from the installed torch, the rules
  are silent on code that may run, a loss of recall, never a false alarm);
- `self.attr`, where every assignment of `attr` in the class is in `__init__`,
  and walking `__init__`'s statements in order (the body of an `if <feature
  test>:` taken, its `else` not) leaves it bound to a feature test or `True`.

Only an `if` directly in the function's body, without `else`, whose body ends
with `return` on every path (an inner `if`/`else` returning on both sides),
counts: the return is then certain for such a call.
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.class_leaves import classes_in
from autograd_doctor.lint.defaults import _test_at
from autograd_doctor.lint.walk import walk_nodes


def feature_flags(tree, qualname, source: str = "") -> frozenset:
    """(class name, attribute) pairs true on a torch that has the features the class
    tests for in ``__init__``."""
    found = set()
    for cls in classes_in(tree):
        init = next((b for b in cls.body if isinstance(b, ast.FunctionDef) and b.name == "__init__"), None)
        if init is None:
            continue
        values: dict = {}
        _simulate(init.body, values, qualname)
        if True not in values.values():
            continue  # no feature flag set: no need to read the other methods
        outside = set()  # attributes some other method assigns
        flagged = [attr for attr, value in values.items() if value is True]
        # The file names each flag once (`__init__`'s own assignment) in most classes: then no other
        # method can assign it, and the methods need not be walked.
        if not source or any(_assigned_outside(source, attr, init) for attr in flagged):
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method is not init:
                    outside.update(_assigned_self_attributes(method))
        found.update((cls.name, attr) for attr, value in values.items() if value is True and attr not in outside)
    return frozenset(found)


def returns_by_default(test, defaults: dict, owner_class, flags: frozenset, qualname) -> bool:
    """The `if` test holds for a call at the defaults, on a torch with the features tested."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return all(_part_true(p, defaults, owner_class, flags, qualname) for p in parts)


def always_returns(body) -> bool:
    """Every path through ``body`` ends in `return` (an `if`/`else` whose branches both do)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and always_returns(last.body) and always_returns(last.orelse)


def _part_true(part, defaults, owner_class, flags, qualname) -> bool:
    if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not):
        inner = part.operand
        if isinstance(inner, ast.Name) and isinstance(defaults.get(inner.id), ast.Constant):
            return not defaults[inner.id].value
        return False
    if _is_feature_test(part, qualname):
        return True
    if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
        return (owner_class, part.attr) in flags
    parameter, value = _test_at(part, defaults)
    return parameter is not None and value is True


def _is_feature_test(node, qualname) -> bool:
    """`hasattr(torch_module, "name")`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "hasattr"
            and len(node.args) == 2 and not node.keywords):
        return False
    module, name = node.args
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
        return False
    q = qualname(module) or ""
    return q == "torch" or q.startswith("torch.")


def _simulate(body, values: dict, qualname) -> None:
    """Walk ``__init__``'s statements in order, the features present."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            if _is_feature_test(stmt.test, qualname):
                _simulate(stmt.body, values, qualname)
            elif True in values.values():  # another test: whatever either branch assigns is unknown
                for attr in _assigned_self_attributes(stmt):
                    values[attr] = None
            continue
        for attr, value in _self_assignments(stmt):
            if _is_feature_test(value, qualname):
                values[attr] = True
            elif isinstance(value, ast.Constant) and isinstance(value.value, bool):
                values[attr] = value.value
            else:
                values[attr] = None
        # Only a flag that is True so far can be made unknown; any other is settled by a later
        # assignment or stays not-True (the walk below was a third of the ast.walk calls).
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Pass)) and True in values.values():
            for attr in _assigned_self_attributes(stmt):
                values[attr] = None


def _self_assignments(stmt):
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                yield target.attr, stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        t = stmt.target
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
            yield t.attr, stmt.value


def _assigned_outside(source: str, attr: str, init) -> bool:
    """Whether the file's text may assign `self.<attr>` outside `__init__`'s lines."""
    pattern = re.compile(rf"self\.{re.escape(attr)}\s*(=[^=]|[-+*/|&]=)")
    lines = source.splitlines()
    inside = "\n".join(lines[init.lineno - 1:init.end_lineno])
    return len(pattern.findall(source)) > len(pattern.findall(inside))


def _assigned_self_attributes(node):
    for sub in walk_nodes(node):
        targets = sub.targets if isinstance(sub, ast.Assign) else \
            [sub.target] if isinstance(sub, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            for tt in walk_nodes(t):
                if isinstance(tt, ast.Attribute) and isinstance(tt.value, ast.Name) and tt.value.id == "self":
                    yield tt.attr
