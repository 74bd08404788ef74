"""AD157: an out-of-place tensor method called as a statement, its result thrown away:
`attn.masked_fill(mask, 0.)` (Flamingo's cross-attention, lucidrains/flamingo-pytorch#10),
`spec.masked_fill(padding, 0)`. The method returns a new tensor and leaves its receiver as it was,
so the line does nothing; the values it was meant to change flow on into the loss. Nothing fails.

Looked at once per backward() line, in the source of what ran for it: the functions whose frames are
around backward() (their receiver is read from the live frame and must be a tensor) and the
`forward` of each user module bound there (there only the methods no other common type has, such
as masked_fill or clamp). An expression statement whose whole value is such a call, on a name or an
attribute chain (not `torch`, `F`, ... and not a `.grad`, whose clamp AD222 reports), is reported;
the help binds the result back to the receiver's name.
"""

from __future__ import annotations

import ast

import types

import torch

from autograd_doctor.analysis.live_values import chain_value
from autograd_doctor.analysis.source_scope import frame_values, live_frame, user_class_file
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    function_starting_at, location_of, parse_file, segment, statement_location, statements_in,
)

# Out-of-place methods that only tensors have (among common types): reported from a module's
# forward even when no frame holds the receiver.
TENSOR_ONLY_METHODS = frozenset({
    "masked_fill", "masked_scatter", "index_fill", "index_add", "index_copy", "index_put", "scatter",
    "scatter_add", "scatter_reduce", "clamp", "clamp_min", "clamp_max", "sigmoid", "relu", "nan_to_num",
})
# Methods also named so on other types (a set's add, a numpy array's clip): reported only where the
# receiver is read from a live frame and is a tensor.
SHARED_NAME_METHODS = frozenset({"add", "sub", "mul", "div", "pow", "neg", "abs", "exp", "log", "sqrt", "tanh",
                                 "clip", "fill_diagonal", "where"})
# Names that hold modules of functions, not tensors.
MODULE_NAMES = frozenset({"torch", "F", "nn", "np", "numpy", "math", "functional"})


def _receiver_text(call: ast.Call) -> ast.expr | None:
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    node = receiver
    while isinstance(node, ast.Attribute):
        if node.attr == "grad":
            return None
        node = node.value
    if not isinstance(node, ast.Name) or node.id in MODULE_NAMES:
        return None
    return receiver


def _discarded_calls(function: ast.AST, methods: frozenset) -> list[tuple[ast.Expr, ast.Call, ast.expr]]:
    found = []
    for node in statements_in(function):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr in methods:
            receiver = _receiver_text(node.value)
            if receiver is not None:
                found.append((node, node.value, receiver))
    return sorted(found, key=lambda item: item[0].lineno)


def _read(frame, receiver: ast.expr):
    """The receiver's value in `frame` (a name, then plain attributes), or None."""
    return chain_value(frame_values(frame).get, receiver)


def discarded_result_diagnosis(call) -> Diagnosis | None:
    """AD157 for the backward() call that just ran, or None."""
    seen: set = set()
    # The functions running around backward(): the receiver must hold a tensor in the frame.
    for site in (call.stack if call is not None else ()):
        frame = live_frame(site)
        function = function_starting_at(site.filename, frame.f_code.co_firstlineno) if frame is not None else None
        if function is None and frame is not None and frame.f_code.co_name == "<module>":
            function = parse_file(site.filename)
        if function is None:
            continue
        for statement, method_call, receiver in _discarded_calls(function, TENSOR_ONLY_METHODS | SHARED_NAME_METHODS):
            if isinstance(_read(frame, receiver), torch.Tensor):
                return _diagnosis(site.filename, statement, method_call, receiver, call)
        # The forward of each user module bound in the frame.
        for value in list(frame_values(frame).values()):
            if not isinstance(value, torch.nn.Module):
                continue
            for module in value.modules():
                kind = type(module)
                filename = user_class_file(module)
                forward = _forward_code(kind)
                if filename is None or forward is None or (kind, filename) in seen:
                    continue
                seen.add((kind, filename))
                method = function_starting_at(filename, forward.co_firstlineno)
                found = _discarded_calls(method, TENSOR_ONLY_METHODS) if method is not None else []
                if found:
                    statement, method_call, receiver = found[0]
                    return _diagnosis(filename, statement, method_call, receiver, call)
    return None


def _diagnosis(filename: str, statement: ast.Expr, method_call: ast.Call, receiver: ast.expr, call) -> Diagnosis:
    method = method_call.func.attr
    receiver_text = segment(filename, receiver)
    call_text = segment(filename, method_call)
    primary = statement_location(filename, statement, role="discarded",
                                 note=f"{method}() returns a new tensor; this line throws it away")
    related = [location_of(call.site, role="backward", note="backpropagates the values it was meant to change")] \
        if call is not None and call.site is not None else []
    notes = [f"{receiver_text}.{method}(...) leaves {receiver_text} as it was: the values it was meant to change "
             "reach the loss unchanged"]
    helps = []
    if receiver_text and call_text:
        helps.append(Suggestion(f"keep the result: bind it to {receiver_text}",
                                f"{receiver_text} = {call_text}", statement_location(filename, statement)))
    return Diagnosis(code=codes.DISCARDED_OUT_OF_PLACE_RESULT, title=codes.title(codes.DISCARDED_OUT_OF_PLACE_RESULT),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _forward_code(kind: type):
    """The code of a module class's own `forward` function, read without running a descriptor (a
    class whose `forward` is a caching wrapper object raised inside `kind.forward`: stop 43); None
    where it is not a plain function."""
    for klass in kind.__mro__:
        if "forward" in vars(klass):
            forward = vars(klass)["forward"]
            return forward.__code__ if isinstance(forward, types.FunctionType) else None
    return None
