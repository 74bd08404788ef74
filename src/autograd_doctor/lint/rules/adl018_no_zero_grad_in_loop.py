"""ADL018: a training loop that steps an optimizer and never clears the gradients."""

from __future__ import annotations

import ast
import os
import re

from autograd_doctor.lint import names as N
from autograd_doctor.lint.clearing import (clears_in_project, inherited_method_clears, parsed_file, project_class,
                                           star_imported_project_class)
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.walk import own_nodes
from autograd_doctor.lint.names import self_attribute

# `p.grad = None`, `p.grad.zero_()`, `p.grad.data.zero_()`, `p.grad.detach_()`
_CLEARS_BY_HAND = re.compile(r"\.grad\s*=(?!=)|\.grad(?:\.data)?\.(?:zero_|detach_|fill_)\(")

RULE = Rule(
    code="ADL018", name="no-zero-grad-in-loop",
    summary="A loop calls `backward()` and `optimizer.step()` on every iteration but never clears the gradients (or clears them between the backward and the step).",
    what_it_does="""Finds a `for`/`while` loop whose body runs `backward()` and, not inside an
`if`, `<optimizer>.step()`, with no `zero_grad()` (of any optimizer or
module), `p.grad = None` (or any new gradient assigned to `p.grad`: the
gradients summed in a list from `autograd.grad`, as a meta-update does),
`p.grad.zero_()` or `p.grad.detach_()` anywhere in that loop, when something can see what the steps did: code after the loop
(an evaluation, a save, an assertion, the rest of an epoch), or a model that
outlives the function (an attribute, an argument, a global).  Also an
update function without a loop of its own (called once per batch) that
clears some optimizers with `zero_grad()` but steps one it never clears,
after a backward outside any branch, when whose parameters it steps is known
and nothing in the file clears that optimizer, its modules or `.grad` by hand
(an actor-critic `update()` that clears only the critic's optimizer).
Also a loop that optimizes a tensor by hand without clearing its gradient:
it runs `backward()`, reads `x.grad` and writes `x` in place (`x.data -= lr *
x.grad`, `x.data[mask] = ...`, `x.add_(...)`) on every iteration, never
re-binds `x` and clears no gradient (an attack's or a projection's steps on
its input, a hand-written gradient descent).
Also gradients cleared in the wrong place: the stepped optimizer's own
`zero_grad()` (or that of a module it steps) between a backward pass and the
step, with no other backward in between and all three on the same paths
(`loss.backward(); optimizer.zero_grad(); optimizer.step()`): the step finds
no gradient and moves nothing.
Also a clear that empties an accumulation window: a loop that steps an
optimizer only inside `if (i + 1) % k == 0:` (a test on a remainder: gradient
accumulation over `k` iterations) but calls that optimizer's `zero_grad()` on
every iteration, outside the `if`, and runs a backward pass outside it too: the
gradients of the other iterations are cleared before any step reads them, so
each step uses the last micro-batch's gradient only.  The same in a method run
once per micro-batch, without a loop: it clears the optimizer and backpropagates
outside any branch, and steps only inside `if self.<n> % k == 0:` on a counter of
the object that the method itself increments (`self.<n> += 1`).
Also an update method run once per batch from a loop of the same file
(`trainer.train_step(batch)` in `for batch in batches:`) that backpropagates
and then steps an optimizer, outside any branch, in a file that clears no
gradient anywhere (no `zero_grad()`, no `p.grad = None`), when its class
derives from nothing of the project (`object`, `nn.Module`): each call's step
reads the sum of every earlier call's gradients.  A class whose bases are
classes of the same file deriving from nothing else counts too; and in a file
that clears somewhere, the update method is reported when the loop clears
nothing and calls no function of the file that clears, and no method of the
class or of its bases clears (a check at the end of the file that clears a
reference model of its own cannot run between the calls).
A step is `optimizer.step()`, or the update of a hand-written optimizer of the
same file applied to gradients: a method of a class that is not a torch
`Optimizer`, writing a loop variable in place from another or from a `.grad`
(`for g, w in zip(gradients, weights): w.sub_(lr * g)`), called on an
optimizer (`self.optimizer.apply(gradients, weights)`, `optimizer.update()`)
with the gradients reaching it (`.grad` read by the method, or passed in).
Also two iterations written out one after the other in a function's own body
(no loop): a backward, an update that reads the gradient (`w -= lr * w.grad`
under `torch.no_grad()`, or an optimizer's `step()`), another backward and the
same update again, no branch around any of them, with nothing clearing the
gradients in between (the function calls no `zero_grad()`; no `.grad = None`,
`.grad.zero_()`, nor a call of a function of the file that clears): reported at
the second backward, whose update applies the sum of both gradients.""",
    why_bad="""`backward()` adds into `.grad`.  Without clearing, the step of iteration
k uses the sum of the gradients of iterations 1..k: training silently
diverges or crawls.  No error is raised.""",
    example="""for x, y in data:
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()""",
    use_instead="""for x, y in data:
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()""",
    fix_safety="No automatic fix: where to clear (and which parameters) is a choice.",
    known_problems="""Gradient accumulation steps under an `if` (`if (i + 1) % k == 0:`) and
is not reported.  Clearing done in a same-file helper called from the loop
(`reset_grad()`, `self.reset_grad()`) is seen, and so is a function imported
from another file of the same project (`pyro.infer.util.zero_grads(params)`,
looked up from the linted file's folders), and so is a method inherited from
a base class of another project file (`self.standard_loss(x, y)` of
`class WATrainer(Trainer)`, `from core.utils import Trainer`, found through
the package's re-exports), and so is a method of another object that the
function builds from a project class (`trainer = Trainer(model)`, `from
core.train import Trainer`, whose `reset_grad()`, or a project base's, clears:
`trainer.reset_grad()`), and so is a model the loop calls (`loss = model(x,
y)`), built in the function from a project class (imported by name or with
`from <module> import *`) whose `forward` calls `self.zero_grad()`, when the
stepped optimizer is built over that model's `parameters()` alone; an object
handed in or bound to something else too is not, nor a method of a class
outside the project, and such loops are reported.
An optimizer built (on every binding of its name in the function) from a class
of another project file that derives from torch's abstract `Optimizer` alone
and whose code, project bases included, reads no `.grad` and calls no `step()`
(a K-FAC estimate averaging what its hooks saved) reads nothing that piles up:
its loop is not reported.
An optimizer built inside the loop over tensors also made there (`x =
z.detach().clone()`, `opt = SGD([x])`: a fresh leaf each iteration, as
guidance loops do), or over the parameters of a module made there (`model =
Net(); opt = SGD(model.parameters())`, as tests do), has nothing to
accumulate and is not reported.  A loop that is the last thing a test
function (`test_*`) or a script's top level does, only printing its losses,
is a smoke run whose steps no outcome depends on, and is not reported (a
model local to a function, dropped when the loop ends, likewise); the same
loop followed by `torch.save(...)`, an assertion or any other statement is.
A loop followed only by loops that go on stepping the same optimizer (a test
that trains three times in a row, asserting only that each loss is a float) is
one smoke run with them: what those loops read is not an outcome.
The hand-written update check follows a plain name only: an attribute
(`self.delta.grad`, `model.w.grad`) is not checked, and a loop that calls
any `zero_grad()` is taken to clear the tensor's gradient too, except the
`zero_grad()` of an optimizer or module the function was handed (a parameter)
or holds on `self`, for a tensor the function itself made: that object
existed before the tensor, so the tensor is not among its parameters (a PGD
attack's `opt.zero_grad()` between its steps on `delta`), unless the loop
hands the tensor to it (`opt.add_param_group(...)`).""",
)


def on_grad_read(checker, node) -> None:
    """`x.grad` read inside a loop: a hand-written update whose gradient may pile up."""
    if isinstance(node.value, ast.Name) and checker.scope.loops:
        checker.scope.note("ADL018 grad read", (checker.seq, node.value.id, node, tuple(checker.scope.loops)))


def _steps(scope) -> list:
    """The optimizer steps of ``scope`` -- `optimizer.step()`, and the update of a
    hand-written optimizer of the file applied to gradients
    (`self.optimizer.apply(gradients, weights)`) -- in the order of the walk."""
    if not scope.applied_updates:
        return scope.steps
    return sorted(scope.steps + scope.applied_updates, key=lambda step: step[0])


def check_scope(checker, scope) -> None:
    backwards = [s for s, _ in scope.backwards + scope.retain_backwards]
    if _steps(scope) and backwards:
        _note_windows_and_updates(checker, scope, backwards)
    _uncleared_hand_updates(checker, scope, backwards)
    if len(backwards) >= 2 and scope.function is not None and not scope.zero_grads:
        _unrolled_updates(checker, scope)
    _cleared_before_step(checker, scope, backwards)
    if not _steps(scope) and backwards and scope.zero_grad_receivers and scope.function is not None:
        _note_clearing_backward(checker, scope, backwards)
    for seq, node, optimizer in _steps(scope):
        loops = [(start, end) for start, end in scope.finished_loops if start < seq < end]
        if not loops:
            _uncleared_in_update(checker, scope, seq, node, optimizer, backwards)
            continue
        start, end = max(loops)  # the innermost loop
        conditional = any(start < s <= seq < e for s, _, e in scope.branches)
        if conditional or not any(start < b < end for b in backwards):
            continue
        if any(start < z < end for z in scope.zero_grads):
            continue
        if _fresh_each_iteration(checker, scope, optimizer, seq, start):
            continue
        if _element_of_the_loop(checker, node):
            continue  # `optimizers[i].step()` in `for i in ...`: each iteration steps another one
        if any(start < s < end and clears_in_project(q, checker.filename)
               for s, q in scope.imported_calls):
            continue  # `pyro.infer.util.zero_grads(params)`: a project helper that clears
        if any(start < s < end and m not in scope.class_methods and
               any(inherited_method_clears(base, m, checker.filename) for base in scope.class_bases)
               for s, m in scope.self_calls):
            continue  # `self.standard_loss(x, y)`, inherited from a project class, clears
        if _project_instance_method_clears(checker, scope, node):
            continue  # `wrapper.reset_grads()`, `wrapper = Wrapper(model)` of a project class that clears
        if _called_model_clears_itself(checker, scope, node):
            continue  # `loss = model(x, y)`, whose project class's `forward` starts with `self.zero_grad()`
        if _steps_without_reading_gradients(checker, scope, optimizer):
            continue  # `opt = KFAC(net)`: a project optimizer whose `step()` never reads `.grad`
        if not _trained_parameters_used_later(checker, scope, optimizer, end, backwards):
            continue  # a smoke run: nothing after the loop sees what the steps did
        checker.report("ADL018", node,
                       f"`{checker.text(node.func)}()` runs on every iteration of this loop, but "
                       f"nothing in the loop clears the gradients (`zero_grad()`): backward() "
                       f"adds into `.grad`, so each step uses the sum of all past gradients")


def _unrolled_updates(checker, scope) -> None:
    """Two training iterations written out one after the other in a function's
    body (a blog's hand-written gradient descent): `loss.backward()`, an update that
    reads the gradient (`with torch.no_grad(): w -= lr * w.grad`, or an optimizer's
    `step()`), another `loss.backward()` and the same update again, on one path
    (statements of the function's own body, no branch around any of them) with
    nothing clearing the gradients in between (`zero_grad()`, `w.grad = None`,
    `w.grad.zero_()`, a same-file function that does so).  The second update reads
    the first iteration's gradient plus the second's.  The same loss backpropagated
    again with no binding of it between is ADL019's (the backward raises): no claim.  Reported at the second
    backward.  A statement of the body that is a loop, a branch or a `try` holding a
    backward, an update, a clearing or a `return` ends the walk (no claim past it)."""
    updates_by_key, armed, seen_backward = {}, {}, False
    last_receiver, bound_since = None, set()
    clearing_functions = None
    optimizers = checker.training.optimizers
    for stmt in scope.function.body:
        text = checker.text(stmt)
        if "zero_grad" in text or "set_to_none" in text or _CLEARS_BY_HAND.search(text):
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try, ast.With)) and \
                    not _is_no_grad_with(stmt):
                return  # cleared on some path only: no claim
            updates_by_key.clear(), armed.clear()
            seen_backward = False
            continue
        called = {n.func.id if isinstance(n.func, ast.Name) else n.func.attr for n in ast.walk(stmt)
                  if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))}
        if called:
            if clearing_functions is None:
                clearing_functions = _clearing_functions(checker)
            if called & clearing_functions:
                return  # a helper of the file clears (perhaps): no claim
        backward = _backward_statement(stmt)
        if backward is not None:
            receiver = checker.text(backward.func.value)
            if receiver == last_receiver and receiver not in bound_since:
                return  # the same loss again, no forward pass between: ADL019's (it raises)
            last_receiver, bound_since = receiver, set()
            for key, update in updates_by_key.items():
                armed.setdefault(key, (update, backward))
            seen_backward = True
            continue
        bound = {checker.text(t) for n in ast.walk(stmt) if isinstance(n, (ast.Assign, ast.AnnAssign))
                 for t in (n.targets if isinstance(n, ast.Assign) else [n.target])}
        bound_since.update(bound)
        roots = {re.match(r"\w*", text).group(0) for text in bound}
        for held in (updates_by_key, armed):
            for key in [k for k in held if re.match(r"\w*", k[1]).group(0) in roots]:
                del held[key]  # `model = Net()` / `opt = SGD(...)` again: a new parameter set
        keys = _update_keys(checker, stmt, optimizers)
        if keys is None:
            return  # a loop, a branch or a jump with a backward or an update in it
        for key in keys:
            if key in armed:
                update, backward = armed[key]
                checker.report(
                    "ADL018", backward,
                    f"`{checker.text(backward)}` adds its gradients to those that the update on "
                    f"line {update.lineno} already applied: nothing clears `.grad` (`zero_grad()`, "
                    f"`.grad = None`) after that update, so the update on line {stmt.lineno} "
                    f"applies the sum of both iterations' gradients; clear the gradients before "
                    f"this backward")
                return
            if seen_backward:
                updates_by_key.setdefault(key, stmt)


def _is_no_grad_with(stmt) -> bool:
    return isinstance(stmt, ast.With) and all(
        isinstance(item.context_expr, ast.Call) and
        ast.unparse(item.context_expr.func).rsplit(".", 1)[-1] == "no_grad" for item in stmt.items)


def _backward_statement(stmt):
    """The `X.backward()` call that ``stmt`` is, or None."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
            isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "backward":
        return stmt.value
    return None


def _update_keys(checker, stmt, optimizers):
    """What ``stmt`` updates from the gradients: `("step", opt)` for `opt.step()`
    (an optimizer of the file, no closure), `("grad", w)` for each `w -= ... w.grad
    ...` (also `w.data`) in a `with torch.no_grad():` block; () for a statement that
    does neither and holds no backward, update or jump; None for a compound
    statement that does (the walk stops)."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "step":
            receiver = checker.text(call.func.value)
            if not call.args and not call.keywords and receiver in optimizers:
                return [("step", receiver)]
            return None  # `scaler.step(opt)`, a closure, a scheduler: not followed
    if _is_no_grad_with(stmt):
        keys = []
        for node in stmt.body:
            if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Sub, ast.Add)):
                target = checker.text(node.target)
                target = target[:-5] if target.endswith(".data") else target
                if any(isinstance(n, ast.Attribute) and n.attr == "grad" and checker.text(n.value) == target
                       for n in ast.walk(node.value)):
                    keys.append(("grad", target))
                    continue
            if any(isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Raise)) for n in ast.walk(node)):
                return None
        return keys
    if isinstance(stmt, (ast.Return, ast.Raise)):
        return None
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("backward", "step"):
            return None
        if isinstance(node, ast.Attribute) and node.attr == "grad" and not isinstance(node.ctx, ast.Load):
            return None
        if isinstance(node, ast.AugAssign) and isinstance(stmt, (ast.If, ast.For, ast.While, ast.Try, ast.With)):
            return None
    return ()


def _clearing_functions(checker) -> set:
    """Names of the file's functions whose text clears gradients."""
    found = checker.notes.get("ADL018 clearing functions")
    if found is None:
        found = checker.notes["ADL018 clearing functions"] = {
            n.name for n in ast.walk(checker.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (lambda t: "zero_grad" in t or "set_to_none" in t or _CLEARS_BY_HAND.search(t))(
                checker.text(n))}
    return found


def _cleared_before_step(checker, scope, backwards) -> None:
    """`loss.backward(); optimizer.zero_grad(); optimizer.step()`: the gradients the
    backward just computed are cleared before the step that should use them (a
    LoRA training script's loop), so every step moves the parameters by nothing.
    Reported when the clearing is the stepped optimizer's own `zero_grad()` (or that
    of a module it steps), after a backward and before the step with no other
    backward in between, all three on the same paths (no branch, loop or jump
    begins or ends between them)."""
    if not scope.zero_grad_receivers or not backwards:
        return
    owners_of = checker.training.optimizers
    for seq, node, optimizer in _steps(scope):
        clearers = {optimizer, *owners_of.get(optimizer, ())}
        for z, text in scope.zero_grad_receivers:
            if z >= seq or text not in clearers or not scope.run_together(z, seq):
                continue
            before = [b for b in backwards if b < z]
            if not before or any(z < b < seq for b in backwards):
                continue
            b = max(before)
            if not scope.run_together(b, z):
                continue
            backward = next(n for s, n in scope.backwards + scope.retain_backwards if s == b)
            if _returns_gradients(checker, backward):
                continue  # `torch.autograd.grad(...)` hands its gradients back, no `.grad` to clear
            checker.report("ADL018", scope.zero_grad_calls.get(z, node),
                           f"`{text}.zero_grad()` clears the gradients that the backward pass on "
                           f"line {backward.lineno} just computed, before `{checker.text(node.func)}()` "
                           f"on line {node.lineno} uses them: the step moves nothing; clear the "
                           f"gradients before the backward pass (or after the step)")
            break


def _returns_gradients(checker, node) -> bool:
    """Whether ``node``, a call the walk counts as a backward pass, is
    `torch.autograd.grad` (under any import name): it returns the gradients and
    accumulates into no `.grad`, so a `zero_grad()` after it clears nothing it
    computed (set AH: implicit-hyper-opt's hyper-step, which assigns the
    hypergradient to `.grad` itself between the clearing and the step)."""
    func = getattr(node, "func", None)
    return isinstance(func, (ast.Name, ast.Attribute)) and checker.qualname(func) == "torch.autograd.grad"


def _uncleared_in_update(checker, scope, seq: int, node, optimizer: str, backwards) -> None:
    """An update function called once per batch (no loop of its own) that clears
    other optimizers' gradients but not those of the one it steps: Hands-on RL's
    actor-critic `update()` regrouped as `critic_optimizer.zero_grad(); ...;
    critic_optimizer.step()` then `actor_loss.backward(); actor_optimizer.step()`.
    Reported when every clearing in the function is an optimizer's `zero_grad()`
    (not a module's, which may clear more), all of them before the step; none is
    the stepped optimizer; a backward runs before the step, outside any branch;
    whose parameters it steps is known and none of those modules is cleared; and
    nothing in the file clears that optimizer or its modules or writes `.grad`."""
    receivers = scope.zero_grad_receivers
    if not receivers or len(receivers) != len(scope.zero_grads) or any(z > seq for z, _ in receivers):
        return
    if any(s <= seq < e for s, _, e in scope.branches) or not any(b < seq for b in backwards):
        return
    optimizers = checker.training.optimizers
    owners = optimizers.get(optimizer)
    cleared = {text for _, text in receivers}
    if not owners or optimizer in cleared or not all(text in optimizers for text in cleared) \
            or any(owner in cleared for owner in owners):
        return
    source = checker.source
    if _CLEARS_BY_HAND.search(source) or "set_to_none" in source or "zero_grads" in source:
        return  # gradients cleared by hand somewhere: no claim
    cleared_anywhere = {checker.text(n.func.value).rsplit(".", 1)[-1] for n in ast.walk(checker.tree)
                        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                        and n.func.attr == "zero_grad"}
    if any(text.rsplit(".", 1)[-1] in cleared_anywhere for text in (optimizer, *owners)):
        return  # cleared elsewhere (`agent.actor_optimizer.zero_grad()` in a training script)
    first = min(receivers)
    checker.report("ADL018", node,
                   f"`{checker.text(node.func)}()` steps gradients that nothing clears: this "
                   f"function clears `{first[1]}` (`zero_grad()`) but not `{optimizer}`, and "
                   f"nothing else in the file does; backward() adds into `.grad`, so each call "
                   f"steps with the sum of all past gradients")


def _trained_parameters_used_later(checker, scope, optimizer: str, end: int, backwards) -> bool:
    """Whether anything can see the parameters the loop's steps produced, so that
    the summed gradients change an outcome: code after the loop (a read of any
    name once the loop ends: an evaluation, a save, an assertion, the next epoch),
    or, in a function that is neither a test nor the module's top level, a model
    that outlives the call (an attribute of `self`, an argument, a global; unknown
    owners count as outliving).  A test function's state dies with it, and so does
    a script's: a loop that is the last thing they do only prints its losses
    (kospeech's smoke-test scripts, texar's `test_BertAdam`).  A later loop that
    goes on stepping the same optimizer is the same run continued, not a reader:
    only what follows it counts (OpenSpeech's tests run three such loops in a row,
    each asserting only that the loss is a float)."""
    continued = _continued_runs(scope, optimizer, end, backwards)
    if any(seq > end and not any(header < seq < stop for header, stop in continued)
           for reads in scope.uses.values() for seq in reads):
        return True
    if scope.name == "<module>" or scope.name.startswith("test"):
        return False
    owners = checker.training.optimizers.get(optimizer)
    if not owners:
        return True
    return any(not _built_here(scope, owner.split(".", 1)[0]) for owner in owners)


def _continued_runs(scope, optimizer: str, end: int, backwards) -> list:
    """The (header, end) seq ranges of the loops after ``end`` that run a backward
    pass and step ``optimizer`` on every iteration, header included (`for i in
    range(3):` reads `range`).  Only the innermost loop around each step: an outer
    loop may evaluate between its inner loops, and that is a reader."""
    runs = []
    for seq, _, stepped in _steps(scope):
        if seq <= end or stepped != optimizer:
            continue
        loops = [(s, e) for s, e in scope.finished_loops if s < seq < e]
        if not loops:
            continue
        start, stop = max(loops)
        if start > end and any(start < b < stop for b in backwards) and not any(
                start < s <= seq < e for s, _, e in scope.branches):
            runs.append((scope.loop_headers.get(start, start), stop))
    return runs


def _built_here(scope, name: str) -> bool:
    """``name`` is a local of this function made by an assignment (`model =
    Net()`), not an argument (bound without a value) nor a global (not bound)."""
    bindings = scope.bind_values.get(name, ())
    return bool(bindings) and all(value is not None for _, value, _ in bindings)


def _fresh_each_iteration(checker, scope, optimizer: str, seq: int, start: int) -> bool:
    """``optimizer`` (stepped at ``seq``) is built inside the loop (after ``start``)
    over parameters that are all made new in the loop: no gradient outlives an
    iteration (`x = z.detach().clone(); opt = torch.optim.SGD([x])`, or `model =
    Net(); opt = SGD(model.parameters())`, a fresh module each iteration)."""
    entry = scope.binding(optimizer, seq) if optimizer.isidentifier() else None
    if entry is None or entry[0] <= start or not isinstance(entry[1], ast.Call):
        return False
    build = entry[1]
    func = build.func
    short = N.last_name(func)
    if not ((checker.qualname(func) or "").startswith("torch.optim.") or short in N.OPTIMIZER_CLASSES):
        return False
    params = build.args[0] if build.args else next(
        (k.value for k in build.keywords if k.arg == "params"), None)
    return params is not None and _made_in_loop(checker, scope, params, entry[0], start, 0)


def _made_in_loop(checker, scope, value, at: int, start: int, depth: int) -> bool:
    """Every name that ``value`` (evaluated at ``at``) reads is bound inside the loop
    to a new tensor, a new object (`Net(...)`), or a value made only of those."""
    if depth > 4:
        return False
    if isinstance(value, (ast.List, ast.Tuple)) and not value.elts:
        return False
    roots = _read_names(value)
    if not roots:
        return _new_tensor(checker, value)
    for name in roots:
        made = scope.binding(name, at)
        if made is None or made[0] <= start or made[1] is None:
            return False
        bound = made[1]
        if not (_new_tensor(checker, bound) or _new_object(checker, bound)
                or _made_in_loop(checker, scope, bound, made[0], start, depth + 1)):
            return False
    return True


def _read_names(value) -> set:
    """The names ``value`` reads, less the targets of its comprehensions and the
    functions it calls by name."""
    names, local, called = set(), set(), set()
    for node in ast.walk(value):
        if isinstance(node, ast.comprehension):
            local |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called.add(id(node.func))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            names.add((node.id, id(node)))
    return {n for n, i in names if n not in local and i not in called}


def _new_object(checker, value) -> bool:
    """`CopyGenerator(**case)`, `nn.Linear(4, 2)`: an instance made here, whose
    parameters start without gradients (a deep copy would copy `.grad` too)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id[:1].isupper() or func.id in checker.modules.module_classes
    q = checker.qualname(func) or ""
    return q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper()


def _new_tensor(checker, value) -> bool:
    """A call that returns a new tensor object, whose `.grad` starts empty: a
    `torch.*` function (a factory, an op, `nn.Parameter`), `.clone()`,
    `.detach()`, or an in-place `requires_grad_()` on one of those."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if (checker.qualname(func) or "").startswith("torch."):
        return True
    if isinstance(func, ast.Attribute):
        if func.attr in ("clone", "detach"):
            return True
        if func.attr == "requires_grad_":
            return _new_tensor(checker, func.value)
    return False


def _uncleared_hand_updates(checker, scope, backwards) -> None:
    """A loop that runs a backward pass, reads `x.grad` and writes `x` in place on
    every iteration, with `x` the same tensor throughout (never re-bound in the
    loop) and nothing in the loop clearing a gradient: from the second iteration on
    `x.grad` is the sum of all past gradients (perceptual-advex's Newton projection:
    `adv_lpips.sum().backward()`, then `adv_inputs.data[mask] = ... adv_inputs.grad
    ...`).  A loop that also steps an optimizer is the first check's; a loop that
    only reads the gradient (a test that checks which inputs an output depends on)
    changes nothing with it and is not reported."""
    reads = scope.noted("ADL018 grad read")
    if not reads:
        return
    ends = dict(scope.finished_loops)
    reported = set()
    for seq, name, node, loops in reads:
        statements = None
        for depth, loop in enumerate(reversed(loops)):  # the innermost loop first
            end = ends.get(loop.start)
            if end is None or name in reported:
                break
            if name in loop.bound:
                break  # a new tensor each iteration (`x = x.detach()`): its `.grad` starts empty
            if not _a_leaf(scope, name, seq):
                break  # `w1 = w.type(torch.float)`: its `.grad` stays None, nothing piles up (ADL020's)
            if not any(loop.start < b < seq for b in backwards):
                continue
            if statements is None:
                statements = _loops_around(checker.tree, node)
            statement = statements[depth] if depth < len(statements) else None
            others = _zero_grads_of_older_objects(scope, name, loop.start, end, statement)
            if any(loop.start < z < end and z not in others for z in scope.zero_grads) or \
                    any(loop.start < s < end for s, _, _ in _steps(scope)):
                break
            if statement is None or not _writes_in_place(statement, name) or \
                    _clears_a_gradient(statement, {id(scope.zero_grad_calls[z]) for z in others}):
                break
            reported.add(name)
            checker.report("ADL018", node,
                           f"`{name}.grad` is read on every iteration of this loop, which updates "
                           f"`{name}` in place, but nothing in the loop clears it (`{name}.grad = None`): "
                           f"backward() adds into `.grad`, so from the second iteration on it holds "
                           f"the sum of all past gradients of `{name}`")
            break


def _zero_grads_of_older_objects(scope, name: str, start: int, end: int, loop) -> set:
    """The seqs of the `zero_grad()` calls in the loop (``start``..``end``) that cannot
    clear ``name``'s gradient: ``name`` is a tensor this function made (not one of
    its parameters), and the call's receiver is an object the function was handed
    (`opt.zero_grad()`, `model.zero_grad()` with `opt`/`model` parameters) or holds
    on `self` (`self.optimizer.zero_grad()`).  Either existed before the tensor, so
    the tensor is not among its parameters, unless the loop hands the tensor to an
    optimizer (`opt.add_param_group({'params': [delta]})`)."""
    if name in scope.parameters or loop is None or _hands_over(loop, name):
        return set()
    older = set()
    for seq, receiver in scope.zero_grad_receivers:
        if start < seq < end:
            root = receiver.split(".", 1)[0].split("[", 1)[0]
            if root in scope.parameters and root != name and (root != "self" or "." in receiver):
                older.add(seq)
    return older


def _hands_over(loop, name: str) -> bool:
    """The loop passes ``name`` to `add_param_group(...)` (an optimizer takes it on)."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "add_param_group" and any(
                    isinstance(part, ast.Name) and part.id == name for part in ast.walk(node)):
            return True
    return False


def _a_leaf(scope, name: str, seq: int) -> bool:
    """``name`` (read at ``seq``) is a leaf whose `.grad` backward() fills: made to
    require grad here (`x.requires_grad = True`, `torch.zeros(..., requires_grad=True)`),
    a parameter loop variable, or an argument not re-bound before the read (the
    caller's tensor, whose `.grad` the function reads: it expects a leaf)."""
    if name in scope.grad_leaves or name in scope.parameter_vars:
        return True
    entry = scope.binding(name, seq)
    return name in scope.parameters and (entry is None or entry[1] is None)


def _loops_around(tree, node) -> list:
    """The `for`/`while` statements of ``tree`` whose bodies hold ``node``, the
    innermost first (the walk's open loops, in the same order)."""
    around = [candidate for candidate in ast.walk(tree)
              if isinstance(candidate, (ast.For, ast.AsyncFor, ast.While))
              and candidate.body[0].lineno <= node.lineno <= (candidate.end_lineno or 0)]
    return sorted(around, key=lambda loop: (loop.lineno, loop.col_offset), reverse=True)


def _root_name(target) -> str | None:
    """`x`, `x.data`, `x[mask]`, `x.data[mask]`: the tensor written is `x`."""
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        if isinstance(target, ast.Attribute) and target.attr != "data":
            return None
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _writes_in_place(loop, name: str) -> bool:
    """The loop writes tensor ``name`` itself: `x.data = ...`, `x[...] = ...`,
    `x -= ...`, `x.add_(...)`, `x.data.clamp_(...)`."""
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Subscript, ast.Attribute)) and _root_name(target) == name:
                    return True
        elif isinstance(node, ast.AugAssign) and _root_name(node.target) == name:
            return True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr.endswith("_") and not node.func.attr.startswith("_") and \
                node.func.attr != "requires_grad_" and _root_name(node.func.value) == name:
            return True
    return False


def _clears_a_gradient(loop, ignored=frozenset()) -> bool:
    """Anything in the loop that may clear a gradient: a write to a `.grad`
    (`x.grad = None`, `x.grad[:] = 0`, `x.grad *= 0`, `x.grad.mul_(0)`), a
    `zero_grad()` (other than the calls in ``ignored``, ids of call nodes that
    cannot clear the tensor checked), or a call of a helper named for clearing
    gradients (`reset_grad()`, `zero_grads(params)`)."""
    for node in ast.walk(loop):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign) else ()
        for target in targets:
            if any(isinstance(part, ast.Attribute) and part.attr == "grad" for part in ast.walk(target)):
                return True
        if isinstance(node, ast.Call):
            func = node.func
            called = N.last_name(func)
            if called == "zero_grad" and id(node) in ignored:
                continue
            if called == "zero_grad" or ("grad" in called and any(
                    word in called for word in ("zero", "clear", "reset"))):
                return True  # `opt.zero_grad()`, `self.reset_grad()`, `zero_grads(params)`
            if isinstance(func, ast.Attribute) and called.endswith("_") and any(
                    isinstance(part, ast.Attribute) and part.attr == "grad" for part in ast.walk(func.value)):
                return True
    return False


def _note_windows_and_updates(checker, scope, backwards) -> None:
    """Candidates for check_file, from the walk's facts (the tree is read again only
    for them): a step under a branch inside a loop whose optimizer the loop clears
    outside that branch (an accumulation window, if the branch tests a remainder);
    a step outside any loop or branch after such a backward (an update function,
    if a loop of the file calls it and the file clears nothing)."""
    for seq, node, optimizer in _steps(scope):
        loops = [(a, b) for a, b in scope.finished_loops if a < seq < b]
        branch = [(a, m, e) for a, m, e in scope.branches if a <= seq < m]
        if loops and branch:
            start, end = max(loops)
            b_start, _, b_end = max(branch)
            if start < b_start and any(start < z < end and not b_start <= z < b_end and text == optimizer
                                       for z, text in scope.zero_grad_receivers):
                checker.notes["ADL018 window"].append(node)
        elif branch and not loops and scope.function is not None and any(
                not any(a <= z < e for a, _, e in scope.branches) and text == optimizer
                for z, text in scope.zero_grad_receivers):
            checker.notes["ADL018 counted window"].append(scope.function)
        elif not loops and not branch and any(b < seq and not any(a <= b < e for a, _, e in scope.branches)
                                              for b in backwards):
            bases = scope.class_bases + (("<unnamed>",) if scope.unnamed_bases else ())
            checker.notes["ADL018 update"].append((scope.name, scope.owner_class, bases, node))


def check_file(checker) -> None:
    """Accumulation windows cleared on every iteration, and update functions of a
    file that clears nothing, called from a loop: only where the walk noted one."""
    windows, updates = checker.notes["ADL018 window"], checker.notes["ADL018 update"]
    if checker.notes["ADL018 clearing backward"]:
        _cleared_by_each_call_before_a_later_step(checker, checker.notes["ADL018 clearing backward"])
    for function in {id(f): f for f in checker.notes["ADL018 counted window"]}.values():
        _window_cleared_every_iteration(checker, function.body, counted=True,
                                        counters=_loop_counter_parameters(checker, function))
    if not windows and not updates:
        return
    loops = [n for n in ast.walk(checker.tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    if windows:
        noted = {id(node) for node in windows}
        for loop in loops:
            if any(id(c) in noted for c in _calls_in(loop.body)):
                _window_cleared_every_iteration(checker, loop.body)
    if updates:
        file_clears = bool(checker.training.zero_grad_functions or checker.scope.zero_grads
                           or _CLEARS_BY_HAND.search(checker.source))
        _updates_never_cleared(checker, updates, loops, file_clears)


def _note_clearing_backward(checker, scope, backwards) -> None:
    """A function that clears an optimizer and then backpropagates, both outside any
    branch or loop of its own, and steps nothing: a candidate for
    ``_cleared_by_each_call_before_a_later_step``."""
    def plain(seq):
        return not any(a <= seq < e for a, _, e in scope.branches) and \
            not any(a < seq < b for a, b in scope.finished_loops)
    if any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Load)
           for n in ast.walk(scope.function)):
        return  # it reads the gradients itself (a per-sample norm, a Fisher term): each call uses its own
    for seq, optimizer in scope.zero_grad_receivers:
        if plain(seq) and any(b > seq and plain(b) for b in backwards):
            checker.notes["ADL018 clearing backward"].append((scope.function, scope.zero_grad_calls[seq], optimizer))
            return


def _cleared_by_each_call_before_a_later_step(checker, noted) -> None:
    """`def forward_backward(self, batch): self.optimizer.zero_grad(); ...;
    loss.backward()` called on every iteration of a loop that steps nothing, and the
    optimizer stepped after the loop (`trainer.optim_step()`, a method that runs
    `self.optimizer.step()`; torchtitan's RL trainer, r428): each call clears what the
    calls before it accumulated, so the step applies the last call's gradient only.
    ``noted``: the functions that clear an optimizer at the top of their own body and
    backpropagate after it without stepping (``_note_clearing_backward``)."""
    by_name = {}
    for function, clear, optimizer in noted:
        by_name.setdefault(function.name, []).append((function, clear, optimizer))
    steppers = {}
    for node in ast.walk(checker.tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for call in _calls_in(node.body):
                stepped = _stepped_optimizer(checker, call)
                if stepped is not None:
                    steppers.setdefault(node.name, set()).add(stepped)
    for block_owner in ast.walk(checker.tree):
        for field in ("body", "orelse"):
            block = getattr(block_owner, field, None)
            if not isinstance(block, list):
                continue
            for index, loop in enumerate(block):
                if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                    continue
                inside = _calls_in(loop.body)
                if any(_stepped_optimizer(checker, c) or isinstance(c.func, ast.Attribute) and (
                        c.func.attr == "zero_grad" or c.func.attr in steppers) or
                        isinstance(c.func, ast.Name) and c.func.id in steppers for c in inside):
                    continue  # the loop steps (itself or through a function that steps) or clears
                after = _calls_in(block[index + 1:])
                for call in inside:
                    name = call.func.attr if isinstance(call.func, ast.Attribute) else \
                        call.func.id if isinstance(call.func, ast.Name) else None
                    found = by_name.get(name, [])
                    if len(found) != 1 or sum(1 for n in ast.walk(checker.tree) if isinstance(
                            n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name) != 1:
                        continue  # one definition of that name in the file: the one called
                    function, clear, optimizer = found[0]
                    later = next((c for c in after if _stepped_optimizer(checker, c) == optimizer or (
                        isinstance(c.func, (ast.Attribute, ast.Name)) and optimizer in steppers.get(
                            c.func.attr if isinstance(c.func, ast.Attribute) else c.func.id, ()))), None)
                    if later is None:
                        continue
                    checker.report(
                        "ADL018", clear,
                        f"`{optimizer}.zero_grad()` runs on every call of `{name}`, which the loop on line "
                        f"{loop.lineno} calls on every iteration, but `{optimizer}` steps only after the loop "
                        f"(line {later.lineno}): each call clears the gradients the calls before it accumulated, "
                        f"so the step uses only the last call's backward pass; clear once before the loop, or "
                        f"after the step",
                        related=[(call.lineno, checker.col(call.lineno, call.col_offset), 0, "called on every iteration"),
                                 (later.lineno, checker.col(later.lineno, later.col_offset), 0, "the step")])
                    return


def _updates_never_cleared(checker, updates, loops, file_clears: bool) -> None:
    """`def train_step(self, batch): ...; loss.backward(); self.optimizer.step()`
    called from a loop of the file (torchforge's RL trainer): every step adds the
    earlier batches' gradients to its own.  Only for a class deriving from nothing
    of the project (`object`, a torch class) or from classes of this file that
    derive from nothing else (`class CustomModel(Model)`, `class Model(nn.Module)`
    above it): a base class elsewhere may clear.  In a file that clears somewhere
    (``file_clears``), only where that clearing cannot run between the calls: the
    loop clears nothing and calls no function of the file that clears, and no
    method of the class or of its bases clears (a check of the results at the end
    of the file, clearing a model of its own, does not count)."""
    called_in_loops = {}
    for loop in loops:
        for call in _calls_in(loop.body):
            if isinstance(call.func, ast.Attribute):
                called_in_loops.setdefault(call.func.attr, loop)
    classes = {node.name: node for node in checker.tree.body if isinstance(node, ast.ClassDef)}
    clearing = checker.training.zero_grad_functions
    for name, owner, bases, step in updates:
        loop = called_in_loops.get(name)
        if owner is None or loop is None:
            continue
        lineage = _project_lineage(checker, classes, owner, bases)
        if lineage is None:
            continue  # a base class of another file (or unknown) may clear
        if file_clears and (_clears_a_gradient(loop) or any(
                isinstance(f, ast.FunctionDef) and f.name in clearing or
                _CLEARS_BY_HAND.search(checker.text(f)) for c in lineage for f in classes[c].body) or any(
                (c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", None)) in clearing
                for c in _calls_in(loop.body))):
            continue
        where = f"that loop or in `{owner}`" if file_clears else "this file"
        checker.report(
            "ADL018", step,
            f"`{checker.text(step.func)}()` in `{name}`, which the loop on line {loop.lineno} runs on every "
            f"iteration, but nothing in {where} clears the gradients (`zero_grad()`): backward() adds into "
            f"`.grad`, so each step uses the sum of all past gradients",
            related=[(loop.lineno, checker.col(loop.lineno, loop.col_offset), 0, "the loop that calls it")])


def _window_cleared_every_iteration(checker, body, counted=False, counters=frozenset()) -> None:
    """`loss.backward(); if (i + 1) % k == 0: optimizer.step(); optimizer.zero_grad()`:
    the clear outside the window's `if` runs on every iteration (PreDiff's VAE
    script), so the window never sums more than one backward pass.  ``counted``: the
    body of a method run once per micro-batch, whose window tests a counter of the
    object that the method itself increments (`self.n += 1; if self.n % k == 0:`,
    ALF's `update_with_gradient`): the increment shows it runs again and again; or
    a parameter of the method (in ``counters``) to which a loop of the file passes
    its own counter (`for step, batch in enumerate(loader): self._train_step(batch,
    step)`, starVLA's trainer): the loop runs it with each value."""
    windows = [stmt for stmt in body if isinstance(stmt, ast.If) and _remainder_test(stmt.test)]
    outside = [stmt for stmt in body if not any(stmt is w for w in windows)]
    if counted:
        incremented = {checker.text(stmt.target) for stmt in outside if isinstance(stmt, ast.AugAssign)
                       and isinstance(stmt.op, ast.Add) and self_attribute(stmt.target)}
        windows = [w for w in windows if any(self_attribute(n) and checker.text(n) in incremented
                                             or isinstance(n, ast.Name) and n.id in counters
                                             for n in ast.walk(w.test))]
    if not windows:
        return
    outside_calls = [c for c in _calls_in(outside)]
    if not any(isinstance(c.func, ast.Attribute) and c.func.attr == "backward" for c in outside_calls):
        return
    for window in windows:
        stepped = {_stepped_optimizer(checker, c) for c in _calls_in(window.body)} - {None}
        if _calls_in(window.orelse) and any(_stepped_optimizer(checker, c) for c in _calls_in(window.orelse)):
            continue
        for optimizer in stepped:
            if any(_stepped_optimizer(checker, c) == optimizer for c in outside_calls):
                continue  # also stepped on every iteration: no window
            clear = next((stmt.value for stmt in outside if isinstance(stmt, ast.Expr)
                          and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute)
                          and stmt.value.func.attr == "zero_grad" and not stmt.value.args
                          and checker.text(stmt.value.func.value) == optimizer), None)
            if clear is None:
                continue
            each = "call of this method" if counted else "iteration"
            checker.report(
                "ADL018", clear,
                f"`{optimizer}.zero_grad()` runs on every {each}, but `{optimizer}` steps only when "
                f"`{checker.text(window.test)}` (line {window.lineno}): the gradients of the other "
                f"{each.split()[0]}s are cleared before any step reads them, so each step uses only the last "
                f"backward pass's gradient; clear after the step, inside the `if`",
                related=[(window.lineno, checker.col(window.lineno, window.col_offset), 0,
                          "the accumulation window")])


def _loop_counter_parameters(checker, function) -> set:
    """The parameters of ``function`` to which a loop of the file passes its counter
    on every iteration: `for step, batch in enumerate(loader): self.f(batch, step)`
    or `for i in range(n): f(x, i)`, positionally or by keyword.  A parameter that
    the function re-binds is not the loop's counter there."""
    params = [a.arg for a in function.args.posonlyargs + function.args.args]
    method = bool(params) and params[0] == "self"
    if method:
        params = params[1:]
    rebound = {t.id for node in ast.walk(function) if isinstance(node, (ast.Assign, ast.AugAssign))
               for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)}
    found = set()
    for loop in ast.walk(checker.tree):
        if not isinstance(loop, (ast.For, ast.AsyncFor)) or not isinstance(loop.iter, ast.Call) \
                or not isinstance(loop.iter.func, ast.Name):
            continue
        if loop.iter.func.id == "enumerate" and isinstance(loop.target, ast.Tuple) and loop.target.elts \
                and isinstance(loop.target.elts[0], ast.Name):
            counter = loop.target.elts[0].id
        elif loop.iter.func.id == "range" and isinstance(loop.target, ast.Name):
            counter = loop.target.id
        else:
            continue
        for call in _calls_in(loop.body):
            func = call.func
            if method and not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                               and func.value.id == "self" and func.attr == function.name):
                continue
            if not method and not (isinstance(func, ast.Name) and func.id == function.name):
                continue
            for position, arg in enumerate(call.args):
                if isinstance(arg, ast.Name) and arg.id == counter and position < len(params):
                    found.add(params[position])
            for keyword in call.keywords:
                if isinstance(keyword.value, ast.Name) and keyword.value.id == counter and keyword.arg in params:
                    found.add(keyword.arg)
    return found - rebound


def _remainder_test(test) -> bool:
    """`(i + 1) % k == 0`, `step % accumulate == 0`, `not (i + 1) % k`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return isinstance(test.operand, ast.BinOp) and isinstance(test.operand.op, ast.Mod)
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) and \
        any(isinstance(side, ast.BinOp) and isinstance(side.op, ast.Mod) for side in (test.left, *test.comparators))


def _element_of_the_loop(checker, node) -> bool:
    """`optimizers[i].step()` inside `for i in range(n):` (the innermost loop binds the
    index): each iteration steps another element, so no optimizer steps twice in the
    loop without a clear (deep mutual learning's students, each with its optimizer)."""
    element = N.indexed_element(node.func.value, checker.text) if isinstance(node.func, ast.Attribute) else None
    if element is None:
        return False
    loops = _loops_around(checker.tree, node)
    if not loops or not isinstance(loops[0], (ast.For, ast.AsyncFor)):
        return False
    bound = {n.id for n in ast.walk(loops[0].target) if isinstance(n, ast.Name)}
    return element[1] in bound


def _project_instance_method_clears(checker, scope, node) -> bool:
    """The innermost loop around the step calls `obj.m()`, where every binding of the
    name `obj` in the function builds it from one class imported from a file of the
    same project (`obj = Wrapper(model, config)`), and that class (or a project base
    of it) defines `m` clearing gradients there (`def reset_grads(self): for part in
    self.parts: part.zero_grad()`).  A name bound otherwise too, a class not found
    in the project or a method that does not clear is no evidence (set AS, pyvene's
    tutorial: `intervenable.set_zero_grad()` after each step)."""
    function = scope.function
    loops = _loops_around(function if function is not None else checker.tree, node)
    if not loops:
        return False
    for call in ast.walk(loops[0]):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)):
            continue
        qualname = _constructing_class(checker, function, call.func.value.id)
        if qualname and inherited_method_clears(qualname, call.func.attr, checker.filename):
            return True
    return False


def _called_model_clears_itself(checker, scope, node) -> bool:
    """The innermost loop around the step `opt.step()` calls `model(...)`, where every
    binding of `model` in the function builds it from one project class (imported by
    name or through `from <module> import *`) whose `forward` (its own, or a project
    base's) calls `self.zero_grad()`, the class defining no `__call__` of its own,
    and every binding of `opt` is an optimizer built over `model.parameters()` alone:
    each call of the model clears the very gradients that the step reads, before the
    loss it returns is backpropagated (set AX, lstm-crf-pytorch's `rnn_crf.forward`).
    An optimizer over other parameters too, a model handed in or built otherwise, or a
    `forward` that clears another object is no evidence."""
    function = scope.function
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    loops = _loops_around(function, node) if function is not None else []
    if not loops or not isinstance(receiver, ast.Name):
        return False
    for call in ast.walk(loops[0]):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            continue
        qualname = _constructing_class(checker, function, call.func.id)
        if qualname and _forward_clears_itself(qualname, checker.filename) \
                and _optimizer_over_parameters_of(function, receiver.id, call.func.id):
            return True
    return False


def _forward_clears_itself(qualname: str, filename: str) -> bool:
    """The project class ``qualname`` defines no `__call__` and its `forward` (or the
    first project base's that defines one) calls `self.zero_grad()` in its own body."""
    found = project_class(qualname, filename)
    seen = set()
    while found is not None and (found[0], found[1].name) not in seen:
        path, cls = found
        seen.add((path, cls.name))
        methods = {b.name: b for b in cls.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if "__call__" in methods:
            return False
        if "forward" in methods:
            return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "zero_grad"
                       and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
                       for n in own_nodes(methods["forward"].body))
        tree = parsed_file(path)
        bases = [_dotted_base(b, tree, path) for b in cls.bases] if tree is not None else []
        found = next((project_class(b, path) for b in bases if b and "." in b and project_class(b, path)), None)
    return False


def _optimizer_over_parameters_of(function, optimizer: str, model: str) -> bool:
    """Every binding of ``optimizer`` in ``function`` is a call whose only positional
    argument is `<model>.parameters()` (`torch.optim.Adam(model.parameters(), lr=...)`)."""
    bindings = [stmt for stmt in ast.walk(function) if isinstance(stmt, ast.Assign)
                and any(isinstance(n, ast.Name) and n.id == optimizer for t in stmt.targets for n in ast.walk(t))]
    if not bindings:
        return False
    for stmt in bindings:
        value = stmt.value
        if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and isinstance(value, ast.Call)
                and len(value.args) == 1 and not any(k.arg == "params" for k in value.keywords)):
            return False
        arg = value.args[0]
        if not (isinstance(arg, ast.Call) and not arg.args and not arg.keywords
                and isinstance(arg.func, ast.Attribute) and arg.func.attr == "parameters"
                and isinstance(arg.func.value, ast.Name) and arg.func.value.id == model):
            return False
    return True


def _constructing_class(checker, function, name: str) -> str | None:
    """The dotted name (as the file imports it) of the one project class whose call
    every binding of ``name`` in ``function`` is; None otherwise."""
    if function is None:
        return None
    classes = set()
    for stmt in ast.walk(function):
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.AugAssign, ast.AnnAssign,
                             ast.NamedExpr)) or isinstance(stmt, ast.arguments):
            bound = [stmt.target] if hasattr(stmt, "target") else \
                [i.optional_vars for i in getattr(stmt, "items", ()) if i.optional_vars is not None]
            if isinstance(stmt, ast.arguments):
                bound = [a for a in stmt.posonlyargs + stmt.args + stmt.kwonlyargs]
                if any(a.arg == name for a in bound):
                    return None
                continue
            if any(isinstance(n, ast.Name) and n.id == name for b in bound for n in ast.walk(b)):
                return None
        elif isinstance(stmt, ast.Assign):
            if not any(isinstance(n, ast.Name) and n.id == name for t in stmt.targets for n in ast.walk(t)):
                continue
            if not (len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call)):
                return None
            qualname = checker.qualname(stmt.value.func)
            if (not qualname or "." not in qualname) and isinstance(stmt.value.func, ast.Name):
                starred = star_imported_project_class(stmt.value.func.id, checker.tree, checker.filename)
                qualname = starred[0] if starred else None  # `from rnn_crf import *`
            if not qualname or "." not in qualname or project_class(qualname, checker.filename) is None:
                return None
            classes.add(qualname)
    return classes.pop() if len(classes) == 1 else None


# torch's abstract base, whose own `step()` only raises NotImplementedError
_ABSTRACT_OPTIMIZERS = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})


def _steps_without_reading_gradients(checker, scope, optimizer: str) -> bool:
    """The stepped optimizer is, on every binding of its name in the function, built
    from one class of another project file (`opt = KFAC(net)`, `from util.kfac import
    KFAC`) whose `step()` never reads a gradient: the class and its project bases
    derive from torch's abstract `Optimizer` alone, and none of their code (nor a
    function of their files that it calls by name) reads a `.grad` attribute or calls
    any `step()` (a wrapper's `self.base.step()`, `super().step()`).  What `backward()`
    piles up in `.grad` is then read by nothing the loop runs (set AU,
    last_layer_laplace's K-FAC estimate, whose `step()` only averages the layer
    inputs and output gradients its hooks saved).  Any base outside the project
    but torch's `Optimizer`, or a class not found, is no evidence."""
    if not optimizer.isidentifier():
        return False
    qualname = _constructing_class(checker, scope.function if scope.function is not None else checker.tree,
                                   optimizer)
    found = project_class(qualname, checker.filename) if qualname else None
    if found is None:
        return False
    seen = set()
    while True:
        path, cls = found
        if (path, cls.name) in seen:
            return False
        seen.add((path, cls.name))
        tree = parsed_file(path)
        if tree is None or _reads_gradients(cls, tree):
            return False
        if len(cls.bases) != 1 or cls.keywords:
            return False
        base = _dotted_base(cls.bases[0], tree, path)
        if base in _ABSTRACT_OPTIMIZERS:
            return True
        found = project_class(base, path) if base and "." in base else None
        if found is None:
            return False


def _reads_gradients(cls: ast.ClassDef, tree: ast.Module) -> bool:
    """Whether the code of ``cls``, or a function of its file ``tree`` that it calls
    by name (directly or through others), reads `.grad` (also `getattr(p, "grad")`)
    or calls a `step()`."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    todo, walked = [cls], set()
    while todo:
        code = todo.pop()
        for node in ast.walk(code):
            if isinstance(node, ast.Attribute) and node.attr in ("grad", "step"):
                return True
            if isinstance(node, ast.Constant) and node.value == "grad":
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in functions and node.func.id not in walked:
                walked.add(node.func.id)
                todo.append(functions[node.func.id])
    return False


def _dotted_base(base, tree: ast.Module, path: str) -> str | None:
    """A base class expression of a class in ``tree`` (the file ``path``) as the full
    dotted name its imports give it (`Optimizer` of `from torch.optim.optimizer import
    Optimizer`, `optim.Optimizer` of `from torch import optim`); a same-file class as
    `<module>.Name`; None for anything else."""
    parts = []
    while isinstance(base, ast.Attribute):
        parts.insert(0, base.attr)
        base = base.value
    if not isinstance(base, ast.Name):
        return None
    head = base.id
    aliases = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
    if head in aliases:
        return ".".join([aliases[head], *parts])
    if not parts and any(isinstance(n, ast.ClassDef) and n.name == head for n in tree.body):
        return f"{os.path.splitext(os.path.basename(path))[0]}.{head}"
    return None


def _stepped_optimizer(checker, call) -> str | None:
    """The text of the optimizer `call` steps: `optimizer.step()`, `scaler.step(optimizer)`."""
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr != "step" or \
            not isinstance(func.value, (ast.Name, ast.Attribute)):
        return None
    name = (func.value.id if isinstance(func.value, ast.Name) else func.value.attr).lower()
    if "opt" in name and "sched" not in name and not call.args:
        return checker.text(func.value)
    if "scaler" in name and len(call.args) == 1:
        return checker.text(call.args[0])
    return None


def _project_lineage(checker, classes: dict, owner: str, bases: tuple):
    """``owner`` and its bases of this file (top-level classes, one of each name), when
    every other base is `object` or a torch class; else None.  ``bases``: the
    owner's bases as the walk named them (classes of this file are unnamed there)."""
    if all(b.startswith("torch.") or b == "object" for b in bases):
        return [owner] if owner in classes else None
    lineage, todo = [], [owner]
    while todo:
        name = todo.pop()
        node = classes.get(name)
        if node is None or sum(1 for n in ast.walk(checker.tree) if isinstance(n, ast.ClassDef)
                               and n.name == name) != 1:
            return None
        if name in lineage:
            continue
        lineage.append(name)
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes:
                todo.append(base.id)
                continue
            qualname = checker.qualname(base) or ""
            if not (qualname.startswith("torch.") or qualname == "object"):
                return None
    return lineage


def _calls_in(stmts) -> list:
    """The calls of these statements, not entering function or class definitions."""
    out, todo = [], list(stmts)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out
