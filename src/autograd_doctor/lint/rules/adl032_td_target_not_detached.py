"""ADL032: a temporal-difference target computed from the network that the
optimizer steps, with gradients on and never detached: the TD loss
backpropagates through its own target."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint.defaults import off_by_default
from autograd_doctor.lint.names import GRAD_OFF_NAMES as _GRAD_OFF
from autograd_doctor.lint.rules.adl030_ema_skips_buffers import _as_name, _defaults_of
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL032", name="td-target-not-detached",
    summary="A TD target (`reward + gamma * next_value`) computed from the network that the optimizer steps, "
            "with gradients on and not detached: the loss also backpropagates through the target.",
    what_it_does="""In a function that calls `backward()` and `step()` on an optimizer, finds
a name assigned `reward + gamma * next_value ...` (an addition whose text names
`gamma` or `discount`) where `next_value` descends, through the function's own
assignments, from a call of a module that this optimizer steps
(`q_net(next_states).max(1)[0]`, `self.critic(next_state, ...)`, either branch
of a conditional expression such as `self.critic(s2) if not done else zeros`),
outside `torch.no_grad()` / `inference_mode()` and without `.detach()` (an index
such as `argmax` or `.max(1)[1]` carries no gradient).  It reports the first
later statement that reads the target undetached, before the backward, when that
statement sets it against a prediction (`criterion(prediction, target)` or
`prediction - target`): the loss; a read inside a detached expression
(`(targets - values).detach()`) is not a use.  A statement that only binds a name read later
solely through `.detach()` (`advantages = targets - values`, then
`advantages.detach()` in the policy loss) is not the loss; the next use is read.
A detach under an `if` that is false at a parameter's default
(`if self.detach_target:` with `detach_target=False`) does not count.
The target may also be built in a helper method of the class that returns the
loss (`critic_loss()`), when another method of the class binds that method's
result, backpropagates a value computed from it (the returned element the
target flows into, read not through `.detach()`) and steps the optimizer.""",
    why_bad="""The TD update is a semi-gradient method: the target `r + gamma * Q(s', a')`
is a constant the prediction is moved towards.  Left in the graph, the loss's
gradient also flows through `Q(s', a')`, so the network is trained to move its
target towards its prediction as well (the "residual gradient"), a different,
slower and often unstable update (AgileRL's double DQN).  Nothing raises.""",
    example="""gamma = 0.99
next_q = D(x).max(1)[0]
target = t + gamma * next_q
loss = F.mse_loss(D(x).squeeze(1), target)
d_opt.zero_grad()
loss.backward()
d_opt.step()""",
    use_instead="""gamma = 0.99
with torch.no_grad():
    next_q = D(x).max(1)[0]
    target = t + gamma * next_q
loss = F.mse_loss(D(x).squeeze(1), target)
d_opt.zero_grad()
loss.backward()
d_opt.step()""",
    fix_safety="No automatic fix: the change alters the update (as it should).",
    known_problems="""Only a target written as an addition whose text names `gamma` or `discount`
is recognised, in the function that runs the backward pass or in a helper
method of the same class whose result it backpropagates (a helper of another
class or module is not read); a residual-gradient method that wants the full gradient on purpose
is told apart only when the function also sets the same prediction against a
target without the stepped networks' graph (a blend of the two updates,
`(1 - c) * mse(q_pred, q_target.detach()) + c * mse(q_pred, residual_target)`):
a pure residual-gradient update is reported.  The optimizer must be
bound in the file to the modules it steps.""",
)

_DISCOUNT = re.compile(r"gamma|discount", re.IGNORECASE)
_NO_GRADIENT_METHODS = frozenset({"detach", "item", "argmax", "argmin", "long", "int", "bool", "numpy",
                                  "tolist", "size", "detach_"})


def check_file(checker) -> None:
    source = checker.source
    # the cheap tests first: a case-blind regex search reads the whole text
    if not checker.training.optimizers or "backward" not in source or not _DISCOUNT.search(source):
        return
    for cls, func in _functions(checker.tree):
        if any(_grad_off_call(d) for d in func.decorator_list):
            continue
        _check_function(checker, cls, func)
    for node in checker.tree.body:
        if isinstance(node, ast.ClassDef):
            _check_helpers(checker, node)


def _functions(tree):
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield node, item
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield None, node


def _grad_off_call(node) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    return (isinstance(node, ast.Attribute) and node.attr in _GRAD_OFF) or \
        (isinstance(node, ast.Name) and node.id in _GRAD_OFF)


def _statements(body, grad_off=False, condition=None):
    """(statement, grad off, the innermost enclosing `if`) in source order."""
    for stmt in body:
        yield stmt, grad_off, condition
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            off = grad_off or any(_grad_off_call(item.context_expr) for item in stmt.items)
            yield from _statements(stmt.body, off, condition)
        elif isinstance(stmt, ast.If):
            yield from _statements(stmt.body, grad_off, stmt)
            yield from _statements(stmt.orelse, grad_off, stmt)
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from _statements(stmt.body, grad_off, stmt)
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody):
                yield from _statements(block, grad_off, condition)


def _steps_and_backward(checker, statements):
    """The modules the optimizers stepped in ``statements`` own, and the first backward."""
    owners = set()
    backward_at = None
    for stmt, _, _ in statements:
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr == "step" and not node.args:
                    owners |= set(checker.training.optimizers.get(checker.text(node.func.value)) or ())
                elif node.func.attr == "backward" and backward_at is None:
                    backward_at = stmt
    return owners, backward_at


def _targets(stmt) -> list:
    if isinstance(stmt, ast.Assign):
        return [n.id for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def _reads(node, names) -> bool:
    """``node`` reads one of ``names`` other than through a call that drops the graph
    (`advantage.detach()`, `.item()`)."""
    cut = {id(n.func.value) for n in ast.walk(node) if isinstance(n, ast.Call)
           and isinstance(n.func, ast.Attribute) and n.func.attr in _NO_GRADIENT_METHODS}
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and id(n) not in cut
               for n in ast.walk(node))


def _check_helpers(checker, cls) -> None:
    """A TD target built in a helper method of the class that returns the loss
    (`critic_loss(...)`), backpropagated and stepped by another method of the same
    class (`update`): the caller binds the helper's result, backpropagates a value
    computed from it, and steps an optimizer; the target must flow from the helper's
    comparison to the returned element the caller backpropagates."""
    methods = {item.name: item for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
    names = [item.name for item in cls.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    done = set()
    for caller in methods.values():
        if any(_grad_off_call(d) for d in caller.decorator_list):
            continue
        statements = list(_statements(caller.body))
        owners, backward = _steps_and_backward(checker, statements)
        if not owners or backward is None:
            continue
        for index, (stmt, off, _) in enumerate(statements):
            if off or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or stmt.lineno >= backward.lineno:
                continue
            call = stmt.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"):
                continue
            helper = methods.get(call.func.attr)
            if helper is None or helper is caller or names.count(helper.name) != 1 or helper.name in done \
                    or any(_grad_off_call(d) for d in helper.decorator_list):
                continue
            target = stmt.targets[0]
            bound = [target] if isinstance(target, ast.Name) else list(target.elts) \
                if isinstance(target, ast.Tuple) else []
            if not bound or not all(isinstance(e, ast.Name) for e in bound):
                continue
            positions = _backpropagated_positions(statements, index, bound, backward)
            if not positions:
                continue
            if _check_function(checker, cls, helper, given=(owners, positions if len(bound) > 1 else None,
                                                           len(bound), caller, backward)):
                done.add(helper.name)


def _backpropagated_positions(statements, index, bound, backward) -> set:
    """The positions of ``bound`` (the names a call's result is unpacked to) whose
    values the backward's receiver is computed from."""
    carried = {e.id: {i} for i, e in enumerate(bound)}
    for stmt, _, _ in statements[index + 1:]:
        if stmt is backward:
            receiver = [n.func.value for n in ast.walk(stmt) if isinstance(n, ast.Call)
                        and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"]
            found = set()
            for r in receiver:
                for n in ast.walk(r):
                    if isinstance(n, ast.Name) and n.id in carried:
                        found |= carried[n.id]
            return found
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            continue
        targets = _targets(stmt)
        if targets:
            sources = set()
            for n in ast.walk(stmt.value) if getattr(stmt, "value", None) is not None else ():
                if isinstance(n, ast.Name) and n.id in carried:
                    sources |= carried[n.id]
            for t in targets:
                if sources:
                    carried[t] = carried.get(t, set()) | sources if isinstance(stmt, ast.AugAssign) else sources
                else:
                    carried.pop(t, None)
    return set()


def _reaches_return(func, statements, use, name: str, positions, arity: int) -> bool:
    """What ``use`` computes from the target reaches the element of a `return` at
    one of ``positions`` (all when None)."""
    names = set(_targets(use)) if not isinstance(use, ast.Return) else set()
    chosen = [use] if isinstance(use, ast.Return) else []
    started = False
    for stmt, _, _ in statements:
        if stmt is use:
            started = True
            continue
        if not started:
            continue
        if isinstance(stmt, ast.Return):
            chosen.append(stmt)
        elif names and getattr(stmt, "value", None) is not None and _reads(stmt.value, names):
            names |= set(_targets(stmt))
    names.add(name)
    for ret in chosen:
        value = ret.value
        if value is None:
            continue
        if arity > 1:
            if not isinstance(value, ast.Tuple) or len(value.elts) != arity:
                return False  # the caller unpacks what this return does not show
            elements = [value.elts[i] for i in sorted(positions or range(arity))]
        else:
            elements = [value]
        if any(_reads(e, names) for e in elements):
            return True
    return False


def _check_function(checker, cls, func, given=None) -> bool:
    statements = list(_statements(func.body))
    if given is not None:
        if _steps_and_backward(checker, statements)[1] is not None:
            return False  # its own backward: read as a function of its own
        owners, positions, arity, caller, backward = given
        backward_at = float("inf")
    else:
        owners, backward = _steps_and_backward(checker, statements)
        backward_at = backward.lineno if backward is not None else None
    if not owners or backward_at is None:
        return False
    assigns = []  # (index, name, value, grad_off, condition)
    for index, (stmt, off, cond) in enumerate(statements):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            names = [target.id] if isinstance(target, ast.Name) else \
                [e.id for e in target.elts if isinstance(e, ast.Name)] if isinstance(target, ast.Tuple) else []
            for name in names:
                assigns.append((index, name, stmt.value, off, cond))
    defaults, flags = _defaults_of(cls) if cls is not None else _defaults_of(func)
    for index, name, value, off, cond in assigns:
        if off or not _is_td_target(checker, value) or "detach" in checker.text(value):
            continue
        if not _carries(checker, value, index, assigns, owners, 0):
            continue
        use = _first_undetached_use(checker, statements, index, name, defaults, flags)
        if use is None or use.lineno > backward_at:
            continue
        if _blended_with_semi_gradient(checker, statements, assigns, owners, use, name):
            continue
        if given is not None:
            if not _reaches_return(func, statements, use, name, positions, arity):
                continue
            _report(checker, use, name, statements[index][0], (func.name, caller.name, backward))
        else:
            _report(checker, use, name, statements[index][0])
        return True
    return False


_COMPOUND = (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)


def _compared_pairs(stmt):
    """The pairs of names a statement sets against each other: `a - b`, `f(a, b)`."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) \
                and isinstance(node.left, ast.Name) and isinstance(node.right, ast.Name):
            yield node.left.id, node.right.id
        elif isinstance(node, ast.Call) and len(node.args) >= 2:
            names = [a.id for a in node.args[:2] if isinstance(a, ast.Name)]
            if len(names) == 2:
                yield names[0], names[1]


def _blended_with_semi_gradient(checker, statements, assigns, owners, use, name: str) -> bool:
    """The prediction that ``use`` sets against the undetached target ``name`` is also
    set, in another statement of the function, against a TD target that carries no
    graph of the stepped networks: a blend of the semi-gradient and the residual
    gradient, the full gradient asked for on purpose (rlkit's DDPG
    `residual_gradient_weight`, set AN's ILSwiss)."""
    predictions = {other for pair in _compared_pairs(use) if name in pair
                   for other in pair if other != name}
    if not predictions:
        return False
    for index, (stmt, off, cond) in enumerate(statements):
        if stmt is use or isinstance(stmt, _COMPOUND):
            continue
        for a, b in _compared_pairs(stmt):
            for prediction, target in ((a, b), (b, a)):
                if prediction not in predictions or target in (name, prediction):
                    continue
                if not any(n == target and _is_td_target(checker, v) for _, n, v, _, _ in assigns):
                    continue
                if off or not _carries(checker, ast.Name(id=target, ctx=ast.Load()), index, assigns, owners, 0):
                    return True
    return False


def _is_td_target(checker, value) -> bool:
    return isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)) \
        and bool(_DISCOUNT.search(checker.text(value)))


def _carries(checker, expr, before: int, assigns, owners: set, depth: int) -> bool:
    """``expr`` computes from a call of a module in ``owners`` with gradients on."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Call):
        func = expr.func
        if isinstance(func, ast.Attribute) and func.attr in _NO_GRADIENT_METHODS:
            return False
        if checker.text(func) in owners:
            return True
        if isinstance(func, ast.Attribute):
            if _carries(checker, func.value, before, assigns, owners, depth + 1):
                return True
        return any(_carries(checker, a, before, assigns, owners, depth + 1) for a in expr.args)
    if isinstance(expr, ast.Subscript):
        inner = expr.value
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in ("max", "min") \
                and isinstance(expr.slice, ast.Constant) and expr.slice.value == 1:
            return False  # the indices
        return _carries(checker, inner, before, assigns, owners, depth + 1)
    if isinstance(expr, ast.Attribute) and expr.attr in ("values",):
        return _carries(checker, expr.value, before, assigns, owners, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _carries(checker, expr.left, before, assigns, owners, depth + 1) or \
            _carries(checker, expr.right, before, assigns, owners, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _carries(checker, expr.operand, before, assigns, owners, depth + 1)
    if isinstance(expr, ast.IfExp):
        # `q_net(s2).max() if not done else torch.tensor(0.0)`: the branch that calls the network
        # is the one every non-terminal step takes
        return _carries(checker, expr.body, before, assigns, owners, depth + 1) or \
            _carries(checker, expr.orelse, before, assigns, owners, depth + 1)
    if isinstance(expr, ast.Name):
        earlier = [a for a in assigns if a[0] < before and a[1] == expr.id]
        if not earlier:
            return False
        index, _, value, off, _ = earlier[-1]
        return not off and _carries(checker, value, index, assigns, owners, depth + 1)
    return False


def _first_undetached_use(checker, statements, index: int, name: str, defaults, flags):
    """The first later statement that reads ``name`` not through `.detach()`; None when an
    unconditional (or unknown-conditional) `name = name.detach()` comes first."""
    for stmt, off, cond in statements[index + 1:]:
        if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            continue
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            if "detach" in checker.text(stmt.value) or off:
                if cond is not None and isinstance(cond, ast.If) and \
                        off_by_default(_as_name(cond.test, flags), defaults):
                    continue  # detached only when a caller asks
                return None
            return None  # rebound to something else
        reads = [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        if not reads:
            continue
        # a read anywhere inside what is detached: `target.detach()`, `(target - value).detach()`
        detached = {id(inner) for n in ast.walk(stmt) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and n.func.attr in ("detach", "item")
                    for inner in ast.walk(n.func.value)}
        if all(id(r) in detached for r in reads) or off:
            continue
        if not _compared(stmt, name):
            return None
        if _only_read_detached(statements, stmt):
            continue  # `advantages = targets - values`, read later only as `advantages.detach()`
        return stmt
    return None


def _only_read_detached(statements, stmt) -> bool:
    """``stmt`` binds names (`advantages = targets - values`) that no later statement reads
    other than through a call that drops the graph (`advantages.detach()`, `.item()`): what it
    computes from the target reaches no loss, so it is not the loss."""
    bound = set(_targets(stmt)) if isinstance(stmt, ast.Assign) else set()
    if not bound:
        return False
    later = False
    for other, _, _ in statements:
        if other is stmt:
            later = True
            continue
        if later and any(_reads(part, bound) for part in _own_parts(other)):
            return False
    return later


def _own_parts(stmt) -> list:
    """What a statement itself evaluates: a compound statement's header (`for e in errors:`,
    `if`/`while` tests, `with` items), its body being read as statements of their own."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items]
    if isinstance(stmt, ast.Try):
        return []
    return [stmt]


def _compared(stmt, name: str) -> bool:
    """The statement sets the target against a prediction: `criterion(pred, target)`
    (a call with another argument) or `pred - target`; a loss weighted by `gamma`
    (`loss = rec + gamma * tc; loss.backward()`) is not a target."""
    def is_target(node):
        return isinstance(node, ast.Name) and node.id == name
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and any(is_target(a) for a in node.args) \
                and not all(is_target(a) for a in node.args):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub) and (is_target(node.left) or is_target(node.right)):
            return True
    return False


def _report(checker, use, name: str, assignment, helper=None) -> None:
    where = "the network this optimizer steps"
    if helper is not None:
        method, caller, backward = helper
        where = (f"the network that `{caller}()` steps (it backpropagates what `{method}()` returns, "
                 f"line {backward.lineno})")
    checker.report(
        "ADL032", use,
        f"the TD target `{name}` (line {assignment.lineno}) is computed with gradients on from {where}, "
        f"and is not detached: the loss backpropagates through the target as well as the "
        f"prediction, a full (residual) gradient instead of the TD update; compute it under `torch.no_grad()` "
        f"or use `{name}.detach()`",
        related=[(assignment.lineno, checker.col(assignment.lineno, assignment.col_offset), 0, "the target")])
