"""AD214: an optimizer keeps stepping after backward() calls, and none of its parameters has ever
had a gradient: every loss so far was computed from something else than the tensors it holds (a
copy of them made with detach()/clone(), as a functional inner loop with `copy_initial_weights=True`
starts from, or another model), so every step() is skipped for each parameter (no error).

Read just before step(): a backward() ran since the optimizer's previous step, some parameter
requires grad (an optimizer whose parameters are all frozen is AD215's), none has a gradient, and
this optimizer has never stepped with a gradient (`trained`, kept by the doctor and filled by
frozen_step.py). Frozen parameters among trainable ones are allowed: a LoRA/DoRA fine-tune builds
its optimizer over `model.parameters()` after freezing the pretrained layers. Made at the second
such step (the causes are read there, from the live frames), once per optimizer, and reported when
the run ends (`pending()`), only if none of the optimizer's parameters got a gradient at any later
step: a warm-up that trains the head alone for a few epochs (the backbone's forward under
`torch.no_grad()` or `.detach()` while `epoch < WARMUP`) leaves the first steps empty on purpose.
Reported, never raised (strict included): nothing is known to be wrong before the run's end.
"""

from __future__ import annotations

import ast
import weakref

from autograd_doctor.analysis import empty_step_causes
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment, statement_at, statement_location
from autograd_doctor.recording import leaf_sites
from autograd_doctor.recording.identity import IdentityMap, IdentitySet

# Steps of an optimizer that has never trained, each after a backward(), before it is reported.
STEPS_BEFORE_REPORT = 2


class GradientlessSteps:
    """Counts, per optimizer, the steps taken after a backward() with no gradient on any parameter."""

    def __init__(self):
        # By identity: an optimizer made anew each epoch takes a freed one's id.
        self._counts = IdentityMap()
        self._reported = IdentitySet()
        # Optimizers whose parameters a detach() made under a condition cut off: not reported.
        self._scheduled = IdentitySet()
        # Per optimizer, the leaf-creation mark at its previous step: the leaves made since then are
        # the ones this step's backward() could have reached.
        self._leaf_marks = IdentityMap()
        # id of the optimizer -> (a weak reference to it, its diagnosis): made, not yet reported.
        self._pending: dict[int, tuple] = {}

    def cover(self, optimizers) -> None:
        """Optimizers whose empty steps another diagnosis has explained (AD211: the loss's cut took
        their model off the graph): not reported again here."""
        for optimizer in optimizers:
            self._reported.add(optimizer)
            self._pending.pop(id(optimizer), None)

    def pending(self) -> list[Diagnosis]:
        """At the run's end: the diagnoses made for optimizers that never got a gradient since."""
        found = []
        for reference, diagnosis in self._pending.values():
            optimizer = reference() if reference is not None else None
            if optimizer is not None and _has_gradient(optimizer):
                continue  # trained after its last step (a gradient left for a step that never came)
            found.append(diagnosis)
        self._pending.clear()
        return found

    def at_step(self, optimizer, stack, recorder, trained: IdentitySet) -> Diagnosis | None:
        """Always None: a diagnosis made here waits for the run's end (pending())."""
        leaf_mark = self._leaf_marks.get(optimizer)
        self._leaf_marks[optimizer] = leaf_sites.creation_count()
        entry = self._pending.get(id(optimizer))
        if entry is not None and (entry[0] is None or entry[0]() is optimizer) \
                and (optimizer in trained or _has_gradient(optimizer)):
            del self._pending[id(optimizer)]  # the steps were a warm-up: it trains now
            return None
        if optimizer in trained or optimizer in self._reported or not stack:
            return None
        parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())]
        trainable = [p for p in parameters if p.requires_grad]
        if not trainable or any(p.grad is not None for p in parameters):
            return None
        since = recorder.gradient_clips.last_step.get(optimizer, 0)
        backwards = [call for call in recorder.backward_calls if call.seq > since and call.site is not None]
        if not backwards:
            return None
        steps = self._counts[optimizer] = self._counts.get(optimizer, 0) + 1
        if steps < STEPS_BEFORE_REPORT or optimizer in self._scheduled:
            return None
        self._reported.add(optimizer)
        diagnosis = _diagnosis(optimizer, trainable, backwards[-1].site, stack[0], steps,
                               _detached_leaf_site({id(p) for p in parameters}, leaf_mark),
                               frozen=len(parameters) - len(trainable))
        if diagnosis.primary.role == "step" and backwards[-1].newest_node is None:
            # The last backward() started from a leaf: a loss rebuilt as a new tensor that requires grad.
            rebuilt = _rebuilt_loss_site(stack[0])
            if rebuilt is not None:
                _name_the_cause(diagnosis, *_rebuilt_loss_cause(*rebuilt))
                _name_the_upstream_cut(diagnosis, stack[0], *rebuilt)
            else:
                # The loss came back from a loss function or module of the user's that rewrapped it
                # before returning it (`return Variable(loss, requires_grad=True)`), set 49.
                wraps = _rewrapped_in_callee(stack[0])
                if wraps:
                    _name_the_cause(diagnosis, *_rewrapped_in_callee_cause(wraps))
        if diagnosis.primary.role == "step":  # no cut found by the leaves: look in the loop around step()
            cause = (empty_step_causes.data_assignment_cut(parameters, stack)
                     or empty_step_causes.other_model_trained(optimizer, parameters, stack))
            if cause is not None:
                _name_the_cause(diagnosis, *cause)
        if diagnosis.primary.role == "step":  # still nothing: a detach() of the user's that cut them off
            cut = _detach_copy_cut({id(p) for p in trainable})
            if cut is not None and _taken_on_some_runs_only(cut):
                # A detach() made only where a condition holds (a warm-up that trains the head alone,
                # a probe switched by an argument): the empty steps so far may be the schedule, and
                # the run has not yet reached the iterations that take the other branch. Silent for
                # this optimizer: nothing is known to be wrong.
                self._scheduled.add(optimizer)
                self._reported.discard(optimizer)
                return None
            cause = _detach_copy_cause(cut, optimizer) if cut is not None else None
            if cause is not None:
                _name_the_cause(diagnosis, *cause)
        try:
            reference = weakref.ref(optimizer)
        except TypeError:
            reference = None
        self._pending[id(optimizer)] = (reference, diagnosis)
        return None


def _has_gradient(optimizer) -> bool:
    return any(p.grad is not None for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ()))


def _detach_copy_cut(trainable_ids: set[int]):
    """The one GraphCut of a user's `x.detach()` line whose graph reached these trainable
    parameters (recording/switches.py walks the graph at the first calls of each line); None when
    no line or more than one did."""
    from autograd_doctor.recording import switches

    found = []
    for cut in switches.detach_copy_cuts():
        reached = [ref() for ref in cut.leaves]
        if any(leaf is not None and id(leaf) in trainable_ids for leaf in reached):
            found.append(cut)
    return found[0] if len(found) == 1 else None


_SCOPES = (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def _taken_on_some_runs_only(cut) -> bool:
    """Whether the detach() line of `cut` runs only where a condition holds: its statement lies in
    an `if` (or a `match` case) inside the innermost loop or function around it, follows there an
    `if` that can leave the block (return, break, continue, raise), or its `detach()` call lies in
    one branch of a conditional expression. Where the innermost scope is a function, the same is
    asked of the user's call of that function in its caller (as recorded at the line's first
    calls), and so on out to the first loop: a helper whose `detach()` is unconditional but that
    the loop calls only in a warm-up (`frozen(x) if epoch < WARMUP else enc(x)`). A
    `__name__ == "__main__"` guard is not such a condition. Unknown source: False (the line is
    named as before)."""
    site = cut.stack[0]
    verdict = _conditional_in_scope(site, detach=True)
    if verdict is not _FUNCTION:
        return verdict is True
    for callers in getattr(cut, "callers", ()):
        for caller in callers:
            verdict = _conditional_in_scope(caller, detach=False)
            if verdict is True:
                return True
            if verdict is not _FUNCTION:
                break
    return False


_FUNCTION = "function"  # the innermost scope met is a function: ask its caller


def _conditional_in_scope(site, detach: bool):
    """True where the statement at `site` runs only under a condition inside its innermost loop or
    function (see `_taken_on_some_runs_only`); else _FUNCTION where that scope is a function (or
    the module, without a loop), False where it is a loop or the source is unknown. `detach`:
    look for the `detach()` call in a conditional expression's branch; else for the call made at
    `site` (its columns)."""
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(site.filename)
    statement = statement_at(site.filename, site.lineno)
    if tree is None or statement is None:
        return False
    columns = None if detach else site.columns()
    for node in ast.walk(statement):
        if isinstance(node, ast.IfExp):
            for branch in (node.body, node.orelse):
                if detach:
                    if any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                           and call.func.attr == "detach" for call in ast.walk(branch)):
                        return True
                elif columns is not None and _spans(branch, columns):
                    return True
    path = (_path_to(tree, statement) or []) + [statement]
    for index in range(len(path) - 1, 0, -1):
        ancestor, below = path[index - 1], path[index]
        if isinstance(ancestor, getattr(ast, "match_case", ())) or \
                (isinstance(ancestor, ast.If) and not _main_guard(ancestor.test)):
            return True
        # An earlier `if` of the same block that can leave it (`if step >= warm: return z` before
        # `return z.detach()`): the line runs only where that condition does not hold.
        for field in ("body", "orelse", "finalbody"):
            block = getattr(ancestor, field, None)
            if isinstance(block, list) and below in block:
                if any(isinstance(earlier, ast.If) and not _main_guard(earlier.test) and _leaves_block(earlier)
                       for earlier in block[:block.index(below)]):
                    return True
        if isinstance(ancestor, _SCOPES):
            return _FUNCTION if isinstance(ancestor, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else False
    return _FUNCTION


def _spans(node: ast.AST, columns) -> bool:
    """Whether the source range of `node` holds the call at `columns` ((line, end_line, col,
    end_col), 0-based columns)."""
    line, end_line, col, end_col = columns
    if getattr(node, "lineno", None) is None or node.end_lineno is None:
        return False
    return (node.lineno, node.col_offset) <= (line, col) and (end_line, end_col) <= (node.end_lineno, node.end_col_offset)


def _leaves_block(statement: ast.stmt) -> bool:
    """Whether `statement` holds a return, break, continue or raise (outside nested functions)."""
    todo = [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            return True
        todo.extend(child for child in ast.iter_child_nodes(node)
                    if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)))
    return False


def _path_to(tree: ast.AST, target: ast.AST) -> list | None:
    """The nodes from `tree` down to `target` (neither included), or None."""
    stack = [(tree, [])]
    while stack:
        node, path = stack.pop()
        for child in ast.iter_child_nodes(node):
            if child is target:
                return path + ([node] if node is not tree else [])
            if not isinstance(child, ast.expr):  # a statement never lies inside an expression
                stack.append((child, path + ([node] if node is not tree else [])))
    return None


def _main_guard(test: ast.AST) -> bool:
    return isinstance(test, ast.Compare) and any(
        isinstance(side, ast.Name) and side.id == "__name__" for side in (test.left, *test.comparators))


def _detach_copy_cause(cut, optimizer):
    """(location, notes, advice) for the one line of the user's that called `x.detach()` on a tensor
    whose graph reached this optimizer's trainable parameters (recording/switches.py walks the graph
    at the first calls of each line). Every loss backpropagated so far missed those parameters, so
    a copy without history stood, at that line, for a value computed from them. Only when exactly
    one such line ran: with two (a value shown or logged, and the one the loss used) which one to
    drop is not known, and the step() stays the primary location. The help is advice: nothing
    raised, so no oracle re-runs the program (dropping it may not be all: a value the same code
    takes from torch.autograd.grad carries a graph only with create_graph=True)."""
    site = cut.stack[0]
    statement = statement_at(site.filename, site.lineno)
    if statement is None:
        return None
    kind = type(optimizer).__name__
    location = statement_location(site.filename, statement, role="cut",
                                  note=f"detach() copies a value computed from the parameters {kind} steps, "
                                       "without its graph")
    calls = f"{cut.calls} call{'s' if cut.calls != 1 else ''}"
    notes = [f"line {site.lineno} called detach() on a tensor whose graph reaches the parameters {kind} steps "
             f"({calls}), the only line of yours that did, and no loss backpropagated since has reached them: "
             "a loss computed from this copy has no path back to them (the copy has no history)"]
    change = Suggestion(f"drop .detach() at line {site.lineno} where the loss must train these parameters (keep a "
                        "detached copy only for values that must not carry gradients); if that code also uses "
                        "torch.autograd.grad, call it with create_graph=True so its result carries a graph too "
                        "(unverified: nothing raised)")
    return location, notes, change


def _detached_leaf_site(parameter_ids: set[int], since: int | None):
    """(site, statement, detach call) of a user's line that made new leaves with
    `x.detach().requires_grad_()`, since the optimizer's previous step (the mark `since`), whose
    leaves now have gradients: the backward() reached them, and stopped there, instead of the
    optimizer's parameters. None when there is no such line."""
    if since is None:
        return None
    for tensor, site in leaf_sites.leaves_with_gradients(since):
        if id(tensor) in parameter_ids:
            continue
        statement = statement_at(site.filename, site.lineno)
        for node in ast.walk(statement) if statement is not None else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "requires_grad_":
                cut = _detach_below(node.func.value)
                if cut is not None:
                    return site, statement, cut
    return None


def _rebuilt_loss_site(step_site):
    """(file, statement, call, whether the wrapped value is a tensor) of the user's statement that bound the loss the last backward()
    before step() ran on, when that loss (a name in the step's frame: `loss.backward()`) is, at run
    time, a leaf that requires grad, and the last assignment to the name before the backward() wraps
    another value with `requires_grad=True` (`loss = Variable(loss, requires_grad=True)`,
    `torch.tensor(loss.item(), requires_grad=True)`). Called only when the last backward() started
    from a leaf. None otherwise."""
    import torch

    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.analysis.source_scope import live_frame
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(step_site.filename)
    frame = live_frame(step_site)
    if tree is None or frame is None:
        return None
    scope = enclosing_function(tree, step_site.lineno) or tree
    backwards = [node for node in ast.walk(scope) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                 and node.func.attr == "backward" and node.lineno < step_site.lineno
                 and isinstance(node.func.value, ast.Name)]
    if not backwards:
        return None
    backward = max(backwards, key=lambda node: (node.lineno, node.col_offset))
    name = backward.func.value.id
    loss = frame.f_locals.get(name, frame.f_globals.get(name))
    if not isinstance(loss, torch.Tensor) or loss.grad_fn is not None or not loss.requires_grad or loss.numel() != 1:
        return None
    assignments = [node for node in ast.walk(scope) if isinstance(node, ast.Assign) and node.lineno < backward.lineno
                   and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
    if not assignments:
        return None
    statement = max(assignments, key=lambda node: node.lineno)
    call = statement.value
    if isinstance(call, ast.Call) and call.args and not isinstance(call.args[0], ast.Constant) \
            and any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
                    for k in call.keywords):
        argument = call.args[0]
        bound = frame.f_locals.get(argument.id, frame.f_globals.get(argument.id)) \
            if isinstance(argument, ast.Name) else None
        return step_site.filename, statement, call, isinstance(bound, torch.Tensor)
    return None


# How deep the loss functions and modules that return the loss are followed (a loss module that
# sums other loss modules' losses), and how many wraps are named at most.
MAX_CALLEE_DEPTH = 3
MAX_REWRAPS = 8


def _requires_grad_wrap(value) -> bool:
    """`Variable(x, requires_grad=True)`, `torch.tensor(x, requires_grad=True)`: a call with a
    non-constant first argument and requires_grad=True among its keywords."""
    return isinstance(value, ast.Call) and bool(value.args) and not isinstance(value.args[0], ast.Constant) \
        and any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in value.keywords)


def called_object(node, values: dict, owner=None):
    """The live object a call's function names: `name`, `name.attr...`, or `self.attr...` with
    `self` the module `owner` (inside a callee, whose frame is gone). None when unknown."""
    if isinstance(node, ast.Name):
        if node.id == "self" and owner is not None:
            return owner
        return values.get(node.id)
    if isinstance(node, ast.Attribute):
        base = called_object(node.value, values, owner)
        if base is None:
            return None
        try:
            return getattr(base, node.attr, None)
        except Exception:
            return None
    return None


def user_callee(target):
    """(function, module instance or None) that calling `target` runs: an nn.Module's forward, a
    bound method's function, a plain function of the user's. None for anything else (torch's own
    functions, builtins, installed libraries)."""
    import inspect

    import torch

    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    owner = None
    if isinstance(target, torch.nn.Module):
        owner, function = target, getattr(type(target), "forward", None)
    elif inspect.ismethod(target):
        owner, function = target.__self__, target.__func__
    elif inspect.isfunction(target):
        function = target
    else:
        return None
    code = getattr(function, "__code__", None)
    if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
        return None
    return function, owner


def _wraps_in(function, owner, depth: int, seen: set) -> list:
    """(file, statement, call) of the `requires_grad=True` wraps that made what `function` returns
    a new leaf: the last assignment, before a `return name`, of the returned name, or the returned
    call itself; then the same in the loss functions and modules it calls (`self.recon_loss(...)`),
    whose wrapped results it combines."""
    from autograd_doctor.diagnosis.source import function_starting_at

    code = function.__code__
    if (code.co_filename, code.co_firstlineno) in seen or depth > MAX_CALLEE_DEPTH:
        return []
    seen.add((code.co_filename, code.co_firstlineno))
    node = function_starting_at(code.co_filename, code.co_firstlineno)
    if node is None:
        return []
    found = []
    for ret in [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]:
        if _requires_grad_wrap(ret.value):
            found.append((code.co_filename, ret, ret.value))
        elif isinstance(ret.value, ast.Name):
            assignments = [a for a in ast.walk(node) if isinstance(a, ast.Assign) and a.lineno < ret.lineno
                           and any(isinstance(t, ast.Name) and t.id == ret.value.id for t in a.targets)]
            if assignments:
                last = max(assignments, key=lambda a: a.lineno)
                if _requires_grad_wrap(last.value):
                    found.append((code.co_filename, last, last.value))
    if not found:
        return []
    globals_ = getattr(function, "__globals__", {})
    for call in [n for n in ast.walk(node) if isinstance(n, ast.Call)]:
        callee = user_callee(called_object(call.func, globals_, owner))
        if callee is not None:
            found += _wraps_in(callee[0], callee[1], depth + 1, seen)
    unique = {}  # the function's own wraps first, then its callees', in the order they are called
    for f, s, c in found:
        unique.setdefault((f, s.lineno), (f, s, c))
    return list(unique.values())[:MAX_REWRAPS]


def _rewrapped_in_callee(step_site) -> list:
    """The wraps (`_wraps_in`) inside the user's loss function or module whose result the last
    backward() before step() ran on: `loss = loss_fn(...)` then `loss.backward()`, where, at run
    time, that loss is a leaf that requires grad. The one in the function called first, then those
    in the loss modules it calls. Empty when there is none."""
    import torch

    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.analysis.source_scope import frame_values, live_frame
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(step_site.filename)
    frame = live_frame(step_site)
    if tree is None or frame is None:
        return []
    scope = enclosing_function(tree, step_site.lineno) or tree
    backwards = [node for node in ast.walk(scope) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                 and node.func.attr == "backward" and node.lineno < step_site.lineno
                 and isinstance(node.func.value, ast.Name)]
    if not backwards:
        return []
    backward = max(backwards, key=lambda node: (node.lineno, node.col_offset))
    name = backward.func.value.id
    values = frame_values(frame)
    loss = values.get(name)
    if not isinstance(loss, torch.Tensor) or loss.grad_fn is not None or not loss.requires_grad or loss.numel() != 1:
        return []
    assignments = [node for node in ast.walk(scope) if isinstance(node, ast.Assign) and node.lineno < backward.lineno
                   and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
    if not assignments:
        return []
    call = max(assignments, key=lambda node: node.lineno).value
    if not isinstance(call, ast.Call):
        return []
    try:
        callee = user_callee(called_object(call.func, values))
        return _wraps_in(callee[0], callee[1], 0, set()) if callee is not None else []
    except Exception:
        return []


def _unwrapped(filename: str, statement: ast.stmt, call: ast.Call) -> str | None:
    """The statement without the wrap: `loss = <its argument>`, `return <its argument>`; `pass`
    where it only rebound a name to itself. None where the argument is a number (`.item()`,
    float(...)): that value has no graph to keep, a change of code is needed upstream."""
    argument = call.args[0]
    text = segment(filename, argument)
    if text is None or any(isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr in
                                                        ("item", "tolist", "numpy") or isinstance(n.func, ast.Name)
                                                        and n.func.id in ("float", "int"))
                           for n in ast.walk(argument)):
        return None
    if isinstance(statement, ast.Return):
        return f"return {text}"
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = segment(filename, statement.targets[0])
        return "pass" if target == text else f"{target} = {text}"
    return None


def _rewrapped_in_callee_cause(wraps: list):
    filename, statement, call = wraps[0]
    function = segment(filename, call.func) or "the call"
    location = statement_location(filename, statement, role="cut",
                                  note=f"{function}(..., requires_grad=True) makes the returned loss a new leaf "
                                       "here: backward() stops at it")
    others = ", ".join(f"line {s.lineno}" for f, s, c in wraps[1:])
    notes = [f"the loss the last backward() ran on was returned by a loss function of yours that rewraps it at line "
             f"{statement.lineno}: requires_grad=True lets backward() run, but the new leaf has no history, so no "
             "parameter gets a gradient and the loss value is right while nothing trains"
             + (f"; the losses it combines are rewrapped the same way ({others}), each cut off too" if others else "")]
    helps = []
    for index, (file, stmt, wrap) in enumerate(wraps):
        replacement = _unwrapped(file, stmt, wrap)
        if replacement is None:
            if index == 0:
                return location, notes, Suggestion(
                    f"compute the loss with torch operations on the model's output instead of wrapping "
                    f"{segment(file, wrap.args[0]) or 'a number'} (a number has no graph)")
            break
        from autograd_doctor.analysis.ungraphed_gradient_terms import NEXT_LINE

        message = ("remove the wrap and return the loss itself, which keeps its graph back to the parameters"
                   if index == 0 else f"{NEXT_LINE} ({codes.GRADIENTLESS_OPTIMIZER_STEPS})")
        helps.append(Suggestion(message, replacement, statement_location(file, stmt)))
    return location, notes, helps


def _rebuilt_loss_cause(filename: str, statement: ast.stmt, call: ast.Call, wraps_tensor: bool):
    wrapped = segment(filename, call.args[0]) or "its argument"
    function = segment(filename, call.func) or "the call"
    location = statement_location(filename, statement, role="cut",
                                  note=f"{function}(..., requires_grad=True) makes the loss a new leaf here: "
                                       "backward() stops at it")
    notes = [f"the last backward() ran on the tensor made at line {statement.lineno}, a new leaf with no history: "
             f"requires_grad=True lets backward() run, but connects it to nothing, so no parameter gets a "
             f"gradient; whatever graph {wrapped} had is left behind. If backward() on {wrapped} itself raises "
             "(\"element 0 of tensors does not require grad\"), it had already lost its graph upstream (.data, "
             "detach(), .item(), a NumPy round trip, or a forward run under torch.no_grad())"]
    if wraps_tensor:
        change = Suggestion(f"remove the wrap and backpropagate {wrapped} itself; if backward() then raises \"element "
                            "0 of tensors does not require grad\", keep the graph where it was cut upstream")
    else:
        change = Suggestion(f"compute the loss with torch operations on the model's output instead of wrapping "
                            f"{wrapped} (a number has no graph): then backward() reaches the parameters")
    return location, notes, change


def _name_the_upstream_cut(diagnosis: Diagnosis, step_site, filename: str, statement: ast.stmt, call: ast.Call,
                           wraps_tensor: bool) -> None:
    """Where the wrapped loss had already lost its graph, when the live values show it: the
    statements before the wrap that computed the wrapped tensor are followed back (as AD301 does for
    a loss without grad_fn, into the user's functions and forwards they call) to the first one whose
    inputs carry gradients and whose result does not. Shown as a related location with a note; the
    help stays advice (the wrap and the cut must go together, two changes in two places)."""
    if not wraps_tensor or not isinstance(call.args[0], ast.Name):
        return
    from autograd_doctor.analysis.gradient_path import _carries_grad, _nested_cut, find_cut
    from autograd_doctor.analysis.source_scope import Scope, frame_values, live_frame
    from autograd_doctor.diagnosis.source import statement_location as located

    frame = live_frame(step_site)
    if frame is None:
        return
    wrapped = call.args[0].id
    scope = Scope(filename, statement.lineno)
    found = scope.latest_assignment(wrapped, statement.lineno) if scope.tree is not None else None
    if found is None:
        return
    computed, value = found
    values = frame_values(frame)
    try:
        # The statement that computed it, when it calls the model itself (`loss = mse(predict(model, x), y)`),
        # else the statements it reads from (`output = model(X)`, then `loss = loss_op(output, y)`).
        carriers = [n for n in _names(value) if n != wrapped and _carries_grad(values.get(n))]
        cut = (_nested_cut(value, values, carriers) if carriers else None) or \
            find_cut(filename, computed.lineno, [n for n in _names(value) if n != wrapped], values)
    except Exception:
        return
    if cut is None or cut.mark.kind in ("unknown", "no_grad") or cut.mark.node is None:
        return
    where = segment(cut.filename, cut.mark.node) or cut.mark.text
    diagnosis.related.insert(1, located(cut.filename, cut.statement, role="cut",
                                        note=f"`{where}` had already cut {wrapped} off the parameters here"))
    diagnosis.notes.append(f"{wrapped} lost its graph before it was wrapped: at line {cut.statement.lineno} "
                           f"(`{where}`). Remove that cut as well as the wrap, then backward() on {wrapped} "
                           "reaches the parameters")
    for change in diagnosis.help:
        if change.replacement is None and change.message.startswith("remove the wrap"):
            change.message = (f"remove the wrap and the cut at line {cut.statement.lineno} (`{where}`), and "
                              f"backpropagate {wrapped} itself: the two go together (without the cut, the wrap "
                              "still makes a new leaf; without the wrap, backward() raises)")


def _names(value: ast.AST) -> list:
    from autograd_doctor.analysis.source_scope import loaded_names

    return loaded_names(value)


# Methods that copy or convert a tensor and keep its graph: a detach() below them still cuts.
_GRAPH_KEEPING_METHODS = ("clone", "to", "float", "double", "half", "contiguous", "cpu", "cuda", "view", "reshape")


def _detach_below(node: ast.AST) -> ast.AST | None:
    """The `x.detach()` (or `x.detach_()`) call, or `x.data` attribute, that the chain under `requires_grad_()` starts
    from, through copies and conversions (`p.detach().clone()`), or None."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in _GRAPH_KEEPING_METHODS:
        node = node.func.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("detach", "detach_") \
            and not node.args and not node.keywords:
        # detach_() cuts the tensor itself: `loss.detach_().requires_grad_(True)` makes the loss a new leaf.
        return node
    if isinstance(node, ast.Attribute) and node.attr == "data":
        return node
    return None


def _name_the_cause(diagnosis: Diagnosis, location, notes: list, change) -> None:
    """Make the statement that cut the optimizer's parameters off (or built it from another model)
    the line to change; the step() becomes a related location."""
    diagnosis.related.insert(0, diagnosis.primary)
    diagnosis.primary = location
    diagnosis.notes.extend(notes)
    if isinstance(change, list):
        diagnosis.help[0:0] = change
    elif change is not None:
        diagnosis.help.insert(0, change)


def _diagnosis(optimizer, parameters: list, backward_site, step_site, steps: int, detached=None,
               frozen: int = 0) -> Diagnosis:
    optimizer_class = type(optimizer).__name__
    held = (f"{len(parameters)} trainable parameters (and {frozen} frozen ones)" if frozen
            else f"{len(parameters)} parameters")
    primary = location_of(step_site, role="step", note=f"{optimizer_class}.step() changes nothing: none of its "
                                                       f"{held} has a gradient")
    related = [location_of(backward_site, role="backward", note="this backward() reached none of them")]
    notes = [f"{steps} steps of this optimizer so far each followed a backward(), and at none of them did any "
             "of its parameters have a gradient: the losses were computed from other tensors than the ones it holds, such as "
             "copies of them (p.detach().clone(), a functional inner loop that copies the initial weights) or "
             "another model's parameters, so step() skips every parameter (no error)"]
    helps = [Suggestion("compute the loss from the optimizer's own parameters (start an inner loop from them, not "
                        "from detached copies: copy_initial_weights=False in higher), or give the optimizer the "
                        "tensors the loss is computed from")]
    if detached is not None:
        # The backward() stopped at new leaves made by detach().requires_grad_() (they have gradients,
        # the parameters none): that line is the cut, and without detach() the graph goes on.
        site, statement, detach_call = detached
        receiver = segment(site.filename, detach_call.value if isinstance(detach_call, ast.Attribute)
                           else detach_call.func.value)
        changed = replace_node_text(site.filename, statement, detach_call, receiver) if receiver else None
        method = detach_call.func.attr if isinstance(detach_call, ast.Call) else "detach"
        cut = statement_location(site.filename, statement, role="cut",
                                 note=f"{method}().requires_grad_() makes new leaves here: backward() stops at them")
        related.insert(0, primary)
        primary = cut
        notes.append(f"the last backward() gave gradients to the leaves made at line {site.lineno} by "
                     f"{method}().requires_grad_(), which start a new graph: requires_grad_() on the result of "
                     f"{method}() does not connect it to what it was detached from")
        if changed is not None:
            helps.insert(0, Suggestion(f"keep the graph: drop the cut ({segment(site.filename, detach_call)} "
                                       f"becomes {receiver}), so backward() goes on to the optimizer's parameters",
                                       changed, cut))
    return Diagnosis(code=codes.GRADIENTLESS_OPTIMIZER_STEPS, title=codes.title(codes.GRADIENTLESS_OPTIMIZER_STEPS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)
