"""Errors about which tensors require grad: backward() on a non-scalar, numpy() on a tensor
in the graph, requires_grad on integer or non-leaf tensors, hooks on tensors outside the
graph, out= with arguments in the graph, an optimizer given a non-leaf."""

from __future__ import annotations

import ast
import dataclasses
import textwrap

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import (
    diagnosis, find_calls, line_change, statement_change, statement_of, text_of, user_statement,
)
from autograd_doctor.analysis.errors.context import (
    ErrorContext, carrying_assignment, enclosing_function, last_assignment, line_location, local_name_of,
    module_attribute_assignment, value_of, walk_own_scope,
)
from autograd_doctor.analysis.grad_off_blocks import block_body_dedented, grad_off_with_around
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, display_path, parse_file, replace_node_text, replace_nodes_text, segment, source_line, statement_location,
    walk_covering,
)

FLOAT_DTYPE = "torch.float32"


def _raised(context: ErrorContext):
    """(statement, location, filename) of the user's line that raised."""
    found = context.innermost_user()
    if found is None:
        return None, None, None
    frame, line = found
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    return statement, location, filename


def _made_at(filename: str, name: str | None, line: int, note: str):
    """Where `name` was last assigned before `line`, as a related location."""
    if not name or not name.isidentifier():
        return None
    statement = last_assignment(filename, name, line)
    return statement_location(filename, statement, role="made", note=note) if statement is not None else None


def _receiver(call: ast.Call) -> ast.expr | None:
    return call.func.value if isinstance(call.func, ast.Attribute) else None


def non_scalar_backward(context: ErrorContext, already):
    """backward() or torch.autograd.grad() without a gradient argument, on an output with several
    elements or on a complex one."""
    statement, location, filename = _raised(context)
    if location is None:
        return None
    frame = context.torch_frame("_make_grads")
    output = None
    if frame is not None:
        outputs = frame.f_locals.get("outputs")
        output = outputs[0] if outputs else None
    backward_calls = find_calls(statement, "backward")
    grad_calls = [c for c in find_calls(statement, "grad") if call_argument(c, 0, "outputs") is not None] \
        if not backward_calls else []
    verb = "torch.autograd.grad()" if grad_calls else "backward()"
    if output is not None and output.is_complex() and output.numel() == 1:
        return _complex_output(context, statement, location, filename, verb)
    location.note = f"{verb} of a tensor with several elements"
    shape = list(output.shape) if output is not None else None
    notes = [f"the tensor has shape {shape}; {verb} without a gradient argument needs a single number (a loss)"
             if shape is not None else f"{verb} without a gradient argument needs a single number (a loss)"]
    helps = []
    receiver = _receiver(backward_calls[0]) if len(backward_calls) == 1 else None
    if receiver is not None and text_of(filename, receiver) in ("torch.autograd", "autograd"):
        # torch.autograd.backward(y): the tensor is the first argument, reduced there the same way.
        call = backward_calls[0]
        receiver = call.args[0] if len(call.args) == 1 and not call.keywords and \
            isinstance(call.args[0], (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else None
    if grad_calls:
        # torch.autograd.grad(y, x) returns the gradient itself, whose scale is the result: y.sum() and
        # y.mean() give gradients N times apart, and which one is meant only the user can tell, unless
        # y has the shape of x (one output per input element: a pointwise derivative, see below).
        output = text_of(filename, call_argument(grad_calls[0], 0, "outputs")) or "the output"
        pointwise = _pointwise_derivative(context, filename, statement, grad_calls[0], shape)
        outside = _inputs_outside_the_graph(context, filename, grad_calls[0], output) if pointwise is None else None
        if pointwise is not None:
            notes.append(pointwise[0])
            helps.append(statement_change(location, pointwise[1], pointwise[2]))
        elif outside is not None:
            notes.append(outside[0])
            helps.append(Suggestion(outside[1]))
        else:
            helps.append(Suggestion(f"reduce {output} to the number whose gradient you want: {output}.sum() (or "
                                    f".mean(), whose gradient is 1/{'N' if shape is None else _count(shape)} of it), "
                                    f"or pass grad_outputs=torch.ones_like({output}) (the same as .sum()); "
                                    "autograd-doctor does not choose, as the scale of the gradient returned is the "
                                    "result"))
    elif receiver is not None and (misplaced := _reduction_of_one_factor(filename, receiver, statement.lineno)):
        # `loss = a * b.mean()`: the reduction the user wrote binds to one factor only.
        made, reduced_factor, new_made = misplaced
        made_location = statement_location(filename, made, role="made",
                                           note=f"{reduced_factor} reduces one factor only, not the product")
        notes.append(f"line {made.lineno} reduces {reduced_factor} alone: a method call binds tighter than the "
                     f"operator around it, so {text_of(filename, receiver)} keeps the shape of the other operand")
        helps.append(_failing_value_change(statement_change(
            made_location, "reduce the whole product, as the reduction written at its end was meant to: put the "
                           "operands in brackets before it", new_made)))
        return diagnosis(codes.BACKWARD_NON_SCALAR, made_location, [location], notes=notes, help=helps)
    elif receiver is not None:
        text = text_of(filename, receiver)
        count = 'N' if shape is None else _count(shape)
        found = context.innermost_user()
        per_element_loss = _unreduced_loss(output, filename, receiver, statement.lineno,
                                           found[0] if found is not None else None)
        own_reduction = _reduction_written_later(filename, receiver, statement)
        if per_element_loss and own_reduction is None:
            # Losses kept per element: the mean (the loss function's default) and the sum train
            # differently (the sum multiplies the gradients, and an SGD step, by the number of
            # elements), and which one the training means the program does not show.
            notes.append(f"{text} holds one loss per element ({per_element_loss})")
            helps.append(Suggestion(
                f"reduce {text} to the one number the training minimises before backward(): {text}.mean() "
                f"(the loss function's default, reduction='mean') or {text}.sum() (whose gradients, and an SGD "
                f"step, are {count} times larger); the program does not show which one is meant, so "
                "autograd-doctor does not choose"))
            return diagnosis(codes.BACKWARD_NON_SCALAR, location, notes=notes, help=helps)
        reduction = own_reduction or "sum"
        reduced = f"{text}.{reduction}()" if isinstance(receiver, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
            else f"({text}).{reduction}()"
        new_statement = replace_node_text(filename, statement, receiver, reduced)
        read_later = isinstance(receiver, ast.Name) and read_after(filename, receiver.id, statement) \
            and not _read_after_as_elements(filename, receiver.id, statement)
        elementwise = _elementwise_of_inputs(output, shape) if read_later and not per_element_loss else None
        if elementwise is not None and not _read_after_as_one_number(filename, receiver.id, statement):
            # One output per input element (`A = x * y` of two leaves of A's shape, no module's
            # parameter): each element's derivative is asked for, and the lines after backward()
            # read the values A holds, which the reduction must not replace.
            notes.append(f"{text} has the shape of the tensors it is computed from ({elementwise}): one output per "
                         "input element, whose derivatives backward() of the sum gives one by one")
            read_later = False
        if read_later and new_statement is not None:
            # The program reads the tensor again after backward() (a logged loss, .item(), a list of
            # losses): reduced only inside the call, it would still hold one value per element there.
            new_statement = f"{text} = {reduced}\n" + replace_node_text(filename, statement, receiver, text)
        passed = f"{text}.backward(torch.ones_like"
        if own_reduction is not None:
            if per_element_loss:
                notes.append(f"{text} holds one loss per element ({per_element_loss})")
            notes.append(f"the program itself reduces {text} with .{own_reduction}() after backward() (the number "
                         "it reports)")
            message = (f"reduce {text} as the program reports it: {text}.{own_reduction}() (the other reduction "
                       f"would scale the gradients by {count} or 1/{count})")
        elif elementwise is not None and not read_later:
            message = (f"take every element's derivative, {text}.sum().backward() (the same as {passed}({text}))): "
                       f"a mean would divide each by {count}; {text} itself keeps its values, which the lines after "
                       "backward() read")
        else:
            message = (f"reduce {text} to the number you minimise: {text}.sum() (or .mean(), which scales the "
                       f"gradients by 1/{count}); {passed}({text})) is the same as .sum()")
        if read_later:
            message += f"; {text} itself is reduced, as the lines after backward() read it"
        # the reduced value is what backward() is meant to get: --verify-fix compares the calls before it
        helps.append(_failing_value_change(statement_change(location, message, new_statement)))
    else:
        helps.append(Suggestion("reduce the output to a scalar loss first (.sum() or .mean()), or pass the "
                                "gradient of the loss with respect to it: backward(gradient)"))
    found = diagnosis(codes.BACKWARD_NON_SCALAR, location, notes=notes, help=helps)
    if grad_calls:
        found.title = "torch.autograd.grad() was called on a tensor with more than one element"
    return found


# Methods that reduce a tensor to one number when called without arguments.
FULL_REDUCTIONS = ("mean", "sum")
# Leaves reached from an output, at most (a graph of a few inputs, not a model's).
MAX_LEAVES = 16


def _elementwise_of_inputs(output, shape) -> str | None:
    """The shape, as text, when every leaf that requires grad and that `output`'s graph reaches has
    the output's shape and none is a module's parameter (nn.Parameter): the output is a value per
    input element (`A = x * y`, a position per time step), not a loss of a model. None otherwise,
    and when the graph is larger than MAX_LEAVES leaves or cannot be walked."""
    import torch

    node = getattr(output, "grad_fn", None)
    if node is None or shape is None:
        return None
    leaves, pending, seen = [], [node], set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if len(seen) > 256:
            return None
        variable = getattr(current, "variable", None)
        if isinstance(variable, torch.Tensor):
            leaves.append(variable)
            if len(leaves) > MAX_LEAVES:
                return None
            continue
        pending.extend(next_node for next_node, _ in getattr(current, "next_functions", ()))
    if not leaves or any(isinstance(leaf, torch.nn.Parameter) or list(leaf.shape) != shape for leaf in leaves):
        return None
    return str(shape)


# Calls that need a tensor of one element: `loss.item()`, `float(loss)`, `int(loss)`.
ONE_NUMBER_METHODS = ("item",)
ONE_NUMBER_FUNCTIONS = ("float", "int")


def _read_after_as_one_number(filename: str, name: str, statement: ast.stmt) -> bool:
    """Whether a line after `statement`, in the same function, reads `name` as one number
    (`name.item()`, `float(name)`): reduced only inside the backward() call, it would fail there."""
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if scope is None:
        return False
    end = statement.end_lineno or statement.lineno
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call) or node.lineno <= end:
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in ONE_NUMBER_METHODS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in ONE_NUMBER_FUNCTIONS and len(node.args) == 1 \
                and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
            return True
    return False


def _reduction_written_later(filename: str, receiver: ast.expr, statement: ast.stmt) -> str | None:
    """"mean" or "sum" when the lines after backward(), in the same function, reduce the tensor
    given to it with that method and no other (`losses.append(loss.mean().item())`): the number the
    program reports as its loss. None when neither or both are written."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    if not isinstance(receiver, ast.Name):
        return None
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if scope is None:
        return None
    found = {node.func.attr for node in ast.walk(scope)
             if isinstance(node, ast.Call) and node.lineno > statement.end_lineno
             and isinstance(node.func, ast.Attribute) and node.func.attr in FULL_REDUCTIONS
             and isinstance(node.func.value, ast.Name) and node.func.value.id == receiver.id
             and not node.args and not node.keywords}
    return found.pop() if len(found) == 1 else None
# Methods that only move or cast a value, written after a reduction (`w.mean().to(device)`).
PLACEMENT_METHODS = ("to", "cuda", "cpu", "float", "double", "half", "type")


def _reduction_of_one_factor(filename: str, receiver: ast.expr, line: int):
    """(assignment, reduced factor's text, new assignment) when the tensor handed to backward() was
    assigned a product whose last factor ends with a full reduction:
    `loss = td_error.pow(2) * weights.mean().to(device)`. Python binds `.mean()` to `weights` alone,
    so the loss keeps td_error's shape; the reduction belongs after the whole product:
    `loss = (td_error.pow(2) * weights).mean().to(device)`. None for any other assignment."""
    if not isinstance(receiver, ast.Name):
        return None
    made = last_assignment(filename, receiver.id, line)
    # Only a product: a weighted loss whose weights got the reduction (`x / w.sum()` is often a
    # normalisation, and a mean distributes over `+` and `-`, so those keep the general help).
    if not isinstance(made, ast.Assign) or len(made.targets) != 1 or not isinstance(made.value, ast.BinOp) \
            or not isinstance(made.value.op, ast.Mult):
        return None
    product = made.value
    # Walk down the last operand's method chain: placements first, then the reduction.
    tail, node = [], product.right
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in PLACEMENT_METHODS:
        tail.append(node)
        node = node.func.value
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FULL_REDUCTIONS
            and not node.args and not node.keywords):
        return None
    reduction, factor = node, node.func.value
    left, right_factor = text_of(filename, product.left), text_of(filename, factor)
    whole, reduced_factor = text_of(filename, product), text_of(filename, reduction)
    if None in (left, right_factor, whole, reduced_factor):
        return None
    operator = whole[len(left):whole.index(right_factor, len(left))]
    suffix = whole[whole.index(reduced_factor) + len(reduced_factor):] if tail else ""
    new_value = f"({left}{operator}{right_factor}).{reduction.func.attr}(){suffix}"
    new_made = replace_node_text(filename, made, product, new_value)
    return (made, reduced_factor, new_made) if new_made is not None else None


# Reads that take a tensor's elements one by one: `losses.tolist()`, `losses[0]`, `for l in losses`.
ELEMENT_METHODS = ("tolist", "unbind", "split", "chunk")


def _read_after_as_elements(filename: str, name: str, statement: ast.stmt) -> bool:
    """Whether every read of `name` after `statement` (in the same function, before binding it
    again) takes its elements (a list of per-task losses logged with `.tolist()`, indexed, or
    iterated): such a program means the tensor to keep its elements, so it is reduced only where
    backward() is called."""
    tree = parse_file(filename)
    if tree is None:
        return False
    scope = enclosing_function(tree, statement.lineno)
    parents = {child: node for node in ast.walk(scope) for child in ast.iter_child_nodes(node)}
    uses = sorted((node for node in ast.walk(scope) if isinstance(node, ast.Name) and node.id == name
                   and node.lineno > (statement.end_lineno or statement.lineno)),
                  key=lambda node: (node.lineno, node.col_offset))
    reads = []
    for node in uses:
        if not isinstance(node.ctx, ast.Load):
            break
        reads.append(node)
    if not reads:
        return False
    for node in reads:
        parent = parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.attr in ELEMENT_METHODS:
            continue
        if isinstance(parent, ast.Subscript) and parent.value is node:
            continue
        if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
            continue
        return False
    return True


def read_after(filename: str, name: str, statement: ast.stmt) -> bool:
    """Whether the program reads `name` after `statement` (in the same function, before binding it
    again): the first use of the name after the statement's last line is a load."""
    tree = parse_file(filename)
    if tree is None:
        return False
    scope = enclosing_function(tree, statement.lineno)
    uses = []
    for node in ast.walk(scope):
        if node is not scope and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Name) and node.id == name and node.lineno > (statement.end_lineno or statement.lineno):
            uses.append(node)
    if not uses:
        return False
    first = min(uses, key=lambda node: (node.lineno, node.col_offset))
    return isinstance(first.ctx, ast.Load)


def _inputs_outside_the_graph(context: ErrorContext, filename: str, call: ast.Call, output: str):
    """(note, advice) for torch.autograd.grad(u, t) whose `inputs` t is one tensor that does not
    require grad: it is not in u's graph, so no grad_outputs makes the call work. When t is all
    ones of u's shape (`torch.ones_like(u)`, the seed grad_outputs takes, given in the inputs'
    place), that is said too. Advice only: which tensor the derivative is meant with respect to,
    and that it must require grad before u is computed from it, the program does not show."""
    import torch

    found = context.innermost_user()
    inputs_node = call_argument(call, 1, "inputs")
    if found is None or inputs_node is None:
        return None
    inputs = value_of(found[0], inputs_node)
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    if len(inputs) != 1 or not isinstance(inputs[0], torch.Tensor) or inputs[0].requires_grad:
        return None
    name = text_of(filename, inputs_node) or "the inputs"
    note = (f"the second argument of torch.autograd.grad() is `inputs`, the tensors to differentiate {output} with "
            f"respect to; {name} does not require grad, so it is not in {output}'s graph")
    seed = inputs[0].is_floating_point() and inputs[0].numel() > 0 and bool((inputs[0] == 1).all())
    if seed:
        note += f" (it holds ones of {output}'s shape: the seed that `grad_outputs=` takes)"
    advice = (f"pass {name} as grad_outputs={name} if it is the seed, and as inputs the tensor to differentiate "
              f"{output} with respect to (a leaf made with requires_grad=True, or .requires_grad_(), before "
              f"{output} is computed from it); autograd-doctor does not choose that tensor")
    return note, advice


def _pointwise_derivative(context: ErrorContext, filename: str, statement, call: ast.Call, shape):
    """(note, message, new statement) for torch.autograd.grad(u, t) where u has the shape of the one
    input t: one output per input element, as in a PINN's du/dt or a force field's -dE/dx per atom.
    The derivative of each element with respect to its own input is then what is asked for, and
    grad_outputs=torch.ones_like(u) gives exactly it (the gradient of u.sum()); a mean would divide
    every derivative by the number of elements. None when that shape match does not hold."""
    import torch

    found = context.innermost_user()
    output_node, inputs_node = call_argument(call, 0, "outputs"), call_argument(call, 1, "inputs")
    if found is None or shape is None or inputs_node is None or len(call.args) > 2 \
            or any(k.arg == "grad_outputs" for k in call.keywords) \
            or not isinstance(output_node, (ast.Name, ast.Attribute)) or found[0].f_globals.get("torch") is not torch:
        return None
    inputs = value_of(found[0], inputs_node)
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    if len(inputs) != 1 or not isinstance(inputs[0], torch.Tensor) or list(inputs[0].shape) != shape \
            or not inputs[0].requires_grad:
        # An input that does not require grad is not in the output's graph: grad_outputs alone
        # would leave the call failing (see _inputs_outside_the_graph).
        return None
    output, call_text = text_of(filename, output_node), text_of(filename, call)
    if call_text is None or not call_text.endswith(")"):
        return None
    new_call = f"{call_text[:-1].rstrip().rstrip(',')}, grad_outputs=torch.ones_like({output}))"
    note = (f"{output} has the shape of {text_of(filename, inputs_node)} ({shape}): one output per input element, "
            "so the derivative asked for is taken element by element, not of a mean")
    message = (f"pass grad_outputs=torch.ones_like({output}): the gradient of {output}.sum(), which is each "
               f"element's derivative with respect to its own input when the elements are computed separately "
               f"(a mean would divide every derivative by {_count(shape)})")
    return note, message, replace_node_text(filename, statement, call, new_call)


def _unreduced_loss(output, filename: str, receiver: ast.expr, line: int, frame=None) -> str | None:
    """Why `output` is a loss per element, or None: it was made by a loss function (its grad_fn
    is a loss's backward, e.g. MseLossBackward0, NllLossBackward0 for cross_entropy), or the
    statement that made it passes reduction="none"."""
    node_name = type(getattr(output, "grad_fn", None)).__name__
    if "Loss" in node_name or node_name.startswith("BinaryCrossEntropy"):
        return f"made by a loss function with reduction='none', {node_name}"
    upstream = _unreduced_loss_node_below(getattr(output, "grad_fn", None))
    if upstream is not None:
        # Reshaped, masked or averaged per sample after the loss function (a loss per word made
        # from a loss per character): still losses, one per element, which the default averages.
        return f"computed from a loss function called with reduction='none', {upstream}"
    # The receiver itself (`loss.backward()`) or the tensor a call wraps (`scaler.scale(loss).backward()`,
    # which multiplies it by a number).
    names = [receiver] if isinstance(receiver, ast.Name) else \
        [arg for call in ast.walk(receiver) if isinstance(call, ast.Call) for arg in call.args
         if isinstance(arg, ast.Name)]
    for name in names:
        wrapped = value_of(frame, name) if frame is not None and name is not receiver else None
        wrapped_node = type(getattr(wrapped, "grad_fn", None)).__name__
        if "Loss" in wrapped_node or wrapped_node.startswith("BinaryCrossEntropy"):
            return f"{name.id} was made by a loss function with reduction='none', {wrapped_node}"
        made = last_assignment(filename, name.id, line)
        for node in ast.walk(made) if made is not None else ():
            if isinstance(node, ast.keyword) and node.arg == "reduction" and isinstance(node.value, ast.Constant) \
                    and node.value.value == "none":
                return "made with reduction='none'" if name is receiver else f"{name.id} was made with reduction='none'"
        source = _per_element_losses_upstream(filename, made) if made is not None else None
        if source is not None:
            return f"computed from {source}, made with reduction='none'"
    return None


def _per_element_losses_upstream(filename: str, made: ast.stmt, depth: int = 3) -> str | None:
    """The name of a tensor made with reduction='none' that the assignment `made` computes from,
    following the assignments of the names it reads (`loss = per_token.sum(dim=1) / lengths`, with
    `per_token = F.cross_entropy(..., reduction="none") * mask`): losses per element reduced over
    some dimensions only are still one loss per example. None when there is none within `depth`
    assignments."""
    pending, seen = [made], set()
    for _ in range(depth):
        next_pending = []
        for statement in pending:
            value = getattr(statement, "value", None)
            for used in sorted({n.id for n in ast.walk(value) if isinstance(n, ast.Name)} - seen) if value else ():
                seen.add(used)
                earlier = last_assignment(filename, used, statement.lineno)
                if earlier is None or earlier is statement:
                    continue
                if any(isinstance(node, ast.keyword) and node.arg == "reduction" and isinstance(node.value, ast.Constant)
                       and node.value.value == "none" for node in ast.walk(earlier)):
                    return used
                next_pending.append(earlier)
        pending = next_pending
    return None


# Nodes of the failing tensor's graph looked at for a loss function's node (a bounded walk).
UNREDUCED_LOSS_NODES_WALKED = 64


def _unreduced_loss_node_below(grad_fn) -> str | None:
    """The name of a loss function's node called with reduction='none' (its saved reduction is 0,
    Reduction::None) among the first nodes of the graph below `grad_fn`; None otherwise."""
    queue, seen = [grad_fn] if grad_fn is not None else [], set()
    while queue and len(seen) < UNREDUCED_LOSS_NODES_WALKED:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        name = type(node).__name__
        if ("Loss" in name or name.startswith("BinaryCrossEntropy")) and getattr(node, "_saved_reduction", None) == 0:
            return name
        queue.extend(next_node for next_node, _index in getattr(node, "next_functions", ()))
    return None


def _complex_output(context: ErrorContext, statement, location, filename: str, verb: str):
    """A complex loss: the gradient of a complex number is not defined; the loss must be real."""
    location.note = f"{verb} of a complex number"
    notes = [f"{verb} needs a real number to minimise; a complex loss has no order, so PyTorch does not "
             "differentiate it without a gradient argument"]
    helps = []
    found = user_statement(context)
    squared = _complex_square(found[0], found[1], found[2]) if found is not None else None
    primary, related = location, []
    if squared is not None:
        made, power, operand = squared
        text = text_of(filename, operand)
        made_location = statement_location(filename, made, role="made",
                                           note="squares a complex difference: z ** 2 is complex, |z| ** 2 is real")
        new_statement = replace_node_text(filename, made, power, f"({text}).abs() ** 2")
        helps.append(_failing_value_change(statement_change(
            made_location, f"square the magnitude, not the complex number: ({text}).abs() ** 2 is the squared error "
                           "|z|^2 of complex values (real, as a loss must be)", new_statement)))
        notes.append(f"line {made.lineno} squares a complex value: z ** 2 = (a^2 - b^2) + 2abi, not the squared "
                     "error |z|^2 = a^2 + b^2")
        primary, related = made_location, [location]
    helps.append(Suggestion("make the loss real: the squared magnitude (z.abs() ** 2), the real part (z.real), or "
                            "a loss on torch.view_as_real(z); which one you minimise is yours to choose"))
    found_diagnosis = diagnosis(codes.BACKWARD_NON_SCALAR, primary, related, notes=notes, help=helps)
    found_diagnosis.title = f"{verb} was called on a complex tensor: a loss must be real"
    return found_diagnosis


def _failing_value_change(suggestion: Suggestion) -> Suggestion:
    """The change gives the failing call another value on purpose (--verify-fix compares the calls before it)."""
    suggestion.changes_failing_value = suggestion.replacement is not None
    return suggestion


def _complex_square(frame, line: int, filename: str):
    """(statement, power, operand) for the assignment of the loss that squares a complex value:
    `loss = ((estimate - clean) ** 2).mean()` where a name the operand reads is a complex tensor.
    None when there is not exactly one such power."""
    import torch

    statement, _location = statement_of(filename, line)
    call = next(iter(find_calls(statement, "backward") or find_calls(statement, "grad")), None) \
        if statement is not None else None
    receiver = _receiver(call) if call is not None and find_calls(statement, "backward") else (
        call.args[0] if call is not None and call.args else None)
    if not isinstance(receiver, ast.Name):
        return None
    made = last_assignment(filename, receiver.id, line)
    if made is None or not isinstance(made, ast.Assign):
        return None
    powers = [node for node in ast.walk(made.value) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
              and isinstance(node.right, ast.Constant) and node.right.value == 2
              and any(isinstance(value := value_of(frame, name), torch.Tensor) and value.is_complex()
                      for name in ast.walk(node.left) if isinstance(name, (ast.Name, ast.Attribute)))]
    if len(powers) != 1:
        return None
    return made, powers[0], powers[0].left


def _count(shape) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


# NumPy functions whose result is positions (integers): the same computation in torch has no
# gradient, so detaching their argument loses nothing.
_NUMPY_INDEX_FUNCTIONS = {"argmin", "argmax", "argsort", "argpartition", "argwhere", "nonzero", "flatnonzero",
                          "searchsorted", "digitize"}


def _only_indices_of(statement: ast.stmt, converted: ast.expr) -> bool:
    """Whether `converted` is given straight to a NumPy function that returns positions
    (`np.argmin(cost, axis=1)`), as its first argument."""
    for call in (c for c in ast.walk(statement) if isinstance(c, ast.Call)):
        if isinstance(call.func, ast.Attribute) and call.func.attr in _NUMPY_INDEX_FUNCTIONS \
                and isinstance(call.func.value, ast.Name) and call.func.value.id in ("np", "numpy") \
                and call.args and call.args[0] is converted:
            return True
    return False


def numpy_of_grad_tensor(context: ErrorContext, already):
    statement, location, filename = _raised(context)
    if location is None:
        return None
    location.note = "converts a tensor that is part of the autograd graph"
    calls = [c for c in find_calls(statement, "numpy") if _receiver(c) is not None]
    converted = [_receiver(c) for c in calls] if calls else _tensors_given_to_numpy(context, statement)
    helps = []
    lists = _lists_given_to_numpy(context, statement) if not converted else []
    back_to_torch = _converted_back_to_torch(statement, converted[0]) if len(converted) == 1 else None
    indices = len(converted) == 1 and _only_indices_of(statement, converted[0])
    if back_to_torch is not None and indices:
        back_to_torch = None  # np.argmin(cost): integer positions, which carry no gradient in torch either
    if back_to_torch is not None:
        # `torch.from_numpy(fkine(q.numpy()))`: the NumPy result comes back as a tensor the program
        # goes on computing with, most often into a loss; detaching would make the error go away and
        # leave that tensor with no path to `q`, so nothing before it trains. No change is right here.
        text = text_of(filename, converted[0])
        helps.append(Suggestion(
            f"the NumPy result comes back into torch ({text_of(filename, back_to_torch.func)}(...)) on this line: "
            f"autograd cannot follow the NumPy code, and detaching {text} would leave the tensor made here with no "
            f"gradient path to {text}; to train through it, write that computation with torch operations "
            f"(torch.cos, torch.stack, ...) on {text}; only if no gradient should pass there, call {text}.detach() "
            "before .numpy()"))
    elif len(converted) == 1:
        receiver = converted[0]
        text = text_of(filename, receiver)
        # A detached tensor given to np.argmin would reach Tensor.argmin (NumPy calls the argument's
        # own method of that name) and come back a tensor: give NumPy an array.
        new_statement = replace_node_text(filename, statement, receiver,
                                          f"{text}.detach().numpy()" if indices else f"{text}.detach()")
        helps.append(statement_change(location, "detach it first: NumPy arrays carry no gradient, so the "
                                      "conversion must leave the graph explicitly", new_statement))
    elif len(converted) > 1 and (several := _each_detached(filename, statement, converted)) is not None:
        helps.append(statement_change(location, several, replace_nodes_text(
            filename, statement, [(node, f"{text_of(filename, node)}.detach()") for node in
                                  _outermost_free(converted)])))
    elif len(lists) == 1 and (reduced := _numpy_reduction_differentiated(filename, statement, lists[0])) is not None:
        # `loss = np.mean(micro_losses)` then `loss.backward()`: the NumPy value is what the program
        # differentiates, so detaching would only move the error to backward(); torch computes the
        # same reduction with its graph.
        call, torch_text = reduced
        new_statement = replace_node_text(filename, statement, call, torch_text)
        helps.append(statement_change(location, f"reduce the list with torch, not NumPy: {torch_text} is the same "
                                      f"number and keeps the graph that {statement.targets[0].id} is later "
                                      "differentiated through", new_statement))
    elif len(lists) == 1 and _rebound_each_iteration(filename, statement, lists[0]):
        # `np.asarray(ys) for xs, ys in zip(self.X, self.Y)`: only this iteration's list was read;
        # the others may hold numbers (a plotted curve of zeros), which have no .detach(). Detach
        # the tensors among the elements and give NumPy the others as they are.
        text = text_of(filename, lists[0])
        new_statement = replace_node_text(
            filename, statement, lists[0], f"[t.detach() if isinstance(t, torch.Tensor) else t for t in {text}]")
        helps.append(statement_change(location, f"give NumPy the detached tensors of {text}: {text} is bound anew on "
                                      "each iteration and only this one was read, so its other values may hold "
                                      "numbers, which are given as they are", new_statement))
    elif len(lists) == 1:
        # np.mean(history) of a list of losses: NumPy converts each element; give it the detached
        # elements (the same values) and leave the list, which other code may use, as it is.
        text = text_of(filename, lists[0])
        new_statement = replace_node_text(filename, statement, lists[0], f"[t.detach() for t in {text}]")
        helps.append(statement_change(location, f"give NumPy the detached elements of {text}: the same values, "
                                      "without the graph NumPy cannot hold", new_statement))
    else:
        helps.append(Suggestion("call .detach() on the tensor before converting it (np.array(t.detach()), "
                                "t.detach().cpu().numpy())"))
    return diagnosis(codes.NUMPY_REQUIRES_GRAD, location,
                     notes=["a NumPy array shares the tensor's memory but not its graph; PyTorch refuses to "
                            "drop the gradient silently"], help=helps)


def _outermost_free(converted: list) -> list:
    """The converted nodes that hold none of the others (`np.mean(np.abs(t))` converts `t`
    inside `np.abs(t)`: detaching `t` is enough), each once."""
    kept = []
    for node in converted:
        inner = any(other is not node and any(n is other for n in ast.walk(node)) for other in converted)
        if not inner and not any(node is k for k in kept):
            kept.append(node)
    return kept


def _each_detached(filename: str, statement: ast.stmt, converted: list) -> str | None:
    """The help's message when several tensors of one statement are converted for NumPy
    (`np.allclose(w[i], w[j])`, `a.numpy() + b.numpy()`) and none of the NumPy results comes back
    into torch: each is detached, the same values. None when one comes back (the program computes
    on in torch; detaching would cut that path, so the help stays advice) or a position-only NumPy
    function is given one of them (its detached tensor would need `.numpy()` too)."""
    nodes = _outermost_free(converted)
    if len(nodes) < 2 or any(_converted_back_to_torch(statement, node) is not None for node in nodes):
        return None
    if any(_only_indices_of(statement, node) for node in nodes):
        return None
    texts = ", ".join(text_of(filename, node) for node in nodes)
    return (f"detach each of them first ({texts}): NumPy arrays carry no gradient, so each conversion must "
            "leave the graph explicitly; the values compared or computed are the same")


# torch's functions that turn a NumPy array (or anything array-like) back into a tensor.
_BACK_TO_TORCH = {"from_numpy", "tensor", "as_tensor", "asarray", "Tensor", "FloatTensor", "DoubleTensor"}


def _converted_back_to_torch(statement: ast.stmt, converted: ast.AST) -> ast.Call | None:
    """The `torch.from_numpy(...)` (torch.tensor, as_tensor, ...) call of the statement whose
    arguments contain the converted tensor: the NumPy value is turned back into a tensor there."""
    for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call)):
        function = call.func
        if not (isinstance(function, ast.Attribute) and function.attr in _BACK_TO_TORCH
                and isinstance(function.value, ast.Name) and function.value.id == "torch"):
            continue
        if any(node is converted for argument in call.args for node in ast.walk(argument)):
            return call
    return None


def _numpy_arguments(context: ErrorContext, statement):
    """(frame, argument) for each positional argument of a NumPy call in the statement
    (np.sort(t), np.mean(history)), read in the innermost user frame."""
    found = context.innermost_user()
    if found is None:
        return
    frame = found[0]
    for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call)):
        function = value_of(frame, call.func)
        module = getattr(function, "__module__", None) or type(function).__module__
        if str(module).split(".")[0] == "numpy":
            for argument in call.args:
                yield frame, argument


def _tensors_given_to_numpy(context: ErrorContext, statement) -> list:
    """The arguments of NumPy calls in the statement (np.sort(t), np.asarray(t)) that hold a
    tensor requiring grad: NumPy converts them inside its own code."""
    import torch

    given = []
    for frame, argument in _numpy_arguments(context, statement):
        value = value_of(frame, argument)
        if isinstance(value, torch.Tensor) and value.requires_grad:
            given.append(argument)
        elif isinstance(argument, (ast.ListComp, ast.GeneratorExp)):
            given += _comprehension_tensors(frame, argument)
    return given


# NumPy reductions over every element whose torch method of the same name, on the stacked list,
# computes the same number.
_NUMPY_WHOLE_REDUCTIONS = {"mean", "sum", "prod", "max", "min", "amax", "amin"}


def _numpy_reduction_differentiated(filename: str, statement: ast.stmt, listed: ast.expr):
    """(call, torch text) when the statement is `name = np.mean(listed)` (a reduction over every
    element, the list its only argument) and `name` is later differentiated in the same function
    (`name.backward()`, `torch.autograd.grad(name, ...)`): the torch reduction of the stacked list,
    `torch.stack(listed).mean()`. None otherwise."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return None
    call = statement.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in _NUMPY_WHOLE_REDUCTIONS and isinstance(call.func.value, ast.Name)
            and call.func.value.id in ("np", "numpy") and len(call.args) == 1 and not call.keywords
            and call.args[0] is listed):
        return None
    name = statement.targets[0].id
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    scope = scope if scope is not None else tree
    if scope is None:
        return None
    differentiated = False
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call) or getattr(node, "lineno", 0) <= statement.end_lineno:
            continue
        function = node.func
        if isinstance(function, ast.Attribute) and function.attr == "backward" \
                and isinstance(function.value, ast.Name) and function.value.id == name:
            differentiated = True
        elif isinstance(function, ast.Attribute) and function.attr == "grad" and node.args \
                and isinstance(node.args[0], ast.Name) and node.args[0].id == name:
            differentiated = True
    if not differentiated:
        return None
    method = {"amax": "max", "amin": "min"}.get(call.func.attr, call.func.attr)
    return call, f"torch.stack({text_of(filename, listed)}).{method}()"


def _rebound_each_iteration(filename: str, statement: ast.stmt, argument: ast.expr) -> bool:
    """Whether the name given to NumPy is a loop variable: a target of a comprehension of the
    statement (`for xs, ys in zip(self.X, self.Y)`) or of a `for` loop around it. Its live value
    is this iteration's only; the other iterations' values were never read."""
    if not isinstance(argument, ast.Name):
        return False

    def binds(target: ast.expr) -> bool:
        return any(isinstance(node, ast.Name) and node.id == argument.id for node in ast.walk(target))

    for node in ast.walk(statement):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)) \
                and any(binds(generator.target) for generator in node.generators):
            return True
    tree = parse_file(filename)
    if tree is None:
        return False
    return any(isinstance(node, (ast.For, ast.AsyncFor)) and binds(node.target) and node.body
               and node.body[0].lineno <= statement.lineno <= (node.end_lineno or node.lineno)
               for node in ast.walk(tree))


def _lists_given_to_numpy(context: ErrorContext, statement) -> list:
    """The names given to NumPy calls in the statement (np.mean(history)) whose value is a list or
    tuple of tensors, one of which requires grad."""
    import torch

    given = []
    for frame, argument in _numpy_arguments(context, statement):
        value = value_of(frame, argument) if isinstance(argument, (ast.Name, ast.Attribute)) else None
        if isinstance(value, (list, tuple)) and value and len(value) <= 10000 and \
                all(isinstance(v, torch.Tensor) for v in value) and any(v.requires_grad for v in value):
            given.append(argument)
    return given


def _comprehension_tensors(frame, comprehension: ast.ListComp | ast.GeneratorExp) -> list[ast.Name]:
    """The reads, in `[x * y for x, y in zip(sizes, losses)]`'s element, of a loop variable that
    runs over a list of tensors requiring grad (the list is read from the frame, where it is;
    `zip(a, b)` pairs each target with its list)."""
    import torch

    from autograd_doctor.diagnosis.source import call_name

    carrying: set[str] = set()
    for generator in comprehension.generators:
        target, iterable = generator.target, generator.iter
        pairs = [(target, iterable)]
        if isinstance(iterable, ast.Call) and call_name(iterable) == "zip" and not iterable.keywords \
                and isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(iterable.args):
            pairs = list(zip(target.elts, iterable.args))
        for name, source in pairs:
            values = value_of(frame, source) if isinstance(name, ast.Name) else None
            if isinstance(values, (list, tuple)) and any(
                    isinstance(v, torch.Tensor) and v.requires_grad for v in values[:64]):
                carrying.add(name.id)
    return [node for node in ast.walk(comprehension.elt)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in carrying]


def integer_requires_grad(context: ErrorContext, already):
    statement, location, filename = _raised(context)
    if location is None:
        return None
    location.note = "requires_grad on an integer tensor"
    helps = []
    notes = ["only floating-point (and complex) tensors have gradients; integer tensors such as "
             "indices, labels and counts are never differentiated"]
    related = []
    factories = [c for c in ast.walk(statement) if isinstance(c, ast.Call)
                 and any(k.arg == "requires_grad" for k in c.keywords)]
    if len(factories) == 1:
        call = factories[0]
        dtype = next((k for k in call.keywords if k.arg == "dtype"), None)
        if dtype is not None:
            new_call = replace_node_text(filename, statement, dtype.value, FLOAT_DTYPE)
        else:
            requires = next(k for k in call.keywords if k.arg == "requires_grad")
            new_call = replace_node_text(filename, statement, requires,
                                         f"dtype={FLOAT_DTYPE}, {text_of(filename, requires)}")
        helps.append(statement_change(location, "if this is a value to learn, make it floating point where it "
                                      "is created", new_call))
    elif (wrapped := _integer_parameter_value(statement)) is not None:
        helps.append(statement_change(location, "if this is a value to learn, make it floating point where it is "
                                      "created (the same numbers, as float32)",
                                      replace_node_text(filename, statement, wrapped, as_float)
                                      if (as_float := _as_float(filename, wrapped)) is not None else None))
    else:
        calls = find_calls(statement, "requires_grad_")
        receiver = _receiver(calls[0]) if len(calls) == 1 else None
        name = text_of(filename, receiver) if receiver is not None else None
        made = _made_at(filename, name, location.line, f"{name} is made here, with an integer dtype")
        related.append(made)
        helps.append(Suggestion(
            f"if {name or 'it'} is a value to learn, create it as floating point (dtype={FLOAT_DTYPE} or "
            ".float()) where it is made; if it holds indices or labels, do not ask for its gradient"))
    return diagnosis(codes.INTEGER_REQUIRES_GRAD, location, related, notes, helps)


def _integer_parameter_value(statement) -> ast.expr | None:
    """The value given to the one `nn.Parameter(...)` in the statement (a Parameter requires grad,
    so an integer value raises there)."""
    calls = find_calls(statement, "Parameter")
    return calls[0].args[0] if len(calls) == 1 and calls[0].args else None


def _as_float(filename: str, value: ast.expr) -> str | None:
    """`value` made as float32: its dtype= replaced, dtype= added to a torch factory call, or
    `.float()` after anything else (None when its text cannot be read)."""
    text = text_of(filename, value)
    if text is None:
        return None
    if isinstance(value, ast.Call):
        dtype = next((k for k in value.keywords if k.arg == "dtype"), None)
        if dtype is not None:
            return ast.unparse(ast.Call(func=value.func, args=value.args, keywords=[
                k if k is not dtype else ast.keyword(arg="dtype", value=ast.parse(FLOAT_DTYPE, mode="eval").body)
                for k in value.keywords]))
        if isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) \
                and value.func.value.id == "torch":
            return text[:-1].rstrip() + f", dtype={FLOAT_DTYPE})"
    chained = isinstance(value, (ast.Call, ast.Attribute, ast.Name, ast.Subscript))
    return f"{text}.float()" if chained else f"({text}).float()"


def requires_grad_on_non_leaf(context: ErrorContext, already):
    statement, location, filename = _raised(context)
    if location is None:
        return None
    location.note = "changes requires_grad of a tensor computed from others"
    target = None
    turning_on = False
    calls = None
    if isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Attribute) \
            and statement.targets[0].attr == "requires_grad":
        target = statement.targets[0].value
        turning_off = isinstance(statement.value, ast.Constant) and statement.value.value is False
        turning_on = isinstance(statement.value, ast.Constant) and statement.value.value is True \
            and len(statement.targets) == 1
        if not isinstance(statement.value, ast.Constant) and len(statement.targets) == 1:
            # `t.requires_grad = other.requires_grad`: what the value was when it failed decides.
            user = context.innermost_user()
            value = value_of(user[0], statement.value) if user is not None else None
            turning_on, turning_off = value is True, value is False
    else:
        calls = find_calls(statement, "requires_grad_")
        target = _receiver(calls[0]) if len(calls) == 1 else None
        turning_off = bool(calls) and bool(calls[0].args) and isinstance(calls[0].args[0], ast.Constant) \
            and calls[0].args[0].value is False
    # The flag as the line writes it: an expression (`flag`, `phase == "train"`) is kept as written,
    # so that the changed line sets what the line sets on every call, not the value of the failing one.
    flag_text = _flag_as_written(statement, calls)
    if flag_text is not None and calls is not None and not turning_off:
        user = context.innermost_user()
        value = value_of(user[0], calls[0].args[0]) if user is not None else None
        turning_on, turning_off = value is True, value is False
    name = text_of(filename, target) if target is not None else None
    parametrized = _parametrized_attribute(context, target) if turning_on or turning_off else None
    if parametrized is not None:
        return _parametrized_requires_grad(location, parametrized, turning_on, flag_text)
    recomputed = _legacy_reparametrized_attribute(context, target) if turning_on or turning_off else None
    if recomputed is not None:
        return _legacy_reparametrized_requires_grad(location, recomputed, turning_on, flag_text)
    part = _part_of_a_trained_leaf(context, filename, target) if turning_off else None
    if part is not None:
        return _freeze_part_with_hook(location, *part)
    related = [_made_at(filename, name, location.line, f"{name} is computed here, so it is not a leaf")]
    helps = []
    notes = ["a computed tensor's requires_grad follows from its inputs; PyTorch does not let you "
             "switch it off in place"]
    if turning_on and name:
        # A tensor that is not a leaf has a grad_fn, so it already requires grad: the line means
        # "make sure it requires grad", which requires_grad_(True) does for leaves and non-leaves.
        notes = [f"{name} is computed from tensors that require grad (that is why it is not a leaf), so it already "
                 "requires grad; only the attribute assignment is refused"]
        value = text_of(filename, statement.value) if isinstance(statement, ast.Assign) else "True"
        if _grad_read_after(filename, target, location.line):
            # The function reads name.grad after this line: a computed tensor's .grad stays None
            # unless it retains it, so requires_grad_ alone runs on and fails (or reads None) there.
            notes.append(f"{name}.grad is read after this line: the line treats {name} as a leaf (an input whose "
                         "gradient it reads), and a computed tensor's .grad stays None")
            helps.append(statement_change(location, f"make {name} a leaf where it is computed: a detached copy, so "
                                          f"{name}.grad, read below, holds the gradient with respect to it (a leaf "
                                          "is kept as it is, as the line meant)",
                                          f"{name} = ({name} if {name}.is_leaf else {name}.detach()).requires_grad_({value})"))
        else:
            helps.append(statement_change(location, f"use requires_grad_({value}): it sets the flag on a leaf and "
                                          f"leaves {name} as it is when it is computed (it requires grad already)",
                                          f"{name}.requires_grad_({value})"))
    elif turning_off and name:
        raised = location
        caller = _caller_keeping_non_leaf(context, target)
        if caller is not None:
            # The helper's own detached copy would leave the caller's name on the graph: the
            # caller goes on computing from it (the graph is then backpropagated twice, or trains
            # what the freeze meant to keep out). The copy belongs where the caller holds it.
            caller_location, caller_help, caller_name = caller
            # The line to change leads; the flag's line (where it raised) follows.
            related.insert(0, location)
            location = caller_location
            notes.append(f"{name} is the caller's {caller_name} (line {caller_location.line}), a computed tensor; "
                         f"the caller goes on using {caller_name} after this call, so a detached copy made here "
                         "would not reach it")
            helps.append(caller_help)
        helps.append(statement_change(raised, f"to stop gradients flowing through {name}, use a detached "
                                      "copy from here on", f"{name} = {name}.detach()"))
    else:
        helps.append(Suggestion("requires_grad can only be set on leaves (tensors you create); use "
                                "t.detach() for a tensor without history, or t.detach().requires_grad_() "
                                "for a new leaf"))
    return diagnosis(codes.NON_LEAF_REQUIRES_GRAD_FLAG, location, related, notes, helps)


# Callers looked at, outwards from the line that set the flag, for the name holding the same tensor.
MAX_CALLER_FRAMES = 6


def _caller_keeping_non_leaf(context: ErrorContext, target):
    """(location, help, name) for `t.requires_grad_(False)` on a computed tensor (AD115) that a
    caller holds under a name of its own and reads again after the call that led here
    (responsible-ai-toolbox#24: `frozen(data, ...)` in a solver that goes on computing from
    `data`): the detached copy must be the caller's, `name = name if name.is_leaf else
    name.detach()` before that call, or the caller's graph stays and is backpropagated again.

    The evidence is the run's: the caller's local is the very tensor object the flag was set on
    (identity, not name), a tensor with a grad_fn, and the caller's function reads the name after
    the statement running the call with no assignment to it between. The nearest such caller is
    taken (the one whose use of the value comes first; an outer frame may need the graph, as a
    training step does). None when none is found or the statement's source is not read."""
    import torch

    user_frames = context.user_frames()
    if not user_frames:
        return None
    tensor = value_of(user_frames[0][0], target)
    if not isinstance(tensor, torch.Tensor) or tensor.grad_fn is None:
        return None
    for frame, line in user_frames[1:MAX_CALLER_FRAMES]:
        names = [name for name, value in frame.f_locals.items() if value is tensor and name.isidentifier()]
        if not names:
            continue
        filename = frame.f_code.co_filename
        tree = parse_file(filename)
        found = _statement_running(tree, line) if tree is not None else None
        if found is None:
            return None
        statement, header_end = found
        function = enclosing_function(tree, line)
        if function is tree:
            return None
        for name in names:
            passed = any(isinstance(node, ast.Name) and node.id == name and node.lineno <= header_end
                         for node in ast.walk(statement))
            if passed and _read_after_call(function, name, statement, header_end):
                return _rebind_before(filename, statement, header_end, name)
        return None
    return None


def _statement_running(tree: ast.Module, line: int) -> tuple[ast.stmt, int] | None:
    """(statement, last line of its header) for the innermost statement whose header covers `line`:
    a simple statement whole, a compound one (`with`, `for`, `if`, ...) up to its body. None for a
    def or class line (a decorator's call)."""
    best = None
    for node in walk_covering(tree, line):
        if not isinstance(node, ast.stmt):
            continue
        body = getattr(node, "body", None)
        end = body[0].lineno - 1 if isinstance(body, list) and body and isinstance(body[0], ast.stmt) \
            else (node.end_lineno or node.lineno)
        if node.lineno <= line <= end and (best is None or node.lineno >= best[0].lineno):
            best = (node, end)
    if best is None or isinstance(best[0], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    return best


def _without_comments(lines: list[str]) -> list[str] | None:
    """`lines` with their comments cut off (found by the tokenizer, so a `#` in a string stays); the
    comment after the last line is kept by apply_replacement. None when they do not tokenize."""
    import io
    import tokenize

    cut = {}
    try:
        for token in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if token.type == tokenize.COMMENT:
                cut[token.start[0] - 1] = token.start[1]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        # a compound statement's header alone ends in ':' with no body: the tokenizer may still
        # complain at the end; what it found before is enough
        pass
    return [text[:cut[number]].rstrip() if number in cut else text.rstrip() for number, text in enumerate(lines)]


def _read_after_call(function: ast.AST, name: str, statement: ast.stmt, header_end: int) -> bool:
    """Whether `function` reads `name` after the header of `statement` (its body included), with no
    assignment to the name between the header and the first such read."""
    reads = [node.lineno for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name
             and isinstance(node.ctx, ast.Load) and node.lineno > header_end]
    if not reads:
        return False
    stores = [node.lineno for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name
              and isinstance(node.ctx, (ast.Store, ast.Del)) and header_end < node.lineno <= min(reads)]
    return not stores


def _rebind_before(filename: str, statement: ast.stmt, header_end: int, name: str):
    """The caller's statement (its header, for a `with`/`for`/`if`) with `name` made a detached
    copy just before it, as a help replacing those lines."""
    lines = [source_line(filename, number) for number in range(statement.lineno, header_end + 1)]
    if not lines or not lines[0].strip():
        return None
    indent = len(lines[0]) - len(lines[0].lstrip())
    lines = _without_comments(lines)
    if lines is None:
        return None
    header = "\n".join(text[indent:] if text[:indent].isspace() or not text[:indent] else text.lstrip()
                       for text in lines).rstrip()
    location = Location(file=display_path(filename), line=statement.lineno, column=statement.col_offset,
                        end_line=header_end, source=lines[0].strip(), role="call",
                        note=f"{name} is passed on here, and used again after this call")
    message = (f"make {name} a detached copy here, before it is passed on: the caller goes on using it, so the "
               "copy must be its own (a leaf is kept as it is)")
    rebind = f"{name} = {name} if {name}.is_leaf else {name}.detach()"
    return location, Suggestion(message, replacement=f"{rebind}\n{header}", location=location), name


def _grad_read_after(filename: str, target, line: int) -> bool:
    """Whether the function holding `line` reads `name.grad` (`target` a plain name) on a later line,
    with no assignment to the name between (set 29, tensorwatch#25: `inp.requires_grad = True`
    then `return inp.grad`, on an input that a caller computed)."""
    if not isinstance(target, ast.Name):
        return False
    tree = parse_file(filename)
    if tree is None:
        return False
    function = enclosing_function(tree, line)
    if function is tree:
        return False
    name = target.id
    reads = [node.lineno for node in ast.walk(function) if isinstance(node, ast.Attribute) and node.attr == "grad"
             and isinstance(node.value, ast.Name) and node.value.id == name and node.lineno > line]
    if not reads:
        return False
    stores = [node.lineno for node in ast.walk(function) if isinstance(node, ast.Name) and node.id == name
              and isinstance(node.ctx, ast.Store) and line < node.lineno <= min(reads)]
    return not stores


def _part_of_a_trained_leaf(context: ErrorContext, filename: str, target):
    """(leaf's text, the scatter call that zeroes that part of a gradient `grad`) when `target` is
    `leaf[index]` of a leaf that requires grad (a parameter), indexed on one dimension by a
    constant slice or integer (`weight[:2]`, `weight[:, 3]`): the user means to freeze that part."""
    import torch

    if not isinstance(target, ast.Subscript):
        return None
    user = context.innermost_user()
    leaf = value_of(user[0], target.value) if user is not None else None
    if not (isinstance(leaf, torch.Tensor) and leaf.is_leaf and leaf.requires_grad):
        return None
    index = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
    *leading, last = index
    if not all(isinstance(i, ast.Slice) and i.lower is None and i.upper is None and i.step is None for i in leading):
        return None
    leaf_text, index_text = text_of(filename, target.value), text_of(filename, target.slice)
    dim = len(leading)
    if isinstance(last, ast.Slice) and last.step is None and all(
            b is None or (isinstance(b, ast.Constant) and isinstance(b.value, int)) for b in (last.lower, last.upper)):
        bounds = ([f"start={last.lower.value}"] if last.lower is not None else []) + (
            [f"end={last.upper.value}"] if last.upper is not None else [])
        scatter = f"grad.slice_scatter(torch.zeros_like(grad[{index_text}]), dim={dim}, {', '.join(bounds)})"
    elif isinstance(last, ast.Constant) and isinstance(last.value, int):
        scatter = f"grad.select_scatter(torch.zeros_like(grad[{index_text}]), {dim}, {last.value})"
    else:
        return None
    return leaf_text, index_text, scatter


def _freeze_part_with_hook(location, leaf_text: str, index_text: str, scatter: str):
    location.note = f"{leaf_text}[{index_text}] is a view computed from {leaf_text}: its flag cannot be set apart"
    notes = [f"requires_grad belongs to a whole leaf tensor; {leaf_text}[{index_text}] is a new tensor computed from "
             f"it, and {leaf_text} keeps training as a whole"]
    helps = [statement_change(location, f"zero that part of {leaf_text}'s gradient with a hook: the optimizer then "
                              f"leaves {leaf_text}[{index_text}] as it is (with plain gradient steps; weight decay "
                              "would still shrink it)",
                              f"{leaf_text}.register_hook(lambda grad: {scatter})"),
             Suggestion("or keep the frozen part as a separate tensor without requires_grad and concatenate it "
                        "with the trained part in forward")]
    return diagnosis(codes.NON_LEAF_REQUIRES_GRAD_FLAG, location, [], notes, helps)


def _parametrized_element_of_loop(frame, filename: str, loop: ast.For, tensor):
    """AD308 when the loop runs over a list or tuple written out (`for p in [layer.weight, layer.bias]`)
    one of whose elements is a parametrized attribute (torch.nn.utils.parametrize) and the `.grad`
    read is not of another element: each read of `layer.weight` computes a new tensor from the
    parametrization's `original` (under no_grad, one without gradient), which is the leaf that
    backward() fills; the element is replaced by it (single-tensor parametrizations only)."""
    import torch
    from torch.nn.utils import parametrize

    if not isinstance(loop.iter, (ast.List, ast.Tuple)):
        return None
    found = []
    for element in loop.iter.elts:
        if isinstance(element, ast.Attribute):
            owner = value_of(frame, element.value)
            if isinstance(owner, torch.nn.Module) and parametrize.is_parametrized(owner, element.attr):
                found.append((element, owner))
                continue
        if value_of(frame, element) is tensor:
            return None  # the read is of this element, a tensor of its own
    if len(found) != 1:
        return None
    element, owner = found[0]
    holder = owner.parametrizations[element.attr]
    if not isinstance(getattr(holder, "original", None), torch.nn.Parameter):
        return None
    module_text, attribute = text_of(filename, element.value), element.attr
    original = f"{module_text}.parametrizations.{attribute}.original"
    return _recomputed_read_diagnosis(
        filename, loop, element, leaf=original,
        read_note=f"{module_text}.{attribute} is computed by a parametrization at each access: a new tensor",
        computed=f"{module_text}.{attribute} is recomputed from {original} (and the parametrization) each time it is read",
        source=f"the parameter the parametrization computes {module_text}.{attribute} from",
        module_text=module_text)


def _recomputed_read_diagnosis(filename, loop, element, *, leaf, read_note, computed, source, module_text):
    """AD309's diagnosis for a hand-written update loop that reads `element`, an attribute computed
    anew at each read (a parametrization, a property) from the leaf `leaf`: the loop's element is
    replaced by the leaf, the one whose .grad backward() fills."""
    location = statement_location(filename, loop)
    location.end_line, location.end_column = loop.iter.end_lineno, loop.iter.end_col_offset + 1
    location.role = "read"
    location.note = f"{read_note}, not the leaf that gets the gradient"
    notes = [f"{computed}; backward() fills {leaf}.grad, and the tensor read here (under no_grad, or after "
             "backward) has no .grad"]
    change = line_change(filename, loop.lineno, text_of(filename, element), leaf, (
        f"update {leaf}, {source}: it is the leaf that has the gradient, as an optimizer given the module's "
        "parameters() would update it"))
    helps = [change] if change is not None else []
    helps.append(Suggestion(f"or give {module_text}.parameters() to a torch.optim optimizer, which holds {leaf}"))
    return diagnosis(codes.NON_LEAF_GRAD_READ, location, notes=notes, help=helps)


def _getter_definition(prop) -> ast.FunctionDef | None:
    """The parsed source of a property's getter, when it is written in the user's files."""
    import inspect
    import textwrap

    from autograd_doctor.recording.frames import in_installed_package

    code = getattr(prop.fget, "__code__", None)
    if code is None or in_installed_package(code.co_filename):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(prop.fget)))
    except (OSError, TypeError, SyntaxError):
        return None
    definition = tree.body[0] if tree.body else None
    return definition if isinstance(definition, ast.FunctionDef) else None


def _property_parameter(owner, prop) -> str | None:
    """The name of the one nn.Parameter of `owner` that the getter of `prop` computes from, when the
    getter (in the user's files) is a single `return` whose `self.<name>` reads are that parameter
    and plain numbers, and calls no method of `self`; None otherwise."""
    import inspect

    import torch

    definition = _getter_definition(prop)
    if definition is None or not definition.args.args:
        return None
    body = [statement for statement in definition.body
            if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    self_name = definition.args.args[0].arg
    parameters = set()
    for node in ast.walk(body[0].value):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == self_name:
            return None  # self.method(...): what it reads is not shown here
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
            value = owner._parameters.get(node.attr) if isinstance(owner, torch.nn.Module) else None
            if isinstance(value, torch.nn.Parameter):
                parameters.add(node.attr)
            elif not isinstance(inspect.getattr_static(owner, node.attr, None), (int, float)):
                return None
        elif isinstance(node, ast.Name) and node.id == self_name and not any(
                isinstance(parent, ast.Attribute) and parent.value is node for parent in ast.walk(body[0].value)):
            return None  # self passed on whole
    if len(parameters) != 1:
        return None
    return parameters.pop()


def _property_element_of_loop(frame, filename: str, loop: ast.For, tensor):
    """AD308 when the loop runs over a list or tuple written out (`for p in [model.temperature,
    model.bias]`) one of whose elements is a @property of the object's class that computes a tensor
    from one parameter of the object (`return self.log_t.exp()`), and the `.grad` read is not of
    another element: each read of the property computes a new tensor (under no_grad, one without
    gradient), while backward() filled the parameter's .grad; the element is replaced by the
    parameter."""
    import inspect

    if not isinstance(loop.iter, (ast.List, ast.Tuple)):
        return None
    found = []
    for element in loop.iter.elts:
        if isinstance(element, ast.Attribute):
            owner = value_of(frame, element.value)
            prop = inspect.getattr_static(type(owner), element.attr, None) if owner is not None else None
            if isinstance(prop, property) and prop.fget is not None:
                found.append((element, owner, prop))
                continue
        if value_of(frame, element) is tensor:
            return None  # the read is of this element, a tensor of its own
    if len(found) != 1:
        return None
    element, owner, prop = found[0]
    parameter_name = _property_parameter(owner, prop)
    if parameter_name is None:
        return None
    parameter = owner._parameters[parameter_name]
    if not parameter.requires_grad or parameter.grad is None:
        return None  # no evidence that backward() filled the parameter's gradient
    module_text, attribute = text_of(filename, element.value), element.attr
    leaf = f"{module_text}.{parameter_name}"
    return _recomputed_read_diagnosis(
        filename, loop, element, leaf=leaf,
        read_note=f"{module_text}.{attribute} is a property: each read computes a new tensor from {leaf}",
        computed=(f"{module_text}.{attribute} is computed from {leaf} each time it is read (a @property of "
                  f"{type(owner).__name__})"),
        source=f"the parameter the property computes {module_text}.{attribute} from",
        module_text=module_text)


def _parametrized_attribute(context: ErrorContext, target) -> tuple[str, str] | None:
    """(module text, attribute) when `target` is `module.attr` of a module whose `attr` is made by
    torch.nn.utils.parametrize: reading it computes the tensor from the parametrization's own
    parameters, so its flag is not the one to set."""
    import torch
    from torch.nn.utils import parametrize

    if not isinstance(target, ast.Attribute):
        return None
    user = context.innermost_user()
    module = value_of(user[0], target.value) if user is not None else None
    if not isinstance(module, torch.nn.Module) or not parametrize.is_parametrized(module, target.attr):
        return None
    return ast.unparse(target.value), target.attr


def _legacy_reparametrized_attribute(context: ErrorContext, target) -> tuple[str, str, str, list[str]] | None:
    """(module text, attribute, helper, leaf names) when `target` is `module.attr` that the legacy
    torch.nn.utils.weight_norm / spectral_norm recomputes from parameters of the module before each
    forward (a forward pre-hook of theirs, for that attribute, is registered on the module object):
    the flag that decides whether it trains is the flag of those parameters (`attr_g` and `attr_v`,
    or `attr_orig`), each checked to be a parameter of the module."""
    import torch
    from torch.nn.utils.spectral_norm import SpectralNorm
    from torch.nn.utils.weight_norm import WeightNorm

    if not isinstance(target, ast.Attribute):
        return None
    user = context.innermost_user()
    module = value_of(user[0], target.value) if user is not None else None
    if not isinstance(module, torch.nn.Module):
        return None
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == target.attr:
            helper, leaves = "weight_norm", [f"{target.attr}_g", f"{target.attr}_v"]
        elif isinstance(hook, SpectralNorm) and hook.name == target.attr:
            helper, leaves = "spectral_norm", [f"{target.attr}_orig"]
        else:
            continue
        parameters = dict(module.named_parameters(recurse=False))
        if all(leaf in parameters for leaf in leaves):
            return ast.unparse(target.value), target.attr, helper, leaves
        return None
    return None


_PURE_FLAG_NODES = (ast.Name, ast.Attribute, ast.Constant, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Subscript,
                    ast.Slice, ast.expr_context, ast.cmpop, ast.boolop, ast.unaryop)


def _flag_as_written(statement, calls) -> str | None:
    """The text of the flag a `t.requires_grad = <expr>` / `t.requires_grad_(<expr>)` line sets,
    when it is an expression and not a constant (None otherwise): the help keeps it as written."""
    if calls is None:
        value = statement.value if len(statement.targets) == 1 else None
    else:
        value = calls[0].args[0] if len(calls) == 1 and len(calls[0].args) == 1 else None
    if value is None or isinstance(value, ast.Constant):
        return None
    return ast.unparse(value)


def _is_pure_flag(text: str) -> bool:
    """Whether the flag expression can be written more than once with the same value: names,
    attributes, comparisons, `not`, `and`/`or`, subscripts (no call)."""
    try:
        tree = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return all(isinstance(node, _PURE_FLAG_NODES) for node in ast.walk(tree))


def _legacy_reparametrized_requires_grad(location, recomputed, turning_on: bool, flag_text: str | None = None):
    """AD115 on a weight of the legacy weight_norm / spectral_norm: the flag is set on the
    parameters it is recomputed from before every forward (with the line's own flag expression,
    when it writes one)."""
    module, attribute, helper, leaves = recomputed
    flag = "True" if turning_on else "False"
    if flag_text is not None:
        if len(leaves) > 1 and not _is_pure_flag(flag_text):
            return None  # the expression would be evaluated once per parameter
        flag = flag_text
    listed = " and ".join(f"{module}.{leaf}" for leaf in leaves)
    location.note = (f"{module}.{attribute} is recomputed from {listed} before every forward by "
                     f"torch.nn.utils.{helper}, so it is not a leaf")
    notes = [f"{listed} are the parameters that train; a detached {attribute} would be replaced at the next forward"]
    helps = [statement_change(location, f"set the flag on the parameters {helper} computes {module}.{attribute} from",
                              "\n".join(f"{module}.{leaf}.requires_grad_({flag})" for leaf in leaves))]
    return diagnosis(codes.NON_LEAF_REQUIRES_GRAD_FLAG, location, [], notes, helps)


def _parametrized_requires_grad(location, parametrized: tuple[str, str], turning_on: bool,
                                flag_text: str | None = None):
    """AD115 on a parametrized weight: the parameters it is computed from (`original`, or
    `original0`/`original1` for weight_norm, and any of the parametrization's own) are in the
    module `parametrizations.<attr>`, whose requires_grad_() sets them all (with the line's own
    flag expression, when it writes one)."""
    module, attribute = parametrized
    flag = flag_text if flag_text is not None else ("True" if turning_on else "False")
    holder = f"{module}.parametrizations.{attribute}"
    location.note = f"{module}.{attribute} is computed on each access by a parametrization, so it is not a leaf"
    notes = [f"the tensors {module}.{attribute} is computed from are the parameters of {holder} "
             f"(original, or original0/original1): those are the leaves whose flag decides whether it trains"]
    helps = [statement_change(location, f"set the flag on the parameters the parametrization computes "
                              f"{module}.{attribute} from", f"{holder}.requires_grad_({flag})")]
    return diagnosis(codes.NON_LEAF_REQUIRES_GRAD_FLAG, location, [], notes, helps)


# The Tensor methods that register a hook: PyTorch refuses each on a tensor that does not require grad.
_HOOK_REGISTRATIONS = ("register_hook", "register_post_accumulate_grad_hook")


def hook_without_grad(context: ErrorContext, already):
    statement, location, filename = _raised(context)
    if location is None:
        return None
    method = "retain_grad" if "retain_grad" in context.message else next(
        (name for name in _HOOK_REGISTRATIONS if find_calls(statement, name)), "register_hook")
    calls = find_calls(statement, method)
    receiver = _receiver(calls[0]) if len(calls) == 1 else None
    name = text_of(filename, receiver) if receiver is not None else None
    location.note = f"{method}() on a tensor outside the autograd graph"
    guard = None
    if name and isinstance(statement, ast.Expr):
        body = text_of(filename, statement)
        guard = statement_change(location, "if this code also runs without gradients (evaluation), guard it",
                                 f"if {name}.requires_grad:\n" + textwrap.indent(body, "    "))
    block = _grad_off_block_running(context)
    if block is not None:
        return _hook_under_grad_off_block(block, location, name, method, guard)
    user = context.innermost_user()
    tensor = value_of(user[0], receiver) if user is not None and receiver is not None else None
    if guard is not None and _frozen_parameter(tensor):
        # A loop over a model's parameters meets one frozen on purpose (requires_grad_(False)):
        # the hook is for the parameters that train; skipping the frozen one keeps it frozen.
        location.note = f"{method}() on {name}, a parameter frozen with requires_grad=False"
        guard.message = f"register the hook only on the parameters that train: {name} is frozen, and gets no gradient"
        return diagnosis(codes.HOOK_WITHOUT_GRAD, location, [], [], [guard])
    if name and guard is not None and _plain_leaf(tensor) and _made_without_tensors(user[0], filename, name,
                                                                                   location.line):
        return _hook_on_plain_leaf(filename, location, name, method, guard, text_of(filename, statement))
    computed = (_computed_from_one_plain_leaf(user[0], filename, name, location.line)
                if name and guard is not None and _plain_leaf(tensor) else None)
    if computed is not None and not _can_require_grad(value_of(user[0], ast.Name(computed[1]))):
        # Token ids through a frozen embedding: the input cannot require grad (integers), while the
        # result, which has no history, is a leaf of its own that can.
        if not _can_require_grad(tensor):
            computed = None
        else:
            return _hook_on_plain_leaf(filename, location, name, method, guard, text_of(filename, statement),
                                       made=f"{name} is computed here from {computed[1]}, which holds integers "
                                            "and cannot require grad; nothing else it reads requires grad")
    if computed is not None:
        return _hook_on_result_of_plain_leaf(filename, location, name, method, guard, *computed)
    called = (_caller_computing_from_one_plain_leaf(context, user[0], name)
              if name and guard is not None and _plain_leaf(tensor) else None)
    if called is not None and not _can_require_grad(value_of_in(context, called)):
        # A forward hook given the output of a frozen embedding of token ids: the ids cannot require
        # grad, the output (a leaf of its own) can.
        called = None
        if _can_require_grad(tensor):
            return _hook_on_plain_leaf(filename, location, name, method, guard, text_of(filename, statement),
                                       made=f"{name} is computed from integers (no tensor that requires grad "
                                            "takes part)")
    if called is not None:
        # A forward hook given the module's output: the output was computed by the call further
        # out, `score = model(image)[0, 1]`, from one tensor the user made.
        return _hook_on_result_of_plain_leaf(*called[:1], location, name, method, guard, *called[1:],
                                             through_call=True)
    related = [_made_at(filename, name, location.line,
                        f"{name} is computed here from tensors that do not require grad")]
    helps = [Suggestion(f"{name or 'the tensor'} gets no gradient: nothing it was computed from requires grad "
                        "(or it was made under torch.no_grad() / after detach()). Make the inputs you want "
                        "gradients for require grad (requires_grad=True, nn.Parameter)")]
    if guard is not None:
        helps.append(guard)
    return diagnosis(codes.HOOK_WITHOUT_GRAD, location, related, [], helps)


def value_of_in(context: ErrorContext, called) -> object:
    """The value of the input named by _caller_computing_from_one_plain_leaf's answer, in the
    caller's frame that computes from it."""
    filename, _statement, source = called
    frame = next((outer for outer, _line in context.user_frames()[1:] if outer.f_code.co_filename == filename), None)
    return value_of(frame, ast.Name(source)) if frame is not None else None


def _frozen_parameter(tensor) -> bool:
    """An nn.Parameter whose requires_grad was turned off (a frozen layer)."""
    import torch

    return isinstance(tensor, torch.nn.Parameter) and not tensor.requires_grad


def _can_require_grad(tensor) -> bool:
    """A floating-point or complex tensor: the only kinds that can require grad."""
    import torch

    return isinstance(tensor, torch.Tensor) and (tensor.is_floating_point() or tensor.is_complex())


def _plain_leaf(tensor) -> bool:
    """A tensor the user made (no grad history) that does not require grad."""
    import torch

    return isinstance(tensor, torch.Tensor) and tensor.grad_fn is None and not tensor.requires_grad


def _made_without_tensors(frame, filename: str, name: str, line: int) -> bool:
    """`name` was last assigned from no other tensor (a factory call, an item of a batch), so it
    is an input the user made; `y = x * 2` is a computation, whose inputs may be what wants the
    gradient."""
    import torch

    made = last_assignment(filename, name, line) if name.isidentifier() else None
    if not isinstance(made, ast.Assign):
        return False
    return not any(isinstance(node, ast.Name) and isinstance(value_of(frame, node), torch.Tensor)
                   for node in ast.walk(made.value))


def _computed_from_one_plain_leaf(frame, filename: str, name: str, line: int):
    """(assignment, input name) when `name` was last assigned from a computation whose only tensor
    input is a tensor the user made without requires_grad (`features = backbone(image)` with the
    model frozen): asking for the gradient of the result means asking for the input's first, as
    Grad-CAM on a frozen model does. None when the computation reads no tensor or several."""
    import torch

    made = last_assignment(filename, name, line) if name.isidentifier() else None
    if not isinstance(made, ast.Assign) or len(made.targets) != 1:
        return None
    inputs = {node.id for node in ast.walk(made.value) if isinstance(node, ast.Name)
              and isinstance(value_of(frame, node), torch.Tensor)}
    if len(inputs) != 1:
        return None
    source = next(iter(inputs))
    return (made, source) if source != name and _plain_leaf(value_of(frame, ast.Name(source))) else None


def _caller_computing_from_one_plain_leaf(context: ErrorContext, frame, name: str):
    """(file, assignment, input name) of the statement further out that computes from one tensor
    the user made while running the function that got `name` as an argument (a forward hook given
    the module's output, run by `score = model(image)[0, 1]` with the model frozen); None when the
    first such statement reads no tensor or several."""
    import torch

    code = frame.f_code
    if name not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return None
    for outer, line in context.user_frames()[1:]:
        filename = outer.f_code.co_filename
        statement, _location = statement_of(filename, line)
        if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
            continue
        inputs = {node.id for node in ast.walk(statement.value) if isinstance(node, ast.Name)
                  and isinstance(value_of(outer, node), torch.Tensor)}
        if not inputs:
            continue
        source = next(iter(inputs))
        return (filename, statement, source) if len(inputs) == 1 and _plain_leaf(value_of(outer, ast.Name(source))) \
            else None
    return None


def _hook_on_result_of_plain_leaf(filename: str, location, name: str, method: str, guard: Suggestion,
                                  made: ast.Assign, source: str, through_call: bool = False):
    """AD116 on a result computed from a tensor the user made (an image through a frozen model):
    the result has a gradient as soon as that input requires grad, and nothing else computes
    differently (the input's .grad is filled too)."""
    location.note = f"{method}() on {name}, computed from {source}, a tensor you made, which does not require grad"
    where = "by this call" if through_call else "here"
    made_location = statement_location(filename, made, role="made",
                                       note=f"{name} is computed {where} from {source} only (no parameter that "
                                            "requires grad takes part)")
    then = f"backward() then fills {name}.grad" if method == "retain_grad" else \
        f"the hook then receives {name}'s gradient"
    notes = [f"{name} has no grad history: nothing it was computed from requires grad. Asking for the gradient "
             f"of {source} (requires_grad_()) gives {name} its history, and {then}; no value computed changes"]
    text = segment(filename, made)
    change = statement_change(made_location if text is not None else None,
                              f"ask for gradients from {source} on, before {name} is computed",
                              f"{source}.requires_grad_()\n{text}" if text is not None else None)
    guard.message = "or, if this code also runs without gradients (evaluation), guard it"
    return diagnosis(codes.HOOK_WITHOUT_GRAD, location, [made_location], notes, [change, guard])


def _hook_on_plain_leaf(filename: str, location, name: str, method: str, guard: Suggestion, body: str | None,
                        made: str | None = None):
    """AD116 on a tensor the user made, such as a batch of inputs for a saliency map, or computed
    with no history (`made` says how): asking for its gradient is what the line means, and
    requires_grad_() is how a leaf asks for it (its .grad is then filled by backward(); nothing
    else computes differently)."""
    location.note = f"{method}() on {name}, a tensor {'with no grad history' if made else 'you made'}, " \
        "which does not require grad"
    related = [_made_at(filename, name, location.line, made or f"{name} is made here, without requires_grad")]
    notes = [f"{name} is a leaf (it has no grad history), and leaves get a gradient only when they require grad; "
             "gradients of everything else stay the same when it does"]
    if method == "retain_grad":
        change = statement_change(location, f"ask for the gradient of {name} with requires_grad_(): backward() then "
                                  f"fills {name}.grad (retain_grad() is only needed for computed tensors)",
                                  f"{name}.requires_grad_()")
    else:
        change = statement_change(location, f"ask for the gradient of {name} with requires_grad_() before registering "
                                  "the hook: backward() then calls it with that gradient",
                                  f"{name}.requires_grad_()\n{body}" if body is not None else None)
    guard.message = "or, if this code also runs without gradients (evaluation), guard it"
    return diagnosis(codes.HOOK_WITHOUT_GRAD, location, related, notes, [change, guard])


def _grad_off_block_running(context: ErrorContext) -> tuple[str, ast.With, int] | None:
    """(file, with statement, line in it) of the `with torch.no_grad():` (inference_mode,
    set_grad_enabled(False)) block that one of the traceback's user frames was running when the
    error was raised, innermost first: the run was inside it, so gradients were off there."""
    for frame, line in context.user_frames():
        filename = frame.f_code.co_filename
        block = grad_off_with_around(filename, line)
        if block is not None:
            return filename, block, line
    return None


def _hook_under_grad_off_block(found, location, name: str | None, method: str, guard: Suggestion | None):
    """AD116 where the tensor was made inside a grad-off block that is still running: the hook
    asks for a gradient that the block turned off, so the block is the line to change."""
    filename, block, line = found
    header = segment(filename, block.items[0].context_expr) if len(block.items) == 1 else "torch.no_grad()"
    primary = line_location(filename, block.lineno, role="grad off",
                            note="gradients are off in this block, so nothing computed in it has grad history")
    location.note = f"{method}() on {name or 'a tensor'} made with gradients off"
    related = [location]
    if line != location.line or filename != location.file:
        related.append(line_location(filename, line, role="called from", note="this line of the block led to it"))
    notes = [f"{name or 'the tensor'} was computed while `with {header}:` (line {block.lineno}) was running, and "
             f"{method}() was called inside it too: a gradient hook needs a tensor that autograd records"]
    helps = []
    body = block_body_dedented(filename, block)
    if body is not None:
        helps.append(Suggestion(f"run this code with gradients on (remove `with {header}:`): it needs the "
                                "gradients the block turns off", body, statement_location(filename, block)))
    else:
        helps.append(Suggestion(f"run this code outside `with {header}:` (line {block.lineno}): it needs the "
                                "gradients the block turns off"))
    if guard is not None and guard.location is not None and _evaluates_through_shared_code(filename, block, location):
        # The hook is registered by code the block only calls (a module's forward, run by training
        # and by this evaluation alike), and the block computes no gradient: turning gradients on
        # for the evaluation would change what it is; guarding the shared hook keeps both runs.
        guard.message = ("register the hook only when gradients are on: the block only evaluates (it computes no "
                         "gradient), and the hook is registered by code it calls, which also runs with gradients on")
        helps[0].message = "or " + helps[0].message
        related = [primary] + [r for r in related if r is not location]
        location.role, location.note = "hook", f"{method}() runs here for every call, evaluation included"
        return diagnosis(codes.HOOK_WITHOUT_GRAD, location, related, notes, [guard] + helps)
    if guard is not None:
        guard.message = ("or, if this block only evaluates and the hook is for training runs, register it only "
                         "when gradients are on")
        helps.append(guard)
    return diagnosis(codes.HOOK_WITHOUT_GRAD, primary, related, notes, helps)


def _evaluates_through_shared_code(filename: str, block: ast.With, location) -> bool:
    """Whether the hook's line lies outside the grad-off block (in a function the block calls)
    and the block asks for no gradient (no backward(), autograd.grad or register_hook of its own)."""
    from autograd_doctor.diagnosis.source import display_path

    inside = location.file == display_path(filename) and block.lineno <= location.line <= block.end_lineno
    if inside:
        return False
    for node in ast.walk(block):
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and \
                getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                    "backward", "grad", "register_hook", "retain_grad"):
            return False
    return True


def out_with_grad(context: ErrorContext, already):
    statement, location, filename = _raised(context)
    if location is None:
        return None
    location.note = "writes the result into out=, which autograd cannot record"
    helps = []
    calls = [c for c in ast.walk(statement) if isinstance(c, ast.Call) and any(k.arg == "out" for k in c.keywords)]
    buffer = _buffer_read_by_its_own_row_write(filename, calls[0]) if len(calls) == 1 else None
    if buffer is not None:
        # `torch.tanh(... history[t] ..., out=history[t + 1])`: `history[t + 1] = torch.tanh(...)` would
        # still write into the buffer in place, whose earlier rows the same computation read and
        # autograd saved; backward() would then fail on their version.
        helps.append(Suggestion(f"the computation reads {buffer} itself: keep the rows in a Python list "
                                f"(rows.append(torch.op(...)) without out=) and build the tensor with "
                                f"torch.stack(rows) after the loop; writing the rows into {buffer} in place, even "
                                "without out=, changes a tensor autograd saved"))
    elif len(calls) == 1 and isinstance(statement, ast.Expr) and statement.value is calls[0]:
        call = calls[0]
        out = next(k for k in call.keywords if k.arg == "out")
        target = text_of(filename, out.value)
        plain = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg != "out"])
        new_statement = f"{target} = {ast.unparse(plain)}"
        helps.append(statement_change(location, "compute a new tensor instead of writing into out=", new_statement))
    elif len(calls) == 1 and isinstance(statement, (ast.Return, ast.Assign)) and statement.value is calls[0]:
        # `return torch.cat(..., out=buffer)` / `y = torch.cat(..., out=buffer)`: the result is used
        # as the value; without out= it is the same values, now with their history.
        call = calls[0]
        out = next(k for k in call.keywords if k.arg == "out")
        plain = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg != "out"])
        new_statement = replace_node_text(filename, statement, call, ast.unparse(plain))
        helps.append(statement_change(location, f"drop out={text_of(filename, out.value)}: the call then returns a "
                                      "new tensor with the same values, which autograd records", new_statement))
    else:
        helps.append(Suggestion("drop out= and assign the result (y = torch.op(...)); out= is only for "
                                "tensors outside the graph (under torch.no_grad())"))
    return diagnosis(codes.OUT_WITH_GRAD, location,
                     notes=["functions called with out= are not differentiable; the result would have no "
                            "gradient history"], help=helps)


def _buffer_read_by_its_own_row_write(filename: str, call: ast.Call) -> str | None:
    """The buffer's text when `out=` is a part of a buffer (`history[t + 1]`) that the call's own
    arguments also read (`history[t]`): a recurrence through a preallocated tensor."""
    out = next(k for k in call.keywords if k.arg == "out").value
    if not isinstance(out, ast.Subscript):
        return None
    buffer = text_of(filename, out.value)
    read = [text_of(filename, node.value) for argument in call.args + [k.value for k in call.keywords if k.arg != "out"]
            for node in ast.walk(argument) if isinstance(node, ast.Subscript)]
    return buffer if buffer is not None and buffer in read else None


def non_leaf_optimized(context: ErrorContext, already):
    frame = context.torch_frame("add_param_group")
    param = frame.f_locals.get("param") if frame is not None else None
    raised = context.raise_location(role="optimizer", note="the optimizer is created here")
    user = context.innermost_user()
    if user is None:
        return None
    user_frame, line = user
    filename = user_frame.f_code.co_filename
    name = local_name_of(user_frame, param) if param is not None else None
    made = last_assignment(filename, name, line) if name else None
    if made is None and param is not None:
        held = _attribute_holding(user_frame, param)
        if held is not None:
            # `self.w = torch.randn(..., requires_grad=True) / k` in a class: the line to change
            # is that assignment, in the class's file.
            name, owner, attribute = held
            made_file, made = module_attribute_assignment(owner, attribute)
            filename = made_file if made is not None else filename
    grad_fn = type(param.grad_fn).__name__ if param is not None and param.grad_fn is not None else None
    notes = [f"{name or 'the tensor'} has grad_fn={grad_fn}: it is the result of a computation, so its .grad "
             "is never filled and the optimizer could not update what you created"]
    if made is None:
        parametrized = _parametrized_attribute_listed(user_frame, filename, line)
        if parametrized is not None:
            return diagnosis(codes.NON_LEAF_OPTIMIZED, parametrized[0], [raised], notes, parametrized[1:])
        return diagnosis(codes.NON_LEAF_OPTIMIZED, raised, notes=notes, help=[Suggestion(
            "create the tensor to optimize as a leaf: do the arithmetic or .to(device) first, then "
            ".requires_grad_() (or wrap it in nn.Parameter)")])
    flattened = _flattened_parameters(user_frame, filename, line, made, name)
    if flattened is not None:
        return diagnosis(codes.NON_LEAF_OPTIMIZED, raised, [flattened[0]], notes, flattened[1:])
    primary = statement_location(filename, made, role="made", note=f"{name} is computed here ({grad_fn}), not created")
    helps = []
    value = made.value if isinstance(made, (ast.Assign, ast.AnnAssign)) else None
    requires = [(c, k) for c in ast.walk(value) if isinstance(c, ast.Call)
                for k in c.keywords if k.arg == "requires_grad"] if value is not None else []
    if len(requires) == 1 and isinstance(made, ast.Assign):
        call, keyword = requires[0]
        stripped = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k is not keyword])
        value_text = replace_node_text(filename, ast.Expr(value=value, lineno=value.lineno, col_offset=value.col_offset,
                                                          end_lineno=value.end_lineno, end_col_offset=value.end_col_offset),
                                       call, ast.unparse(stripped))
        if value_text is not None:
            helps.append(statement_change(primary, "create it as a leaf: compute the value without "
                                          "requires_grad, then ask for gradients on the result",
                                          f"{ast.unparse(made.targets[0])} = ({value_text}).requires_grad_()"))
    elif isinstance(made, ast.Assign) and len(made.targets) == 1 and _part_or_copy(value):
        value_text = segment(filename, value)
        if value_text is not None:
            helps.append(statement_change(primary, "optimize a copy of those values as a leaf of its own: "
                                          "detach() leaves the graph, clone() gives it its own memory (the "
                                          "optimizer's in-place steps would otherwise write into the tensor it "
                                          "was taken from)", f"{ast.unparse(made.targets[0])} = "
                                          f"{value_text}.detach().clone().requires_grad_()"))
    helps.append(Suggestion("or wrap the computed value in nn.Parameter(...) (a leaf), or compute it under "
                            "torch.no_grad() and call .requires_grad_() on it"))
    return diagnosis(codes.NON_LEAF_OPTIMIZED, primary, [raised], notes, helps)


def _parametrized_attribute_listed(frame, filename: str, line: int):
    """(the list's location, the help) when the optimizer at `line` is given a list (there, or bound
    to a name a few lines up) that names `module.weight` of a module parametrized at `weight`
    (torch.nn.utils.parametrize: orthogonal, weight_norm, spectral_norm): that attribute is computed
    from the parametrization's originals on every access; the originals are the leaves to train."""
    from torch.nn.utils import parametrize

    statement, optimizer = statement_of(filename, line)
    call = next((c for c in ast.walk(statement) if isinstance(c, ast.Call) and c.args), None) \
        if statement is not None else None
    if call is None:
        return None
    listed, holder = call.args[0], statement
    if isinstance(listed, ast.Name):
        holder = last_assignment(filename, listed.id, line)
        listed = holder.value if isinstance(holder, ast.Assign) and len(holder.targets) == 1 else None
    if not isinstance(listed, (ast.List, ast.Tuple)):
        return None
    computed = []
    for element in listed.elts:
        if isinstance(element, ast.Attribute):
            owner = value_of(frame, element.value)
            if owner is not None and parametrize.is_parametrized(owner, element.attr):
                computed.append(element)
    if not computed:
        return None
    replacements = [(element, f"*{text_of(filename, element.value)}.parametrizations.{element.attr}.parameters()")
                    for element in computed]
    new = replace_nodes_text(filename, holder, replacements)
    if new is None:
        return None
    names = ", ".join(text_of(filename, element) for element in computed)
    location = statement_location(filename, holder, role="listed",
                                  note=f"{names} is computed by a parametrization on every access, not a parameter")
    return location, statement_change(location, f"list the parametrization's own parameters instead of {names}: "
                                      "they are the leaves the parametrization computes the weight from, which the "
                                      "optimizer updates (the weight keeps its constraint)", new)


def _flattened_parameters(frame, filename: str, line: int, made: ast.stmt, name: str):
    """(the flattening's location, the help) when the optimizer at `line` is given `[name]`, with
    `name = parameters_to_vector(params)`: a new vector computed from the parameters, which the
    optimizer would update instead of them; given `params` itself it updates the parameters.
    `params` must be readable again: a call (`model.parameters()`) or a list or tuple."""
    value = made.value if isinstance(made, ast.Assign) and len(made.targets) == 1 else None
    if not (isinstance(value, ast.Call) and (segment(filename, value.func) or "").split(".")[-1]
            == "parameters_to_vector" and len(value.args) == 1 and not value.keywords):
        return None
    params = value.args[0]
    if not (isinstance(params, ast.Call) or isinstance(value_of(frame, params), (list, tuple))):
        return None
    statement, optimizer = statement_of(filename, line)
    lists = [node for node in ast.walk(statement) if isinstance(node, ast.List) and len(node.elts) == 1
             and isinstance(node.elts[0], ast.Name) and node.elts[0].id == name] if statement is not None else []
    if len(lists) != 1:
        return None
    params_text = segment(filename, params)
    flattening = statement_location(filename, made, role="made", note=f"{name} is computed here from the parameters "
                                    "(a new tensor, not the parameters themselves)")
    return flattening, statement_change(optimizer, f"give the optimizer the parameters themselves ({params_text}): "
                                        f"its steps then update the model, which {name} is only a flat copy of",
                                        replace_node_text(filename, statement, lists[0], params_text))


def _attribute_holding(frame, tensor):
    """(`owner.attribute`, owner, attribute) for an object among the frame's variables that holds
    `tensor` as an attribute (a hand-written model class keeping its weights on self)."""
    for scope in (frame.f_locals, frame.f_globals):
        for variable, owner in list(scope.items()):
            attributes = getattr(owner, "__dict__", None)
            if variable.startswith("_") or not isinstance(attributes, dict) or isinstance(owner, type):
                continue
            for attribute, value in list(attributes.items()):
                if value is tensor:
                    return f"{variable}.{attribute}", owner, attribute
    return None


# Methods that return a part, a reshaping or a converted copy of one tensor: optimizing the result
# means optimizing those values, not the computation that made them.
_PART_OR_COPY_METHODS = {"to", "cuda", "cpu", "double", "float", "half", "bfloat16", "type", "view", "reshape",
                         "narrow", "select", "flatten", "squeeze", "unsqueeze", "contiguous", "clone"}


def _part_or_copy(value: ast.AST | None) -> bool:
    """`t[1:3]`, `t.to(device)`, `t[0].view(-1)`: a slice, a view or a conversion of one tensor named
    in the program. For another computation (`log_sigma.exp()`) the user may mean to optimize the
    tensor it is computed from: only they can tell."""
    node = value
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _PART_OR_COPY_METHODS:
            node = node.func.value
        else:
            break
    return node is not value and isinstance(node, (ast.Name, ast.Attribute))


# PyTorch's internal op names whose Python function has another name (F.cross_entropy and
# F.nll_loss both reach nll_loss_forward).
_PYTHON_NAMES = {"nll_loss_forward": ("nll_loss", "cross_entropy"), "nll_loss2d_forward": ("nll_loss", "cross_entropy")}
# Where the argument is positional when not given by keyword (index in the Python call).
_POSITIONS = {"target": 1, "weight": 2}


def non_differentiable_argument(context: ErrorContext, already):
    """An argument with no derivative formula (a loss's weight or target) requires grad."""
    import re

    import torch

    match = re.search(r"The function '(\w+)' is not differentiable with respect to argument '(\w+)'", context.message) \
        or re.search(r"()the derivative for '(\w+)' is not implemented", context.message)
    found = user_statement(context)
    if match is None or found is None:
        return None
    frame, line, filename, statement, location = found
    function, argument = match.group(1), match.group(2)
    names = _PYTHON_NAMES.get(function, (function,)) if function else ()
    candidates, calls = [], []
    for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call)):
        called = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
        given = [k.value for k in call.keywords if k.arg == argument]
        if not given and called in names and len(call.args) > _POSITIONS.get(argument, len(call.args)):
            given = [call.args[_POSITIONS[argument]]]
        for node in given:
            if (value := value_of(frame, node)) is None or (isinstance(value, torch.Tensor) and value.requires_grad):
                candidates.append(node)
                calls.append(call)
    what = f"'{argument}' of {function}" if function else f"'{argument}'"
    location.note = f"the {what} requires grad; PyTorch has no derivative for it"
    held = _held_by_loss_module(frame, filename, statement, line, argument) if not candidates else None
    if held is not None:
        return _module_argument_diagnosis(context, location, argument, function, *held)
    notes = [f"PyTorch cannot differentiate {function or 'this operation'} with respect to '{argument}', so that "
             "argument must not require grad; it was computed from tensors that do"]
    related = []
    helps = []
    learned = False
    if len(candidates) == 1:
        node = candidates[0]
        text = text_of(filename, node)
        detached = f"{text}.detach()" if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
            else f"({text}).detach()"
        written_out = _weighted_elementwise_loss(calls[0], node, argument)
        learned = written_out is not None and _expression_trained_through(frame, node, context)
        if learned:
            # The weights are made by parameters an optimizer trains: the user means them to learn,
            # so the loss is written as an elementwise product autograd differentiates in both.
            helps.append(statement_change(location, f"multiply the unreduced loss by {text} yourself, so that "
                                          f"autograd differentiates it with respect to {text} too (the value is "
                                          f"the same: {function} multiplies each element by its weight, then "
                                          "reduces)", replace_node_text(filename, statement, calls[0], written_out)))
        helps.append(statement_change(location, ("or " if learned else "") + f"pass a detached copy: the loss "
                                      f"treats {text} as constants, which is all this operation can do",
                                      replace_node_text(filename, statement, node, detached)))
        if isinstance(node, ast.Name):
            related.append(_made_at(filename, node.id, line, f"{node.id} is computed here from tensors that "
                                    "require grad"))
    if not learned:
        helps.append(Suggestion(f"or, if {argument} must be learned, write the loss out with tensor operations "
                                "(e.g. -(w * (y * p.log() + (1 - y) * (1 - p).log())).mean() for a weighted binary "
                                "cross-entropy), which autograd differentiates with respect to every term"))
    return diagnosis(codes.NON_DIFFERENTIABLE_ARGUMENT, location, related, notes, helps)


def _held_by_loss_module(frame, filename: str, statement, line: int, argument: str):
    """(file, statement, keyword value, module text, tensor held) of `criterion = nn.BCELoss(weight=w)`
    (or `self.criterion = ...` in its class) when the failing line calls a loss module that holds
    `argument` as a tensor requiring grad: the value was given where the module was made, not on
    the failing line."""
    import torch

    for call in (n for n in ast.walk(statement) if isinstance(n, ast.Call)
                 and isinstance(n.func, (ast.Name, ast.Attribute))):
        module = value_of(frame, call.func)
        held = getattr(module, argument, None) if isinstance(module, torch.nn.Module) else None
        if not (isinstance(held, torch.Tensor) and held.requires_grad):
            continue
        made_file, made = filename, None
        if isinstance(call.func, ast.Name):
            made = last_assignment(filename, call.func.id, line)
        elif (owner := value_of(frame, call.func.value)) is not None and not isinstance(owner, torch.Tensor):
            made_file, made = module_attribute_assignment(owner, call.func.attr)  # self.criterion = nn.BCELoss(...)
        given = [k.value for n in ast.walk(made) if isinstance(n, ast.Call) for k in n.keywords
                 if k.arg == argument] if made is not None else []
        if len(given) == 1:
            return made_file, made, given[0], text_of(filename, call.func), held
    return None


def _module_argument_diagnosis(context: ErrorContext, raised, argument: str, function: str,
                               filename: str, made: ast.stmt, node: ast.expr, module_name: str, held):
    """AD140 where the argument was given to the loss module's constructor: detach it there when
    nothing an optimizer trains computes it (the loss then treats it as constants, as it must);
    when something trained computes it, the loss must be written out (advice)."""
    text = text_of(filename, node)
    location = statement_location(filename, made, role="made",
                                  note=f"{module_name} is given {argument}={text} here, which requires grad")
    notes = [f"PyTorch cannot differentiate {function or 'this loss'} with respect to '{argument}', so the "
             f"{argument} given to {module_name} must not require grad; {text} was computed from tensors that do"]
    if _trained_through(held, context):
        return diagnosis(codes.NON_DIFFERENTIABLE_ARGUMENT, location, [raised], notes, [Suggestion(
            f"{text} is computed by parameters an optimizer trains: to learn them through the loss, write the loss "
            f"out with tensor operations (the unreduced loss times {text}); to keep them out of it, pass "
            f"{text}.detach()")])
    detached = f"{text}.detach()" if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
        else f"({text}).detach()"
    helps = [statement_change(location, f"pass a detached copy: the loss treats {text} as constants, which is all "
                              "it can do (nothing an optimizer trains computes it)",
                              replace_node_text(filename, made, node, detached))]
    return diagnosis(codes.NON_DIFFERENTIABLE_ARGUMENT, location, [raised], notes, helps)


# Losses whose `weight=` multiplies each element of the unreduced loss before the reduction: the
# same value is the unreduced loss times the weight, reduced the same way.
_ELEMENTWISE_WEIGHTED = {"binary_cross_entropy", "binary_cross_entropy_with_logits"}


def _weighted_elementwise_loss(call: ast.Call, weight: ast.AST, argument: str) -> str | None:
    """`(F.binary_cross_entropy(p, y, reduction='none') * w).mean()` for
    `F.binary_cross_entropy(p, y, weight=w)` (`.sum()` for reduction='sum', no reduction for
    'none'); None for another loss, argument or spelling."""
    called = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if argument != "weight" or called not in _ELEMENTWISE_WEIGHTED or any(k.arg is None for k in call.keywords):
        return None
    reduction = next((k.value for k in call.keywords if k.arg == "reduction"), None)
    if reduction is not None and not (isinstance(reduction, ast.Constant) and reduction.value in ("mean", "sum", "none")):
        return None
    if any(k.arg in ("size_average", "reduce") for k in call.keywords) or len(call.args) > 3:
        return None
    unreduced = ast.Call(func=call.func, args=[a for a in call.args if a is not weight],
                         keywords=[k for k in call.keywords if k.arg not in ("weight", "reduction")]
                         + [ast.keyword(arg="reduction", value=ast.Constant("none"))])
    product = f"{ast.unparse(unreduced)} * {ast.unparse(weight)}"
    kind = reduction.value if reduction is not None else "mean"
    return product if kind == "none" else f"({product}).{kind}()"


def _expression_trained_through(frame, node: ast.expr, context: ErrorContext) -> bool:
    """Whether the expression's value is computed from a tensor an optimizer trains. An expression
    that is not read without running it (`(1 - p_t) ** self.gamma`, a focal loss's factor) is
    judged by the values it reads: its names and attributes (nothing is evaluated)."""
    value = value_of(frame, node)
    if value is not None:
        return _trained_through(value, context)
    operands = [child for child in ast.walk(node) if isinstance(child, (ast.Name, ast.Attribute))
                and isinstance(child.ctx, ast.Load)]
    return any(_trained_through(value_of(frame, operand), context) for operand in operands)


def _trained_through(value, context: ErrorContext) -> bool:
    """Whether `value` is computed from a tensor that an optimizer in the user's frames trains."""
    import torch

    from autograd_doctor.analysis.naming import optimized_tensors
    from autograd_doctor.analysis.source_scope import leaves_below

    if not isinstance(value, torch.Tensor):
        return False
    trained = optimized_tensors([frame for frame, _line in context.user_frames()])
    if id(value) in trained:
        return True
    if value.grad_fn is None:
        return False
    leaves, _finished = leaves_below([value.grad_fn])
    return bool(leaves & trained.keys())


def _grad_read_value(frame, node: ast.expr):
    """The value whose `.grad` a statement reads: value_of (which runs none of the user's code), and
    for `obj.<property>` whose getter is a single `return` computed from one parameter of `obj`
    (_property_parameter) with no call of a bare function (only methods and module functions:
    `self.log_t.exp()`, `F.softplus(self.raw)`), the tensor the getter computes: such a getter has
    nothing to run but that expression."""
    import inspect

    value = value_of(frame, node)
    if value is not None or not isinstance(node, ast.Attribute):
        return value
    owner = value_of(frame, node.value)
    prop = inspect.getattr_static(type(owner), node.attr, None) if owner is not None else None
    if not (isinstance(prop, property) and prop.fget is not None) or _property_parameter(owner, prop) is None:
        return None
    definition = _getter_definition(prop)
    if definition is None or any(isinstance(call, ast.Call) and not isinstance(call.func, ast.Attribute)
                                 for call in ast.walk(definition)):
        return None
    try:
        return prop.fget(owner)
    except Exception:  # the getter failed on the state the failure left: no value to read
        return None


def grad_of_non_leaf(context: ErrorContext, already):
    """A Python error from using `t.grad`, None because `t` is not a leaf (a conversion or an
    operation came after requires_grad=True)."""
    import torch

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    reads = [node for node in ast.walk(statement) if isinstance(node, ast.Attribute) and node.attr == "grad"
             and isinstance(tensor := _grad_read_value(frame, node.value), torch.Tensor)
             and tensor.requires_grad and not tensor.is_leaf and not tensor.retains_grad and _no_grad(tensor)]
    if not reads:
        return grad_of_leaf_without_gradient(found)  # .grad of a leaf, or something else is None
    name = text_of(filename, reads[0].value)
    tensor = _grad_read_value(frame, reads[0].value)
    node_name = type(tensor.grad_fn).__name__
    location.role, location.note = "read", f"{name}.grad is None here"
    carried = carrying_assignment(filename, name, line) if name.isidentifier() else None
    before = last_assignment(filename, name, carried.lineno if carried else line) if name.isidentifier() else None
    if carried is not None and before is not None and _made_by(before, node_name) and not _made_by(carried, node_name):
        carried = None  # not a leaf from the start, before the loop carried anything
    made = carried or before
    notes = [f"{name} is not a leaf: it is computed ({node_name}) from the tensor that asked for gradients, so "
             f"backward() leaves {name}.grad None (PyTorch only warns about reading it)"]
    if carried is not None:
        return _carried_diagnosis(filename, name, node_name, carried, location, notes)
    recomputed = _recomputed_attribute_read(frame, filename, reads[0].value, made, line)
    if recomputed is not None:
        return _recomputed_attribute_diagnosis(filename, name, location, notes, *recomputed)
    made_file = filename
    if made is None and isinstance(reads[0].value, ast.Attribute):
        owner = value_of(frame, reads[0].value.value)
        if owner is not None and not isinstance(owner, torch.Tensor):
            # A module or any object of a class the user wrote (`self.w` of a hand-written model).
            made_file, made = module_attribute_assignment(owner, reads[0].value.attr)
    stored = _stored_at(made_file, made) if made is not None else None
    if stored is not None and _an_intermediate_result(made_file, made, tensor):
        # `features = activations["features"]` after backward(): the tensor was put there earlier
        # (a forward hook), which is where asking autograd to keep its gradient still works.
        return _retain_grad_diagnosis(made_file, stored, name, node_name, location, notes, stored=True)
    if made is not None and _an_intermediate_result(made_file, made, tensor):
        return _retain_grad_diagnosis(made_file, made, name, node_name, location, notes)
    if made_file != filename:
        made = None
    if made is None and name.isidentifier():
        listed = _module_attributes_listed(frame, filename, name, line)
        if listed is not None:
            assignment, module_text = listed
            notes.append(f"{name} takes its values from a list of {module_text}'s attributes; one of them is computed "
                         f"by {module_text} from its parameters (the leaves backward() fills), not a parameter itself")
            made_location = statement_location(filename, assignment, role="made",
                                               note=f"lists {module_text}'s attributes, not its parameters")
            return diagnosis(codes.NON_LEAF_GRAD_READ, made_location, [location], notes, [statement_change(
                made_location, f"list {module_text}'s parameters instead: they are the leaves behind the attributes "
                               "listed, and backward() fills their .grad",
                f"{ast.unparse(assignment.targets[0])} = list({module_text}.parameters())")])
    returned = _returned_by_helper(frame, filename, name, line, tensor) if made is None and name.isidentifier() \
        else None
    if returned is not None:
        helper_file, function, statement, new_value = returned
        made_location = statement_location(helper_file, statement, role="made",
                                           note=f"{function}() returns a tensor computed ({node_name}) from the one "
                                                "that asked for gradients: not a leaf")
        notes.append(f"{name} is an element of a list of {function}() results; backward() fills the .grad of the "
                     f"tensor {function}() made with requires_grad=True, not of the one it returns")
        return diagnosis(codes.NON_LEAF_GRAD_READ, made_location, [location], notes, [statement_change(
            made_location, f"ask for gradients last, on the tensor {function}() returns: it is then a leaf and "
                           "backward() fills its .grad", f"return {new_value}")])
    if made is None:
        return diagnosis(codes.NON_LEAF_GRAD_READ, location, notes=notes, help=[Suggestion(
            f"make {name} a leaf: create it with requires_grad=True on its final dtype and device, or call "
            f"{name}.requires_grad_() after the conversion")])
    made_location = statement_location(filename, made, role="made",
                                       note=f"{name} stops being a leaf here ({node_name})")
    helps = []
    parameter_value = _conversions_inside_parameter(made)
    new_value = _leaf_value(filename, made) if parameter_value is None else None
    if parameter_value is not None:
        notes.append(f"the conversion after nn.Parameter(...) returns a plain tensor, not a Parameter: a module "
                     f"does not register it, so an optimizer built from its parameters() would not train {name}")
        helps.append(statement_change(made_location, f"convert the data before wrapping it: {name} is then a "
                                      f"Parameter (a leaf whose .grad backward() fills, registered on its module)",
                                      f"{ast.unparse(made.targets[0])} = {parameter_value}"))
    elif new_value is not None:
        helps.append(statement_change(made_location, f"ask for gradients last, on the tensor {name} really is: "
                                      f"{name} is then a leaf and backward() fills {name}.grad",
                                      f"{ast.unparse(made.targets[0])} = {new_value}"))
    helps.append(Suggestion(f"or create {name} directly with the dtype and device it needs and requires_grad=True "
                            "(for a module, move the whole module with .to(), which keeps its parameters leaves)"))
    return diagnosis(codes.NON_LEAF_GRAD_READ, made_location, [location], notes, helps)


def _recomputed_attribute_read(frame, filename: str, read: ast.expr, made, line: int):
    """(the statement to change, the attribute expression, the leaf's text, what computes the attribute)
    when the tensor whose `.grad` was read comes from reading an attribute that is computed anew at each
    access: `module.weight` of a module parametrized at `weight` (torch.nn.utils.parametrize, one
    `original` parameter) or a @property that computes from one parameter (`return self.log_t.exp()`),
    read either on the failing line (`lr * layer.weight.grad`) or in the assignment of the name read
    there (`weight = layer.weight`). Such a tensor is made at the read, after any backward() that ran, so
    `retain_grad()` on it can never fill its .grad; the parameter it is computed from is the leaf whose
    .grad backward() filled. Evidence required: that parameter's .grad is not None. None otherwise."""
    import inspect

    import torch
    from torch.nn.utils import parametrize

    if isinstance(read, ast.Attribute):
        attribute, statement_line = read, line
    elif isinstance(made, ast.Assign) and len(made.targets) == 1 and isinstance(made.value, ast.Attribute) \
            and _made_just_before(filename, made, line):
        attribute, statement_line = made.value, made.lineno
    else:
        return None
    owner = value_of(frame, attribute.value)
    module_text = text_of(filename, attribute.value)
    if owner is None or isinstance(owner, torch.Tensor) or not isinstance(module_text, str):
        return None
    if isinstance(owner, torch.nn.Module) and parametrize.is_parametrized(owner, attribute.attr):
        original = getattr(owner.parametrizations[attribute.attr], "original", None)
        leaf_text = f"{module_text}.parametrizations.{attribute.attr}.original"
        how = f"a parametrization computes {module_text}.{attribute.attr} from {leaf_text} at each access"
    else:
        prop = inspect.getattr_static(type(owner), attribute.attr, None)
        if not (isinstance(prop, property) and prop.fget is not None):
            return None
        parameter_name = _property_parameter(owner, prop)
        if parameter_name is None:
            return None
        original = owner._parameters[parameter_name]
        leaf_text = f"{module_text}.{parameter_name}"
        how = (f"{module_text}.{attribute.attr} is a @property of {type(owner).__name__} that computes it from "
               f"{leaf_text} at each access")
    if not isinstance(original, torch.nn.Parameter) or not original.requires_grad or original.grad is None:
        return None  # no evidence that backward() filled the leaf's gradient
    return statement_line, text_of(filename, attribute), leaf_text, how


def _made_just_before(filename: str, made: ast.stmt, line: int) -> bool:
    """Whether `made` runs right before the statement at `line` in one call: the same function, earlier
    in it, outside any loop that does not hold both, and no backward()/grad() call written between
    them (so the tensor it makes was made after any backward() that filled gradients)."""
    tree = parse_file(filename)
    if tree is None or made.lineno >= line or enclosing_function(tree, made.lineno) is not enclosing_function(tree, line):
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.lineno <= made.lineno <= node.end_lineno \
                and not node.lineno <= line <= node.end_lineno:
            return False
        if isinstance(node, ast.Call) and made.end_lineno < node.lineno < line and (
                isinstance(node.func, ast.Attribute) and node.func.attr in ("backward", "grad")
                or isinstance(node.func, ast.Name) and node.func.id in ("backward", "grad")):
            return False
    return True


def _recomputed_attribute_diagnosis(filename: str, name: str, read_location, notes, statement_line: int,
                                    attribute_text: str, leaf_text: str, how: str):
    """AD308 for a `.grad` read of an attribute computed anew at each access: read the leaf instead."""
    notes.append(f"{how}: each read makes a new tensor, after backward() ran, so it never has a .grad "
                 "(retain_grad() on it cannot help); backward() filled the .grad of the leaf it is computed from")
    change = line_change(filename, statement_line, attribute_text, leaf_text,
                         f"read the gradient of {leaf_text}, the parameter the optimizer trains and whose .grad "
                         f"backward() filled, instead of {attribute_text}, which is computed from it")
    if change is None:
        return diagnosis(codes.NON_LEAF_GRAD_READ, read_location, notes=notes, help=[Suggestion(
            f"read the gradient of {leaf_text} instead of {attribute_text}")])
    made_location = dataclasses.replace(change.location,
                                        role="made" if statement_line != read_location.line else "read",
                                        note=f"{attribute_text} is computed at this read, not a leaf")
    related = [read_location] if statement_line != read_location.line else []
    return diagnosis(codes.NON_LEAF_GRAD_READ, made_location, related, notes, [change])


def _module_attributes_listed(frame, filename: str, name: str, line: int):
    """(the assignment, the module's text) when `name` is the target of the loop around `line`
    (`for p in trained:`), `trained` was assigned a list of one module's attributes
    (`[layer.weight, layer.bias]`), and those attributes reach exactly the module's parameters:
    each is a parameter or is computed from parameters of the module (weight normalisation's
    `weight`, from weight_g and weight_v). `list(layer.parameters())` then holds the leaves the
    update was meant for. None otherwise."""
    import torch

    from autograd_doctor.analysis.source_scope import leaves_below

    tree = parse_file(filename)
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For) and node.lineno < line <= node.end_lineno
             and isinstance(node.target, ast.Name) and node.target.id == name] if tree is not None else []
    loop = max(loops, key=lambda node: node.lineno) if loops else None
    if loop is None or not isinstance(loop.iter, ast.Name):
        return None
    assignment = last_assignment(filename, loop.iter.id, loop.lineno)
    if not (isinstance(assignment, ast.Assign) and len(assignment.targets) == 1
            and isinstance(assignment.value, (ast.List, ast.Tuple)) and assignment.value.elts
            and all(isinstance(e, ast.Attribute) for e in assignment.value.elts)):
        return None
    owners = {text_of(filename, element.value) for element in assignment.value.elts}
    if len(owners) != 1:
        return None
    module_text = owners.pop()
    module = value_of(frame, assignment.value.elts[0].value)
    if not isinstance(module, torch.nn.Module) or not isinstance(module_text, str):
        return None
    parameters = {id(p) for p in module.parameters()}
    reached: set[int] = set()
    for element in assignment.value.elts:
        tensor = getattr(module, element.attr, None)
        if not isinstance(tensor, torch.Tensor):
            return None
        if tensor.grad_fn is None:
            reached.add(id(tensor))
        else:
            leaves, finished = leaves_below([tensor.grad_fn])
            if not finished:
                return None
            reached |= leaves
    return (assignment, module_text) if reached == parameters else None


def _stored_at(filename: str, made: ast.stmt) -> ast.Assign | None:
    """The one assignment in the file that stores into `container[key]` when `made` only reads
    it back (`x = container["key"]` with a constant key): the statement that put the tensor there,
    such as a forward hook's `activations["features"] = output`. None when `made` computes
    something, or when the file stores there more than once or not at all."""
    if not (isinstance(made, ast.Assign) and isinstance(made.value, ast.Subscript)
            and isinstance(made.value.slice, ast.Constant)):
        return None
    tree = parse_file(filename)
    if tree is None:
        return None
    place = ast.unparse(made.value)
    stores = [node for node in ast.walk(tree) if isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Subscript) and ast.unparse(node.targets[0]) == place
              and not isinstance(node.value, ast.Constant)]  # `d["a"] = None` clears, it stores no tensor
    return stores[0] if len(stores) == 1 else None


def _an_intermediate_result(filename: str, made: ast.stmt, tensor) -> bool:
    """Whether the tensor whose .grad was read is a result computed from tensors made elsewhere
    (activations, projected points): the user wants the gradient backward() passes through it,
    which `retain_grad()` keeps. Not when the statement that made it also created the leaf
    (`torch.zeros(3, requires_grad=True).double()`, `torch.randn(3, requires_grad=True) * 0.01`),
    nor for a plain copy or conversion of one leaf (`w0.to(device)`): there the user meant the
    tensor itself to be the leaf that trains."""
    if not isinstance(made, ast.Assign) or len(made.targets) != 1:
        return False
    for node in ast.walk(made.value):
        if isinstance(node, ast.keyword) and node.arg == "requires_grad":
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
            return False
    grad_fn = tensor.grad_fn
    inputs = [function for function, _ in grad_fn.next_functions if function is not None]
    copy = any(type(grad_fn).__name__.startswith(prefix) for prefix in ("ToCopy", "Clone", "Copy"))
    return not (copy and len(inputs) == 1 and type(inputs[0]).__name__ == "AccumulateGrad")


def _retain_grad_diagnosis(filename: str, made: ast.Assign, name: str, node_name: str, read, notes,
                           stored: bool = False):
    """AD308 for an intermediate result whose gradient is wanted: `retain_grad()` right after it is
    made (or stored, when it is read back from a container after backward())."""
    target = ast.unparse(made.targets[0])
    verb = f"stored here, before backward(), and read back as {name}" if stored else f"computed here ({node_name})"
    location = statement_location(filename, made, role="made",
                                  note=f"{target} is {verb}: backward() passes a gradient "
                                       "through it but does not keep it")
    notes.append(f"to read the gradient that reaches an intermediate result, ask autograd to keep it: "
                 f"{target}.retain_grad() after it is made and before backward() (PyTorch's own advice in its "
                 "warning)")
    text = segment(filename, made)
    helps = [statement_change(location if text is not None else None,
                              f"keep the gradient of {target}: retain_grad() makes backward() fill {target}.grad; "
                              "nothing else changes", f"{text}\n{target}.retain_grad()")]
    return diagnosis(codes.NON_LEAF_GRAD_READ, location, [read], notes, helps)


def _loop_over(tree, statement, name: str):
    """The innermost `for name in ...:` loop around `statement`."""
    loops = [node for node in walk_covering(tree, statement.lineno) if isinstance(node, (ast.For, ast.AsyncFor))
             and isinstance(node.target, ast.Name) and node.target.id == name and node.body
             and node.body[0].lineno <= statement.lineno <= (node.end_lineno or node.lineno)]
    return max(loops, key=lambda node: node.lineno) if loops else None


def _comprehension_over(statement, name: str) -> ast.comprehension | None:
    """The one comprehension in `statement` whose target binds `name` (alone or in a tuple) and
    that has no condition yet."""
    found = [generator for node in ast.walk(statement)
             if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
             for generator in node.generators
             if not generator.ifs and any(isinstance(target, ast.Name) and target.id == name
                                          for target in ast.walk(generator.target))]
    return found[0] if len(found) == 1 else None


# The calls that join their first argument's tensors into one, position by position.
_CONCATENATIONS = ("cat", "concat", "concatenate", "stack", "hstack", "vstack")


def _concatenation_of(statement, comprehension: ast.comprehension):
    """The `.grad` reads of the comprehension's target inside its element, when `comprehension` is
    the generator of a list comprehension (or generator expression) passed as the first argument of
    a concatenation (`torch.cat([...])`); None otherwise."""
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Call) and node.args
                and isinstance(node.args[0], (ast.ListComp, ast.GeneratorExp))
                and comprehension in node.args[0].generators and len(node.args[0].generators) == 1):
            continue
        called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if called not in _CONCATENATIONS:
            return None
        element = node.args[0].elt
        targets = {target.id for target in ast.walk(comprehension.target) if isinstance(target, ast.Name)}
        reads = [read for read in ast.walk(element) if isinstance(read, ast.Attribute) and read.attr == "grad"
                 and isinstance(read.value, ast.Name) and read.value.id in targets]
        return reads or None
    return None


def grad_of_leaf_without_gradient(found):
    """A Python error from using `p.grad`, None because the leaf `p` got no gradient: it does not
    require grad (frozen) or the loss did not use it. Typical of hand-written optimizer steps and
    clipping loops over all parameters, which PyTorch's own optimizers guard with `if p.grad is None`."""
    import torch

    frame, line, filename, statement, location = found
    reads = [node for node in ast.walk(statement) if isinstance(node, ast.Attribute) and node.attr == "grad"
             and isinstance(tensor := value_of(frame, node.value), torch.Tensor) and tensor.is_leaf
             and tensor.grad is None]
    if not reads:
        return unused_input_gradient(found)
    name = text_of(filename, reads[0].value)
    tensor = value_of(frame, reads[0].value)
    frozen = not tensor.requires_grad
    if not frozen:
        cleared = _cleared_after_backward(filename, statement, name)
        if cleared is not None:
            return cleared
    why = ("it does not require grad (it is frozen)" if frozen
           else "no backward() so far has reached it (the loss does not use it, or backward() has not run yet)")
    location.role, location.note = "read", f"{name}.grad is None here: {why}"
    notes = [f"backward() fills .grad only for leaves that require grad and that the loss depends on; "
             f"{name} is a {tuple(tensor.shape)} leaf and {why}"]
    helps = []
    accumulated = _gradient_added_by_hand(frame, filename, statement, reads[0], tensor) if not frozen else None
    if accumulated is not None:
        notes.append(accumulated)
        helps.append(statement_change(location, (
            f"start the sum from zeros where {name} has no gradient yet: a .grad that is None is PyTorch's zero "
            f"gradient, and {name} is meant to get its gradient from this sum, not from a backward()"),
            f"if {name}.grad is None:\n    {name}.grad = torch.zeros_like({name})\n{segment(filename, statement)}"))
        return diagnosis(codes.LEAF_GRAD_NONE_READ, location, notes=notes, help=helps)
    tree = parse_file(filename)
    if frozen and not isinstance(tensor, torch.nn.Parameter) and tree is not None:
        asked = _input_gradient_never_asked_for(tree, filename, statement, reads[0], tensor)
        if asked is not None:
            location.note = f"{name}.grad is None here: {name} was made without requires_grad"
            notes = [asked[0]]
            return diagnosis(codes.LEAF_GRAD_NONE_READ, location, [asked[1]], notes, [asked[2]])
    loop = _loop_over(tree, statement, name) if tree is not None and name.isidentifier() else None
    parametrized = _parametrized_element_of_loop(frame, filename, loop, tensor) if frozen and loop is not None else None
    if parametrized is not None:
        return parametrized
    computed = _property_element_of_loop(frame, filename, loop, tensor) if frozen and loop is not None else None
    if computed is not None:
        return computed
    if loop is not None:
        first = loop.body[0]
        first_text = segment(filename, first)
        if first_text is not None:
            first_location = statement_location(filename, first)
            helps.append(statement_change(first_location, (
                f"skip the parameters that have no gradient, as PyTorch's optimizers do: {name} then keeps its "
                "value, as it would under torch.optim"), f"if {name}.grad is None:\n    continue\n{first_text}"))
    comprehension = _comprehension_over(statement, name) if loop is None and name.isidentifier() else None
    concatenated = _concatenation_of(statement, comprehension) if comprehension is not None else None
    if concatenated is not None:
        # `torch.cat([p.grad.view(-1) for p in model.parameters()])`: one flat vector over every
        # parameter, whose positions the code reads back per parameter (an A-GEM projection, a
        # comparison with another flattened gradient). Skipping a parameter would shift every later
        # position; a zero block in its place is the gradient it did get: the loss does not
        # depend on it.
        reads_in_element = concatenated
        zero_filled = replace_nodes_text(filename, statement, [
            (read, f"({name}.grad if {name}.grad is not None else torch.zeros_like({name}))")
            for read in reads_in_element])
        notes.append("the comprehension flattens the gradients of every parameter into one vector: a parameter "
                     "left out would move the positions of all those after it, so its place holds zeros, the "
                     "gradient the loss has with respect to a parameter it does not use")
        helps.append(statement_change(location, (
            "put zeros in the place of a parameter that got no gradient: the vector keeps one block per "
            "parameter, in order, and each block is that parameter's gradient"), zero_filled))
    elif comprehension is not None:
        # `{n: p.grad.norm() for n, p in model.named_parameters()}`: the same skip, as the
        # comprehension's condition.
        new_statement = replace_node_text(filename, statement, comprehension.iter,
                                          f"{text_of(filename, comprehension.iter)} if {name}.grad is not None")
        helps.append(statement_change(location, (
            "skip the parameters that have no gradient, as PyTorch's optimizers do: the result then holds "
            "only those that have one"), new_statement))
    helps.append(Suggestion(
        f"or, if {name} should train, " + ("set requires_grad = True on it (and give it to the optimizer)"
                                          if frozen else "use it in the loss")))
    summed = _backward_summed_over_loop(tree, statement) if tree is not None else None
    if summed is not None:
        # `for loss in losses.values(): loss.backward(retain_graph=True); norm = cat([p.grad ...])`:
        # each iteration's .grad read is this loss's gradient plus every earlier one's. A change that
        # only gets past the None would run and keep those sums: the code helps are withheld.
        loss_text = text_of(filename, summed) or "loss"
        notes = notes[:1]  # the zero-filling note explained a help that is not offered here
        notes.append(f"{name}.grad is read inside the loop that calls {loss_text}.backward() on each "
                     "iteration, and nothing clears .grad between iterations: backward() adds into .grad, "
                     "so from the second iteration on the gradients read are the sum of this iteration's "
                     "and the earlier ones'")
        helps = [Suggestion(
            f"compute each iteration's own gradients without .grad: torch.autograd.grad({loss_text}, params, "
            "retain_graph=True, allow_unused=True) over the parameters that require grad gives one gradient "
            "per parameter (None where it got none, to skip or replace with zeros) and leaves .grad alone"),
            helps[-1]]
    return diagnosis(codes.LEAF_GRAD_NONE_READ, location, notes=notes, help=helps)


def _input_gradient_never_asked_for(tree, filename: str, statement: ast.stmt, read: ast.Attribute, tensor):
    """(note, where it is made, the help) when `x.grad` is read after a backward() on an input that
    never asked for a gradient: a floating-point tensor, not a parameter, made in this function by
    an assignment or as a loop's target, read by a statement between there and the backward()
    (the forward pass), with the `.grad` read after that backward(). The user wants the gradient
    with respect to the input (a saliency map, an adversarial step): `x.requires_grad_()` right
    after it is made asks for it, and changes no value and no parameter's gradient. None otherwise."""
    if not tensor.is_floating_point():
        return None
    root = read.value
    while isinstance(root, (ast.Subscript, ast.Attribute)):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    scope = enclosing_function(tree, statement.lineno)
    backwards = [node.lineno for node in walk_own_scope(scope) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
                 and node.lineno < statement.lineno]
    made = last_assignment(filename, root.id, statement.lineno)
    loop = None
    if made is None:
        loops = [node for node in walk_covering(tree, statement.lineno) if isinstance(node, ast.For)
                 and node.body and node.body[0].lineno <= statement.lineno
                 and any(isinstance(target, ast.Name) and target.id == root.id for target in ast.walk(node.target))]
        loop = max(loops, key=lambda node: node.lineno) if loops else None
    start = made.end_lineno if made is not None else loop.body[0].lineno - 1 if loop is not None else None
    backward_line = max((line for line in backwards if start is not None and line > start), default=None)
    if backward_line is None:
        return None
    forward_reads = [node for node in walk_own_scope(scope) if isinstance(node, ast.Name) and node.id == root.id
                     and isinstance(node.ctx, ast.Load) and start < node.lineno < backward_line]
    expression = segment(filename, read.value)
    if not forward_reads or expression is None:
        return None
    message = (f"make {expression} require grad before the forward pass: backward() then fills {expression}.grad "
               "(the gradient with respect to this input); no value and no parameter's gradient changes")
    note = (f"{expression} is an input, not a parameter: a tensor made without requires_grad=True, so the forward "
            "pass records nothing for it and backward() gives it no gradient")
    if made is not None:
        made_text = segment(filename, made)
        where = statement_location(filename, made, role="made", note=f"{expression} is made here, without a gradient")
        help = statement_change(where if made_text is not None else None, message,
                                f"{made_text}\n{expression}.requires_grad_()")
    else:
        first = loop.body[0]
        first_text = segment(filename, first)
        where = statement_location(filename, loop, role="made", note=f"{expression} comes from the loop, without a gradient")
        help = statement_change(statement_location(filename, first) if first_text is not None else None, message,
                                f"{expression}.requires_grad_()\n{first_text}")
    return note, where, help


def _gradient_added_by_hand(frame, filename: str, statement: ast.stmt, read: ast.Attribute, tensor) -> str | None:
    """Why `statement` accumulates gradients by hand into `tensor.grad`, or None: it is
    `p.grad += <expression>` (the `.grad` read is the target) and the expression reads the `.grad`
    of another leaf, of p's shape, that has one (a first-order MAML's adapted copy, a worker's
    replica). Then p is meant to get its gradient from these sums, not from a backward(), and a
    None `.grad` is the zero they start from."""
    import torch

    if not (isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add) and statement.target is read) \
            or frame.f_globals.get("torch") is not torch or segment(filename, statement) is None:
        return None
    for node in ast.walk(statement.value):
        if not (isinstance(node, ast.Attribute) and node.attr == "grad"):
            continue
        source = value_of(frame, node.value)
        if isinstance(source, torch.Tensor) and source is not tensor and source.is_leaf \
                and source.grad is not None and source.shape == tensor.shape:
            return (f"{text_of(filename, node.value)}.grad, of the same shape, is added into {text_of(filename, read.value)}"
                    ".grad by hand: the gradients of another copy of the parameters, summed here")
    return None


def _clears_gradients(node: ast.AST) -> bool:
    """A `zero_grad(...)` call, a `.grad = None` assignment or a `.grad.zero_()` call anywhere in
    `node`."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("zero_grad", "zero_"):
            if n.func.attr == "zero_grad" or "grad" in ast.unparse(n.func.value).split("."):
                return True
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in n.targets):
            return True
    return False


def _backward_summed_over_loop(tree, statement):
    """The receiver of the `loss.backward(...)` call (the `loss` node) when `statement` sits in a loop
    over losses, `for loss in losses:` / `for name, loss in losses.items():`, whose body calls
    loss.backward() before it, and nothing in the loop clears .grad: the .grad values `statement`
    reads then add up over the losses. None otherwise (a training loop's `loss`, computed in the
    body, is not a loop over losses)."""
    loops = [node for node in walk_covering(tree, statement.lineno)
             if isinstance(node, (ast.For, ast.AsyncFor)) and node.body
             and node.body[0].lineno <= statement.lineno <= (node.end_lineno or node.lineno)]
    for loop in sorted(loops, key=lambda node: -node.lineno):
        if _clears_gradients(loop):
            return None
        bound = {target.id for target in ast.walk(loop.target) if isinstance(target, ast.Name)}
        before = [s for s in loop.body if (s.end_lineno or s.lineno) < statement.lineno]
        for s in reversed(before):
            call = s.value if isinstance(s, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward" \
                    and isinstance(call.func.value, ast.Name) and call.func.value.id in bound:
                return call.func.value
    return None


def _is_zero_grad_to_none(statement: ast.stmt) -> bool:
    """`model.zero_grad()`, `optimizer.zero_grad(set_to_none=True)`: a statement that sets every
    .grad it covers to None (the default since PyTorch 2.0); not `zero_grad(set_to_none=False)`,
    which keeps zero tensors, nor `zero_grad(False)`."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return False
    call = statement.value
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "zero_grad") or call.args:
        return False
    return all(k.arg == "set_to_none" and isinstance(k.value, ast.Constant) and k.value.value is True
               for k in call.keywords)


def _calls_backward(node: ast.AST) -> bool:
    """`loss.backward(...)`, `torch.autograd.backward(...)`, `scaler.scale(loss).backward()`."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "backward"
               for n in ast.walk(node))


def _sibling_blocks(tree: ast.AST, line: int):
    """(block, index) for each statement list on the way down to `line`: the statement at `index`
    of `block` covers the line, outermost first."""
    from autograd_doctor.diagnosis.source import statement_children

    node = tree
    while True:
        children = statement_children(node) if not isinstance(node, ast.Module) else node.body
        block = [c for c in children if isinstance(c, ast.stmt)]
        index = next((i for i, c in enumerate(block) if c.lineno <= line <= (c.end_lineno or c.lineno)), None)
        if index is None:
            return
        yield block, index
        node = block[index]


def _cleared_after_backward(filename: str, statement: ast.stmt, name: str):
    """AD309 when the .grad read is None because a `zero_grad()` (set_to_none by default) runs
    between the backward() that filled it and the statement that reads it, in the same block:
    `loss.backward(); model.zero_grad(); for p in ...: p -= lr * p.grad`. The read leaf requires
    grad, so the gradient was computed and then cleared; the zero_grad() moves after the
    statement that uses the gradients (the order torch.optim's loops use), which keeps every
    value the program computes. None unless the order is in the source, in one block."""
    tree = parse_file(filename)
    if tree is None:
        return None
    for block, index in reversed(list(_sibling_blocks(tree, statement.lineno))):
        before = block[:index]
        clears = [i for i, s in enumerate(before) if _is_zero_grad_to_none(s)]
        if not clears:
            continue
        cleared_at = clears[-1]
        if not any(_calls_backward(s) for s in before[:cleared_at]) or \
                any(_calls_backward(s) for s in before[cleared_at + 1:]) or _calls_backward(block[index]):
            return None
        # The gradients may be used after the statement that failed too (a logged norm, then
        # optimizer.step()): the clearing moves to the end of the block, or just before its next
        # backward(), after every use.
        later = block[index + 1:]
        next_backward = next((i for i, s in enumerate(later) if _calls_backward(s)), len(later))
        zero_grad, user = before[cleared_at], (later[next_backward - 1] if next_backward else block[index])
        if zero_grad.col_offset != user.col_offset:
            return None
        lines = [source_line(filename, n) for n in range(zero_grad.end_lineno + 1, user.end_lineno + 1)]
        indent = " " * zero_grad.col_offset
        if any(line.strip() and not line.startswith(indent) for line in lines):
            return None
        moved = [line[len(indent):].rstrip() for line in lines]
        zero_text = segment(filename, zero_grad.value)
        if zero_text is None:
            return None
        location = statement_location(filename, zero_grad, role="cleared", note=(
            f"{zero_text} sets every .grad to None (set_to_none=True is its default), after backward() "
            "filled them and before they are used"))
        read = statement_location(filename, statement, role="read", note=f"{name}.grad is None here: "
                                  f"{zero_text} (line {zero_grad.lineno}) cleared it")
        span = dataclasses.replace(location, end_line=user.end_lineno, end_column=user.end_col_offset)
        notes = [f"{name} requires grad and backward() computed its gradient; {zero_text} then set it to None. "
                 "Clear the gradients after they are used (or before the next backward()), not between "
                 "backward() and their use"]
        helps = [Suggestion(f"call {zero_text} after the gradients are used (after line {user.end_lineno}): the "
                            "code reads the gradients backward() computed, and the next backward() still "
                            "starts from zero", replacement="\n".join(moved + [zero_text]), location=span)]
        return diagnosis(codes.LEAF_GRAD_NONE_READ, location, [read], notes, helps)
    return None


def unused_input_gradient(found):
    """A Python error from using `g`, one of the gradients `torch.autograd.grad(...,
    allow_unused=True)` returned, None because the output does not use that input; `g` is bound by
    the loop over those gradients (`for g, p in zip(grads, params):`)."""
    frame, line, filename, statement, location = found
    tree = parse_file(filename)
    if tree is None:
        return None
    nones = [node.id for node in ast.walk(statement) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
             and node.id in frame.f_locals and frame.f_locals[node.id] is None]
    for name in dict.fromkeys(nones):
        loop = _loop_binding(tree, statement, name)
        returned = _unused_allowed_grad_call(tree, loop) if loop is not None else None
        if returned is None:
            continue
        location.role, location.note = "read", f"{name} is None here: the output does not use this input"
        made = statement_location(filename, returned, role="returned",
                                  note="allow_unused=True: None for each input the output does not use")
        notes = [f"torch.autograd.grad(..., allow_unused=True) returns None, not zeros, for an input the output "
                 f"does not depend on (a branch this pass did not take); {name} is one of those"]
        helps = []
        first_text = segment(filename, loop.body[0])
        if first_text is not None:
            helps.append(statement_change(statement_location(filename, loop.body[0]), (
                "skip the inputs whose gradient is None, as PyTorch's optimizers skip parameters without "
                ".grad: they then keep their value and their .grad"),
                f"if {name} is None:\n    continue\n{first_text}"))
        helps.append(Suggestion("or, if every input should get a gradient here, use it in the output "
                                "(materialize_grads=True would give zeros, which optimizers with momentum "
                                "treat as a gradient)"))
        return diagnosis(codes.UNUSED_INPUT_GRAD_NONE, location, [made], notes, helps)
    return None


def _loop_binding(tree, statement, name: str):
    """The innermost `for ... in ...:` loop around `statement` whose target binds `name`."""
    loops = [node for node in walk_covering(tree, statement.lineno) if isinstance(node, (ast.For, ast.AsyncFor))
             and node.body and node.body[0].lineno <= statement.lineno <= (node.end_lineno or node.lineno)
             and any(isinstance(target, ast.Name) and target.id == name for target in ast.walk(node.target))]
    return max(loops, key=lambda node: node.lineno) if loops else None


def _unused_allowed_grad_call(tree, loop) -> ast.stmt | None:
    """The assignment, before `loop`, of a name the loop iterates over (directly or in a zip) from
    `torch.autograd.grad(..., allow_unused=True)`."""
    iterated = {node.id for node in ast.walk(loop.iter) if isinstance(node, ast.Name)}
    functions = [node for node in walk_covering(tree, loop.lineno) if isinstance(node, (ast.FunctionDef,
                                                                                        ast.AsyncFunctionDef))]
    scope = max(functions, key=lambda node: node.lineno) if functions else tree
    found = None
    for node in ast.walk(scope):
        if not (isinstance(node, ast.Assign) and node.lineno < loop.lineno and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in iterated):
            continue
        calls = [call for call in ast.walk(node.value) if isinstance(call, ast.Call)
                 and isinstance(call.func, (ast.Attribute, ast.Name))
                 and (call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id) == "grad"
                 and any(k.arg == "allow_unused" and isinstance(k.value, ast.Constant) and k.value.value is True
                         for k in call.keywords)]
        if calls and (found is None or node.lineno > found.lineno):
            found = node
    return found


def _as_parameter(filename: str, statement: ast.Assign, frame_globals: dict) -> str | None:
    """`self.x = nn.Parameter(<value without requires_grad=True>)` for `self.x = <value>`."""
    value = statement.value
    if isinstance(value, ast.Call):
        value = ast.Call(func=value.func, args=value.args,
                         keywords=[k for k in value.keywords if k.arg != "requires_grad"])
    text = segment(filename, statement.value) if value is statement.value else ast.unparse(value)
    if text is None:
        return None
    parameter = "nn.Parameter" if "nn" in frame_globals else "torch.nn.Parameter"
    return f"{ast.unparse(statement.targets[0])} = {parameter}({text})"


def trace_constant_requires_grad(context: ErrorContext, already):
    """torch.jit.trace read a tensor that requires grad and is neither an input nor a parameter
    (the traceback ends at the read inside the traced code; the line to change is where the
    tensor was stored on the module, or made)."""
    import torch

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    reads = [node for node in ast.walk(statement) if isinstance(node, (ast.Name, ast.Attribute))
             and isinstance(tensor := value_of(frame, node), torch.Tensor) and tensor.requires_grad
             and not isinstance(tensor, torch.nn.Parameter)]
    if not reads:
        entry = _dict_entry_of_module(context, frame, filename, statement, location)
        if entry is not None:
            return entry
        return _module_called_in_traced_function(context, frame, filename, statement, location)
    read = reads[0]
    name = text_of(filename, read) or "the tensor"
    location.role, location.note = "read", f"{name} requires grad, and is neither an input nor a parameter"
    notes = ["torch.jit.trace records a tensor that is not an input, a parameter or a buffer as a constant, "
             "and a constant cannot carry a gradient"]
    owner = value_of(frame, read.value) if isinstance(read, ast.Attribute) else None
    if isinstance(owner, torch.nn.Module):
        source_file, assignment = module_attribute_assignment(owner, read.attr)
        if assignment is not None:
            stored = statement_location(source_file, assignment, role="stored",
                                        note=f"{name} is stored as a plain attribute: the module does not know it "
                                             "is trained")
            new_statement = _as_parameter(source_file, assignment, frame.f_globals)
            helps = [statement_change(stored, "register it as a parameter: it then trains with the module, is in "
                                      "its state_dict(), and the trace keeps it as a parameter", new_statement),
                     Suggestion(f"or, if {name} is not trained, store it detached (or as a buffer, "
                                "self.register_buffer)")]
            notes.append(f"{name} is not in {type(owner).__name__}.parameters(), so an optimizer built from them "
                         "does not train it either")
            return diagnosis(codes.TRACE_CONSTANT_REQUIRES_GRAD, stored, [location], notes, helps)
    return diagnosis(codes.TRACE_CONSTANT_REQUIRES_GRAD, location, notes=notes, help=[Suggestion(
        f"pass {name} to the traced function as an input, make it a parameter of a module, or detach it if it "
        "is not trained")])


def _dict_entry_of_module(context: ErrorContext, frame, filename: str, statement, location):
    """`self.tables["pos"]` read in the traced code, a tensor that requires grad kept in a plain dict
    attribute of a module (`self.tables = {"pos": torch.zeros(..., requires_grad=True)}`): a dict
    entry is not registered, so it is neither a parameter of the trace nor of the module. The
    dict's assignment is the line to change: an `nn.ParameterDict` registers its entries."""
    import torch

    for node in ast.walk(statement):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute)
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            continue
        owner, table = value_of(frame, node.value.value), value_of(frame, node.value)
        if not isinstance(owner, torch.nn.Module) or type(table) is not dict:
            continue
        tensor = table.get(node.slice.value)
        if not isinstance(tensor, torch.Tensor) or not tensor.requires_grad or not tensor.is_leaf \
                or isinstance(tensor, torch.nn.Parameter):
            continue
        source_file, assignment = module_attribute_assignment(owner, node.value.attr)
        if assignment is None or len(assignment.targets) != 1 or not isinstance(assignment.value, ast.Dict):
            continue
        name = text_of(filename, node) or "the entry"
        attribute = ast.unparse(assignment.targets[0])
        location.role, location.note = "read", f"{name} requires grad, and is neither an input nor a parameter"
        stored = statement_location(source_file, assignment, role="stored",
                                    note=f"{attribute} is a plain dict: its tensors are not registered with the module")
        notes = ["torch.jit.trace records a tensor that is not an input, a parameter or a buffer as a constant, "
                 "and a constant cannot carry a gradient",
                 f"a plain dict attribute is not registered: its entries are not in {type(owner).__name__}.parameters()"]
        entries = []
        for key, value in zip(assignment.value.keys, assignment.value.values):
            if key is None:
                return None
            call = value
            if isinstance(value, ast.Call):
                call = ast.Call(func=value.func, args=value.args,
                                keywords=[k for k in value.keywords if k.arg != "requires_grad"])
            text = segment(source_file, value) if call is value else ast.unparse(call)
            entries.append(f"{segment(source_file, key)}: nn.Parameter({text})")
        parameter_dict = "nn.ParameterDict" if "nn" in frame.f_globals else "torch.nn.ParameterDict"
        if "nn" not in frame.f_globals:
            entries = [entry.replace(": nn.Parameter(", ": torch.nn.Parameter(", 1) for entry in entries]
        new_statement = f"{attribute} = {parameter_dict}({{{', '.join(entries)}}})"
        held = _optimizers_holding(tensor)
        message = (f"register the dict's tensors: an nn.ParameterDict makes them parameters of the module (the "
                   f"trace keeps them as parameters, {type(owner).__name__}.parameters() holds them)")
        if held:
            # The optimizer given the dict's values besides the module's parameters would then hold
            # them twice: the change is two statements, said in words.
            helps = [Suggestion(f"{message}, written `{new_statement}`; then build {held[0]} from the module's "
                                f"parameters() alone, which now hold them (listing the dict's values too would "
                                f"give it each of them twice)")]
        else:
            helps = [statement_change(stored, message, new_statement)]
        helps.append(Suggestion(f"or, if {name} is not trained, store it detached (or as a buffer, self.register_buffer)"))
        return diagnosis(codes.TRACE_CONSTANT_REQUIRES_GRAD, stored, [location], notes, helps)
    return None


def _optimizers_holding(tensor) -> list[str]:
    """The kinds of the live optimizers that hold `tensor` ("the SGD optimizer")."""
    # Imported here: stale_optimizer imports analysis.errors (context), which imports this module;
    # at the top, importing stale_optimizer (or analysis.diagnose) first failed on the cycle.
    from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding

    return [f"the {type(optimizer).__name__} optimizer" for optimizer in optimizers_holding([tensor], Budget(1)) or ()]


def _module_called_in_traced_function(context: ErrorContext, frame, filename: str, statement, location):
    """The traced code calls a module it does not own (a global or a closure's variable, not a
    submodule of a traced module): its parameters are neither inputs nor parameters of the trace,
    so the trace would record them as constants. The line to change is the torch.jit.trace call."""
    import torch

    called = [node.func for node in ast.walk(statement) if isinstance(node, ast.Call)
              and isinstance(module := value_of(frame, node.func), torch.nn.Module)
              and any(p.requires_grad for p in module.parameters())]
    trace = _trace_call(context, frame)
    if not called or trace is None:
        return None
    module_text = text_of(filename, called[0]) or "the module"
    trace_file, trace_statement, trace_call = trace
    traced_text = text_of(trace_file, trace_call.args[0]) if trace_call.args else "the traced function"
    location.role, location.note = "read", (f"calls {module_text}, whose parameters require grad and are not "
                                            "parameters of the trace")
    primary = statement_location(trace_file, trace_statement, role="trace",
                                 note=f"traces {traced_text}, a function that calls {module_text}")
    notes = ["torch.jit.trace records a tensor that is not an input, a parameter or a buffer as a constant, and a "
             f"constant cannot carry a gradient: {module_text}'s parameters are parameters of {module_text}, not of "
             f"the traced {traced_text}"]
    advice = Suggestion(
        f"trace the module: torch.jit.trace({module_text}, ...) keeps its parameters as parameters (they train), "
        f"and apply the rest of {traced_text} to its output outside the trace; or make {traced_text} the forward of "
        f"an nn.Module that holds {module_text} as a submodule, and trace that module")
    helps = [advice]
    caller = next((c for c, at in context.user_frames() if c.f_code.co_filename == trace_file and
                   trace_statement.lineno <= at <= trace_statement.end_lineno), None)
    if caller is not None and trace_call.args and _only_calls_module(frame, statement, called[0]) \
            and value_of(caller, called[0]) is value_of(frame, called[0]):
        # The traced function is `return model(x)`: tracing the module computes the same, and keeps
        # its parameters as parameters.
        advice.message = "or " + advice.message
        helps.insert(0, statement_change(primary, f"trace {module_text} itself: {traced_text} only calls it, and "
                                         "the module's parameters stay parameters of the trace",
                                         replace_node_text(trace_file, trace_statement, trace_call.args[0],
                                                           module_text)))
    return diagnosis(codes.TRACE_CONSTANT_REQUIRES_GRAD, primary, [location], notes, helps)


def _only_calls_module(frame, statement, module_node) -> bool:
    """Whether the traced function's statement is `return module(a, b)` with its own parameters, in
    order, as the only arguments (and nothing else in the function's body)."""
    code = frame.f_code
    parameters = list(code.co_varnames[:code.co_argcount])
    call = statement.value if isinstance(statement, ast.Return) else None
    tree = parse_file(code.co_filename)
    definition = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == code.co_name
                       and n.lineno <= statement.lineno <= n.end_lineno), None) if tree is not None else None
    return isinstance(call, ast.Call) and call.func is module_node and not call.keywords \
        and [getattr(a, "id", None) for a in call.args] == parameters and definition is not None \
        and len(definition.body) == 1


def _trace_call(context: ErrorContext, failing_frame):
    """(file, statement, call) of the user's torch.jit.trace(...) call that ran the failing code."""
    import torch

    from autograd_doctor.diagnosis.source import call_name, statement_at

    for caller, line in context.user_frames():
        if caller is failing_frame:
            continue
        caller_file = caller.f_code.co_filename
        caller_statement = statement_at(caller_file, line)
        for call in (n for n in ast.walk(caller_statement) if isinstance(n, ast.Call)) if caller_statement else ():
            if call_name(call) == "trace" and value_of(caller, call.func) is torch.jit.trace:
                return caller_file, caller_statement, call
    return None


def _carried_diagnosis(filename: str, name: str, node_name: str, carried, read, notes):
    """`name` is rebound at the end of a loop to a result that still carries the previous
    iteration's graph: from the second iteration on it is no longer a leaf."""
    location = statement_location(filename, carried, role="carried", note=f"carries {name} into the next iteration "
                                  f"with the graph of this one ({node_name})")
    notes.append(f"line {carried.lineno} rebinds {name} to a result computed from the previous {name}; the next "
                 f"iteration starts from that result, which is not a leaf (and whose graph grows every iteration)")
    value = text_of(filename, carried.value)
    simple = isinstance(carried.value, (ast.Call, ast.Attribute, ast.Name, ast.Subscript))
    helps = [statement_change(location, f"carry a fresh leaf into the next iteration: detach() drops this "
                              f"iteration's graph, requires_grad_() asks for the gradient of the new {name}",
                              f"{ast.unparse(carried.targets[0])} = {value if simple else f'({value})'}"
                              ".detach().requires_grad_()")]
    return diagnosis(codes.NON_LEAF_GRAD_READ, location, [read] if read.line != carried.lineno else [], notes, helps)


# Graph node names of the conversions that return a non-leaf copy.
_CONVERSIONS = {"to", "type", "double", "float", "half", "bfloat16", "cuda", "cpu"}
_OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow", ast.MatMult: "mm"}


def _made_by(statement, node_name: str) -> bool:
    """Could this statement's value be the op that made a tensor with this grad_fn
    (`ClampBackward1` from `torch.clamp(...)`, `ToCopyBackward0` from `.to(...)`)?"""
    import re

    op = re.sub(r"Backward\d*$", "", node_name).lower()
    value = getattr(statement, "value", None)
    if value is None:
        return False
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            called = (node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")).lower()
            if called.rstrip("_") == op or (op == "tocopy" and called in _CONVERSIONS):
                return True
        elif isinstance(node, ast.BinOp) and _OPERATORS.get(type(node.op)) == op:
            return True
    return False


def _no_grad(tensor) -> bool:
    """`tensor.grad is None`, read without PyTorch's warning about non-leaf .grad (which would
    otherwise point at the doctor's own line)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tensor.grad is None


def _conversions_inside_parameter(made: ast.stmt) -> str | None:
    """`nn.Parameter(x).to(d)` rewritten as `nn.Parameter(x.to(d))`: a conversion applied to a
    Parameter returns a plain non-leaf tensor, while the same conversion applied to its data keeps
    the result a Parameter (detach().requires_grad_() would give a leaf, but not a Parameter that
    its module registers and its optimizer trains)."""
    if not isinstance(made, ast.Assign) or len(made.targets) != 1:
        return None
    conversions, node = [], made.value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CONVERSIONS:
        conversions.append(node)
        node = node.func.value
    called = node.func if isinstance(node, ast.Call) else None
    called_name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", None)
    if not conversions or called_name != "Parameter" or not node.args:
        return None
    data = node.args[0]
    for conversion in reversed(conversions):  # innermost first, as the program applied them
        data = ast.Call(func=ast.Attribute(value=data, attr=conversion.func.attr, ctx=ast.Load()),
                        args=conversion.args, keywords=conversion.keywords)
    return ast.unparse(ast.Call(func=node.func, args=[data, *node.args[1:]], keywords=node.keywords))


def _returned_by_helper(frame, filename: str, name: str, line: int, tensor):
    """(helper's file, function name, its return statement, the returned value made a leaf) when
    `name` is the target of the loop around `line` over a list (`for p in params:`), the element it
    holds now is that very tensor (identity) and the list's one-line assignment made that element by
    a call of a plain function of the user's files (`init_weight(4, 8)`) whose only `return` computes
    it from a factory given requires_grad=True (`torch.randn(..., requires_grad=True) / s`). None
    otherwise."""
    import types

    from autograd_doctor.recording.frames import is_internal_file

    tree = parse_file(filename)
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For) and node.lineno < line <= node.end_lineno
             and isinstance(node.target, ast.Name) and node.target.id == name] if tree is not None else []
    loop = max(loops, key=lambda node: node.lineno) if loops else None
    if loop is None or not isinstance(loop.iter, ast.Name):
        return None
    values = value_of(frame, loop.iter)
    if not isinstance(values, (list, tuple)):
        return None
    indices = [i for i, value in enumerate(values) if value is tensor]
    assignment = last_assignment(filename, loop.iter.id, loop.lineno)
    if len(indices) != 1 or not (isinstance(assignment, ast.Assign) and len(assignment.targets) == 1
                                 and isinstance(assignment.value, (ast.List, ast.Tuple))
                                 and len(assignment.value.elts) == len(values)):
        return None
    call = assignment.value.elts[indices[0]]
    function = value_of(frame, call.func) if isinstance(call, ast.Call) else None
    if not isinstance(function, types.FunctionType) or is_internal_file(function.__code__.co_filename):
        return None
    helper_file = function.__code__.co_filename
    helper_tree = parse_file(helper_file)
    definition = next((node for node in ast.walk(helper_tree) if isinstance(node, ast.FunctionDef)
                       and node.name == function.__name__ and node.lineno <= function.__code__.co_firstlineno
                       <= node.body[0].lineno), None) if helper_tree is not None else None
    if definition is None:
        return None
    returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)]
    if len(returns) != 1 or returns[0].value is None or any(
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not definition
            for node in ast.walk(definition)):
        return None
    made = ast.Assign(targets=[ast.Name("_", ast.Store())], value=returns[0].value, lineno=returns[0].lineno)
    factories = [node for node in ast.walk(returns[0].value) if isinstance(node, ast.Call) and any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords)]
    new_value = _leaf_value(helper_file, made) if len(factories) == 1 else None
    if new_value is None:
        return None
    return helper_file, function.__name__, returns[0], new_value


def _leaf_value(filename: str, made: ast.stmt) -> str | None:
    """The assignment's value rewritten to end in a leaf that requires grad: the factory's
    requires_grad=True moved to a final .requires_grad_(), else .detach().requires_grad_()."""
    if not isinstance(made, ast.Assign) or len(made.targets) != 1:
        return None
    value_text = text_of(filename, made.value)
    if value_text is None:
        return None
    factories = [call for call in ast.walk(made.value) if isinstance(call, ast.Call) and any(
        k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords)]
    simple = isinstance(made.value, (ast.Call, ast.Attribute, ast.Name, ast.Subscript))
    wrapped = value_text if simple else f"({value_text})"
    if len(factories) != 1:
        return f"{wrapped}.detach().requires_grad_()"
    factory = factories[0]
    factory_text = text_of(filename, factory)
    without = ast.Call(func=factory.func, args=factory.args,
                       keywords=[k for k in factory.keywords if k.arg != "requires_grad"])
    if factory_text is None or value_text.count(factory_text) != 1:
        return None
    value_text = value_text.replace(factory_text, ast.unparse(without))
    return f"{value_text if simple else f'({value_text})'}.requires_grad_()"


MATCHERS = [
    (r"unsupported operand type\(s\) for .*'NoneType'|'NoneType' object has no attribute|"
     r"'NoneType' object is not subscriptable", grad_of_non_leaf),
    (r"is not differentiable with respect to argument '\w+'\. This input cannot have requires_grad True"
     r"|the derivative for '(?!\w*_backward\b)\w+' is not implemented", non_differentiable_argument),
    (r"Cannot insert a Tensor that requires grad as a constant", trace_constant_requires_grad),
    (r"grad can be implicitly created only for (real )?scalar outputs", non_scalar_backward),
    (r"Can't call numpy\(\) on Tensor that requires grad", numpy_of_grad_tensor),
    (r"(?i)only Tensors of floating point (and complex )?dtype can require gradients", integer_requires_grad),
    (r"you can only change requires_grad flags of leaf variables", requires_grad_on_non_leaf),
    (r"cannot register a hook on a tensor that doesn't require gradient"
     r"|can't retain_grad on Tensor that has requires_grad=False", hook_without_grad),
    (r"functions with out=\.\.\. arguments don't support automatic differentiation", out_with_grad),
    (r"can't optimize a non-leaf Tensor", non_leaf_optimized),
]
