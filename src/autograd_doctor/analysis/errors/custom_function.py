"""Custom `torch.autograd.Function` mistakes: backward returning the wrong number, shape or
device of gradients (the user's return line, which PyTorch's traceback never shows), mark_dirty
on a tensor forward does not return, non-tensors given to save_for_backward."""

from __future__ import annotations

import ast
import linecache
import re

from autograd_doctor.analysis.live_values import dotted_value, frame_lookup
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import (
    diagnosis, find_calls, line_change, statement_change, text_of, user_statement,
)
from autograd_doctor.analysis.errors.context import ErrorContext, graph_nodes_named, value_of
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, statement_location


def _function_class(context: ErrorContext, class_name: str):
    """The autograd.Function subclass named `class_name`, found among the traceback frames' names."""
    import torch

    for frame, _ in reversed(context.frames):
        for scope in (frame.f_locals, frame.f_globals):
            candidate = scope.get(class_name)
            if isinstance(candidate, type) and issubclass(candidate, torch.autograd.Function):
                return candidate
    return None


def _applied_function_class(context: ErrorContext):
    """The Function whose .apply() raised: `cls` in apply's own frame where apply is Python
    code (torch 2.13), else the receiver of `.apply(` in the user's raising line (in torch
    2.14 apply is C code, with no frame of its own)."""
    import torch

    frame = context.torch_frame("apply")
    if frame is not None and isinstance(frame.f_locals.get("cls"), type):
        return frame.f_locals["cls"]
    found = context.innermost_user()
    if found is None:
        return None
    user_frame, line = found
    source = linecache.getline(user_frame.f_code.co_filename, line)
    for match in re.finditer(r"\b([A-Za-z_][\w.]*)\.apply\(", source):
        value = dotted_value(frame_lookup(user_frame), match.group(1))
        if isinstance(value, type) and issubclass(value, torch.autograd.Function):
            return value
    return None


def _method_node(function_class, method: str):
    """(filename, FunctionDef) of `function_class.<method>` as written in the user's file."""
    code = getattr(getattr(function_class, method, None), "__code__", None)
    if code is None:
        return None, None
    tree = parse_file(code.co_filename)
    if tree is None:
        return None, None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == method and \
                code.co_firstlineno <= node.lineno <= code.co_firstlineno + len(node.decorator_list):
            return code.co_filename, node
    return None, None


def _returns(node) -> list[ast.Return]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]


def wrong_gradients(context: ErrorContext, already):
    count = re.search(r"function (\w+)Backward returned an incorrect number of gradients \(expected (\d+), got (\d+)\)",
                      context.message)
    shape = re.search(r"Function (\w+)Backward returned an invalid gradient at index (\d+) - got (\[[^\]]*\]) but "
                      r"expected shape compatible with (\[[^\]]*\])", context.message)
    device = re.search(r"Function (\w+)Backward returned an invalid gradient at index (\d+) - expected device "
                       r"(\S+) but got (\S+)", context.message)
    match = count or shape or device
    if match is None:
        return None
    class_name = match.group(1)
    function_class = _function_class(context, class_name)
    filename, backward = _method_node(function_class, "backward") if function_class else (None, None)
    forward_file, forward = _method_node(function_class, "forward") if function_class else (None, None)
    returns = _returns(backward) if backward is not None else []
    if not returns:
        return diagnosis(codes.FUNCTION_GRADIENT_MISMATCH, context.raise_location(), help=[Suggestion(
            f"look at the return statement of {class_name}.backward")])
    inputs = [a.arg for a in forward.args.args[1:]] if forward is not None else []
    related = [statement_location(filename, r, role="return", note="also returns here") for r in returns[1:]]
    primary = statement_location(filename, returns[0], role="return")
    helps, notes = [], []
    if count:
        expected, got = int(count.group(2)), int(count.group(3))
        primary.note = f"returns {got} gradient{'s' if got != 1 else ''}; forward has {expected} inputs"
        notes.append(f"backward must return one gradient per input of forward (after ctx): "
                     f"{', '.join(inputs) if inputs else expected} -> {expected} values; None for inputs "
                     "that get no gradient")
        needs, varying = _needs_input_grad_of_applications(graph_nodes_named(context, f"{class_name}Backward"),
                                                           expected)
        missing_need_no_grad = len(needs) == expected and not any(needs[got:])
        if len(inputs) == expected and any(varying[got:]):
            names = ", ".join(i for i, differs in zip(inputs[got:], varying[got:]) if differs)
            notes.append(f"{class_name} is applied more than once, and in some applications {names} requires grad: "
                         "backward's one return line serves them all, so a None there would leave it without a gradient")
        if got < expected and len(returns) == 1 and missing_need_no_grad:
            extended = _extended_return(filename, returns[0].value, got, ["None"] * (expected - got))
            names = ", ".join(inputs[got:]) if len(inputs) == expected else "the other inputs"
            if extended is not None:
                helps.append(statement_change(primary, f"return None for {names} (no gradient is needed for "
                                              f"{'it' if expected - got == 1 else 'them'})", extended))
        elif got < expected and len(returns) == 1 and len(needs) == expected and len(inputs) == expected \
                and (computed := _computed_gradients(backward, inputs[got:], needs[got:], returns[0])) is not None \
                and (extended := _extended_return(filename, returns[0].value, got, computed)) is not None:
            given = [name for name in computed if name != "None"]
            notes.append(f"backward computes {', '.join(given)} but does not return "
                         f"{'it' if len(given) == 1 else 'them'}: autograd needs a gradient for "
                         f"{', '.join(i for i, need in zip(inputs[got:], needs[got:]) if need)}, which requires grad")
            helps.append(statement_change(primary, f"return the gradient{'s' if len(given) > 1 else ''} backward "
                                          f"already computes ({', '.join(given)}), in the order of forward's inputs",
                                          extended))
        else:
            helps.append(Suggestion(f"return exactly {expected} values from backward, in the order of forward's "
                                    f"inputs ({', '.join(inputs)}), None where an input needs no gradient"))
    elif device:
        notes.append("backward must return each gradient on its input's device; torch.zeros, torch.ones, "
                     "torch.full ... make tensors on the default device (CPU) unless given device=")
        helps.append(_device_help(filename, backward, returns, primary, inputs, device))
    else:
        index, got_shape, expected_shape = int(shape.group(2)), shape.group(3), shape.group(4)
        which = inputs[index] if index < len(inputs) else f"input {index}"
        primary.note = f"gradient {index} (for {which}) has shape {got_shape}"
        notes.append(f"the gradient for {which} must have {which}'s shape {expected_shape}, got {got_shape}")
        summed = _broadcast_sum(filename, forward, returns, index, which, got_shape, expected_shape)
        transposed = _transposed_layout(filename, forward, returns, index, which, got_shape, expected_shape) \
            if summed is None else None
        if transposed is not None:
            notes.append(f"{which} is a matrix operand of a matrix product in forward, and gradient {index} has its "
                         "sizes in the other order: the gradient is written in the transposed layout (as nn.Linear "
                         "stores its weight, (out, in))")
            helps.append(statement_change(primary, f"transpose gradient {index}: the same values in {which}'s own "
                                          f"layout {expected_shape}", transposed))
        elif summed is not None:
            dims, new_return = summed
            notes.append(f"forward broadcasts {which} over dimensions {dims} of its result: its gradient is the "
                         "sum of the result's gradient over them")
            helps.append(statement_change(primary, f"sum gradient {index} over the dimensions forward broadcast "
                                          f"{which} to ({dims}): each element of {which} was used once per position "
                                          "there", new_return))
        helps.append(Suggestion(f"{'or ' if summed or transposed else ''}make gradient {index} the shape of {which} "
                                f"({expected_shape}): undo the shape change forward made (unsqueeze/expand after a "
                                "sum, reshape after a view, transpose after a transpose)"))
    return diagnosis(codes.FUNCTION_GRADIENT_MISMATCH, primary, related, notes, helps)


def _extended_return(filename: str, value: ast.expr, got: int, extra: list[str]) -> str | None:
    """`return` with `extra` appended to the `got` gradients backward returns. A tuple (or list)
    written out is extended element by element: `return (a, b)` -> `return a, b, None` (appending
    after its closing parenthesis would return a pair, the tuple and None). Any other expression
    with more than one gradient holds a sequence of them and is unpacked: `return (*grads, None)`;
    a single gradient (PyTorch wraps a non-tuple in a 1-tuple) is the first element: `return g, None`."""
    if isinstance(value, (ast.Tuple, ast.List)):
        parts = [text_of(filename, element) for element in value.elts]
        if any(part is None for part in parts) or len(parts) != got:
            return None
        return f"return {', '.join(parts + list(extra))}"
    text = text_of(filename, value)
    if text is None:
        return None
    if got == 1:
        return f"return {text}, {', '.join(extra)}"
    return f"return (*{text}, {', '.join(extra)})"


# Calls that only place an input for broadcasting (`bias[:, None]`, `bias.view(1, -1, 1)`).
_BROADCAST_PLACEMENTS = ("unsqueeze", "view", "reshape", "expand", "expand_as", "view_as")


def _broadcast_sum(filename: str, forward, returns: list, index: int, name: str, got: str, expected: str):
    """(dimensions, new return statement) when gradient `index` has the shape of forward's result
    where the input `name` has fewer dimensions, forward uses `name` (or a placement of it for
    broadcasting: `name[:, None]`, `name.view(...)`) as an operand of arithmetic, and exactly one
    choice of the result's dimensions has the input's sizes in order: the gradient of a broadcast
    input is the result's gradient summed over the other dimensions. None otherwise."""
    import itertools

    if forward is None or len(returns) != 1 or not isinstance(returns[0].value, ast.Tuple) \
            or index >= len(returns[0].value.elts):
        return None
    got_sizes, expected_sizes = _sizes(got), _sizes(expected)
    if got_sizes is None or expected_sizes is None or not expected_sizes or len(expected_sizes) >= len(got_sizes):
        return None
    kept = [chosen for chosen in itertools.combinations(range(len(got_sizes)), len(expected_sizes))
            if all(got_sizes[d] == size for d, size in zip(chosen, expected_sizes))]
    if len(kept) != 1 or not _broadcast_operand(forward, name):
        return None
    dims = tuple(d for d in range(len(got_sizes)) if d not in kept[0])
    element = returns[0].value.elts[index]
    text = text_of(filename, element)
    if text is None:
        return None
    reduced = f"{text if isinstance(element, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) else f'({text})'}" \
        f".sum({dims[0] if len(dims) == 1 else dims})"
    new_return = replace_node_text(filename, returns[0], element, reduced)
    return (", ".join(map(str, dims)), new_return) if new_return is not None else None


def _transposed_layout(filename: str, forward, returns: list, index: int, name: str, got: str, expected: str):
    """The return statement with gradient `index` transposed, when that gradient is a matrix whose
    sizes are the input's in the other order (not square) and forward uses the input `name` as an
    operand of a matrix product (`x @ name`, torch.mm/matmul): the gradient was computed in the
    other layout. None otherwise."""
    got_sizes, expected_sizes = _sizes(got), _sizes(expected)
    if forward is None or len(returns) != 1 or not isinstance(returns[0].value, ast.Tuple) \
            or index >= len(returns[0].value.elts) or got_sizes is None or len(got_sizes) != 2 \
            or got_sizes != list(reversed(expected_sizes or [])) or got_sizes[0] == got_sizes[1]:
        return None
    operands = [operand for node in ast.walk(forward) for operand in (
        [node.left, node.right] if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) else
        node.args if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("mm", "matmul") else [])]
    if not any(isinstance(operand, ast.Name) and operand.id == name for operand in operands):
        return None
    element = returns[0].value.elts[index]
    text = text_of(filename, element)
    if text is None:
        return None
    transposed = f"{text if isinstance(element, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) else f'({text})'}.t()"
    return replace_node_text(filename, returns[0], element, transposed)


def _sizes(shape: str) -> list[int] | None:
    try:
        return [int(size) for size in shape.strip("[]").split(",") if size.strip()]
    except ValueError:
        return None


def _broadcast_operand(forward, name: str) -> bool:
    """Whether forward uses `name`, or a placement of it for broadcasting, as an operand of arithmetic."""
    for node in ast.walk(forward):
        if not isinstance(node, ast.BinOp):
            continue
        for operand in (node.left, node.right):
            while isinstance(operand, ast.Subscript) or (
                    isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute)
                    and operand.func.attr in _BROADCAST_PLACEMENTS):
                operand = operand.value if isinstance(operand, ast.Subscript) else operand.func.value
            if isinstance(operand, ast.Name) and operand.id == name:
                return True
    return False


def _needs_input_grad_of_applications(nodes: list, count: int) -> tuple[list[bool], list[bool]]:
    """For each input of forward: whether some application of the Function in the graph being
    differentiated (one backward node each) needs its gradient, and whether the applications differ
    there. The failing application alone is not enough: the gradient for an input that is None there
    (a bias-free call) may be needed where the same Function is applied to a tensor that requires
    grad, and backward's return line serves both. Empty lists when an application's flags are unknown
    or of another length."""
    flags = [list(getattr(node, "needs_input_grad", ()) or ()) for node in nodes]
    if not flags or any(len(needs) != count for needs in flags):
        return [], []
    some = [any(needs[index] for needs in flags) for index in range(count)]
    every = [all(needs[index] for needs in flags) for index in range(count)]
    return some, [a and not b for a, b in zip(some, every)]


def _computed_gradients(backward: ast.FunctionDef, missing: list[str], needs: list[bool],
                        returned: ast.Return) -> list[str] | None:
    """For each input whose gradient backward does not return: the variable backward assigns
    for it (`grad_x`, `x_grad`, `dx`, by name) and does not return, or "None" where the input
    needs no gradient (ctx.needs_input_grad, at run time); None when an input that needs one has
    no such variable, or more than one."""
    assigned = {n.id for n in ast.walk(backward) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    returned_names = {n.id for n in ast.walk(returned.value) if isinstance(n, ast.Name)}

    def key(name: str) -> str:
        return name.replace("_", "").lower()

    found = []
    for name, need in zip(missing, needs):
        if not need:
            found.append("None")
            continue
        wanted = {key(f"grad_{name}"), key(f"{name}_grad"), key(f"d{name}"), key(f"grad{name}")}
        candidates = [a for a in assigned if key(a) in wanted and a not in returned_names]
        if len(candidates) != 1:
            return None
        found.append(candidates[0])
    return found


def _device_help(filename, backward, returns, primary, inputs, device):
    """A gradient made by a factory (torch.zeros(...)) lands on the default device; the gradient
    backward receives is on the output's device, which is the one PyTorch expects."""
    index, expected, got = int(device.group(2)), device.group(3), device.group(4)
    which = inputs[index] if index < len(inputs) else f"input {index}"
    primary.note = f"gradient {index} (for {which}) is made on {got}; {which} is on {expected}"
    grad_name = backward.args.args[1].arg if len(backward.args.args) > 1 else None
    value = returns[0].value if len(returns) == 1 else None
    parts = value.elts if isinstance(value, ast.Tuple) else [value]
    part = parts[index] if value is not None and index < len(parts) else None
    factory = part.func.attr if isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute) else None
    if grad_name and factory in ("zeros", "ones", "full", "empty", "tensor", "rand", "randn") and \
            not any(k.arg == "device" for k in part.keywords):
        new_part = text_of(filename, part)[:-1].rstrip() + f", device={grad_name}.device)"
        new_statement = replace_node_text(filename, returns[0], part, new_part)
        return statement_change(primary, f"make gradient {index} on the device of the incoming gradient "
                                f"({grad_name}.device), which is where {which} lives", new_statement)
    return Suggestion(f"make gradient {index} on {which}'s device: pass device={grad_name or 'grad'}.device to the "
                      "factory that makes it, or use torch.zeros_like / new_zeros of a tensor on that device")


def dirty_not_returned(context: ErrorContext, already):
    function_class = _applied_function_class(context)
    filename, forward = _method_node(function_class, "forward") if function_class is not None else (None, None)
    if forward is None:
        return None
    returns = _returns(forward)
    marks = find_calls(forward, "mark_dirty")
    dirty = [text_of(filename, a) for call in marks for a in call.args]
    related = [statement_location(filename, call, role="mark_dirty", note="marked dirty here") for call in marks]
    primary = statement_location(filename, returns[-1], role="return",
                                 note=f"returns a different tensor than {', '.join(dirty) or 'the dirty input'}") \
        if returns else related[0]
    helps = []
    inputs = [a.arg for a in forward.args.args[1:]]
    returned = returns[0].value if len(returns) == 1 else None
    returned_name = returned.id if isinstance(returned, ast.Name) else None
    if len(marks) == 1 and len(dirty) == 1 and returned_name in inputs and returned_name != dirty[0] and \
            _written_in_place(forward, returned_name) and not _written_in_place(forward, dirty[0]):
        # The input forward writes and returns is not the one marked: the mark names the wrong tensor.
        primary = related[0]
        primary.note = f"marks {dirty[0]}, which forward does not modify; it modifies and returns {returned_name}"
        related = [statement_location(filename, returns[0], role="return", note=f"returns {returned_name}")]
        new_statement = replace_node_text(filename, marks[0], marks[0].args[0], returned_name)
        helps.append(statement_change(primary, f"mark {returned_name} dirty, the input forward writes in place and "
                                      "returns: ctx.mark_dirty() must name the modified inputs", new_statement))
    elif len(returns) == 1 and len(dirty) == 1 and dirty[0].isidentifier() and \
            (in_place := _in_place_spelling(filename, returned, dirty[0])) is not None:
        # Forward computes its result out of place from the marked input (whether or not it wrote the
        # input before, `x.sub_(mean); return x.div(std)`): the in-place spelling of that last call
        # is the write the mark announces (x.clamp -> x.clamp_), and it returns the same values.
        helps.append(statement_change(primary, f"write {dirty[0]} in place, as ctx.mark_dirty({dirty[0]}) says "
                                      f"forward does, and return it: {in_place}", f"return {in_place}"))
    elif len(marks) == 1 and len(dirty) == 1 and dirty[0].isidentifier() and dirty[0] in inputs and \
            not _written_in_place(forward, dirty[0]) and isinstance(marks[0], ast.Call) and \
            len(marks[0].args) == 1 and _statement_of_call(forward, marks[0]) is not None:
        # Forward never writes the marked input (it writes a copy, or nothing): the mark is the mistake,
        # and the values forward returns are the ones meant.
        mark_statement = _statement_of_call(forward, marks[0])
        primary = related[0]
        primary.note = f"marks {dirty[0]} as modified in place, but forward does not modify {dirty[0]}"
        related = [statement_location(filename, returns[0], role="return", note="returns another tensor")] \
            if returns else []
        helps.append(Suggestion(f"delete ctx.mark_dirty({dirty[0]}): forward does not modify {dirty[0]}, so there is "
                                "nothing to mark; what it returns stays the same",
                                location=statement_location(filename, mark_statement)))
    elif len(marks) == 1 and len(dirty) == 1 and dirty[0] in inputs and returned_name == dirty[0] and \
            (rebinding := _rebound_to_copy(forward, dirty[0], marks[0], returns[0])) is not None:
        # `return x` names the marked input, but forward rebound x to a copy of it after the mark
        # (`x = x.contiguous()`, a copy for a non-contiguous input): the writes after that line went
        # into the copy, and the copy is what forward returns.
        statement, copy_method = rebinding
        primary = statement_location(filename, statement, role="rebinding",
                                     note=f"rebinds {dirty[0]} to a copy of the input marked dirty: the writes after "
                                     f"this line go into the copy, and forward returns the copy")
        related = related + [statement_location(filename, returns[0], role="return", note="returns the copy")]
        if _layout_free_after(forward, dirty[0], statement):
            helps.append(Suggestion(
                f"delete this line: {dirty[0]}.{copy_method}() has the same values as {dirty[0]}, and what forward "
                f"does with {dirty[0]} after it (element-wise writes, operations of torch) works on the input as it "
                f"is, so forward then writes into and returns the input it marked dirty",
                location=statement_location(filename, statement)))
        else:
            helps.append(Suggestion(f"do not rebind {dirty[0]} after ctx.mark_dirty({dirty[0]}): write into the input "
                                    f"itself, or copy the result back into it ({dirty[0]}_input.copy_(result)) and "
                                    "return that input"))
    elif len(returns) == 1 and len(dirty) == 1 and dirty[0].isidentifier() and \
            (conversion := _converted_copy(filename, returned, dirty[0])) is not None:
        # `return x.float()` of a float16 x: the conversion made the new tensor (for x already of that
        # dtype it returns x itself, and nothing fails). `return x` alone hands the callers x's dtype
        # (or device), which the code after the call was not written for: the conversion moves to
        # the call, a second place, so the help names both and changes neither.
        primary.note = f"returns {conversion}, a new tensor: {dirty[0]} has another dtype or device"
        applied = _application_text(context, function_class)
        helps.append(Suggestion(
            f"return {dirty[0]} itself (a Function that modifies an input in place must return that input), and "
            f"convert its result where it is applied: {applied or f'{function_class.__name__}.apply(...)'}"
            f".{conversion[len(dirty[0]) + 1:]}; returning {dirty[0]} alone would hand the code after the call "
            f"{dirty[0]}'s own dtype"))
    elif len(returns) == 1 and len(dirty) == 1 and dirty[0].isidentifier():
        helps.append(statement_change(primary, f"return {dirty[0]} itself: a Function that modifies an input in "
                                      "place must return that input", f"return {dirty[0]}"))
    else:
        helps.append(Suggestion("return every tensor passed to ctx.mark_dirty() (the modified input itself), "
                                "or do not mark it dirty if forward does not modify it"))
    notes = [f"{function_class.__name__}.forward marked {', '.join(dirty) or 'an input'} as modified in place "
             "but returned something else"]
    return diagnosis(codes.MARK_DIRTY_NOT_RETURNED, primary, related, notes, helps)


# Tensor methods that convert their receiver to another dtype or device: a new tensor exactly where
# the receiver is not of that dtype or on that device already.
_CONVERSIONS = ("float", "half", "double", "bfloat16", "to", "type", "cpu", "cuda")


def _converted_copy(filename: str, value, name: str) -> str | None:
    """The returned expression's text when it is `name.<conversion>(...)` (`x.float()`, `x.to(dtype)`)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _CONVERSIONS \
            and isinstance(value.func.value, ast.Name) and value.func.value.id == name:
        return text_of(filename, value)
    return None


def _application_text(context: ErrorContext, function_class) -> str | None:
    """`Class.apply(...)` as written on the user's line that applied the Function, or None."""
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    tree = parse_file(frame.f_code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node, "lineno", None) == line and \
                isinstance(node.func, ast.Attribute) and node.func.attr == "apply" and \
                ast.unparse(node.func.value).split(".")[-1] == function_class.__name__:
            return text_of(frame.f_code.co_filename, node)
    return None


# Methods that return a tensor with the same values as their receiver, a copy where they must.
_SAME_VALUE_COPIES = ("contiguous", "clone")
# Methods whose result depends on the memory layout of their receiver (a view that needs it contiguous,
# its strides or its memory): after a `.contiguous()` is dropped they could fail or answer otherwise.
_LAYOUT_DEPENDENT = ("view", "as_strided", "stride", "is_contiguous", "data_ptr", "storage", "untyped_storage",
                     "numpy", "set_", "resize_")


def _rebound_to_copy(forward: ast.FunctionDef, name: str, mark: ast.Call, returned: ast.Return):
    """(statement, method) of the one assignment `name = name.contiguous()` (or `.clone()`) that forward
    makes between its ctx.mark_dirty(name) and `return name`, when it assigns `name` nowhere else; None
    otherwise."""
    assignments = [node for node in ast.walk(forward) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                   and any(isinstance(target, ast.Name) and target.id == name
                           for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    if len(assignments) != 1 or not isinstance(assignments[0], ast.Assign) or len(assignments[0].targets) != 1:
        return None
    statement = assignments[0]
    value = statement.value
    if not (mark.lineno < statement.lineno < returned.lineno and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_VALUE_COPIES
            and isinstance(value.func.value, ast.Name) and value.func.value.id == name and not value.args):
        return None
    return statement, value.func.attr


def _layout_free_after(forward: ast.FunctionDef, name: str, rebinding: ast.Assign) -> bool:
    """Whether nothing after `rebinding` uses `name` in a way that depends on its memory layout: no
    layout-dependent method on it, and it is not given to a function of the user's (a kernel that may
    need contiguous memory); torch functions, tensor methods and ctx's methods are layout-free."""
    # Forward's own names (its arguments and what it assigns) hold tensors: a call on one is a tensor method.
    local_names = {argument.arg for argument in forward.args.args} | {
        node.id for node in ast.walk(forward) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    for node in ast.walk(forward):
        if getattr(node, "lineno", 0) <= rebinding.end_lineno or not isinstance(node, ast.Call):
            continue
        function = node.func
        receiver = function.value if isinstance(function, ast.Attribute) else None
        if isinstance(receiver, ast.Name) and receiver.id == name and function.attr in _LAYOUT_DEPENDENT:
            return False
        given = any(isinstance(argument, ast.Name) and argument.id == name
                    for argument in list(node.args) + [keyword.value for keyword in node.keywords])
        layout_free_call = isinstance(receiver, ast.Name) and (
            receiver.id in ("torch", "F") or receiver.id in local_names) or ast.unparse(function).startswith("torch.")
        if given and not layout_free_call:
            return False
    return True


def _statement_of_call(function: ast.FunctionDef, call: ast.Call) -> ast.Expr | None:
    """The statement that is the call alone (`ctx.mark_dirty(x)` on its own line), or None."""
    return next((s for s in ast.walk(function) if isinstance(s, ast.Expr) and s.value is call
                 and s.lineno == s.end_lineno), None)


def _in_place_spelling(filename: str, value, name: str) -> str | None:
    """`name.op_(...)` for a returned `name.op(...)` or `torch.op(name, ...)` whose operation has an
    in-place method on tensors (clamp, mul, relu, ...); None otherwise."""
    import torch

    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return None
    operation, arguments = value.func.attr, list(value.args)
    receiver = value.func.value
    if isinstance(receiver, ast.Name) and receiver.id == "torch" and arguments:
        receiver, arguments = arguments[0], arguments[1:]
    if not (isinstance(receiver, ast.Name) and receiver.id == name) or operation.endswith("_") or \
            not callable(getattr(torch.Tensor, f"{operation}_", None)):
        return None
    parts = [text_of(filename, a) for a in arguments] + [text_of(filename, k) for k in value.keywords]
    return f"{name}.{operation}_({', '.join(parts)})"


def _written_in_place(function: ast.FunctionDef, name: str) -> bool:
    """Whether `function` writes the tensor `name` in place: an in-place method (`name.add_(...)`),
    an augmented assignment or an indexed assignment."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == name and \
                node.func.attr.endswith("_") and not node.func.attr.startswith("_"):
            return True
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            base = target.value if isinstance(target, ast.Subscript) else target if isinstance(node, ast.AugAssign) else None
            if isinstance(base, ast.Name) and base.id == name:
                return True
    return False


def dirty_leaf(context: ErrorContext, already):
    """A Function that writes into its input (ctx.mark_dirty) was applied to a leaf that requires grad."""
    import torch

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    function_class = _applied_function_class(context)
    if function_class is None:
        return None
    name = function_class.__name__
    leaf_arguments = [(call, argument) for call in find_calls(statement, "apply") for argument in call.args
                      if isinstance(value := value_of(frame, argument), torch.Tensor)
                      and value.is_leaf and value.requires_grad]
    related = []
    source_file, forward = _method_node(function_class, "forward")
    if forward is not None:
        related = [statement_location(source_file, call, role="mark_dirty", note="forward marks its input as "
                                      "modified in place here") for call in find_calls(forward, "mark_dirty")]
    location.role, location.note = "apply", f"{name} modifies its input in place"
    helps = []
    if len(leaf_arguments) == 1:
        call, argument = leaf_arguments[0]
        leaf = text_of(filename, argument)
        new_statement = replace_node_text(filename, statement, argument, f"{leaf}.clone()")
        location.note = f"{leaf} is a leaf that requires grad; {name} modifies its input in place"
        helps.append(statement_change(location, f"give {name} a copy to modify: the gradient still reaches {leaf} "
                                      f"through clone(), and {leaf} keeps its value", new_statement))
    helps.append(Suggestion(f"or, if {name} need not modify its input, compute forward's result out of place "
                            "and drop ctx.mark_dirty()"))
    notes = ["a leaf's .grad is the gradient with respect to its value, so a recorded operation may not change "
             "that value in place; ctx.mark_dirty() tells autograd that forward did"]
    return diagnosis(codes.MARK_DIRTY_LEAF, location, related, notes, helps)


def non_tensor_saved(context: ErrorContext, already):
    """PyTorch checks save_for_backward's arguments after forward returns, so the traceback ends
    at the .apply() call; the line to change is the save_for_backward call inside forward."""
    import torch

    match = re.search(r"argument (\d+) is of type ([\w.]+)", context.message)
    function_class = _applied_function_class(context)
    filename, forward = _method_node(function_class, "forward") if function_class is not None else (None, None)
    calls = find_calls(forward, "save_for_backward") if forward is not None else []
    use = context.raise_location(role="apply", note="the Function is applied here")
    if match is None or len(calls) != 1:
        return diagnosis(codes.SAVE_FOR_BACKWARD_NON_TENSOR, use, help=[Suggestion(
            "save only tensors with ctx.save_for_backward; keep other values on ctx as attributes")])
    index, type_name = int(match.group(1)), match.group(2)
    call = calls[0]
    argument = text_of(filename, call.args[index]) if index < len(call.args) else f"argument {index}"
    location = statement_location(filename, call, role="save", note=f"{argument} is of type {type_name}, not a tensor")
    attribute = argument if argument.isidentifier() else "value"
    helps = [Suggestion(f"save only tensors with save_for_backward; keep {argument} on ctx as an attribute "
                        f"(ctx.{attribute} = {argument}) and read ctx.{attribute} in backward instead of "
                        "unpacking it from ctx.saved_tensors")]
    if type_name in _NUMBER_TENSORS and index < len(call.args) and filename is not None \
            and getattr(function_class.forward, "__globals__", {}).get("torch") is torch \
            and _only_arithmetic_in_backward(function_class, index, flag=type_name == "bool"):
        # A number that backward only computes with (x ** (n - 1), grad * n): a 0-dim tensor of the
        # same kind computes the same values (a 0-dim tensor does not change the result's dtype, and
        # Python's float is a double, as float64 is), and save_for_backward accepts it.
        statement = next((s for s in ast.walk(forward) if isinstance(s, ast.stmt) and s.lineno == call.lineno
                          and call in ast.walk(s)), None)
        new_statement = replace_node_text(filename, statement, call.args[index],
                                          f"torch.tensor({argument}{_NUMBER_TENSORS[type_name]})") \
            if statement is not None else None
        if new_statement is not None:
            reads = "only tests it, if it reads it at all" if type_name == "bool" else "only computes with it"
            helps.insert(0, statement_change(location, f"save {argument} as a tensor: backward {reads}, and a 0-dim "
                                             "tensor gives the same values", new_statement))
            helps[1].message = "or " + helps[1].message
    if type_name == "numpy.ndarray" and index < len(call.args) and filename is not None \
            and getattr(function_class.forward, "__globals__", {}).get("torch") is torch \
            and _only_arithmetic_in_backward(function_class, index):
        # A NumPy array that backward only computes with (grad * slopes): torch.from_numpy shares its
        # memory and keeps its dtype, so backward computes the same values, and save_for_backward
        # accepts it.
        statement = next((s for s in ast.walk(forward) if isinstance(s, ast.stmt) and s.lineno == call.lineno
                          and call in ast.walk(s)), None)
        new_statement = replace_node_text(filename, statement, call.args[index], f"torch.from_numpy({argument})") \
            if statement is not None else None
        if new_statement is not None:
            helps.insert(0, statement_change(location, f"save {argument} as a tensor: torch.from_numpy shares its "
                                             "memory and dtype, and backward only computes with it", new_statement))
            helps[1].message = "or " + helps[1].message
    if type_name in ("list", "tuple") and len(call.args) == 1 and not call.keywords \
            and _unpacked_count(function_class) not in (None, 0) \
            and _unpacked_count(function_class) == _literal_length(forward, call.args[0], call.lineno):
        # save_for_backward([x, w]) with backward unpacking `x, w = ctx.saved_tensors`: the tensors
        # were meant one by one, as separate arguments.
        statement = next((s for s in ast.walk(forward) if isinstance(s, ast.stmt) and s.lineno == call.lineno
                          and call in ast.walk(s)), None)
        if statement is not None:
            helps.insert(0, statement_change(location, f"pass the tensors of {argument} as separate arguments "
                                             "(*): backward unpacks them one by one from ctx.saved_tensors",
                                             replace_node_text(filename, statement, call.args[0], f"*{argument}")))
    return diagnosis(codes.SAVE_FOR_BACKWARD_NON_TENSOR, location, [use],
                     notes=["save_for_backward is for tensors (it checks they are not modified before "
                            "backward); other values go on ctx directly"], help=helps)


def _unpacked_count(function_class) -> int | None:
    """How many names backward unpacks from ctx.saved_tensors (`a, b = ctx.saved_tensors`)."""
    _file, backward = _method_node(function_class, "backward")
    unpackings = [s for s in ast.walk(backward) if _unpacked_names(s) is not None] if backward is not None else []
    return len(_unpacked_names(unpackings[0])) if len(unpackings) == 1 else None


def _literal_length(forward, argument: ast.expr, line: int) -> int | None:
    """The number of elements of a list or tuple written out (`[x, w]`), directly or as the one
    assignment of the name in forward before `line`."""
    if isinstance(argument, ast.Name):
        made = [s for s in ast.walk(forward) if isinstance(s, ast.Assign) and s.lineno < line
                and any(isinstance(t, ast.Name) and t.id == argument.id for t in s.targets)]
        argument = made[0].value if len(made) == 1 else None
    if isinstance(argument, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in argument.elts):
        return len(argument.elts)
    return None


# Python numbers save_for_backward refuses, and the dtype of the 0-dim tensor that computes the same.
_NUMBER_TENSORS = {"int": "", "float": ", dtype=torch.float64", "bool": ""}


def _only_arithmetic_in_backward(function_class, index: int, flag: bool = False) -> bool:
    """Whether backward unpacks ctx.saved_tensors into names and uses the one at `index` only as an
    operand of arithmetic or of a comparison (`x ** (n - 1)`, `grad * n`, `x < margin`: a 0-dim
    tensor compares as the number does), or not at all (unpacked, never read: a tensor there changes
    nothing). A flag (a bool: `-True` is -1, `-torch.tensor(True)` fails) only as a condition (`if
    hard:`, `not hard`, `a if hard else b`): a 0-dim tensor's truth is the number's."""
    _file, backward = _method_node(function_class, "backward")
    if backward is None:
        return False
    unpackings = [s for s in ast.walk(backward) if _unpacked_names(s) is not None]
    names = _unpacked_names(unpackings[0]) if len(unpackings) == 1 else None
    if names is None or index >= len(names):
        return False
    name = names[index]
    parents = {id(child): parent for parent in ast.walk(backward) for child in ast.iter_child_nodes(parent)}
    named = [n for n in ast.walk(backward) if isinstance(n, ast.Name) and n.id == name]
    uses = [n for n in named if isinstance(n.ctx, ast.Load)]
    stores = [n for n in named if not isinstance(n.ctx, ast.Load)]
    if len(stores) != 1:
        return False
    if flag:
        return all(_tested(parents.get(id(n)), n) for n in uses)
    operations = (ast.BinOp, ast.UnaryOp, ast.Compare)
    return all(isinstance(parents.get(id(n)), operations) for n in uses)


def _tested(parent, node) -> bool:
    """Whether `node` is read only for its truth: the test of an if, while or conditional expression,
    or the operand of `not`."""
    if isinstance(parent, (ast.If, ast.While, ast.IfExp)):
        return parent.test is node
    return isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)


def _unpacked_names(statement) -> list[str] | None:
    """The names of `a, b, c = ctx.saved_tensors` (None for another statement or a starred target)."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], (ast.Tuple, ast.List))
            and isinstance(statement.value, ast.Attribute) and statement.value.attr == "saved_tensors"):
        return None
    names = [element.id for element in statement.targets[0].elts if isinstance(element, ast.Name)]
    return names if len(names) == len(statement.targets[0].elts) else None


def _read_after(function: ast.FunctionDef, names: set[str], line: int) -> set[str]:
    """Which of `names` the function reads after `line`."""
    return {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
            and node.id in names and node.lineno > line}


def saved_tensors_count(context: ErrorContext, already):
    """`a, b, c = ctx.saved_tensors` in a custom Function's backward, when forward saved another
    number of tensors: the unpack line is in the traceback, the save_for_backward line is not."""
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    unpacked = _unpacked_names(statement)
    function_class = getattr(frame.f_locals.get("ctx"), "_forward_cls", None)
    if unpacked is None or function_class is None:
        return None
    source_file, forward = _method_node(function_class, "forward")
    _, backward = _method_node(function_class, "backward")
    calls = find_calls(forward, "save_for_backward") if forward is not None else []
    if backward is None:
        return None
    if any(isinstance(arg, ast.Starred) for call in calls for arg in call.args):
        return _starred_save_unpacked(context, function_class, source_file, forward, calls, unpacked, location)
    other_calls = []
    if len(calls) > 1:
        # Several save_for_backward calls in branches (an optional bias): the one that ran saved as
        # many tensors as the message says backward got.
        got = re.search(r"expected \d+, got (\d+)", context.message)
        ran = [call for call in calls if got is not None and len(call.args) == int(got.group(1))]
        if len(ran) != 1:
            return None
        other_calls = [call for call in calls if call is not ran[0]]
        calls = ran
    if len(calls) != 1:
        return None
    saved = [text_of(source_file, argument) or f"tensor {index}" for index, argument in enumerate(calls[0].args)]
    name = function_class.__name__
    save = statement_location(source_file, calls[0], role="saved",
                              note=f"forward saves {len(saved)} tensor{'s' if len(saved) != 1 else ''} here")
    location.role = "unpacked"
    location.note = f"unpacks {len(unpacked)} names from the {len(saved)} tensors forward saved"
    notes = [f"ctx.saved_tensors holds exactly what {name}.forward passed to ctx.save_for_backward, in that order: "
             + ", ".join(saved)]
    helps = []
    missing = [each for each in unpacked if each not in saved]
    kept = [each for each in unpacked if each in saved]
    saves_all_in_a_branch = any([text_of(source_file, a) for a in call.args] == unpacked for call in other_calls)
    if len(saved) < len(unpacked) and unpacked[:len(saved)] == saved and saves_all_in_a_branch:
        # Another branch of forward saves every unpacked name, this one only the first ones (an
        # optional bias left out): the names it did not save are None, as forward's own branch says.
        rest = [f"{each} = rest[{index}] if len(rest) > {index} else None" for index, each in enumerate(missing)]
        helps.append(statement_change(location, f"unpack what either branch of forward saved: the first "
                                      f"{len(saved)} always, {', '.join(missing)} only when forward saved "
                                      f"{'it' if len(missing) == 1 else 'them'} (None otherwise)",
                                      "\n".join([f"{', '.join(saved)}, *rest = ctx.saved_tensors"] + rest)))
    elif len(saved) < len(unpacked) and kept == saved[:len(kept)] and len(kept) == len(saved):
        # Every saved name is unpacked under its own name; the others were never saved.
        if not _read_after(backward, set(missing), line):
            helps.append(statement_change(location, f"unpack the {len(saved)} tensors forward saved "
                                          f"({', '.join(missing)} was never saved, and backward does not use it)",
                                          f"{', '.join(saved)} = ctx.saved_tensors"))
        elif all(each.isidentifier() for each in missing):
            helps.append(statement_change(save, f"save {', '.join(missing)} in forward too: backward uses "
                                          f"{'it' if len(missing) == 1 else 'them'}",
                                          f"ctx.save_for_backward({', '.join(saved + missing)})"))
    elif len(saved) > len(unpacked) and all(each.isidentifier() for each in saved) and set(unpacked) <= set(saved):
        helps.append(statement_change(location, f"unpack all {len(saved)} tensors forward saved, in its order",
                                      f"{', '.join(saved)} = ctx.saved_tensors"))
    if not helps:
        helps.append(Suggestion(f"unpack as many names as {name}.forward saves, in the same order "
                                f"({', '.join(saved)}), or save the missing tensors in forward"))
    if helps[0].location is not None and helps[0].location.line == save.line and helps[0].location.file == save.file:
        # The change is in forward's save_for_backward: that is the line to change.
        return diagnosis(codes.SAVED_TENSORS_UNPACK_COUNT, save, [location], notes, helps)
    return diagnosis(codes.SAVED_TENSORS_UNPACK_COUNT, location, [save], notes, helps)


def _starred_save_unpacked(context: ErrorContext, function_class, source_file, forward, calls, unpacked, location):
    """`ctx.save_for_backward(*[t for t in (x, w) if t.requires_grad])` (or any starred argument):
    how many tensors forward saves is decided at run time, while backward unpacks a fixed number of
    names. When every unpacked name is a tensor forward has at its one save_for_backward call,
    saving them all by name gives backward what it unpacks (save_for_backward accepts tensors that
    do not require grad; they cost only the reference)."""
    if len(calls) != 1:
        return None
    call = calls[0]
    available = {argument.arg for argument in forward.args.args[1:]} | {
        target.id for statement in ast.walk(forward) if isinstance(statement, ast.Assign)
        and statement.lineno < call.lineno for target in statement.targets if isinstance(target, ast.Name)}
    got = re.search(r"expected \d+, got (\d+)", context.message)
    name = function_class.__name__
    save = statement_location(source_file, call, role="saved",
                              note=f"forward saves {_tensor_count(got.group(1)) if got else 'a number of tensors'} "
                                   "here, a number chosen at run time")
    location.role = "unpacked"
    location.note = f"unpacks {len(unpacked)} names from ctx.saved_tensors"
    notes = [f"ctx.saved_tensors holds exactly what {name}.forward passed to ctx.save_for_backward; the starred "
             f"argument {text_of(source_file, call.args[0]) if call.args else ''} decides at run time how many that is"]
    if not set(unpacked) <= available:
        return diagnosis(codes.SAVED_TENSORS_UNPACK_COUNT, location, [save], notes, [Suggestion(
            f"save the same tensors every time, in the order backward unpacks them ({', '.join(unpacked)})")])
    helps = [statement_change(save, f"save {', '.join(unpacked)} every time, in the order backward unpacks them: "
                              "save_for_backward also takes tensors that do not require grad",
                              f"ctx.save_for_backward({', '.join(unpacked)})")]
    return diagnosis(codes.SAVED_TENSORS_UNPACK_COUNT, save, [location], notes, helps)


def _tensor_count(count: str) -> str:
    return f"{count} tensor{'' if count == '1' else 's'}"


def dirty_view_several_outputs(context: ErrorContext, already):
    """mark_dirty() of an input that is a view, in a Function that returns several tensors."""
    import torch

    from autograd_doctor.analysis.errors.context import last_assignment, uses_between

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    function_class = _applied_function_class(context)
    class_name = function_class.__name__ if function_class is not None else "the Function"
    calls = [c for c in find_calls(statement, "apply")]
    views = [a for c in calls for a in c.args if isinstance(a, ast.Name)
             and isinstance(value := value_of(frame, a), torch.Tensor) and value._base is not None]
    location.role, location.note = "apply", f"{class_name} is applied to a view and returns several tensors"
    notes = [f"{class_name}.forward writes its input in place and marks it dirty; that input is a view of another "
             "tensor, and PyTorch can rebase a view's history only when the Function returns one tensor"]
    dirty = _mark_dirty_statement(function_class)
    related = [location] + ([dirty] if dirty is not None else [])
    helps = []
    primary = location
    if len(views) == 1:
        name = views[0].id
        made = last_assignment(filename, name, line)
        base = made.value if isinstance(made, ast.Assign) and len(made.targets) == 1 else None
        base_names = {n.id for n in ast.walk(base) if isinstance(n, ast.Name)} if base is not None else set()
        scope_end = _scope_end(filename, line)
        read_later = any(uses_between(filename, b, statement.end_lineno, scope_end + 1) for b in base_names)
        if base is not None and base_names and not read_later:
            # Nothing reads the base after the call, so giving the Function a copy changes no value
            # the program uses: the outputs and their gradients are the same.
            primary = statement_location(filename, made, role="view", note=f"{name} is a view of another tensor")
            related = [location] + related[1:]
            copy = f"{name} = {text_of(filename, base)}.clone()"
            helps.append(statement_change(primary, f"give {class_name} a copy, not a view: nothing reads "
                                          f"{', '.join(sorted(base_names))} after the call, so the outputs and "
                                          "gradients stay the same", copy))
        elif base is not None and _view_of_unnamed_result(frame, base, value_of(frame, views[0])):
            # `h = self.conv(x).permute(0, 2, 1)`: the base is a result no name holds (a call's
            # output), so nothing can read it after the call and a copy changes no value.
            primary = statement_location(filename, made, role="view", note=f"{name} is a view of the result of "
                                         f"{text_of(filename, _view_receiver(base))}, which no name holds")
            related = [location] + related[1:]
            copy = f"{name} = {text_of(filename, base)}.clone()"
            helps.append(statement_change(primary, f"give {class_name} a copy, not a view: the tensor {name} is a "
                                          "view of is not kept anywhere else, so the outputs and gradients stay the "
                                          "same", copy))
    elif not views:
        # The view is made in the call itself (`F.apply(h.view(-1))`, `F.apply(h[:, :4])`): a copy made
        # there changes no value the program uses when nothing reads the base's values afterwards
        # (its shape, as in `out.view_as(h)`, is the same).
        made_inline = [a for c in calls for a in c.args if _view_of_name(frame, a) is not None]
        if len(made_inline) == 1:
            argument = made_inline[0]
            base = _view_of_name(frame, argument)
            if not _values_read_after(filename, base, statement.end_lineno, _scope_end(filename, line)):
                text = text_of(filename, argument)
                helps.append(statement_change(location, f"give {class_name} a copy, not a view: {text}.clone(); "
                                              f"nothing reads the values of {base} after the call, so the outputs "
                                              "and gradients stay the same",
                                              replace_node_text(filename, statement, argument, f"{text}.clone()")))
    helps.append(Suggestion(f"{'or ' if helps else ''}return one tensor from {class_name} (split it into a Function "
                            "that writes in place and returns the input, and the other operations after it)"))
    return diagnosis(codes.DIRTY_VIEW_SEVERAL_OUTPUTS, primary, related, notes, helps)


_VIEW_METHODS = {"view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "flatten", "squeeze",
                 "unsqueeze", "narrow", "select", "expand", "expand_as", "unflatten", "movedim", "diagonal"}
# Reads of a tensor that use only its metadata, not its values.
_METADATA_ATTRIBUTES = {"shape", "dtype", "device", "ndim", "size", "dim", "numel", "layout"}
_SHAPE_FROM_ARGUMENT = {"view_as", "reshape_as", "expand_as", "new_zeros", "new_ones", "new_empty"}


def _view_receiver(node: ast.AST) -> ast.AST:
    """`self.conv(x)` for `self.conv(x).permute(0, 2, 1)[:, 1:]`: the expression under a chain of
    view methods and subscripts."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEW_METHODS:
            node = node.func.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return node


def _view_of_unnamed_result(frame, value: ast.AST, view) -> bool:
    """Whether `value` is a chain of views over a call's result (not over a name or attribute) and,
    at run time, no local of the frame other than `view` itself is the view's base or another view
    of it: the base is then a temporary that nothing reads after the call."""
    import torch

    receiver = _view_receiver(value)
    if receiver is value or not isinstance(receiver, ast.Call) or not isinstance(view, torch.Tensor) \
            or view._base is None:
        return False
    base = view._base
    values = list(frame.f_locals.values())
    for local in list(values):
        if isinstance(local, torch.nn.Module):
            # A module's method may return a tensor the module keeps (`self.cache`).
            for module in list(local.modules())[:200]:
                values += [*vars(module).values(), *module._buffers.values()]
    for held in values:
        if held is view or not isinstance(held, torch.Tensor):
            continue
        if held is base or held._base is base:
            return False
    return True


def _view_of_name(frame, node) -> str | None:
    """The name `h` of a tensor of which `node` is a view written in place: `h.view(...)`,
    `h.t()`, `h[:, :2]` (the kinds of expression that return a view of `h`)."""
    import torch

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _VIEW_METHODS:
        receiver = node.func.value
    elif isinstance(node, ast.Subscript):
        receiver = node.value
    else:
        return None
    return receiver.id if isinstance(receiver, ast.Name) and isinstance(value_of(frame, receiver), torch.Tensor) \
        else None


def _values_read_after(filename: str, name: str, after: int, end: int) -> bool:
    """Whether a statement after line `after` (up to `end`) reads the values of `name`; reading its
    shape, dtype or device (`name.shape`, `x.view_as(name)`) does not count."""
    from autograd_doctor.diagnosis.source import statement_at

    for number in range(after + 1, end + 1):
        statement = statement_at(filename, number)
        if statement is None or statement.lineno != number:
            continue
        parents = {id(child): parent for parent in ast.walk(statement) for child in ast.iter_child_nodes(parent)}
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.Attribute) and parent.attr in _METADATA_ATTRIBUTES:
                continue
            if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Attribute) \
                    and parent.func.attr in _SHAPE_FROM_ARGUMENT:
                continue
            return True
    return False


def _scope_end(filename: str, line: int) -> int:
    from autograd_doctor.analysis.errors.context import enclosing_function

    tree = parse_file(filename)
    scope = enclosing_function(tree, line) if tree is not None else None
    if isinstance(scope, ast.Module):
        return max((getattr(node, "end_lineno", 0) or 0 for node in scope.body), default=line)
    return getattr(scope, "end_lineno", None) or line


def _mark_dirty_statement(function_class):
    filename, forward = _method_node(function_class, "forward") if function_class is not None else (None, None)
    calls = find_calls(forward, "mark_dirty") if forward is not None else []
    if not calls:
        return None
    from autograd_doctor.diagnosis.source import statement_at

    statement = statement_at(filename, calls[0].lineno)
    return statement_location(filename, statement, role="dirty", note="the input is written in place and marked "
                                                                      "dirty here") if statement is not None else None


def legacy_function_called(context: ErrorContext, already):
    """`MyFunction()(x)`: an old-style Function instantiated and called. Where the class defines no
    `__init__` and every call in the user's files passes no constructor argument, each call
    becomes `MyFunction.apply(x)`: the instance methods then receive the context as their first
    argument (`self`), and `self.save_for_backward` / `self.saved_tensors` are the context's."""
    import torch

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    function_class = None
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and getattr(node, "lineno", line) <= line:
            candidate = value_of(frame, node.func.func)
            if isinstance(candidate, type) and issubclass(candidate, torch.autograd.Function):
                function_class = candidate
                break
    if function_class is None:
        # An instance built earlier and called here: `criterion = DiceLoss()`, `criterion(pred, y)`.
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) \
                    and getattr(node, "lineno", line) <= line:
                candidate = value_of(frame, node.func)
                if isinstance(candidate, torch.autograd.Function) and not isinstance(candidate, type):
                    function_class = type(candidate)
                    break
    if function_class is None:
        return None
    name = function_class.__name__
    as_module = _legacy_function_as_module(context, frame, function_class)
    if as_module is not None:
        class_location, replacement, call_location = as_module
        class_location.note = (f"{name} subclasses autograd.Function but defines no backward: its forward is "
                               "written with differentiable PyTorch operations")
        related = [call_location] if call_location is not None else []
        notes = [f"{name}() makes an instance of an old-style Function and calls it, which PyTorch refuses since "
                 "1.5; a Function exists to supply a hand-written backward, and this one has none (the inherited "
                 "backward raises), so autograd is meant to differentiate its forward as it is"]
        return diagnosis(codes.LEGACY_FUNCTION_CALLED, class_location, related, notes=notes, help=[Suggestion(
            f"make {name} an nn.Module: the same forward, differentiated by autograd (no backward to write); "
            f"`{name}()(...)` then calls the module's forward, and `save_for_backward` (a Function's context "
            "method) is dropped", replacement, class_location)])
    location.note = f"{name}() makes an instance of an old-style Function and calls it"
    notes = [f"{name}'s forward is an instance method: PyTorch applies a Function through its class, "
             f"{name}.apply(...), passing a context object as forward's and backward's first argument"]
    advice = (f"call it as {name}.apply(...) and write forward and backward as @staticmethod taking ctx "
              "(ctx.save_for_backward, ctx.saved_tensors)")
    calls = _legacy_calls(context, name)
    takes_no_arguments = "__init__" not in function_class.__dict__ and calls and all(
        not call.func.args and not call.func.keywords for _, _, call in calls)
    if not takes_no_arguments:
        return diagnosis(codes.LEGACY_FUNCTION_CALLED, location, notes=notes, help=[Suggestion(
            advice + f"; the arguments {name}(...) is built with become arguments of apply and of forward")])
    helps, related = [], []
    for call_file, call_statement, call in calls:
        receiver = text_of(call_file, call.func.func)
        replacement = replace_node_text(call_file, call_statement, call.func, f"{receiver}.apply")
        where = statement_location(call_file, call_statement)
        if (where.file, where.line) != (location.file, location.line):
            related.append(statement_location(call_file, call_statement, "called", f"{name}() called here too"))
        helps.append(Suggestion(advice + f"; {name} has no __init__, so .apply alone computes the same values: "
                                "forward's and backward's first argument is then the context, which has the "
                                "save_for_backward and saved_tensors the methods use on self",
                                replacement, where if replacement is not None else None))
    return diagnosis(codes.LEGACY_FUNCTION_CALLED, location, related, notes=notes, help=helps)


_CONTEXT_ONLY = {"saved_tensors", "needs_input_grad", "mark_dirty", "mark_non_differentiable",
                 "set_materialize_grads", "save_for_forward", "saved_variables", "to_save", "apply"}


def _legacy_function_as_module(context: ErrorContext, frame, function_class):
    """(class location, the class rewritten as an nn.Module, the call's location) for an old-style
    Function that defines no backward (nor vjp) and whose methods use their instance only as a
    module would: a forward written with PyTorch operations (no NumPy, `.data`, no_grad block),
    `self.save_for_backward(...)` statements (dropped: nothing reads them) and plain attributes.
    None whenever the class does more (a backward of its own, `self.saved_tensors`,
    `self.needs_input_grad`, another base class, `.apply` calls): then the gradient is not
    autograd's own and rewriting it would change what the program computes."""
    import torch

    if function_class.__bases__ != (torch.autograd.Function,):
        return None
    for method in ("backward", "vjp", "jvp", "setup_context"):
        if method in function_class.__dict__:
            return None
    filename, forward = _method_node(function_class, "forward")
    if forward is None or not _backward_in_torch_operations(forward):
        return None
    tree = parse_file(filename)
    class_node = next((node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                       and node.name == function_class.__name__ and forward in node.body), None) \
        if tree is not None else None
    if class_node is None or class_node.col_offset or len(class_node.bases) != 1 or class_node.keywords \
            or class_node.decorator_list:
        return None
    if any(isinstance(node, ast.Attribute) and node.attr == "apply" and isinstance(node.value, ast.Name)
           and node.value.id == function_class.__name__ for node in ast.walk(tree)):
        return None
    drops = []
    for node in ast.walk(class_node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if node.attr in _CONTEXT_ONLY:
                return None
        if isinstance(node, ast.FunctionDef) and node is not forward and node.name != "__init__" \
                and any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
            return None
    for node in ast.walk(class_node):
        if isinstance(node, ast.Attribute) and node.attr == "save_for_backward":
            parent = next((s for s in ast.walk(class_node) if isinstance(s, ast.Expr) and s.value is not None
                           and isinstance(s.value, ast.Call) and s.value.func is node), None)
            if parent is None or not any(parent in getattr(block, "body", []) and len(block.body) > 1
                                         for block in ast.walk(forward)):
                return None
            drops.append(parent)
    module_globals = frame.f_globals
    nn_name = next((key for key, value in module_globals.items() if value is torch.nn), None)
    torch_name = next((key for key, value in module_globals.items() if value is torch), None)
    base_text = f"{nn_name}.Module" if nn_name else f"{torch_name}.nn.Module" if torch_name else None
    if base_text is None:
        return None
    from autograd_doctor.diagnosis.source import source_line

    first = class_node.lineno
    lines = [source_line(filename, n) for n in range(first, class_node.end_lineno + 1)]
    edits = []  # (row, kind, payload), applied from the last row up
    base = class_node.bases[0]
    if base.lineno != base.end_lineno:
        return None
    edits.append((base.lineno - first, 1, ("replace", base.col_offset, base.end_col_offset, base_text)))
    init = next((n for n in class_node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is not None:
        if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
               for n in ast.walk(init)):
            return None
        body = init.body
        at = body[1] if isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str) and len(body) > 1 else body[0]
        indent = lines[at.lineno - first][:at.col_offset]
        edits.append((at.lineno - first, 0, ("insert", indent + "super().__init__()")))
    for statement in drops:
        edits.append((statement.lineno - first, 2, ("delete", statement.end_lineno - first)))
    for row, _, edit in sorted(edits, key=lambda item: (item[0], item[1]), reverse=True):
        if edit[0] == "replace":
            _, start, end, text = edit
            lines[row] = lines[row][:start] + text + lines[row][end:]
        elif edit[0] == "insert":
            lines.insert(row, edit[1])
        else:
            del lines[row:edit[1] + 1]
    lines[0] = lines[0][class_node.col_offset:]
    replacement = "\n".join(line.rstrip("\n") for line in lines)
    try:
        ast.parse(replacement)
    except SyntaxError:
        return None
    class_location = statement_location(filename, class_node, role="class")
    found = user_statement(context)
    call_location = None
    if found is not None:
        _, _, call_file, call_statement, _ = found
        call_location = statement_location(call_file, call_statement, "called",
                                           f"{function_class.__name__}'s instance is called here")
    return class_location, replacement, call_location


def _legacy_calls(context: ErrorContext, class_name: str) -> list:
    """(file, statement, call) of each `ClassName(...)(...)` in the user's files the traceback
    reaches, in source order."""
    from autograd_doctor.diagnosis.source import statement_at

    found = []
    for filename in context.files_reached():
        tree = parse_file(filename)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Call):
                inner = node.func.func
                called = inner.id if isinstance(inner, ast.Name) else inner.attr if isinstance(inner, ast.Attribute) else None
                if called == class_name:
                    statement = statement_at(filename, node.lineno)
                    if statement is not None:
                        found.append((filename, statement, node))
    return sorted(found, key=lambda item: (item[0], item[2].lineno, item[2].col_offset))


# ---- AD179: a @once_differentiable backward differentiated twice -------------------------

# Calls in a backward that autograd cannot record: they leave PyTorch's operations.
_OPAQUE_CALLS = {"numpy", "item", "tolist", "cpu_numpy", "detach", "detach_", "data_ptr", "requires_grad_"}


def _decorator_line(function: ast.FunctionDef) -> int | None:
    for decorator in function.decorator_list:
        name = decorator.attr if isinstance(decorator, ast.Attribute) else getattr(decorator, "id", None)
        if name == "once_differentiable":
            return decorator.lineno
    return None


def _backward_in_torch_operations(function: ast.FunctionDef) -> bool:
    """Whether backward's body is written with PyTorch operations only, as far as the source
    shows: no NumPy or Python number round trip, no `.data`, no no_grad block, no call of a
    name that is not torch's or a tensor method (a kernel of an extension)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Attribute) and node.attr == "data":
            return False
        if isinstance(node, ast.With):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute):
                if func.attr in _OPAQUE_CALLS:
                    return False
                root = func
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in ("np", "numpy", "math"):
                    return False
            elif isinstance(func, ast.Name) and func.id not in ("len", "range", "zip", "tuple", "list", "isinstance"):
                return False
    return True


def once_differentiable_twice(context: ErrorContext, already):
    """Second derivative through a custom Function whose backward is marked @once_differentiable:
    the decorator in the user's files is named (when one class there has it); when backward is
    written with PyTorch operations, the change removes it."""
    candidates = []
    for filename in context.files_reached():
        tree = parse_file(filename)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            backward = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "backward"), None)
            line = _decorator_line(backward) if backward is not None else None
            if line is not None:
                candidates.append((filename, node, backward, line))
    raised = context.raise_location("backward", "the backward() that needed the second derivative")
    notes = ["@once_differentiable runs backward without recording a graph and forbids differentiating it; "
             "a second derivative (create_graph=True, a gradient penalty, a Hessian) has to go through it"]
    if len(candidates) != 1:
        if raised is None:
            return None
        return diagnosis(codes.ONCE_DIFFERENTIABLE_TWICE, raised, notes=notes, help=[Suggestion(
            "find the custom autograd.Function whose backward is decorated with @once_differentiable (in your code "
            "or a library's): remove the decorator if backward computes with PyTorch operations, or drop the "
            "second-order terms on purpose (a first-order method changes the result)")])
    filename, class_node, backward, line = candidates[0]
    from autograd_doctor.analysis.errors.context import line_location

    location = line_location(filename, line, "", f"{class_node.name}.backward may not be differentiated")
    decorator = linecache.getline(filename, line).split("#")[0].strip()
    header = linecache.getline(filename, backward.lineno).rstrip("\n")
    helps = []
    if _backward_in_torch_operations(backward) and decorator.startswith("@") and header.rstrip().endswith(":") \
            and line < backward.lineno:
        # The decorator's line through the def line, replaced by the def line: the decorator goes.
        from autograd_doctor.diagnosis.model import Location
        from autograd_doctor.diagnosis.source import display_path

        span = Location(file=display_path(filename), line=line, column=len(header) - len(header.lstrip()),
                        end_line=backward.lineno, end_column=len(header.rstrip()), source=decorator)
        helps.append(Suggestion(f"remove the decorator: {class_node.name}.backward computes with PyTorch operations, "
                                "so autograd can record and differentiate them; the first derivative is unchanged",
                                replacement=header.strip(), location=span))
    helps.append(Suggestion("or, if backward calls code autograd cannot see, write its derivative as another "
                            "Function; dropping the second-order terms (a first-order method) changes the result"))
    return diagnosis(codes.ONCE_DIFFERENTIABLE_TWICE, location, related=[raised] if raised else [], notes=notes,
                     help=helps)


# Messages of ops that refuse operands of two floating dtypes (matrix products, addmm, linear, index ops).
MIXED_DTYPES = (r"expected m1 and m2 to have the same dtype|expected scalar type \w+ but found \w+"
                r"|mat1 and mat2 must have the same dtype|expected (both )?(mat1|self) and \w+ to have the same dtype"
                r"|Found dtype \w+ but expected \w+")
_LOW_PRECISION = ("float16", "bfloat16")


def _backward_frame(context: ErrorContext):
    """(frame, line, the Function class) of the innermost user frame when it is the `backward` of a
    torch.autograd.Function subclass run by the engine (its `ctx` knows the Function's class)."""
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    if frame.f_code.co_name != "backward":
        return None
    ctx = frame.f_locals.get("ctx")
    function_class = getattr(type(ctx), "_forward_cls", None)
    import torch

    if not (isinstance(function_class, type) and issubclass(function_class, torch.autograd.Function)):
        return None
    if getattr(getattr(function_class, "backward", None), "__code__", None) is not frame.f_code:
        return None
    return frame, line, function_class, ctx


def _decorated_with(node: ast.FunctionDef, name: str) -> bool:
    return any(name in ast.unparse(decorator) for decorator in node.decorator_list)


def autocast_function_mixed_dtypes(context: ErrorContext, already):
    """A custom Function applied inside an autocast region, its forward not wrapped by
    `torch.amp.custom_fwd`: autocast ran the forward's ops in low precision, so what it saved mixes
    float16/bfloat16 with float32 (the weights), and the hand-written backward, run by the engine
    outside autocast, hands an op the two dtypes. Evidence: the error is raised in the Function's
    own backward; its saved tensors hold a low-precision and a float32 floating tensor; its forward
    carries no custom_fwd; a user file reached calls autocast. The help is the documented one:
    `@torch.amp.custom_fwd(device_type=..., cast_inputs=torch.float32)` on forward (the forward then
    runs in float32 with autocast off, and backward with it), custom_bwd on backward."""
    import torch

    found = _backward_frame(context)
    if found is None:
        return None
    frame, line, function_class, ctx = found
    try:
        saved = [t for t in ctx.saved_tensors if isinstance(t, torch.Tensor)]
    except Exception:
        return None
    dtypes = {str(t.dtype).replace("torch.", "") for t in saved if t.is_floating_point()}
    low = sorted(dtypes & set(_LOW_PRECISION))
    if not low or "float32" not in dtypes:
        return None
    devices = {t.device.type for t in saved}
    if len(devices) != 1:
        return None
    device = devices.pop()
    forward_file, forward = _method_node(function_class, "forward")
    backward_file, backward = _method_node(function_class, "backward")
    if forward is None or backward is None or _decorated_with(forward, "custom_fwd"):
        return None
    if not any("autocast(" in "".join(linecache.getlines(f)) for f in context.files_reached()):
        return None
    name = function_class.__name__
    anchor = forward.decorator_list[0] if forward.decorator_list else forward
    primary = statement_location(forward_file, anchor, role="forward",
                                 note=f"{name}.forward runs under autocast: its ops compute in {low[0]}, while "
                                      "the tensors it is given (weights) stay float32")
    primary.end_line, primary.end_column = primary.line, None
    related = [context.raise_location(role="raised", note=f"backward gets {' and '.join(low)} and float32 "
                                                         "operands: it runs outside autocast, which cast them in "
                                                         "forward")]
    notes = [f"{name} was applied inside an autocast region: autocast casts the ops inside a custom Function's "
             f"forward, not its inputs or what it saves, so {name} saved {', '.join(low)} and float32 tensors, and "
             "its backward, which autocast does not cover, gives an op both",
             "torch.amp.custom_fwd(cast_inputs=torch.float32) runs the forward with autocast off on float32 "
             "inputs, and custom_bwd runs backward in the same state (the PyTorch AMP docs, \"Functions with "
             "multiple inputs or autocastable ops\")"]
    helps = []
    torch_bound = getattr(function_class.forward, "__globals__", {}).get("torch") is torch
    if torch_bound and forward.decorator_list and isinstance(anchor, ast.Name) and anchor.id == "staticmethod" \
            and anchor.lineno == anchor.end_lineno:
        new = (f"@staticmethod\n@torch.amp.custom_fwd(device_type={device!r}, "
               "cast_inputs=torch.float32)")
        location = statement_location(forward_file, anchor)
        location.line = location.end_line = anchor.lineno
        location.column, location.end_column = anchor.col_offset - 1, anchor.end_col_offset
        helps.append(Suggestion(
            f"run {name}.forward in float32 with autocast off: decorate it with "
            f"@torch.amp.custom_fwd(device_type={device!r}, cast_inputs=torch.float32) (and backward with "
            f"@torch.amp.custom_bwd(device_type={device!r})); the layer then computes in float32 inside the "
            "autocast region", new, location))
    helps.append(Suggestion(
        f"{'or ' if helps else ''}decorate {name}.forward with @torch.amp.custom_fwd(device_type={device!r}) "
        f"and {name}.backward with @torch.amp.custom_bwd(device_type={device!r}), and cast the tensors forward "
        "saves to one dtype there"))
    return diagnosis(codes.AUTOCAST_FUNCTION_MIXED_DTYPES, primary, related, notes, helps)


# ---- AD321: a custom Function without backward ---------------------------------------------

def _backward_node_class(context: ErrorContext):
    """The Function class whose missing backward raised: the `ctx` of torch's own
    `Function.backward` frame is the graph node, which knows its forward class."""
    import torch

    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name != "backward" or not frame.f_code.co_filename.endswith("function.py"):
            continue
        cls = getattr(frame.f_locals.get("ctx"), "_forward_cls", None)
        if isinstance(cls, type) and issubclass(cls, torch.autograd.Function):
            return cls, tuple(getattr(frame.f_locals.get("ctx"), "needs_input_grad", ()) or ())
    return None, ()


def _misspelled_backward(class_node: ast.ClassDef):
    """A method of the class whose name is a near miss of `backward` (`backwards`, `backword`)."""
    import difflib

    for node in class_node.body:
        if isinstance(node, ast.FunctionDef) and node.name != "backward" \
                and difflib.SequenceMatcher(a=node.name.lower(), b="backward").ratio() >= 0.8:
            return node
    return None


def function_without_backward(context: ErrorContext, already):
    from autograd_doctor.analysis.errors.func_support import _line_location, _user_class_definition

    cls, needs = _backward_node_class(context)
    name = cls.__name__ if cls is not None else "the Function"
    found = _user_class_definition(cls) if cls is not None else None
    notes = [f"backward() reached an output of {name}, which defines forward but no backward staticmethod: "
             "autograd cannot send a gradient through it"]
    advice = Suggestion(f"or, if a gradient through {name} is meant, write its backward: one gradient per input "
                        "of forward, the derivative of its outputs times grad_outputs")
    if found is None:
        location = context.raise_location("raised", f"{name} has no backward")
        return diagnosis(codes.FUNCTION_WITHOUT_BACKWARD, location, notes=notes, help=[advice])
    filename, class_node = found
    forward = next((n for n in class_node.body if isinstance(n, ast.FunctionDef) and n.name == "forward"), None)
    misspelled = _misspelled_backward(class_node)
    if misspelled is not None:
        location = _line_location(filename, misspelled.lineno, f"{name}.{misspelled.name} is not called by autograd")
        line = linecache.getline(filename, misspelled.lineno)
        renamed = line_change(filename, misspelled.lineno, f"def {misspelled.name}(", "def backward(",
                              f"rename {misspelled.name} to backward: autograd calls the staticmethod named backward")
        return diagnosis(codes.FUNCTION_WITHOUT_BACKWARD, location, notes=notes,
                         help=[renamed] if renamed is not None and line else [advice])
    last = class_node.body[-1]
    location = _line_location(filename, last.end_lineno or last.lineno,
                              f"{name} ends here without a backward staticmethod")
    inputs = [a.arg for a in forward.args.args[1:]] if forward is not None else []
    helps = []
    if forward is not None and forward.args.vararg is None and inputs:
        if len(needs) == len(inputs) and any(needs):
            notes.append(f"input{'s' if sum(needs) > 1 else ''} "
                         f"{', '.join(i for i, need in zip(inputs, needs) if need)} of {name} required grad here")
        class_text = text_of(filename, class_node)
        indent = " " * (class_node.body[0].col_offset - class_node.col_offset)
        if class_text is not None:
            method = (f"\n\n{indent}@staticmethod\n{indent}def backward(ctx, *grad_outputs):\n"
                      f"{indent}{indent}return {', '.join(['None'] * len(inputs))}")
            class_location = statement_location(filename, class_node, role="class")
            helps.append(Suggestion(
                f"if {name}'s outputs are meant as constants (no gradient flows through it, as for a search or "
                f"an index), give it a backward that returns None for each input of forward ({', '.join(inputs)}) "
                "(unverified: whether a gradient through it was meant is the Function's own)",
                replacement=class_text + method, location=class_location))
    helps.append(advice)
    return diagnosis(codes.FUNCTION_WITHOUT_BACKWARD, location, notes=notes, help=helps)


MATCHERS = [
    (MIXED_DTYPES, autocast_function_mixed_dtypes),
    (r"Legacy autograd function with non-static forward method is deprecated", legacy_function_called),
    (r"If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return "
     r"more than one Tensor", dirty_view_several_outputs),
    (r"function \w+Backward returned an incorrect number of gradients"
     r"|Function \w+Backward returned an invalid gradient at index", wrong_gradients),
    (r"Some elements marked as dirty during the forward method were not returned as output", dirty_not_returned),
    (r"save_for_backward can only save variables", non_tensor_saved),
    (r"a leaf Variable that requires grad has been used in an in-place operation", dirty_leaf),
    (r"^(not enough|too many) values to unpack \(expected \d+", saved_tensors_count),
    (r"trying to differentiate twice a function that was marked\s*with @once_differentiable",
     once_differentiable_twice),
    (r"You must implement (either the backward or vjp method|the backward function) for (your )?custom "
     r"autograd\.Function", function_without_backward),
]
