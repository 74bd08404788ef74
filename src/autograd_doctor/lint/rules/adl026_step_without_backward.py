"""ADL026: an optimizer cleared and stepped with no backward pass between: the step
has no gradients to apply."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.names import self_attribute

RULE = Rule(
    code="ADL026", name="step-without-backward",
    summary="`optimizer.zero_grad()` (or a first `step()`) then `optimizer.step()` with no backward pass between: the step applies no gradients (or the same ones again).",
    what_it_does="""Finds `<optimizer>.zero_grad()` followed, in the same block of a
function, by `<optimizer>.step()` of the same optimizer (no closure argument),
when nothing between them can compute gradients: no `backward()`, no
`torch.autograd.grad`/`backward`, no assignment to a `.grad`, and every call
between them is a `torch` function, a tensor method that computes values
(`mean`, `squeeze`, `to`, ...), a builtin, or a call of a module the file
builds (`D(x)`, `self.model(x)`, `self.model.inverse(emb)` of a held module);
a call of anything else (a helper, another object's method) may
backpropagate, so no claim is made when one comes between.
Also finds a second `<optimizer>.step()` after a first one with the same
nothing between, in the same block or nested in the `if`/`else` branches
and `with` bodies that follow it (each branch on its own, the `if`'s test and
the `with`'s context managers held to the same test, or a `contextlib` one):
the second step applies the same gradients again (a discriminator's
optimizer stepped where its scheduler was meant).  A function's body is
read, and for a second step a script's top level too (there a clear and a
step with nothing between is a learning-rate schedule's demonstration).""",
    why_bad="""`zero_grad()` sets every gradient to None (or zero); without a backward
pass in between, `step()` finds no gradient and leaves the parameters as they
are (SGD with weight decay or momentum moves them only by those terms).  The
loss is computed and thrown away: the network never learns, and nothing
raises (memeagent's and agent57's episodic-novelty embedding network).""",
    example="""d_opt.zero_grad()
loss = F.mse_loss(D(x), t)
d_opt.step()""",
    use_instead="""d_opt.zero_grad()
loss = F.mse_loss(D(x), t)
loss.backward()
d_opt.step()""",
    fix_safety="No automatic fix: which value to backpropagate is the author's choice.",
    known_problems="""Only a clear and a step in one block (or two steps, the second in the
`if`/`with` statements after the first), of an optimizer named the same
way in both (`self.opt`), are matched; a step inside a loop that follows is
not followed; a backward run by a call between them
that the linter cannot read silences the rule.""",
)

# Tensor methods that compute values and never run a backward pass (and a list's append).
_VALUE_METHODS = frozenset("""
mean sum squeeze unsqueeze to view reshape float long int double half item detach clone
cpu cuda size flatten permute transpose contiguous max min abs pow sqrt exp log softmax
log_softmax argmax gather index_select expand expand_as repeat norm type numpy tolist
append
""".split())
# Builtins that compute values.
_VALUE_BUILTINS = frozenset({"len", "float", "int", "range", "print", "min", "max", "abs", "isinstance",
                             "zip", "enumerate", "list", "tuple", "sum", "round"})


def check_scope(checker, scope) -> None:
    """Read the function's blocks only when it steps an optimizer it also clears."""
    if not scope.steps:
        return
    if scope.function is not None:
        body = scope.function.body
    elif scope.name == "<module>":
        # a script's top level, for a second step only: a clear and a step with no
        # backward there is a learning-rate schedule's demonstration (a scheduler
        # stepped after its optimizer, VectorQuantizedCPC's `scheduler.py`)
        body = checker.tree.body
    else:
        return
    for block in _blocks(body):
        _check_block(checker, block, clears_too=scope.function is not None)


def _blocks(body):
    """Every statement list of ``body``, not entering nested definitions."""
    yield body
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _blocks(inner)
        for handler in getattr(stmt, "handlers", ()):
            yield from _blocks(handler.body)


def _optimizer_call(stmt, method: str) -> str | None:
    """The optimizer's text for a statement `<optimizer>.<method>()` without arguments."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and not stmt.value.args \
            and not stmt.value.keywords and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr == method and isinstance(stmt.value.func.value, (ast.Name, ast.Attribute)):
        text = ast.unparse(stmt.value.func.value)
        name = text.rsplit(".", 1)[-1].lower()
        return text if "opt" in name else None
    return None


def _check_block(checker, block, clears_too=True) -> None:
    clears = {}  # optimizer text -> index of its last clear in the block
    for i, stmt in enumerate(block):
        cleared = _optimizer_call(stmt, "zero_grad")
        if cleared is not None and clears_too:
            clears[cleared] = i
            continue
        stepped = _optimizer_call(stmt, "step")
        if stepped is not None and stepped in clears:
            between = block[clears.pop(stepped) + 1:i]
            if between and all(_computes_no_gradient(checker, s) for s in between):
                _report(checker, stmt, stepped, between)
            continue
        if stepped is not None:
            again, _ = _next_step(checker, block[i + 1:], stepped)
            if again is not None:
                _report_again(checker, again, stepped, stmt)
            continue
        if not _computes_no_gradient(checker, stmt):
            clears.clear()  # a gradient may come from this statement


def _next_step(checker, stmts, optimizer: str):
    """``(step, stopped)``: the statement `<optimizer>.step()` that ``stmts`` reach
    first with nothing before it that may compute gradients (entering the
    branches of an `if` and the body of a `with`, each branch on its own); or
    None, and whether something on the way may compute gradients or clear them.
    Loops and other compound statements stop the search."""
    for stmt in stmts:
        if _optimizer_call(stmt, "step") == optimizer:
            return stmt, False
        if _optimizer_call(stmt, "zero_grad") == optimizer:
            return None, True  # a clear, then perhaps a step: the case above
        if isinstance(stmt, (ast.If, ast.With)):
            heads = [stmt.test] if isinstance(stmt, ast.If) else \
                [item.context_expr for item in stmt.items]
            if not all(_standard_context(checker, head) or _computes_no_gradient(checker, ast.Expr(value=head))
                       for head in heads):
                return None, True
            stopped = False
            for branch in (stmt.body, getattr(stmt, "orelse", [])):
                found, branch_stopped = _next_step(checker, branch, optimizer)
                if found is not None:
                    return found, False
                stopped = stopped or branch_stopped
            if stopped:
                return None, True
            continue
        if not _computes_no_gradient(checker, stmt):
            return None, True
    return None, False


def _standard_context(checker, head) -> bool:
    """`contextlib.nullcontext()`, `contextlib.suppress(...)`: a standard library
    context manager, which runs no backward pass."""
    return isinstance(head, ast.Call) and (checker.qualname(head.func) or "").startswith("contextlib.")


def _computes_no_gradient(checker, stmt) -> bool:
    """Nothing in ``stmt`` can compute gradients (see the rule's documentation)."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
        return False
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Store):
            return False
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        q = checker.qualname(func) or ""
        if q.startswith("torch."):
            if q.startswith(("torch.autograd.", "torch.Tensor.backward")):
                return False
            continue
        if isinstance(func, ast.Name) and func.id in _VALUE_BUILTINS:
            continue
        if isinstance(func, ast.Attribute) and func.attr in _VALUE_METHODS:
            continue
        spec = checker.modules.called_module(node, checker.scope.owner_class)
        if spec is not None and not _call_runs_backward(checker, spec):
            continue  # `D(x)`, `self.model(x)`: a module's forward computes values
        if isinstance(func, ast.Attribute) and _held_module_call(checker, node):
            continue
        return False
    return True


def _call_runs_backward(checker, spec) -> bool:
    """Calling a module of a same-file class runs its `__call__` (when the class or a
    same-file base overrides it) or its `forward`: a sharded loss computer's
    `__call__` that backpropagates (OpenNMT-py's `LossComputeBase`) does compute
    gradients.  True when such a method's name is one of the file's backward-running
    functions (``checker.file.backward_functions``, matched by name: a same-named
    method elsewhere that backpropagates also counts, which only silences the rule)."""
    names = checker.file.backward_functions
    if not names or not ({"__call__", "forward"} & names):
        return False
    classes = checker.modules.module_class_nodes
    seen, todo = set(), [spec.kind]
    while todo:
        kind = todo.pop()
        node = classes.get(kind)
        if node is None or kind in seen:
            continue
        seen.add(kind)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    item.name in ("__call__", "forward") and item.name in names:
                return True
        todo.extend(b.id for b in node.bases if isinstance(b, ast.Name))
    return False


def _held_module_call(checker, call) -> bool:
    """`self.model(x)` or `self.model.inverse(emb)`: a module the object holds (built in
    its `__init__`), called or asked for a method that no same-file function of that
    name backpropagates in (``checker.file.backward_functions``)."""
    func = call.func
    holder = func.value if isinstance(func.value, ast.Attribute) else func
    if not self_attribute(holder) or func.attr in checker.file.backward_functions:
        return False
    owner = checker.scope.owner_class
    return bool(owner) and holder.attr in checker.modules.module_specs.get(owner, {})


def _report(checker, step, optimizer, between) -> None:
    checker.report(
        "ADL026", step.value,
        f"`{optimizer}.step()` applies no gradients: `{optimizer}.zero_grad()` on line "
        f"{between[0].lineno - 1} cleared them and nothing between computes new ones (no "
        f"`backward()`); the parameters do not move; backpropagate the loss before the step",
        related=[(between[0].lineno - 1, 0, 0, "gradients cleared here")])


def _report_again(checker, step, optimizer, first) -> None:
    checker.report(
        "ADL026", step.value,
        f"`{optimizer}.step()` runs again after `{optimizer}.step()` on line {first.lineno} with "
        f"no backward pass between: it applies the same gradients a second time (and moves "
        f"the optimizer's state, Adam's moments, twice); step once per backward pass (a "
        f"scheduler is stepped with `scheduler.step()`)",
        related=[(first.lineno, first.col_offset, 0, "first step of these gradients")])
