"""In-place tensor methods autograd cannot record at all: `resize_()` / `resize_as_()`
(a new number of elements, uninitialised) and `apply_()` / `map_()` / `map2_()` (a Python
function per element). PyTorch refuses them on a tensor that requires grad; the doctor says
whether that tensor is a leaf or computed, and writes the out-of-place equivalent."""

from __future__ import annotations

import ast
import math

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, last_assignment, value_of
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import replace_node_text, statement_location


def _method_call(context: ErrorContext, methods: tuple[str, ...]):
    """(frame, filename, statement, location, call, receiver tensor) of the failing method call."""
    import torch

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    calls = [c for method in methods for c in find_calls(statement, method) if isinstance(c.func, ast.Attribute)]
    if len(calls) != 1:
        return frame, filename, statement, location, None, None
    tensor = value_of(frame, calls[0].func.value)
    return frame, filename, statement, location, calls[0], tensor if isinstance(tensor, torch.Tensor) else None


def _requested_shape(frame, call: ast.Call) -> tuple | None:
    """resize_(2, 3), resize_((2, 3)), resize_(shape) or resize_as_(other), as a tuple of ints."""
    import torch

    if call.func.attr == "resize_as_":
        other = value_of(frame, call.args[0]) if call.args else None
        return tuple(other.shape) if isinstance(other, torch.Tensor) else None
    values = [_size_value(frame, a) for a in call.args]
    if len(values) == 1 and isinstance(values[0], (tuple, list, torch.Size)):
        values = list(values[0])
    return tuple(values) if values and all(isinstance(v, int) for v in values) else None


_INTEGER_OPERATORS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__, ast.FloorDiv: int.__floordiv__}


def _size_value(frame, node: ast.expr):
    """The value of a size written in the call: what value_of reads, and integer arithmetic on a
    tensor's sizes (`x.size(0)`, `x.numel() // x.size(0)`, `x.shape[1] * 2`). Only these methods of
    a tensor are called, which read its metadata and change nothing."""
    import torch

    if isinstance(node, ast.BinOp) and type(node.op) in _INTEGER_OPERATORS:
        left, right = _size_value(frame, node.left), _size_value(frame, node.right)
        if isinstance(left, int) and isinstance(right, int) and not (isinstance(node.op, ast.FloorDiv) and right == 0):
            return _INTEGER_OPERATORS[type(node.op)](left, right)
        return None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        sizes = _size_value(frame, node.value)
        if isinstance(sizes, torch.Size) and isinstance(node.slice.value, int) \
                and -len(sizes) <= node.slice.value < len(sizes):
            return sizes[node.slice.value]
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("size", "numel", "dim") \
            and not node.keywords and all(isinstance(a, ast.Constant) and isinstance(a.value, int) for a in node.args):
        tensor = value_of(frame, node.func.value)
        if isinstance(tensor, torch.Tensor):
            try:
                return getattr(tensor, node.func.attr)(*[a.value for a in node.args])
            except (IndexError, RuntimeError, TypeError):
                return None
        return None
    return value_of(frame, node)


def _made(filename: str, name: str, line: int, note: str):
    statement = last_assignment(filename, name, line) if name.isidentifier() else None
    return statement_location(filename, statement, role="made", note=note) if statement is not None else None


def resize_with_grad(context: ErrorContext, already):
    found = _method_call(context, ("resize_", "resize_as_"))
    if found is None:
        return None
    frame, filename, statement, location, call, tensor = found
    name = text_of(filename, call.func.value) if call is not None else None
    method = call.func.attr if call is not None else "resize_"
    leaf = tensor is not None and tensor.is_leaf
    location.note = f"{method}() on {name or 'a tensor'}, which requires grad" + (" (a leaf)" if leaf else "")
    notes = ["resize_() changes the number of elements in place and leaves new ones uninitialised; autograd "
             "has no gradient for that, so it refuses it on any tensor that requires grad"]
    shape = _requested_shape(frame, call) if call is not None and tensor is not None else None
    related = [_made(filename, name, location.line, f"{name} is made here")] if name else []
    owner = _module_holding_as_buffer(frame, call) if call is not None and tensor is not None \
        and tensor.grad_fn is not None else None
    if owner is not None:
        # `self.queue.resize_(...)` where queue is a registered buffer that a value with history was
        # stored into: a buffer is state kept from step to step. Resizing it out of place would keep
        # this step's graph in it, and the next step's backward() would reach that freed graph; the
        # change belongs where the value with history is made, which the program does not show.
        notes.append(f"{name} is a buffer of {owner}: state kept from step to step, which must not carry a graph; "
                     "it requires grad because a value computed with gradients was stored into it")
        return diagnosis(codes.RESIZE_WITH_GRAD, location, related, notes, [Suggestion(
            f"compute what is stored into {name} without gradients (under torch.no_grad(), or with .detach() where "
            "it is stored); changing the shape out of place would keep this step's graph in the buffer")])
    helps = []
    # `out.resize_(...)` as a statement, or `flat = out.resize_(...)` when nothing reads `out` afterwards
    # (resize_ returns the tensor itself: only `flat` is meant to have the new shape).
    bound = statement.targets[0].id if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
        and isinstance(statement.targets[0], ast.Name) and statement.value is call and \
        (statement.targets[0].id == name or not _read_later(filename, name, statement)) else None
    # On a tensor that is not contiguous (a GRU's batch_first output), resize_ would reinterpret its memory
    # in storage order; with the element count unchanged, the shape change meant is the reshape, which keeps
    # the order of the elements as the tensor shows them.
    grown = _rows_grown_then_filled(frame, filename, statement, call, name, tensor) \
        if shape is not None and not leaf and isinstance(statement, ast.Expr) and statement.value is call else None
    if grown is not None:
        # `seq.resize_(length, seq.shape[1]); seq[old:] = 0`: the helper grows the rows and fills the new
        # ones; this call's sizes may happen to match, the next call's not, so the reshape is not the
        # meaning. New rows of zeros appended out of place are (the code after writes them as before).
        helps.append(statement_change(location, f"grow {name} out of place, so autograd records it: its rows "
                                      "followed by new rows of zeros, which the code after this line fills as "
                                      f"before; {name} then refers to the new tensor", f"{name} = {grown}"))
    elif shape is not None and not leaf and (tensor.is_contiguous() or math.prod(shape) == tensor.numel()) and \
            ((isinstance(statement, ast.Expr) and statement.value is call) or bound is not None):
        new_value = _out_of_place(frame, name, tensor.numel(), shape, _shape_text(filename, call))
        if new_value is not None:
            notes.append(f"{name} has {tensor.numel()} elements; the new shape {list(shape)} has "
                         f"{math.prod(shape)}")
            helps.append(statement_change(location, f"change the shape out of place, so autograd records it: "
                                          f"{bound or name} then refers to the new tensor",
                                          f"{bound or name} = {new_value}"))
    if leaf and name:
        value = _out_of_place(frame, f"{name}.detach()", tensor.numel(), shape) if shape is not None else None
        value = value or f"{name}.detach().reshape(...)"
        helps.append(Suggestion(f"{name} is a leaf (a parameter): make a new leaf of the new shape, {name} = "
                                f"{value}.requires_grad_(), and give it again to the optimizer or module that held "
                                "the old one"))
    if not helps:
        helps.append(Suggestion("change the shape out of place: reshape() when the number of elements stays the "
                                "same, else build a new tensor from this one (flatten()[:n], or torch.cat with "
                                "new_zeros(...)); for a tensor outside the graph, resize t.detach()"))
    return diagnosis(codes.RESIZE_WITH_GRAD, location, related, notes, helps)


def _module_holding_as_buffer(frame, call: ast.Call) -> str | None:
    """The class name of the module whose registered buffer the call's receiver is (`self.queue`
    of a module that registered "queue"), read from the module's own dict; None otherwise."""
    import torch

    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if not isinstance(receiver, ast.Attribute):
        return None
    owner = value_of(frame, receiver.value)
    if not isinstance(owner, torch.nn.Module):
        return None
    buffers = owner.__dict__.get("_buffers")
    return type(owner).__name__ if isinstance(buffers, dict) and receiver.attr in buffers else None


def _rows_grown_then_filled(frame, filename: str, statement: ast.stmt, call: ast.Call, name: str | None,
                            tensor) -> str | None:
    """`torch.cat([seq, seq.new_zeros(length - seq.shape[0], seq.shape[1])])` for `seq.resize_(length,
    seq.shape[1])` (a contiguous tensor, one size per dimension, every size but the first equal to the
    tensor's own) when the function writes into `seq[...]` after the call: the resize grows the rows
    and the code fills them, whatever this call's sizes. None for anything else."""
    import torch

    if not name or not name.isidentifier() or call.func.attr != "resize_" or not tensor.is_contiguous() \
            or frame.f_globals.get("torch") is not torch:
        return None
    arguments = call.args
    if len(arguments) == 1 and isinstance(arguments[0], (ast.Tuple, ast.List)):
        arguments = arguments[0].elts
    if len(arguments) != tensor.dim() or len(arguments) < 1 or any(isinstance(a, ast.Starred) for a in arguments) \
            or call.keywords:
        return None
    sizes = [_size_value(frame, a) for a in arguments]
    if not all(isinstance(size, int) for size in sizes) or tuple(sizes[1:]) != tuple(tensor.shape[1:]):
        return None
    texts = [text_of(filename, a) for a in arguments]
    if not all(texts) or isinstance(arguments[0], ast.Constant):
        return None
    if not _written_after(filename, name, statement):
        return None
    rest = "".join(f", {text}" for text in texts[1:])
    return f"torch.cat([{name}, {name}.new_zeros({texts[0]} - {name}.shape[0]{rest})])"


def _written_after(filename: str, name: str, statement: ast.stmt) -> bool:
    """Whether the function around `statement` writes into `name[...]` after it (`name[k:] = 0`,
    `name[k:] += ...`, `name[k:].zero_()`, `.fill_(...)`, `.copy_(...)`)."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    if tree is None:
        return False
    scope = enclosing_function(tree, statement.lineno)
    if scope is tree:
        return False

    def indexes_name(node) -> bool:
        return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name

    for node in ast.walk(scope):
        if getattr(node, "lineno", 0) <= statement.end_lineno:
            continue
        if isinstance(node, ast.Assign) and any(indexes_name(t) for t in node.targets):
            return True
        if isinstance(node, ast.AugAssign) and indexes_name(node.target):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in ("zero_", "fill_", "copy_", "normal_", "uniform_") and indexes_name(node.func.value):
            return True
    return False


def _read_later(filename: str, name: str | None, statement: ast.stmt) -> bool:
    """Whether the function around `statement` reads `name` after it (True when unsure)."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    if tree is None or not name or not name.isidentifier():
        return True
    scope = enclosing_function(tree, statement.lineno) or tree
    return any(isinstance(n, ast.Name) and n.id == name and n.lineno > statement.end_lineno for n in ast.walk(scope))


def _shape_text(filename: str, call: ast.Call) -> str | None:
    """The sizes as the user wrote them in resize_(...) (`x.size(0), x.numel() // x.size(0)`), so
    that the change holds for other batch sizes too; None for resize_as_ or a starred argument."""
    if call.func.attr != "resize_" or not call.args or call.keywords \
            or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    texts = [text_of(filename, a) for a in call.args]
    return ", ".join(texts) if all(texts) else None


def _out_of_place(frame, name: str, count: int, shape: tuple, written: str | None = None) -> str | None:
    """reshape when the count stays; resize_ keeps the first elements when shrinking; when growing,
    its new elements are uninitialised memory, for which zeros stand in. `written`: the sizes as the
    user wrote them, used for the reshape when the count stays."""
    import torch

    wanted = math.prod(shape)
    shape_text = ", ".join(str(size) for size in shape)
    if wanted == count and written is not None:
        return f"{name}.reshape({written})"
    if wanted == count:
        return f"{name}.reshape({shape_text})"
    if wanted < count:
        return f"{name}.flatten()[:{wanted}].reshape({shape_text})"
    if frame.f_globals.get("torch") is torch:
        return f"torch.cat([{name}.flatten(), {name}.new_zeros({wanted - count})]).reshape({shape_text})"
    return None


def apply_with_grad(context: ErrorContext, already):
    found = _method_call(context, ("apply_", "map_", "map2_"))
    if found is None:
        return None
    frame, filename, statement, location, call, tensor = found
    method = call.func.attr if call is not None else "apply_"
    name = text_of(filename, call.func.value) if call is not None else None
    location.note = f"{method}() runs a Python function on each element of {name or 'a tensor'}, which requires grad"
    notes = [f"autograd cannot differentiate the Python function given to {method}(), so PyTorch refuses it on "
             "a tensor that requires grad"]
    helps = []
    if tensor is not None and tensor.is_leaf and tensor.requires_grad and name:
        new_statement = text_of(filename, statement).replace(f"{name}.{method}(", f"{name}.detach().{method}(", 1)
        helps.append(statement_change(location, f"{name} is a leaf: change its values on the detached tensor, "
                                      f"which shares its memory ({name} stays a leaf that requires grad)",
                                      new_statement if f"{name}.{method}(" in text_of(filename, statement) else None))
    else:
        helps.append(Suggestion(f"if gradients must flow through {name or 'the result'}, write the function with "
                                "tensor operations (torch.clamp, torch.where, ...), out of place; if they must not, "
                                f"work on a detached copy: {name or 't'}.detach().clone().{method}(...)"))
    return diagnosis(codes.APPLY_WITH_GRAD, location, notes=notes, help=helps)


def saved_tensor_detached(context: ErrorContext, already):
    """backward() needs a tensor that a detach_() call turned into one without history."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    for frame, line in context.user_frames():
        filename = frame.f_code.co_filename
        tree = parse_file(filename)
        if tree is None:
            continue
        scope = enclosing_function(tree, line)
        calls = [c for c in find_calls(scope, "detach_") if c.lineno < line and isinstance(c.func, ast.Attribute)
                 and not c.args and _detached_in(frame, c.func.value)]
        if calls:
            return _detached_diagnosis(context, filename, calls[-1])
    return _recorded_detach(context)


def _recorded_detach(context: ErrorContext):
    """The detach_() call the doctor saw at run time (in a function that has returned since)."""
    from autograd_doctor.recording import switches
    from autograd_doctor.diagnosis.source import statement_at

    for entry in switches.in_place_detaches():
        site = entry.stack[0]
        statement = statement_at(site.filename, site.lineno)
        calls = [c for c in find_calls(statement, "detach_") if isinstance(c.func, ast.Attribute) and not c.args] \
            if statement is not None else []
        if len(calls) == 1:
            return _detached_diagnosis(context, site.filename, calls[0])
    return None


def _detached_in(frame, receiver: ast.expr) -> bool:
    """True when the receiver of a detach_() call now holds a tensor without history (the call ran)."""
    import torch

    value = value_of(frame, receiver)
    return isinstance(value, torch.Tensor) and value.grad_fn is None and not value.requires_grad


def _detached_diagnosis(context: ErrorContext, filename: str, call: ast.Call):
    from autograd_doctor.diagnosis.source import statement_at

    statement = statement_at(filename, call.lineno)
    name = text_of(filename, call.func.value)
    location = statement_location(filename, statement, role="detach_",
                                  note=f"detaches {name} in place; autograd saved {name} for backward()")
    backward = context.raise_location(role="backward", note="backward() needs the saved tensor here")
    if isinstance(statement, ast.Expr) and statement.value is call:
        helps = [statement_change(location, f"detach out of place: {name} then refers to a detached tensor "
                                  "sharing its memory, and the graph keeps the tensor it saved", f"{name} = {name}.detach()")]
    else:
        # `state = h.detach_()`: the value used is a detached tensor; detach() gives the same one and
        # leaves h, which the graph saved, as it was.
        new_statement = replace_node_text(filename, statement, call, f"{name}.detach()")
        helps = [statement_change(location, f"use {name}.detach() (out of place) instead of {name}.detach_(): the "
                                  f"result is the same detached tensor, and {name}, which the graph saved, keeps its "
                                  "history", new_statement)]
    made = _made(filename, name, call.lineno, f"{name} is made here and saved by the graph") \
        if name.isidentifier() else None
    notes = [f"detach_() turned {name} itself into a tensor without history, so the graph can no longer use the "
             "copy it saved"]
    return diagnosis(codes.SAVED_DETACHED_INPLACE, location, [made, backward], notes, helps)


MATCHERS = [
    (r"Trying to use a saved tensor that has been detached in-place", saved_tensor_detached),
    (r"cannot resize variables that require grad", resize_with_grad),
    (r"Can't call (apply_|map_|map2_)\(\) on Variable that requires grad", apply_with_grad),
]
