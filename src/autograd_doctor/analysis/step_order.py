"""AD103 where two losses share a model (a GAN's discriminator, an actor-critic's
critic): an optimizer's step() changed weights that a forward pass computed before the
step had saved, and the other loss's backward() goes through that forward.

Moving step() after that backward() runs, but the stepped model then trains on the other
loss's gradients too. What the two-phase training loop means (the DCGAN example's
order) is the forward pass computed again after the step. This module decides, from
what ran, whether the failure has that shape, and finds the forward line in the user's
code: the assignment, in the function that called step(), of the variable whose graph
holds the node that saved the stepped parameter.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from autograd_doctor.analysis.live_values import expression_value
from autograd_doctor.analysis.graph_reach import graph_reaches
from autograd_doctor.analysis.source_scope import (
    MAX_NODES, Scope, frame_values, graph_nodes, leaves_below, live_frame, loaded_names, reached_leaves,
    root_expression, stored_names,
)
from autograd_doctor.recording.events import WriteEvent
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    display_path, replace_nodes_text, segment, source_line, statement_location,
)

import torch


def _place(site) -> tuple | None:
    return (site.filename, site.lineno) if site is not None else None


def gradients_used_by_step(write: WriteEvent, recorder, backward_site) -> bool:
    """Whether another loss's backward() (another line than the failing one) ran before
    this step(), since the same optimizer's previous step: the step then applied that
    loss's gradients, and moving it after the failing backward() would mix this loss's
    into them. The same line in an earlier iteration is the same loss, one step late."""
    if recorder is None or write is None:
        return False
    failing = _place(backward_site)
    # In the full mode the write comes after its own step() began; in the light mode it
    # carries that step's number. Either way, the step is the latest one at or before it.
    steps = sorted(seq for _optimizer, name, _stack, seq in getattr(recorder, "optimizer_steps", ())
                   if seq <= write.seq and name == write.optimizer)
    if not steps:
        return False
    this_step = steps[-1]
    previous_step = steps[-2] if len(steps) > 1 else 0
    return any(previous_step < call.seq < this_step and _place(call.site) != failing
               for call in getattr(recorder, "backward_calls", ()))


def _reaches(tensor: torch.Tensor, node) -> bool:
    return graph_reaches(getattr(tensor, "grad_fn", None), {node}, MAX_NODES)


def _one_line_forward(statement: ast.stmt) -> bool:
    return (isinstance(statement, ast.Assign) and statement.lineno == statement.end_lineno
            and any(isinstance(part, ast.Call) for part in ast.walk(statement.value)))


def _reads(statement: ast.stmt, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)
               for node in ast.walk(statement))


def forward_before_step(write: WriteEvent, node, backward_line: int | None, loss_name: str | None = None):
    """(forward statement, variable, Scope, step statement) for the forward computed before
    the step whose graph the failing backward() went through, when moving it to just after
    the step keeps the program's meaning otherwise: same block, nothing in between reads
    its result or changes its inputs, its inputs carry no graph through the stale node, and
    the loss is built from it after the step (or, given `loss_name`, it is the loss itself).
    None otherwise."""
    site = write.site
    frame = live_frame(site)
    if frame is None or node is None or backward_line is None:
        return None
    values = frame_values(frame)
    scope = Scope(site.filename, site.lineno)
    step_statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    if step_statement is None:
        return None
    block = scope.parents.get(step_statement)
    between_step_and_backward = [s for s, _names, _value in scope.assignments
                                 if step_statement.lineno < s.lineno <= backward_line]
    best = None
    for name, value in values.items():
        if not isinstance(value, torch.Tensor) or value.grad_fn is None:
            continue
        found = scope.latest_assignment(name, step_statement.lineno)
        if found is None:
            continue
        statement = found[0]
        # The value the variable holds now is the one bound before the step.
        latest = scope.latest_assignment(name, backward_line)
        if latest is None or latest[0] is not statement or not _one_line_forward(statement):
            continue
        if scope.parents.get(statement) is not block or not _reaches(value, node):
            continue
        if best is None or statement.lineno > best[0].lineno:
            best = (statement, name)
    if best is None:
        return None
    statement, name = best
    inputs = set(loaded_names(statement.value))
    if any(isinstance(values.get(i), torch.Tensor) and _reaches(values[i], node) for i in inputs):
        return None  # its inputs already went through the stale node: moving it alone does not help
    for other in ast.walk(scope.node or scope.tree):
        if isinstance(other, ast.stmt) and statement.lineno < other.lineno <= step_statement.end_lineno \
                and other is not step_statement and _reads(other, name):
            return None  # something before the step uses the forward's result
    for other, names, _value in scope.assignments:
        if statement.lineno < other.lineno <= step_statement.end_lineno and names & (inputs | {name}):
            return None  # its inputs (or itself) change before the step
    if name != loss_name and not any(_reads(other, name) for other in between_step_and_backward):
        return None  # the loss is not built from it after the step
    return statement, name, scope, step_statement


def move_after_step(write: WriteEvent, node, optimizer_name: str,
                    backward_line: int | None, loss_name: str | None = None) -> tuple[Suggestion, Location] | None:
    """The help (the forward moved to just after step(), the PyTorch DCGAN example's
    order) and the forward line to show. With `loss_name`, the forward may be the loss's own
    line: the loss was computed before the step, so going through the updated weights is
    one intent of two, and the help says so."""
    found = forward_before_step(write, node, backward_line, loss_name)
    if found is None:
        return None
    statement, name, scope, step_statement = found
    filename = scope.filename
    forward_text = segment(filename, statement)
    if not forward_text:
        return None
    indent = source_line(filename, statement.lineno)[: statement.col_offset]
    moved = []
    for number in range(statement.lineno + 1, step_statement.end_lineno + 1):
        line = source_line(filename, number)
        moved.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
    location = statement_location(filename, statement)
    location.end_line = step_statement.end_lineno
    location.end_column = step_statement.end_col_offset
    message = (f"compute {name} after {optimizer_name}.step() instead of before it, so that this backward() goes "
               f"through the updated weights and {optimizer_name}.step() applies only the gradients it was given "
               "(the order of the PyTorch DCGAN example; calling step() after this backward() would also train "
               "that model on this loss)")
    if name == loss_name:
        message = (f"or, if {name} is meant to go through the updated weights: compute it after "
                   f"{optimizer_name}.step() (the order of the PyTorch DCGAN example); its value then differs "
                   "from the one this run computed (unverified)")
    help = Suggestion(message, "\n".join([*moved, forward_text]), location)
    forward = statement_location(filename, statement, role="forward",
                                 note=f"{name} computed here, before {optimizer_name}.step() changed the weights it "
                                      "saved" + ("" if name == loss_name else ": the line to move"))
    return help, forward


# --- Helps that change the order of the updates -------------------------------------------
#
# The failing backward() (B2) goes through a forward pass that saved weights an earlier
# update (another loss's backward() B1, then O.step()) changed. Two intents are possible and
# no run-time fact decides between them: the later loss meant the weights its forward pass
# used (do its update before O.step()), or the updated ones (compute it again after the
# step). Both are offered, and neither is guessed silently: each help says what it changes.


def earlier_backward_site(write: WriteEvent, recorder, backward_site):
    """The site of the latest backward() (another line than the failing one) that ran before
    this step(), since the same optimizer's previous step: the loss whose gradients it applied."""
    if recorder is None or write is None:
        return None
    failing = _place(backward_site)
    steps = sorted(seq for _optimizer, name, _stack, seq in getattr(recorder, "optimizer_steps", ())
                   if seq <= write.seq and name == write.optimizer)
    if not steps:
        return None
    previous_step = steps[-2] if len(steps) > 1 else 0
    calls = [call for call in getattr(recorder, "backward_calls", ())
             if previous_step < call.seq < steps[-1] and _place(call.site) != failing]
    return calls[-1].site if calls else None


def stepped_optimizer(write: WriteEvent, recorder):
    """The optimizer object whose step() made this write (the latest step at or before it)."""
    for optimizer_ref, name, _stack, seq in reversed(getattr(recorder, "optimizer_steps", ()) if recorder else ()):
        if seq <= write.seq and name == write.optimizer:
            return optimizer_ref()
    return None


def _parameter_ids(optimizer) -> set[int]:
    groups = getattr(optimizer, "param_groups", None)
    if not isinstance(groups, list):
        return set()
    return {id(p) for group in groups for p in group.get("params", [])}


def _held_parameters(receiver: str, values: dict) -> set[int]:
    """Ids of the parameters an optimizer or a module named `receiver` (a name, an attribute chain
    or a constant subscript of the live frame: `self.optimizers[1]`, `opts["critic"]`) holds; empty
    when it cannot be resolved without running the user's code."""
    try:
        value = expression_value(values.get, ast.parse(receiver, mode="eval").body)
    except SyntaxError:
        return set()
    if isinstance(value, torch.nn.Module):
        return {id(p) for p in value.parameters()}
    return _parameter_ids(value)


def _method_call(statement: ast.stmt, method: str | None = None) -> tuple[str, str] | None:
    """(receiver text, method) when the statement is one call `<receiver>.<method>(...)`."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute)):
        return None
    name = statement.value.func.attr
    if method is not None and name != method:
        return None
    return ast.unparse(statement.value.func.value), name


def _siblings(scope: Scope, statement: ast.stmt) -> list[ast.stmt] | None:
    parent = scope.parents.get(statement)
    for field in ("body", "orelse", "finalbody"):
        statements = getattr(parent, field, None)
        if isinstance(statements, list) and statement in statements:
            return statements
    return None


def _graph_nodes(tensor) -> set:
    """The non-leaf nodes of a tensor's graph (the links stay after backward() frees it)."""
    nodes, queue = set(), [getattr(tensor, "grad_fn", None)]
    while queue and len(nodes) < MAX_NODES:
        node = queue.pop()
        if node is None or node in nodes or getattr(node, "variable", None) is not None:
            continue
        nodes.add(node)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return nodes


def _root_tensor(statement: ast.stmt, values: dict):
    """The tensor a one-name `<loss>.backward()` was called on, from the live frame."""
    root = root_expression(statement)
    value = values.get(root.id) if isinstance(root, ast.Name) else None
    return (root.id, value) if isinstance(value, torch.Tensor) and value.grad_fn is not None else (None, None)


def _dedented(filename: str, first: int, last: int, indent: str) -> list[str]:
    """Source lines first..last, without the block's indentation, blank lines at the ends dropped."""
    lines = [source_line(filename, n).rstrip() for n in range(first, last + 1)]
    lines = [line[len(indent):] if line.startswith(indent) else line.strip() for line in lines]
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _comments_above(filename: str, line: int, lowest: int) -> int:
    """The first line of the comment lines directly above `line` (not above `lowest`)."""
    while line - 1 > lowest and source_line(filename, line - 1).strip().startswith("#"):
        line -= 1
    return line


@dataclass
class UpdateOrder:
    """What ran, in the user's code: B1 (the earlier loss's backward()), S (its optimizer's
    step()), B2 (the failing backward()), all statements of one block of one function."""
    filename: str
    scope: Scope
    block: list
    first: ast.stmt  # B1
    step: ast.stmt  # S
    backward: ast.stmt  # B2
    optimizer: str  # the receiver of S, as written
    optimizer_ids: set
    values: dict
    loss_name: str | None
    loss: object

    @property
    def indent(self) -> str:
        return source_line(self.filename, self.step.lineno)[: self.step.col_offset]

    def index(self, statement) -> int:
        return self.block.index(statement)


def update_order(write: WriteEvent, recorder, backward_site) -> UpdateOrder | None:
    site = write.site if write is not None else None
    first_site = earlier_backward_site(write, recorder, backward_site)
    if site is None or first_site is None or backward_site is None or \
            not (site.filename == first_site.filename == backward_site.filename):
        return None
    frame = live_frame(site)
    scope = Scope(site.filename, site.lineno)
    if frame is None or scope.tree is None:
        return None
    step = scope.statement_at(site.lineno)
    first = scope.statement_at(first_site.lineno)
    backward = scope.statement_at(backward_site.lineno)
    block = _siblings(scope, step) if step is not None else None
    if block is None or first not in block or backward not in block:
        return None
    call = _method_call(step, "step")
    if call is None or not block.index(first) < block.index(step) < block.index(backward):
        return None
    values = frame_values(frame)
    loss_name, loss = _root_tensor(backward, values)
    return UpdateOrder(site.filename, scope, block, first, step, backward, call[0],
                       _parameter_ids(stepped_optimizer(write, recorder)), values, loss_name, loss)


def _later_update_end(order: UpdateOrder) -> ast.stmt | None:
    """The last statement of B2's update: B2, then the calls after it up to the first step()
    (of another optimizer). None when the same optimizer steps again (one update, not two)."""
    end = order.backward
    for statement in order.block[order.index(order.backward) + 1:]:
        call = _method_call(statement)
        if call is None or call[1] == "backward":
            break
        if call[1] == "step":
            return None if call[0] == order.optimizer else statement
        end = statement
    return end


def _later_step_parameters(order: UpdateOrder, end: ast.stmt | None = None) -> set[int]:
    """Ids of the parameters that the step() calls after B2 (up to `end`, or the first step())
    update: the later loss's own optimizer."""
    ids: set[int] = set()
    for statement in order.block[order.index(order.backward) + 1:]:
        call = _method_call(statement)
        if call is None or call[1] == "backward":
            break
        if call[1] == "step":
            ids |= _held_parameters(call[0], order.values)
        if statement is end or (end is None and call[1] == "step"):
            break
    return ids


def later_update_first(order: UpdateOrder) -> tuple[Suggestion, Location] | None:
    """The help that moves B2's update (its zero_grad(), backward() and step()) before the
    earlier update (zero_grad(), B1, S): every forward value stays what it was, the later
    loss goes through the weights its forward pass used, and S applies only B1's gradients.
    Only where that holds at run time: the earlier update is calls only and clears its
    optimizer's gradients first (or the later loss leaves none on its parameters), nothing
    between S and B2 computes, the two losses share no graph node (B2 would free it for B1),
    and the earlier loss reaches no parameter the later update steps."""
    filename, block = order.filename, order.block
    start = order.index(order.first)
    while start > 0 and _method_call(block[start - 1], "zero_grad") is not None:
        start -= 1
    earlier = block[start:order.index(order.step) + 1]
    between = block[order.index(order.step) + 1:order.index(order.backward)]
    by_hand = None
    if any(_method_call(s) is None for s in earlier):
        by_hand = _hand_set_update_start(order)
        if by_hand is None:
            return None
        start = by_hand
        earlier = block[start:order.index(order.step) + 1]
    if any(_method_call(s) is None for s in between) or \
            any(_method_call(s)[1] in ("backward", "step") for s in between):
        return None
    end = _later_update_end(order)
    if end is None or order.loss is None:
        return None
    later_ids = _later_step_parameters(order, end)
    if by_hand is not None:
        # The earlier gradients were computed by torch.autograd.grad (which leaves no .grad) and
        # handed to the weights by hand after the optimizer's zero_grad(): only those statements
        # move, and they must not set gradients of the weights the later update steps.
        if not later_ids or later_ids & order.optimizer_ids:
            return None
    else:
        _, earlier_loss = _root_tensor(order.first, order.values)
        if earlier_loss is None or _graph_nodes(earlier_loss) & _graph_nodes(order.loss):
            return None
        if not later_ids or later_ids & reached_leaves([earlier_loss]):
            return None
    clears = any(_method_call(s, "zero_grad") is not None and _method_call(s)[0] == order.optimizer for s in earlier)
    if order.optimizer_ids & reached_leaves([order.loss]) and not clears:
        return None
    first_line = _comments_above(filename, earlier[0].lineno, block[start - 1].end_lineno if start else 0)
    later_first = block[order.index(order.step) + 1]
    later_line = _comments_above(filename, later_first.lineno, order.step.end_lineno)
    earlier_lines = _dedented(filename, first_line, order.step.end_lineno, order.indent)
    later_lines = _dedented(filename, order.step.end_lineno + 1, end.end_lineno, order.indent)
    location = Location(file=display_path(filename), line=first_line, column=len(order.indent),
                        end_line=end.end_lineno, end_column=end.end_col_offset,
                        source=source_line(filename, first_line).strip())
    loss = order.loss_name or "this loss"
    help = Suggestion(
        f"if {loss} is meant to go through the weights its forward pass used: do its update (lines "
        f"{later_line}-{end.end_lineno}) before {order.optimizer}'s (lines {first_line}-"
        f"{order.step.end_lineno}); every value computed stays the same"
        + (f", and {order.optimizer}.zero_grad() still clears what {loss}.backward() leaves in the weights "
           f"{order.optimizer} steps" if clears else "")
        + " (unverified: if it is meant to go through the updated weights, compute it again after the step instead)",
        "\n".join([*later_lines, "", *earlier_lines]), location)
    primary = statement_location(filename, order.backward, role="backward",
                                 note=f"backward needed the old value here: this update should come before "
                                      f"{order.optimizer}.step()")
    return help, primary


def _sets_gradients_only(statement: ast.stmt) -> bool:
    """`<x>.grad = <value>` (one or several targets, all `.grad`), or a plain `for` loop whose body
    is only such assignments: gradients handed to weights by hand, nothing computed for a loss."""
    if isinstance(statement, ast.Assign):
        return all(isinstance(target, ast.Attribute) and target.attr == "grad" for target in statement.targets) \
            and not any(isinstance(node, (ast.Call, ast.NamedExpr)) and not (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach")
                for node in ast.walk(statement.value))
    if isinstance(statement, ast.For) and not statement.orelse:
        return bool(statement.body) and all(_sets_gradients_only(s) for s in statement.body)
    return False


def _hand_set_update_start(order: UpdateOrder) -> int | None:
    """Where the earlier update starts when its gradients come from torch.autograd.grad and are
    set by hand: the index of the optimizer's last zero_grad() before step(), after B1, when B1 is
    not a backward() call (autograd.grad leaves no .grad behind) and every statement from there to
    step() is a call or a gradient assignment (`_sets_gradients_only`)."""
    if _method_call(order.first, "backward") is not None or not any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "grad"
            for node in ast.walk(order.first)):
        return None
    block, step = order.block, order.index(order.step)
    for index in range(step - 1, order.index(order.first), -1):
        call = _method_call(block[index], "zero_grad")
        if call is not None and call[0] == order.optimizer:
            statements = block[index:step]
            if any(_method_call(s) is None and not _sets_gradients_only(s) for s in statements):
                return None
            if any(_method_call(s) is not None and _method_call(s)[1] in ("backward", "step") for s in statements):
                return None
            if not any(_sets_gradients_only(s) for s in statements):
                return None
            return index
    return None


def later_loss_trains_stepped_weights(order: UpdateOrder) -> bool:
    """Whether the loss whose backward() failed is another optimizer's loss that also reaches
    weights the earlier step() updates (a generator's loss, stepped by the generator's
    optimizer, through the discriminator): moving that step() after its backward() would then
    train those weights on a loss meant for other weights. One optimizer stepping once for two
    losses of one model is not that case (the step then applies both, as their sum would)."""
    if order.loss is None or not order.optimizer_ids & reached_leaves([order.loss]):
        return False
    own = _later_step_parameters(order)
    return bool(own) and not own & order.optimizer_ids


def step_after_later_backward(order: UpdateOrder, forward_name: str | None = None) -> tuple[Suggestion | None, bool]:
    """The help that moves S after B2, or drops it where the same optimizer steps right after
    B2: the optimizer then applies both losses' gradients (as a backward() of their sum), which
    the help says, since it changes what the step trains when the later loss reaches them.
    The flag says which: True for the move, False for the dropped step."""
    filename, block = order.filename, order.block
    between = block[order.index(order.step) + 1:order.index(order.backward)]
    for statement in between:
        call = _method_call(statement)
        if call is not None and call[1] in ("zero_grad", "step") and (
                call[0] == order.optimizer
                or _held_parameters(call[0], order.values) & order.optimizer_ids):
            # The earlier loss's gradients would be cleared, or stepped twice: by this optimizer, or
            # by another optimizer (or a module's zero_grad()) holding some of the weights it steps.
            return None, False
    after = block[order.index(order.backward) + 1] if order.index(order.backward) + 1 < len(block) else None
    again = after is not None and _method_call(after, "step") is not None and \
        _method_call(after)[0] == order.optimizer
    moved = _dedented(filename, order.step.end_lineno + 1, order.backward.end_lineno, order.indent)
    location = statement_location(filename, order.step)
    location.end_line, location.end_column = order.backward.end_lineno, order.backward.end_col_offset
    loss = order.loss_name or "this loss"
    root = root_expression(order.first)
    first = ast.unparse(root) if root is not None else "the earlier loss"
    reaches = order.loss is not None and bool(order.optimizer_ids & reached_leaves([order.loss]))
    if again:
        return Suggestion(
            f"if one update from both losses is meant: remove this {order.optimizer}.step(); the one on line "
            f"{after.lineno} then applies the gradients of {first} and {loss} together, as one backward() of "
            f"their sum would (unverified: if {loss} is meant to go through the updated weights, compute its "
            f"forward pass again after this step() instead)", "\n".join(moved), location), False
    trains = ""
    if reaches:
        trains = (f"; {order.optimizer}.step() then also applies {loss}'s gradients to the weights it steps "
                  f"(it trains them on {first} + {loss})")
        forward_value = order.values.get(forward_name) if forward_name else None
        if isinstance(forward_value, torch.Tensor) and \
                not _later_step_parameters(order) & reached_leaves([forward_value]):
            # Detached there, the loss still trains what its own optimizer steps.
            trains += f": if {loss} should not train them, build it from {forward_name}.detach() instead"
    computing = [statement for statement in between if _method_call(statement) is None]
    if computing:
        trains += (f"; lines {computing[0].lineno}-{computing[-1].end_lineno}, which ran after the step, then run "
                   "before it")
    # An alternative to computing the forward line again (recompute_after_step), which comes first
    # where this move would train the stepped weights on the later loss: hence the "or, ", which
    # the report drops when this help is shown first.
    return Suggestion(
        f"or, call {order.optimizer}.step() after {loss}.backward(), so that backward() goes through the weights "
        f"its forward pass used{trains} (unverified)", "\n".join([*moved, segment(filename, order.step)]), location), True



def forward_through_step(write: WriteEvent, node, backward_line: int | None) -> tuple[ast.stmt, str] | None:
    """(statement, variable) of the forward line where the failing graph first goes through
    the stale node: a variable of the function that called step(), bound before the step and
    still holding that value, whose graph reaches the node while its inputs' graphs do not
    (`pose = pose_net(frames)`, `loss_G = bce(netD(fake), real)`)."""
    site = write.site if write is not None else None
    frame = live_frame(site)
    if frame is None or node is None:
        return None
    scope = Scope(site.filename, site.lineno)
    if scope.tree is None:
        return None
    values = frame_values(frame)
    best = None
    for name, value in values.items():
        if not isinstance(value, torch.Tensor) or value.grad_fn is None:
            continue
        found = scope.latest_assignment(name, site.lineno)
        if found is None or not isinstance(found[0], ast.Assign):
            continue
        latest = scope.latest_assignment(name, (backward_line or site.lineno) + 1)
        if latest is None or latest[0] is not found[0] or not _reaches(value, node):
            continue
        inputs = loaded_names(found[0].value)
        if any(isinstance(values.get(i), torch.Tensor) and _reaches(values[i], node) for i in inputs):
            continue
        if best is None or found[0].lineno > best[0].lineno:
            best = (found[0], name)
    return best


_RANDOM = {"randn", "rand", "randint", "randperm", "randn_like", "rand_like", "randint_like", "normal",
           "bernoulli", "multinomial", "dropout"}


def _called_name(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)


def recompute_after_step(order: UpdateOrder, forward: tuple[ast.stmt, str]) -> Suggestion | None:
    """The help that computes the forward line, and what the failing loss builds from it before
    the step, again right after step() (the PyTorch DCGAN example's `output = netD(fake)`): the
    later loss then goes through the updated weights. The earlier statements stay, since the
    earlier loss used them. Only one-line assignments in the block between the forward line and
    the step, each needed by the loss and built from the forward's result."""
    statement, _name = forward
    block, filename = order.block, order.filename
    if statement not in block or order.loss_name is None or not block.index(statement) < order.index(order.step):
        return None
    needed = {order.loss_name}
    between = block[order.index(order.step) + 1:order.index(order.backward) + 1]
    for later in between:  # the loss may be built after the step from values made before it
        if isinstance(later, ast.Assign):
            needed |= set(loaded_names(later.value))
    chain: list[ast.stmt] = []
    for candidate in reversed(block[block.index(statement):order.index(order.step)]):
        if not isinstance(candidate, ast.Assign) or candidate.lineno != candidate.end_lineno:
            continue
        targets = set().union(*(stored_names(target) for target in candidate.targets))
        if targets & needed:
            chain.insert(0, candidate)
            needed |= set(loaded_names(candidate.value))
    if not chain or chain[0] is not statement:
        return None
    made = set().union(*(stored_names(target) for target in statement.targets))
    kept = [*_stepped_inputs(order, statement), statement]
    for candidate in chain[1:]:  # only what is built from the forward's result
        if set(loaded_names(candidate.value)) & made:
            kept.append(candidate)
            made |= set().union(*(stored_names(target) for target in candidate.targets))
    if any(isinstance(call, ast.Call) and _called_name(call) in _RANDOM for s in kept for call in ast.walk(s)):
        return None  # computed again, it would draw other random numbers: other inputs, not other weights
    lines = [segment(filename, s) for s in kept]
    step_text = segment(filename, order.step)
    if step_text is None or any(line is None for line in lines):
        return None
    loss = order.loss_name
    return Suggestion(
        f"or, if {loss} is meant to go through the updated weights: compute "
        f"{_lines(kept)} again after {order.optimizer}.step() (the PyTorch DCGAN "
        f"example's order); {loss}'s value then differs from the one this run computed (unverified)",
        "\n".join([step_text, *lines]), statement_location(filename, order.step),
        # The meaning check's policy for a forward computed again after weights were overwritten
        # (cli/meaning.py, `_judge_recomputed_forward`): the failing backward()'s own values are
        # stale by construction, so every call before it must equal the original's and none may
        # be dropped; never "verified" (no oracle gives the gradients at the updated weights).
        recomputes_failing_forward=True)


def _stepped_inputs(order: UpdateOrder, statement: ast.stmt, limit: int = 4) -> list:
    """The one-line assignments of the block, before the forward line, that bind the tensors it
    reads when their graphs also go through parameters the failing step() updated (the encoder
    output a decoder line reads: `enc_out = model.encoder(x)` before `out = model.decoder(enc_out)`),
    in source order. Computed again after the step with the forward line, or backward() would
    still meet the old values the step overwrote through them. Each must still hold the value the
    forward line read (bound once in the block before it, not bound again before the backward)."""
    if not order.optimizer_ids:
        return []
    block = order.block
    found: list = []
    pending = [statement]
    while pending:
        current = pending.pop()
        for name in loaded_names(current.value):
            value = order.values.get(name)
            if not isinstance(value, torch.Tensor) or value.grad_fn is None:
                continue
            if not reached_leaves([value]) & order.optimizer_ids:
                continue
            producer = next((s for s in reversed(block[:block.index(current)]) if isinstance(s, ast.Assign)
                             and name in set().union(*(stored_names(t) for t in s.targets))), None)
            latest = order.scope.latest_assignment(name, order.backward.lineno + 1)
            if producer is None or producer in found or producer.lineno != producer.end_lineno or \
                    latest is None or latest[0] is not producer:
                continue
            found.append(producer)
            pending.append(producer)
            if len(found) >= limit:
                return sorted(found, key=lambda s: s.lineno)
    return sorted(found, key=lambda s: s.lineno)


def _lines(statements: list) -> str:
    numbers = [str(s.lineno) for s in statements]
    if len(numbers) == 1:
        return f"line {numbers[0]}"
    return f"lines {', '.join(numbers[:-1])} and {numbers[-1]}"


def adversarial_pair(order: UpdateOrder) -> bool:
    """Whether the failing loss is another player's loss through the stepped weights: it reaches
    weights the earlier step() updates, and the optimizer that steps right after it holds none of
    them (a domain-adversarial confusion term, a generator's loss through the discriminator). Such
    training loops alternate the two updates (the PyTorch DCGAN example): the later loss goes
    through the weights the earlier update has just changed."""
    if order.loss is None or not order.optimizer_ids & reached_leaves([order.loss]):
        return False
    end = _later_update_end(order)
    own = _later_step_parameters(order, end) if end is not None else set()
    return bool(own) and not own & order.optimizer_ids


def earlier_update_before_forward(order: UpdateOrder, forward: tuple[ast.stmt, str] | None,
                                  node) -> tuple[Suggestion, Location] | None:
    """The help that moves the earlier update (its zero_grad(), B1 and S) up to just before the
    forward line through the weights S changes: the later loss is then computed through the
    updated weights, the order of an alternating update (the fix of a domain-adversarial or GAN
    loop). Only where that keeps every other value: the update is calls only, the earlier loss and
    every name the update reads are made before the forward line and not rebound after it, no other
    statement before the forward line binds a value whose graph goes through the stale weight (the
    earlier loss aside), and the two losses share no graph node (B1 would free it)."""
    if forward is None or order.loss is None:
        return None
    statement, name = forward
    filename, block = order.filename, order.block
    if statement not in block:
        return None
    start = order.index(order.first)
    while start > 0 and _method_call(block[start - 1], "zero_grad") is not None:
        start -= 1
    earlier = block[start:order.index(order.step) + 1]
    if not block.index(statement) < start or any(_method_call(s) is None for s in earlier):
        return None
    read = set().union(*(loaded_names(s) for s in earlier))
    rebound = set().union(*(stored_names(target) for s in block[block.index(statement):start]
                            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                            for target in (s.targets if isinstance(s, ast.Assign) else [s.target])))
    if read & rebound or any(not isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr))
                             for s in block[block.index(statement):start]):
        return None
    earlier_name, earlier_loss = _root_tensor(order.first, order.values)
    if earlier_loss is None or _graph_nodes(earlier_loss) & _graph_nodes(order.loss):
        return None
    for before in block[:block.index(statement)]:
        if not isinstance(before, ast.Assign):
            continue
        for bound in set().union(*(stored_names(target) for target in before.targets)) - read:
            value = order.values.get(bound)
            if isinstance(value, torch.Tensor) and node is not None and _reaches(value, node):
                return None  # another forward line through the old weights: where to move is unclear
    first_line = _comments_above(filename, earlier[0].lineno, block[start - 1].end_lineno if start else 0)
    forward_line = _comments_above(filename, statement.lineno, block[block.index(statement) - 1].end_lineno
                                   if block.index(statement) else 0)
    moved = _dedented(filename, first_line, order.step.end_lineno, order.indent)
    kept = _dedented(filename, forward_line, first_line - 1, order.indent)
    location = Location(file=display_path(filename), line=forward_line, column=len(order.indent),
                        end_line=order.step.end_lineno, end_column=order.step.end_col_offset,
                        source=source_line(filename, forward_line).strip())
    loss = order.loss_name or "this loss"
    help = Suggestion(
        f"if {loss} is meant to go through the weights {order.optimizer} has just updated (the two updates "
        f"alternating, as in the PyTorch DCGAN example): do {order.optimizer}'s update (lines {first_line}-"
        f"{order.step.end_lineno}) before {name} is computed (line {statement.lineno}); {loss}'s value then "
        f"differs from the one this run computed (unverified: if it is meant to go through the weights its "
        "forward pass used, do its own update first instead)",
        "\n".join([*moved, "", *kept]), location)
    primary = statement_location(filename, order.step, role="step",
                                 note=f"{order.optimizer}.step() runs after {name} (line {statement.lineno}) went "
                                      f"through the weights it changes, and before {loss}.backward()")
    return help, primary


def detach_stepped_value(order: UpdateOrder, forward: tuple[ast.stmt, str] | None):
    """(help, location of the loss's statement) that builds the failing loss from `name.detach()`,
    where `name` (the forward line's variable) is computed from the stepped parameters alone (a
    temperature `alpha = softplus(self.raw_alpha)` stepped by its own optimizer) and the gradient
    the failing backward() would give them is never applied: the loss's own optimizer does not hold
    them, the stepped optimizer's zero_grad() runs before its next backward(), and only step() /
    zero_grad() of other optimizers follow the failing backward(). The saved value then serves only
    that unused gradient: cut there, every forward value stays what this run computed, and every
    other gradient is the one the graph would have given with the weights as they were. None
    otherwise."""
    if forward is None or order.loss is None or order.loss_name is None:
        return None
    statement, name = forward
    value = order.values.get(name)
    if not isinstance(value, torch.Tensor) or value.grad_fn is None or statement not in order.block \
            or not order.index(statement) < order.index(order.step):
        return None
    leaves, finished = leaves_below([value.grad_fn])
    if not finished or not leaves or not leaves <= order.optimizer_ids:
        return None  # the value carries gradients to weights another optimizer trains
    own = _later_step_parameters(order)
    if not own or own & order.optimizer_ids:
        return None  # the failing loss's own step would apply the gradient the cut drops
    zeroed_first = any(_method_call(s, "zero_grad") is not None and _method_call(s)[0] == order.optimizer
                       for s in order.block[:order.index(order.first)])
    after = order.block[order.index(order.backward) + 1:]
    if not zeroed_first or not all(
            (call := _method_call(s)) is not None and call[1] in ("step", "zero_grad") and call[0] != order.optimizer
            for s in after):
        return None  # the dropped gradient could be read or applied before the stepped optimizer clears it
    walked, finished = graph_nodes([order.loss.grad_fn], MAX_NODES, avoid=(value.grad_fn,))
    if not finished or leaves & {id(node.variable) for node in walked if getattr(node, "variable", None) is not None}:
        return None  # the loss reaches the stepped weights another way too
    built = order.scope.latest_assignment(order.loss_name, order.backward.lineno)
    loss_statement = built[0] if built is not None else None
    if not isinstance(loss_statement, ast.Assign) or loss_statement not in order.block or \
            not order.index(statement) < order.index(loss_statement) < order.index(order.backward):
        return None
    reads = [node for node in ast.walk(loss_statement.value) if isinstance(node, ast.Name) and node.id == name]
    if not reads or any(_reads(other, name) and isinstance(other, ast.Assign)
                        and set().union(*(stored_names(t) for t in other.targets)) & set(loaded_names(loss_statement.value))
                        for other in order.block[order.index(statement) + 1:order.index(loss_statement)]):
        return None  # the loss reads the value through another variable too
    replacement = replace_nodes_text(order.filename, loss_statement, [(node, f"{name}.detach()") for node in reads])
    if replacement is None:
        return None
    loss = order.loss_name
    location = statement_location(order.filename, loss_statement, role="loss",
                                  note=f"{loss} is built here from {name}, whose graph holds the weights the step changed")
    return Suggestion(
        f"build {loss} from {name}.detach(): {name} is computed from the weights {order.optimizer}.step() updates "
        f"alone, and the gradient {loss}.backward() gives them is never applied ({order.optimizer}.zero_grad() "
        f"clears it before their next step); detached, {loss} keeps the value this run computed and trains what "
        "its own optimizer steps as it would have with the weights before the step", replacement, location), location
