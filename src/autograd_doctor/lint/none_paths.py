"""An `if x is not None:` with no `else` whose skipping path cannot reach the code after it.

    if mask is not None:
        alphas = alphas * mask
    mask = mask.squeeze(-1)        # raises AttributeError when mask is None
    alphas[:, 0] = 0               # so this write always sees the rebound alphas

When a statement after the `if`, in the same block and before `x` is bound again, reads an
attribute or an item of `x` or calls it unconditionally, the path on which `x` is None raises
there: every path that reaches the statements after it went through the `if`'s body. The rules
then treat the body as run, not as one branch of two (FunASR's CIF predictors, set AD)."""

from __future__ import annotations

import ast

# Parts of an expression evaluated only on some paths: a use inside them proves nothing.
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


def _tested_name(test: ast.expr) -> str | None:
    """`x is not None` -> "x"."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant) \
            and test.comparators[0].value is None:
        return test.left.id
    return None


def _dereferences(node: ast.AST, name: str) -> bool:
    """`name.attr`, `name[...]` or `name(...)` evaluated whenever `node` is."""
    if isinstance(node, _CONDITIONAL):
        return False
    if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.value, ast.Name) \
            and node.value.id == name and isinstance(node.ctx, ast.Load):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
        return True
    return any(_dereferences(child, name) for child in ast.iter_child_nodes(node))


def _binds(statement: ast.stmt, name: str) -> bool:
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else []
    return any(isinstance(element, ast.Name) and element.id == name
               for target in targets for element in ast.walk(target))


def _may_leave_or_bind(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, (ast.Try, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    for node in ast.walk(statement):
        if isinstance(node, (ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            return True
    return False


def none_path_raises(block: list[ast.stmt], node: ast.If) -> bool:
    """Whether `node`, an `if x is not None:` in `block` without `else` whose body runs to its
    end, is followed in `block` by an unconditional dereference of `x` before `x` is bound again."""
    name = _tested_name(node.test)
    if name is None or node.orelse or not node.body or \
            isinstance(node.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return False
    later = block[next(i for i, statement in enumerate(block) if statement is node) + 1:]
    use = next((i for i, statement in enumerate(later) if isinstance(statement, _SIMPLE)
                and statement.value is not None and _dereferences(statement.value, name)), None)
    if use is None:
        return False  # the common case: no later use at all, nothing to walk
    # The None path reaches that use unless a statement before it may leave, or bind the name.
    return not any(_binds(statement, name) if isinstance(statement, _SIMPLE) else _may_leave_or_bind(statement, name)
                   for statement in later[:use])
