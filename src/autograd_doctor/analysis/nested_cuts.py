"""Where a graph was cut inside the user's own functions, several calls below the line that lost it.

`find_cut` (analysis/gradient_path.py) knows, from the live frame, a statement whose inputs carry
gradients and whose result does not (`loss = sinkhorn_divergence(fake, real)`, `output =
model(X)`). When the statement itself cuts nothing, the cut is in what it calls. This module follows
the values computed from the carriers down through the functions of the user's files (never
library code), up to `MAX_DEPTH` calls, and returns the first statement that takes such a value out
of the graph as a whole:

- `M = dist(nx.to_numpy(X_s), nx.to_numpy(X_t))`: a call of a *converter* of the user's files
  (its return is its parameter out of torch: `a.cpu().detach().numpy()`, `a.data`, `a.item()`)
  given a carrier. When the next statement of the same function brings the same name back into
  torch (`M = nx.from_numpy(M, type_as=a)`, `M = torch.from_numpy(M)`), the values made a round
  trip, and the change is to drop it: the converter calls become their arguments and the statement
  that brought them back goes (one span, so both lines change together).
- `outputs = outputs.data` / `h = h.detach()` of a carrier, whose name flows to the function's
  return: the change is the tensor itself.

The evidence is the caller's live values (its carriers requires grad, its result none) and, below,
the source: a cut found here always takes the whole of a carrier's value out of the graph. Nothing
found: None (the caller keeps its advice).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.source_scope import flows_to_return, loaded_names, stored_names
from autograd_doctor.diagnosis.source import function_definition, replace_nodes_text, segment, source_line
from autograd_doctor.recording.frames import is_internal_file

MAX_DEPTH = 4
# Calls that leave torch as a whole value (the result is a NumPy array, a number or a list).
LEAVING_METHODS = {"numpy", "item", "tolist"}
# Calls that keep a value as it is (its graph included): seen through on the way to a cut.
KEEPING_METHODS = {"cpu", "cuda", "contiguous", "float", "double", "clone", "to"}
# Constructors that bring NumPy values back as a new tensor (no grad history).
BACK_CONSTRUCTORS = {"from_numpy", "as_tensor", "tensor"}


@dataclass
class NestedCut:
    filename: str
    statement: ast.stmt  # the user's statement that takes the value out of the graph
    node: ast.AST  # the construct in it (a converter's call, `.data`, `.detach()`)
    kind: str  # "round_trip", "leave_torch", "data", "detach", "functional_no_graph"
    text: str
    chain: list  # "f()" names from the outer call down
    replacement: str | None = None  # the change: from `statement` to `end_line`
    end_line: int | None = None
    back: ast.stmt | None = None  # the statement that brings the values back into torch


def _user_code(function):
    code = getattr(function, "__code__", None)
    if code is None or is_internal_file(code.co_filename):  # torch, installed libraries, the doctor
        return None
    return code


def _callee(call: ast.Call, namespace: dict):
    """(the function's code, whether it is a bound method or a module's forward: its first
    parameter is the object) of the user's function that `call` runs, or None."""
    func = call.func
    value = None
    if isinstance(func, ast.Name):
        value = namespace.get(func.id)
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in namespace:
        owner = namespace[func.value.id]
        method = getattr(type(owner), func.attr, None) if not isinstance(owner, type) else None
        code = _user_code(method)
        if code is not None:
            return code, True, owner
        value = getattr(owner, func.attr, None) if isinstance(owner, torch.nn.Module) else None
    if isinstance(value, torch.nn.Module):
        code = _user_code(getattr(type(value), "forward", None))
        return (code, True, value) if code is not None else None
    if isinstance(value, type) or value is None:
        return None
    code = _user_code(value)
    return (code, False, None) if code is not None else None


def _given(call: ast.Call, definition: ast.FunctionDef, bound: bool) -> list[tuple[str, ast.AST]]:
    positional = [argument.arg for argument in definition.args.posonlyargs + definition.args.args]
    if bound:
        positional = positional[1:]
    pairs = [(positional[index], argument) for index, argument in enumerate(call.args)
             if index < len(positional) and not isinstance(argument, ast.Starred)]
    return pairs + [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None]


def _reads(node: ast.AST, carriers: set) -> bool:
    return any(isinstance(sub, ast.Name) and sub.id in carriers for sub in ast.walk(node))


def _whole_cut(node: ast.AST, carriers: set):
    """`c.data`, `c.detach()`, `c.cpu().detach().numpy()`, `c.item()` of a carrier name c: (kind,
    the outermost cutting node), else None."""
    kind, outer = None, None
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and not node.keywords and node.func.attr in LEAVING_METHODS | KEEPING_METHODS | {"detach"}:
            attr = node.func.attr
            if attr in LEAVING_METHODS and kind is None:
                kind, outer = "leave_torch", node
            elif attr == "detach" and kind is None:
                kind, outer = "detach", node
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
            if kind is None:
                kind, outer = "data", node
            node = node.value
        else:
            break
    if kind is not None and isinstance(node, ast.Name) and node.id in carriers:
        return kind, outer
    return None


# torch.autograd.functional's derivatives, and the position of their create_graph argument.
FUNCTIONAL_CREATE_GRAPH_POSITION = {"jacobian": 2, "hessian": 2, "vjp": 3, "jvp": 3, "vhp": 3, "hvp": 3}


def functional_without_graph(node: ast.AST) -> bool:
    """`torch.autograd.functional.jacobian(f, x)` (hessian, vjp, jvp, vhp, hvp; also called as
    `autograd.functional.X` or `functional.X`) without create_graph=True: the derivatives it returns
    carry no grad history. create_graph given by position, or as a name: not known, so False."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    func = node.func
    position = FUNCTIONAL_CREATE_GRAPH_POSITION.get(func.attr)
    owner = func.value
    if position is None or not (isinstance(owner, ast.Attribute) and owner.attr == "functional"
                                or isinstance(owner, ast.Name) and owner.id == "functional"):
        return False
    if len(node.args) > position or any(k.arg is None for k in node.keywords):
        return False
    keyword = next((k for k in node.keywords if k.arg == "create_graph"), None)
    return keyword is None or isinstance(keyword.value, ast.Constant) and keyword.value.value is False


def _derivative_without_graph(value: ast.AST, carriers: set):
    """`torch.autograd.functional.jacobian(f, c)` (or `[...]` of it), hessian, vjp, ... without
    create_graph=True, given a carrier c: the call, else None. Its derivatives carry no graph."""
    node = value.value if isinstance(value, ast.Subscript) else value
    if functional_without_graph(node) and _reads(node, carriers):
        return node
    return None


def autograd_grad_without_graph(node: ast.AST) -> bool:
    """`torch.autograd.grad(...)` (or `autograd.grad(...)`) without create_graph=True: the gradients it
    returns carry no grad history. create_graph given by position or as a name: not known, so False."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.func.attr != "grad":
        return False
    owner = node.func.value
    if not (isinstance(owner, ast.Name) and owner.id == "autograd"
            or isinstance(owner, ast.Attribute) and owner.attr == "autograd"):
        return False
    if len(node.args) > 4 or any(k.arg is None for k in node.keywords):
        return False
    keyword = next((k for k in node.keywords if k.arg == "create_graph"), None)
    return keyword is None or isinstance(keyword.value, ast.Constant) and keyword.value.value is False


def _gradients_without_graph(value: ast.AST, carriers: set):
    """`torch.autograd.grad(out, inputs)` (or `[...]` of it) without create_graph=True, reading a carrier:
    the call, else None. The gradients it returns carry no graph."""
    node = value.value if isinstance(value, ast.Subscript) else value
    if autograd_grad_without_graph(node) and _reads(node, carriers):
        return node
    return None


def _is_converter(code) -> bool:
    """A function of the user's files whose every return gives one of its parameters out of torch
    as a whole (`return a.cpu().detach().numpy()`)."""
    definition = function_definition(code)
    if definition is None:
        return False
    parameters = {argument.arg for argument in definition.args.posonlyargs + definition.args.args}
    returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)]
    cuts = [_whole_cut(node.value, parameters) if node.value is not None else None for node in returns]
    return bool(cuts) and all(cut is not None and cut[0] != "data" for cut in cuts)


def _is_back_converter(code) -> bool:
    """A function of the user's files that makes a tensor from its first parameter with
    `torch.from_numpy` / `torch.as_tensor` / `torch.tensor`."""
    definition = function_definition(code)
    if definition is None:
        return False
    positional = [argument.arg for argument in definition.args.posonlyargs + definition.args.args]
    first = positional[1] if positional and positional[0] == "self" and len(positional) > 1 else \
        (positional[0] if positional else None)
    return first is not None and any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in BACK_CONSTRUCTORS
        and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == first
        for node in ast.walk(definition))


def _statements(definition: ast.AST) -> list:
    return sorted((node for node in ast.walk(definition) if isinstance(node, (ast.Assign, ast.AugAssign, ast.Return))
                   and node.value is not None), key=lambda node: (node.lineno, node.col_offset))


def _binds(node) -> set:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return set().union(*(stored_names(target) for target in targets))


def _same_block(definition: ast.AST, first: ast.stmt, second: ast.stmt) -> bool:
    for node in ast.walk(definition):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and first in block and second in block:
                return True
    return False


def _round_trip_change(filename: str, definition: ast.AST, statement: ast.Assign, converters: list,
                       namespace: dict):
    """(replacement, end line, the statement that brings the values back) for dropping a round trip
    out of torch and back: the converter calls become their arguments, and the next statement that
    rebinds the same name from a back conversion of it goes. None when there is no such statement
    in the same block."""
    names = _binds(statement)
    if len(names) != 1:
        return None
    name = next(iter(names))
    later = [node for node in _statements(definition) if node.lineno > statement.end_lineno]
    for node in later:
        if name not in loaded_names(node.value) and name not in _binds(node):
            continue
        # The first statement that reads or rebinds the name must bring it back, whole.
        value = node.value
        if not (isinstance(node, ast.Assign) and _binds(node) == {name} and isinstance(value, ast.Call)
                and value.args and isinstance(value.args[0], ast.Name) and value.args[0].id == name):
            return None
        back = isinstance(value.func, ast.Attribute) and value.func.attr in BACK_CONSTRUCTORS and (
            isinstance(value.func.value, ast.Name) and value.func.value.id in {"torch", "th"})
        if not back:
            found = _callee(value, namespace)
            back = found is not None and _is_back_converter(found[0])
        if not back or not _same_block(definition, statement, node):
            return None
        fixed = replace_nodes_text(filename, statement, [(call, segment(filename, call.args[0]))
                                                         for call in converters])
        if fixed is None:
            return None
        kept = [source_line(filename, line) for line in range(statement.end_lineno + 1, node.lineno)]
        return "\n".join([fixed] + kept), node.end_lineno, node
    return None


def find_nested_cut(call_value: ast.AST, namespace: dict, carriers: set, depth: int = 0,
                    chain: list | None = None) -> NestedCut | None:
    """The first statement of a function of the user's files, called in `call_value` with
    something computed from `carriers` (names in `namespace`, the live values of the caller), that
    takes such a value out of the graph as a whole. None when none is found."""
    if depth >= MAX_DEPTH:
        return None
    chain = chain or []
    for call in (node for node in ast.walk(call_value) if isinstance(node, ast.Call)):
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else call.func
        given_carrier = any(_reads(argument, carriers) for argument in call.args) or any(
            _reads(keyword.value, carriers) for keyword in call.keywords)
        module_carrier = isinstance(receiver, ast.Name) and receiver.id in carriers \
            and isinstance(namespace.get(receiver.id), torch.nn.Module)
        if not given_carrier and not module_carrier:
            continue
        found = _callee(call, namespace)
        if found is None:
            continue
        code, bound, owner = found
        definition = function_definition(code)
        if definition is None:
            continue
        touched = {parameter for parameter, argument in _given(call, definition, bound) if _reads(argument, carriers)}
        if bound and (module_carrier or isinstance(owner, torch.nn.Module) and any(
                p.requires_grad for p in owner.parameters())):
            positional = definition.args.posonlyargs + definition.args.args
            if positional:
                touched.add(positional[0].arg)
        if not touched:
            continue
        inner_namespace = dict(getattr(_function_of(code, owner, namespace, call), "__globals__", {}) or {})
        if bound and owner is not None:
            positional = definition.args.posonlyargs + definition.args.args
            if positional:
                inner_namespace[positional[0].arg] = owner
        cut = _cut_in_function(code.co_filename, definition, inner_namespace, touched, depth,
                               chain + [f"{definition.name}()"])
        if cut is not None:
            return cut
    return None


def _function_of(code, owner, namespace: dict, call: ast.Call):
    if owner is not None:
        method = getattr(type(owner), code.co_name, None)
        return method
    if isinstance(call.func, ast.Name):
        return namespace.get(call.func.id)
    return None


def _cut_in_function(filename: str, definition: ast.AST, namespace: dict, touched: set, depth: int,
                     chain: list) -> NestedCut | None:
    carriers = set(touched)
    # Gradients taken without a graph on purpose (a target to match, detached) sit beside the ones
    # that lost it: with two such calls in the function, which one cut the path is not known.
    grad_calls = [node for node in ast.walk(definition) if autograd_grad_without_graph(node)]
    for statement in _statements(definition):
        value = statement.value
        if not _reads(value, carriers):
            continue
        derivative = _derivative_without_graph(value, carriers)
        kind = "functional_no_graph"
        if derivative is None and len(grad_calls) == 1:
            derivative, kind = _gradients_without_graph(value, carriers), "grad_no_graph"
        if derivative is not None and (isinstance(statement, ast.Return) or isinstance(statement, ast.Assign) and
                                       flows_to_return(definition, statement, _binds(statement), _binds_or_written)):
            return NestedCut(filename, statement, derivative, kind, segment(filename, derivative) or "", chain)
        if isinstance(statement, ast.Assign):
            whole = _whole_cut(value, carriers)
            if whole is not None and flows_to_return(definition, statement, _binds(statement), _binds_or_written):
                kind, node = whole
                return NestedCut(filename, statement, node, kind, segment(filename, node) or "", chain)
            # Every converter call of the statement (a round trip converts the other operands too).
            converters = [call for call in ast.walk(value) if isinstance(call, ast.Call) and len(call.args) == 1
                          and not call.keywords and (found := _callee(call, namespace)) is not None
                          and _is_converter(found[0])]
            if any(_reads(call.args[0], carriers) for call in converters) and flows_to_return(
                    definition, statement, _binds(statement), _binds_or_written):
                node = converters[0]
                change = _round_trip_change(filename, definition, statement, converters, namespace)
                cut = NestedCut(filename, statement, node, "round_trip" if change else "leave_torch",
                                segment(filename, node) or "", chain)
                if change is not None:
                    cut.replacement, cut.end_line, cut.back = change
                return cut
        inner = find_nested_cut(value, namespace, carriers, depth + 1, chain)
        if inner is not None:
            return inner
        if isinstance(statement, (ast.Assign, ast.AugAssign)):
            carriers |= _binds(statement)
    return None


def _binds_or_written(node) -> set:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    bound = set()
    for target in targets:
        while isinstance(target, ast.Subscript):
            target = target.value
        bound |= stored_names(target)
    return bound
