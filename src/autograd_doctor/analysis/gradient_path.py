"""AD301/AD302: where the gradient path was cut, and which backward() freed a graph.

The Doctor calls three hooks (see `autograd_doctor.doctor`):

- `on_backward_start` before each backward(): turns on a module-forward tracker (a
  global forward pre-hook that records which modules ran) the first time.
- `after_backward` after a successful backward(): for the first few backward calls
  only (then nothing, so a long training loop pays nothing), a parameter that requires
  grad but got no gradient while its module took part is reported (AD301 warning).
- `backward_error_diagnosis` when backward() raised: "element 0 of tensors does not
  require grad" (AD301: the line that cut the path) and "Trying to backward through the
  graph a second time" (AD302: the earlier backward() that freed the graph and the
  tensor that carried it across).

Finding the line that cut a path is post-mortem source reasoning over the frame that
called backward(): follow the loss's assignments back through the function, and use
the live values of the local variables as evidence (a statement is the cut when an
input requires grad and its result does not). A line is named only with that evidence
or an explicit cutting construct (`detach()`, `.data`, `torch.no_grad()`, ...).
`why_no_grad(tensor, loss)` runs the same analysis on request.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from types import FrameType
from typing import Any

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.copies import stack_keywords_suffix
from autograd_doctor.analysis.describe import tensor_info
from autograd_doctor.analysis.naming import modules_in, parameter_path, user_frames, variable_for
from autograd_doctor.analysis.relation import gradient_path
from autograd_doctor.recording.calls import AUTOGRAD_GRAD, TENSOR_BACKWARD
from autograd_doctor.analysis.source_scope import (
    MAX_NODES, Scope, backward_call_node, backward_roots, flows_to_return, frame_values, graph_nodes, live_frame,
    loaded_names, root_expression, stored_names,
)
from autograd_doctor.analysis.grad_off_blocks import (
    called_cut_parts, find_called_cut, find_reentrant_checkpoint, reentrant_checkpoint_parts, running_block_parts,
    running_grad_off_block,
)
from autograd_doctor.analysis.grad_off_caller import (
    DerivativeOffAtEntry, OffAtEntry, callback_call_help, callback_call_location, decorator_help,
    derivative_entry_note, derivative_off_at_entry, enable_grad_block_help, entry_note, off_at_entry,
)
from autograd_doctor.analysis.grad_off_context_managers import (
    GradOffContextManager, GradOffEnter, block_dropped, grad_off_context_manager, grad_off_enter, switch_deleted,
)
from autograd_doctor.analysis.grad_switch import switch_diagnosis
from autograd_doctor.analysis.module_backward_methods import never_called_diagnoses
from autograd_doctor.analysis.data_writes import data_attributes, data_write_in_called_module
from autograd_doctor.analysis.ungraphed_gradient_terms import NEXT_LINE
from autograd_doctor.analysis.distribution_samples import (
    distribution_carries_grad, sample_calls_cutting, sample_in_called_module,
)
from autograd_doctor.analysis.nested_cuts import find_nested_cut, functional_without_graph
from autograd_doctor.analysis.gradient_read_inputs import gradient_read_input
from autograd_doctor.analysis.frozen_when_called import frozen_when_called, frozen_when_called_parts
from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding, optimizers_holding_ids
from autograd_doctor.recording import switches
from autograd_doctor.recording.frames import Site, in_installed_package, is_internal_file
from autograd_doctor.recording.gradient_states import grad_of
from autograd_doctor.recording.identity import IdentityMap, IdentitySet
from autograd_doctor.recording.module_forwards import (
    STATE_KEY as TRACKER_KEY, ModuleForwardTracker, is_active, node_key,
)
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import (
    call_name, function_definition, location_of, parse_file, replace_node_text, replace_nodes_text, segment, source_line,
    statement_location,
)

# Backward calls whose graphs are walked to find parameters left without a gradient.
CHECKED_BACKWARDS = 4

NO_GRAD_CONTEXTS = {"no_grad", "inference_mode"}
INTEGER_OPS = {"argmax", "argmin", "argsort", "argwhere", "nonzero", "long", "int", "bool", "short",
               "searchsorted", "bucketize", "floor_divide", "sign", "eq", "ne", "gt", "lt", "ge", "le"}
LEAVE_TORCH = {"item", "tolist", "numpy"}
NEW_LEAF_FACTORIES = {"tensor", "as_tensor", "from_numpy", "Tensor", "FloatTensor", "LongTensor"}


# ---- source analysis ----------------------------------------------------------------


@dataclass
class CutMark:
    """A construct in the user's source that stops gradients."""

    kind: str  # detach, data, data_write, no_grad, new_leaf, leave_torch, integer, requires_grad_false, sample, unknown
    node: ast.AST | None
    text: str
    context: ast.AST | None = None  # the `with torch.no_grad()` statement


@dataclass
class Cut:
    statement: ast.stmt
    mark: CutMark
    filename: str
    name: str | None = None  # the variable the statement assigns
    evidence: str = ""
    # Names the statement reads whose live values are not tensors (floats, lists, NumPy
    # arrays): a help must not hand those to backward() in place of a tensor.
    non_tensors: frozenset = frozenset()
    # A cut inside a called function: (the caller's file, its statement, what the note says)
    called_at: tuple[str, ast.stmt, str] | None = None
    # A change that spans more than the statement: (its replacement, the last line it replaces)
    change: tuple[str, int] | None = None


def _is_torch_call(node: ast.Call) -> bool:
    func = node.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in {"torch", "th"}


def _is_autograd_grad(node: ast.Call) -> bool:
    """`torch.autograd.grad(...)` or `autograd.grad(...)`."""
    func = node.func
    return isinstance(func, ast.Attribute) and func.attr == "grad" and (
        isinstance(func.value, ast.Name) and func.value.id == "autograd"
        or isinstance(func.value, ast.Attribute) and func.value.attr == "autograd")


def _creates_graph(node: ast.Call) -> bool:
    return any(k.arg == "create_graph" and not (isinstance(k.value, ast.Constant) and not k.value.value)
               for k in node.keywords) or len(node.args) >= 5


def _non_tensor_names(expr: ast.AST, frame_locals: dict | None) -> frozenset:
    if frame_locals is None:
        return frozenset()
    return frozenset(n for n in loaded_names(expr) if n in frame_locals and (
        isinstance(frame_locals[n], (int, float, list, tuple)) or type(frame_locals[n]).__name__ == "ndarray"))


def _literal_values(call: ast.Call) -> bool:
    """`torch.tensor([0, 2])`: a tensor made from numbers written in the code, which never had a
    graph to lose (labels, constants), so it cannot be where a gradient path was cut."""
    literal = (ast.Constant, ast.List, ast.Tuple, ast.UnaryOp, ast.USub, ast.UAdd, ast.Load)
    return bool(call.args) and all(isinstance(node, literal) for arg in call.args for node in ast.walk(arg))


def cut_marks(expr: ast.AST, filename: str) -> list[CutMark]:
    """Constructs inside `expr` that leave the autograd graph, outermost first."""
    marks = []
    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
            marks.append(CutMark("data", node, segment(filename, node)))
        elif isinstance(node, ast.Call):
            name = call_name(node)
            if name == "detach" or name == "detach_":
                marks.append(CutMark("detach", node, segment(filename, node)))
            elif name == "grad" and _is_autograd_grad(node) and not _creates_graph(node):
                marks.append(CutMark("grad_no_graph", node, segment(filename, node)))
            elif functional_without_graph(node):
                marks.append(CutMark("functional_no_graph", node, segment(filename, node)))
            elif name in NEW_LEAF_FACTORIES and (_is_torch_call(node) or name == "from_numpy") \
                    and not _literal_values(node):
                marks.append(CutMark("new_leaf", node, segment(filename, node)))
            elif name in LEAVE_TORCH and isinstance(node.func, ast.Attribute):
                marks.append(CutMark("leave_torch", node, segment(filename, node)))
            elif name in ("float", "int") and isinstance(node.func, ast.Name):
                marks.append(CutMark("leave_torch", node, segment(filename, node)))
            elif name in INTEGER_OPS and name not in ("long", "int", "bool", "short") or (
                    name in ("long", "int", "bool", "short") and isinstance(node.func, ast.Attribute)):
                marks.append(CutMark("integer", node, segment(filename, node)))
            elif name == "requires_grad_" and node.args and isinstance(node.args[0], ast.Constant) \
                    and node.args[0].value is False:
                marks.append(CutMark("requires_grad_false", node, segment(filename, node)))
            elif is_variable_wrapper(node):
                marks.append(CutMark("variable", node, segment(filename, node)))
    return marks


def is_variable_wrapper(node: ast.Call) -> bool:
    """`torch.autograd.Variable(x)` (or `Variable(x)`, `autograd.Variable(x)`) with the tensor alone:
    since Variable and Tensor merged (PyTorch 0.4) it returns `x` detached, requires_grad=False
    unless asked otherwise, so a graph that reaches `x` stops there."""
    func = node.func
    named = isinstance(func, ast.Name) and func.id == "Variable" or isinstance(func, ast.Attribute) and \
        func.attr == "Variable" and (isinstance(func.value, ast.Attribute) and func.value.attr == "autograd"
                                     or isinstance(func.value, ast.Name) and func.value.id == "autograd")
    return named and len(node.args) == 1 and not node.keywords


def _turns_grad_off(call: ast.expr) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()` or `torch.set_grad_enabled(False)` as a `with` item."""
    if not isinstance(call, ast.Call):
        return False
    name = call_name(call)
    if name in NO_GRAD_CONTEXTS:
        return True
    return name == "set_grad_enabled" and bool(call.args) and isinstance(call.args[0], ast.Constant) \
        and call.args[0].value is False


def _ran_grad_off(call: ast.expr, filename: str | None) -> bool:
    """`with torch.set_grad_enabled(<expression>):` whose expression was false when the block was
    last entered, by the run's record of the user's set_grad_enabled calls (the most recent one
    made on the header's lines, as a `with` item); never evaluated here."""
    if filename is None or not isinstance(call, ast.Call) or call_name(call) != "set_grad_enabled" \
            or len(call.args) != 1 or isinstance(call.args[0], ast.Constant):
        return False
    for switch in switches.grad_switches():
        if switch.site.code.co_filename == filename and call.lineno <= switch.site.lineno <= call.end_lineno:
            return switch.context_manager and not switch.enabled
    return False


def _grad_off_item(block: ast.With, filename: str | None = None) -> ast.withitem:
    """The item of a `with` statement that turns gradients off (the first item when none is found)."""
    return next((item for item in block.items if _turns_grad_off(item.context_expr)
                 or _ran_grad_off(item.context_expr, filename)), block.items[0])


def _no_grad_context(stmt: ast.stmt, parents: dict, filename: str | None = None) -> ast.With | None:
    node = parents.get(stmt)
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(node, ast.With) and any(_turns_grad_off(item.context_expr)
                                              or _ran_grad_off(item.context_expr, filename) for item in node.items):
            return node
        node = parents.get(node)
    return None


def _header_without_grad_off(filename: str, block: ast.With) -> tuple[str, Location] | None:
    """(the `with` header with its grad-off items dropped, the header's location) for a `with` of
    several items written on one line, of which at least one other item stays (`with
    torch.autocast(...), torch.no_grad():` -> `with torch.autocast(...):`); None otherwise."""
    kept = [item for item in block.items if not _turns_grad_off(item.context_expr)]
    if not kept or len(kept) == len(block.items) or not block.body:
        return None
    if any(item.context_expr.lineno != block.lineno or item.context_expr.end_lineno != block.lineno
           for item in block.items) or block.body[0].lineno == block.lineno:
        return None
    parts = []
    for item in kept:
        text = segment(filename, item.context_expr)
        if text is None:
            return None
        if item.optional_vars is not None:
            target = segment(filename, item.optional_vars)
            if target is None:
                return None
            text = f"{text} as {target}"
        parts.append(text)
    line = source_line(filename, block.lineno)
    code_part = line.split("#")[0].rstrip() if "#" in line else line.rstrip()
    if not code_part.strip().endswith(":"):
        return None
    keyword = "async with" if isinstance(block, ast.AsyncWith) else "with"
    location = Location(file=filename, line=block.lineno, column=block.col_offset, end_line=block.lineno,
                        end_column=len(code_part), source=line.strip())
    return f"{keyword} {', '.join(parts)}:", location


def _carries_grad(value) -> bool | None:
    """Whether a runtime value can carry gradients (tensor requiring grad, trainable module)."""
    if isinstance(value, torch.Tensor):
        return value.requires_grad
    if isinstance(value, torch.nn.Module):
        try:
            return any(p.requires_grad for p in value.parameters())
        except Exception:
            return None
    if isinstance(value, torch.distributions.Distribution):
        return distribution_carries_grad(value)
    if isinstance(value, (list, tuple)) and value and len(value) < 1000:
        flags = [_carries_grad(v) for v in value]
        return any(f for f in flags)
    if isinstance(value, dict) and len(value) < 1000:
        return any(_carries_grad(v) for v in value.values())
    return None


def _statement_is_current(scope: Scope, statement: ast.stmt, name: str, use_line: int) -> bool:
    """The local's value now is the one this statement bound (no later assignment ran)."""
    for other, names, _value in scope.assignments:
        if name in names and statement.lineno < other.lineno < use_line:
            return False
    return True


def find_cut(filename: str, use_line: int, names: list[str], frame_locals: dict | None,
             target: torch.Tensor | None = None, max_steps: int = 200,
             target_made_graph: bool = False) -> Cut | None:
    """Follow `names` (read at `use_line`) back through their assignments to the line that cut.

    With `frame_locals` (the live variables of that frame), a statement is the cut when
    one of its inputs carries gradients and its result does not; without them (or when
    looking for one `target` that gets no gradient while the loss has some), a statement
    with an explicit cutting construct is reported, or a function the statement calls that
    cuts the argument computed from `target` (`f(model(x))`, f returning `p.clone().detach()`).
    `target_made_graph`: the module holding `target` also ran with gradients on (its result
    had a graph), so a `torch.no_grad()` block that ran it (sampling, evaluation) is not the cut.
    """
    scope = Scope(filename, use_line)
    if scope.tree is None:
        return None
    work = [(name, use_line) for name in names]
    seen: set[tuple[str, int]] = set()
    steps = 0
    fallback: Cut | None = None  # an explicit construct whose inputs could not be judged
    while work and steps < max_steps:
        steps += 1
        name, line = work.pop(0)
        found = scope.latest_assignment(name, line)
        if found is None:
            continue
        statement, value = found
        if (name, statement.lineno) in seen:
            continue
        seen.add((name, statement.lineno))
        inputs = [n for n in loaded_names(value) if n != name or isinstance(statement, ast.AugAssign)]
        marks = cut_marks(value, filename)
        if not marks and name in loaded_names(value) and not any(
                isinstance((frame_locals or {}).get(n), torch.Tensor) or frame_locals is None for n in inputs):
            # `coords = 2.0 * coords.float() / (bins - 1) - 1.0`: the name's only tensor input is its
            # own earlier value; the cut lies where that one was made.
            inputs = inputs + [name]
        context = _no_grad_context(statement, scope.parents, filename)
        if context is not None:
            marks.insert(0, CutMark("no_grad", statement,
                                    segment(filename, _grad_off_item(context, filename).context_expr),
                                    context))
        current = frame_locals is not None and _statement_is_current(scope, statement, name, use_line)
        result = frame_locals.get(name) if current else None
        if target is not None:
            # Looking for the cut in front of one tensor: the loss itself has a gradient.
            if target_made_graph:
                marks = [mark for mark in marks if mark.kind != "no_grad"]
            if marks and _mark_touches(marks, frame_locals, target):
                return Cut(statement, marks[0], filename, name, "the cut expression computes from it")
            inside = _called_function_cut(value, frame_locals, target)
            if inside is not None:
                inside.called_at = (filename, statement, inside.called_at[2])
                return inside
            work.extend((n, statement.lineno) for n in inputs)
            continue
        if current and isinstance(result, torch.Tensor) and result.requires_grad:
            continue  # this input is fine; the cut is elsewhere
        if frame_locals is not None:
            input_flags = {n: _carries_grad(frame_locals.get(n)) for n in inputs if n in frame_locals}
            carriers = [n for n, flag in input_flags.items() if flag]
            integer = next((mark for mark in marks if mark.kind == "integer"), None)
            if integer is not None and not current and any(flag and _statement_is_current(scope, statement, n, use_line)
                                                           for n, flag in input_flags.items()):
                # `argmax(scores)` of scores that carry gradients, its value since rebound: an index
                # has no gradient whatever is computed from it afterwards.
                return Cut(statement, integer, filename, name, f"{integer.text} gives indices, which have no gradient",
                           _non_tensor_names(value, frame_locals))
            lost = isinstance(result, torch.Tensor) and not result.requires_grad or (
                marks and not isinstance(result, (torch.Tensor, torch.nn.Module)) and not _carries_grad(result))
            if carriers and current and lost:
                if not marks:
                    # `y = normal.sample()` of a distribution whose parameters require grad: the draw
                    # runs under no_grad, so it is the cut (rsample() draws with gradients).
                    sampled = sample_calls_cutting(value, frame_locals)
                    if sampled:
                        return Cut(statement, CutMark("sample", sampled[0], segment(filename, sampled[0])),
                                   filename, name, f"{', '.join(carriers)} carries gradients; {name} does not",
                                   _non_tensor_names(value, frame_locals))
                    # `logits = sliding_window(scans, model)`: the call's own line cuts nothing; the
                    # cut may be inside the user's function, on what it computes from a carrier.
                    inside = _cut_inside_call(value, frame_locals, carriers) or \
                        _nested_cut(value, frame_locals, carriers)
                    if inside is not None:
                        inside.called_at = (filename, statement, inside.called_at[2])
                        return inside
                mark = marks[0] if marks else CutMark("unknown", None, "")
                if not marks and _frozen_module(frame_locals, inputs):
                    mark = CutMark("unknown", None, "")
                return Cut(statement, mark, filename, name,
                           f"{', '.join(carriers)} carries gradients; {name} does not",
                           _non_tensor_names(value, frame_locals))
            if marks and not carriers and fallback is None and (
                    not current or not _carries_grad(result)) and any(
                    flag is None for flag in input_flags.values()) | (not input_flags):
                fallback = Cut(statement, marks[0], filename, name, "explicit construct",
                               _non_tensor_names(value, frame_locals))
        elif marks:
            return Cut(statement, marks[0], filename, name, "explicit construct")
        work.extend((n, statement.lineno) for n in inputs)
    return fallback


# Calls with no arguments that keep a whole value (`p.clone().detach()`, `p.detach().float()`).
WHOLE_VALUE_METHODS = {"detach", "clone", "contiguous", "float", "double", "cpu"}


def _cut_inside_call(value: ast.AST, frame_locals: dict, carriers: list) -> Cut | None:
    """`_called_function_cut` for each carrier of the statement: a tensor that requires grad, or
    a module's first parameter that does."""
    for name in carriers:
        carrier = frame_locals.get(name)
        if isinstance(carrier, torch.nn.Module):
            carrier = next((p for p in carrier.parameters() if p.requires_grad), None)
        if isinstance(carrier, torch.Tensor):
            inside = _called_function_cut(value, frame_locals, carrier) or \
                _returned_new_tensor_cut(value, frame_locals, carrier)
            if inside is not None:
                return inside
    return None


def _nested_cut(value: ast.AST, frame_locals: dict, carriers: list) -> Cut | None:
    """The statement, in the user's functions that `value` calls (several calls down), that takes a
    value computed from the carriers out of the graph as a whole (analysis/nested_cuts.py)."""
    try:
        found = find_nested_cut(value, frame_locals, set(carriers))
    except Exception:
        return None
    if found is None:
        return None
    mark = CutMark(found.kind, found.node, found.text)
    via = " -> ".join(found.chain)
    if found.kind == "round_trip":
        note = (f"{via}: the values leave torch at line {found.statement.lineno} (`{found.text}`) and come back "
                f"at line {found.back.lineno} as a new tensor with no grad history")
    else:
        note = f"{via}: the graph is cut at line {found.statement.lineno} (`{found.text}`)"
    names = _bound_names(found.statement) if isinstance(found.statement, (ast.Assign, ast.AugAssign)) else set()
    return Cut(found.statement, mark, found.filename, next(iter(sorted(names)), None),
               f"{via} takes a value computed from {', '.join(carriers)} out of the graph",
               called_at=(None, None, note),
               change=(found.replacement, found.end_line) if found.replacement is not None else None)


def _user_calls_given(value: ast.AST, frame_locals: dict, target: torch.Tensor):
    """(call, the function's code, its def, (parameter, argument) pairs, the names of the parameters
    given something computed from `target`) for each call in `value` of a function of the user's
    files bound in `frame_locals`."""
    for call in (node for node in ast.walk(value) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        function = frame_locals.get(call.func.id)
        code = getattr(function, "__code__", None)
        if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
            continue
        definition = function_definition(code)
        if definition is None:
            continue
        positional = [argument.arg for argument in definition.args.posonlyargs + definition.args.args]
        given = [(positional[index], argument) for index, argument in enumerate(call.args)
                 if index < len(positional) and not isinstance(argument, ast.Starred)]
        given += [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None]
        touched = {parameter for parameter, argument in given
                   if _mark_touches([CutMark("unknown", argument, "")], frame_locals, target)}
        yield call, code, definition, given, touched



def _returned_new_tensor_cut(value: ast.AST, frame_locals: dict, target: torch.Tensor) -> Cut | None:
    """`f(..., model(x), ...)` in `value`: f a function of the user's files whose parameter, at the
    position given something computed from `target`, leaves torch (`p.detach().numpy()`,
    `p.tolist()`, `p.item()`) in an assignment, and whose `return` makes a new tensor
    (`torch.tensor(...)`, `torch.as_tensor`, `torch.from_numpy`) from values computed from what
    left (a loss computed in NumPy): that return is where the result is made without a graph, the
    line to change. The values are NumPy arrays or numbers there, so the help is advice."""
    for call, code, definition, given, touched in _user_calls_given(value, frame_locals, target):
        statements = sorted((node for node in ast.walk(definition) if isinstance(node, (ast.Assign, ast.Return))),
                            key=lambda node: node.lineno)
        left, carriers = None, set()
        for statement in statements:
            if statement.value is None:
                continue
            read = set(loaded_names(statement.value))
            if isinstance(statement, ast.Assign):
                marks = [mark for mark in cut_marks(statement.value, code.co_filename)
                         if mark.kind in ("leave_torch", "detach", "data")]
                if left is None and read & touched and any(mark.kind == "leave_torch" for mark in marks):
                    left = (statement, marks[0])
                    carriers |= set().union(*(stored_names(target_node) for target_node in statement.targets))
                elif left is not None and read & carriers:
                    carriers |= set().union(*(stored_names(target_node) for target_node in statement.targets))
                continue
            if left is None or not read & carriers:
                continue
            made = next((mark for mark in cut_marks(statement.value, code.co_filename) if mark.kind == "new_leaf"
                         and isinstance(mark.node, ast.Call) and mark.node.args
                         and set(loaded_names(mark.node.args[0])) & carriers), None)
            if made is None or not (isinstance(statement.value, ast.Call) and statement.value is made.node):
                continue
            where, leaving = left
            argument = next(argument for p, argument in given if p in loaded_names(where.value))
            return Cut(statement, made, code.co_filename, None,
                       f"{definition.name}() takes its argument out of torch and returns a new tensor",
                       frozenset(loaded_names(made.node.args[0])),
                       called_at=(None, None, f"{definition.name}() is given `{ast.unparse(argument)}` here; its "
                                              f"values leave torch at line {where.lineno} (`{leaving.text}`) and "
                                              f"come back at line {statement.lineno} as a new tensor with no grad "
                                              "history"))
    return None


def _called_function_cut(value: ast.AST, frame_locals: dict | None, target: torch.Tensor) -> Cut | None:
    """`f(..., model(x), ...)` in `value`: f a function of the user's files whose parameter, at
    the position given something computed from `target`, is cut as a whole (`p.detach()`,
    `p.clone().detach()`, `p.data`) in an assignment whose names flow to what f returns."""
    if frame_locals is None:
        return None
    for call, code, definition, given, touched in _user_calls_given(value, frame_locals, target):
        for statement in sorted((node for node in ast.walk(definition) if isinstance(node, ast.Assign)),
                                key=lambda node: node.lineno):
            mark, parameter = _whole_value_cut(statement.value, touched, code.co_filename)
            targets = {name.id for target_node in statement.targets for name in ast.walk(target_node)
                       if isinstance(name, ast.Name) and isinstance(target_node, ast.Name)}
            if mark is not None and targets and flows_to_return(definition, statement, targets,
                                                                 _bound_or_written_names):
                argument = next(argument for p, argument in given if p == parameter)
                return Cut(statement, mark, code.co_filename, next(iter(sorted(targets))),
                           f"{definition.name}() cuts its argument {mark.text!r} from the graph and returns it",
                           called_at=(None, None, f"{definition.name}() is given `{ast.unparse(argument)}` as "
                                                  f"{parameter} here, and returns it cut from the graph"))
    return None


def _whole_value_cut(value: ast.AST, parameters: set, filename: str) -> tuple[CutMark | None, str | None]:
    """`p.detach()`, `p.clone().detach()`, `p.data`, `p.data.clone()` for a name p in `parameters`:
    (the mark of the construct that cuts, p), or (None, None)."""
    cut = None
    node = value
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.args \
                and not node.keywords and node.func.attr in WHOLE_VALUE_METHODS:
            if node.func.attr == "detach" and cut is None:
                cut = CutMark("detach", node, segment(filename, node))
            node = node.func.value
        elif isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load):
            if cut is None:
                cut = CutMark("data", node, segment(filename, node))
            node = node.value
        else:
            break
    if cut is not None and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in parameters:
        # `predictor(window).detach()`: the function's parameter is a model it calls, and what the
        # model returns is cut as a whole.
        return cut, node.func.id
    if cut is None or not (isinstance(node, ast.Name) and node.id in parameters):
        return None, None
    return cut, node.id


def _bound_names(node: ast.Assign | ast.AugAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {target.id for target in targets if isinstance(target, ast.Name)}


def _bound_or_written_names(node: ast.Assign | ast.AugAssign) -> set[str]:
    """The names a step binds, and the tensors it writes into (`out[:, i:j] += window` carries
    `window` into `out`)."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    bound = set()
    for target in targets:
        while isinstance(target, ast.Subscript):
            target = target.value
        if isinstance(target, ast.Name):
            bound.add(target.id)
    return bound


def _frozen_module(frame_locals: dict, inputs: list[str]) -> bool:
    return any(isinstance(frame_locals.get(n), torch.nn.Module) for n in inputs)


def _mark_touches(marks: list[CutMark], frame_locals: dict | None, target: torch.Tensor) -> bool:
    """Whether a cutting construct is applied to something computed from `target`."""
    for mark in marks:
        node = mark.node if mark.kind != "no_grad" else mark.node.value if isinstance(mark.node, ast.Assign) else None
        if node is None:
            continue
        for name in loaded_names(node):
            value = frame_locals.get(name) if frame_locals is not None else None
            if isinstance(value, torch.Tensor) and value is not target and gradient_path(value, target, MAX_NODES):
                return True
            if value is target:
                return True
            if isinstance(value, torch.nn.Module):
                try:
                    if any(p is target for p in value.parameters()):
                        return True
                except Exception:
                    pass
    return False


def find_freezing(filename: str) -> ast.stmt | None:
    """A statement that turns requires_grad off (`p.requires_grad = False`, `requires_grad_(False)`)."""
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad"
                                                for t in node.targets):
            if isinstance(node.value, ast.Constant) and node.value.value is False:
                return node
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and call_name(node.value) == "requires_grad_":
            args = node.value.args
            if args and isinstance(args[0], ast.Constant) and args[0].value is False:
                return node
    return None


# ---- what a cut means and how to fix it ---------------------------------------------------

CUT_EXPLANATIONS = {
    "detach": "`detach()` returns a tensor with no grad history: gradients stop here",
    "data": "`.data` is the tensor without its grad history: gradients stop here",
    "no_grad": "inside `{text}` autograd records nothing: the result has no grad history",
    "new_leaf": "`{text}` copies the values into a new tensor with no grad history",
    "leave_torch": "`{text}` leaves torch (a Python number or NumPy array carries no graph)",
    "integer": "`{text}` has an integer or boolean result, which has no gradient",
    "requires_grad_false": "`{text}` turns gradient tracking off",
    "variable": "`{text}` makes a new tensor without grad history: since PyTorch 0.4, Variable(x) returns x "
                "detached (requires_grad=False)",
    "grad_no_graph": "without create_graph=True, torch.autograd.grad returns gradients with no grad history",
    "functional_no_graph": "without create_graph=True, torch.autograd.functional returns derivatives with no grad "
                           "history: differentiating them again finds no graph",
    "constant_derivative": "this derivative depends on no tensor that requires grad (the term is linear in the input, "
                           "its derivative a constant): even with create_graph=True it has no grad history, and its "
                           "own derivative is zero",
    "sample": "`{text}` draws under torch.no_grad(): the draws carry no gradient to the distribution's parameters",
    "data_write": "a write through `.data` is not recorded: what the written value was computed from gets no "
                  "gradient through it",
    "unknown": "this statement computes from tensors that require grad, but its result does not",
    "round_trip": "`{text}` takes the values out of torch (a NumPy array carries no graph); they come back as a new "
                  "tensor with no grad history",
}


def _moved_out_of_block(filename: str, block: ast.AST, statement: ast.stmt) -> str | None:
    """The `with` block's source with `statement` (one of its own statements) moved to just after
    it, or None where that could change what runs: a later statement of the block reads a name
    the statement binds, or binds a name it reads; or where the statement is not an assignment."""
    if not isinstance(block, ast.With) or statement not in block.body:
        return None
    binds = set().union(*(stored_names(t) for t in getattr(statement, "targets", ())), set())
    reads = set(loaded_names(statement))
    for later in block.body[block.body.index(statement) + 1:]:
        later_binds = set()
        for node in ast.walk(later):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                later_binds.add(node.id)
        if later_binds & reads or set(loaded_names(later)) & binds:
            return None
    if not isinstance(statement, ast.Assign) or not binds:
        return None
    lines = [source_line(filename, n) for n in range(block.lineno, block.end_lineno + 1)]
    first = block.lineno
    moved = lines[statement.lineno - first:statement.end_lineno - first + 1]
    kept = lines[:statement.lineno - first] + lines[statement.end_lineno - first + 1:]
    # Each line relative to the block's indentation (the help's lines are indented as its first).
    moved = [_dedented(line, statement.col_offset) for line in moved]
    kept = [_dedented(line, block.col_offset) for line in kept]
    result = moved if len(block.body) == 1 else kept + moved
    return "\n".join(line.rstrip() for line in result)


def _dedented(line: str, columns: int) -> str:
    return line[columns:] if line[:columns].strip() == "" else line.lstrip()


def _string_test(test: ast.expr) -> tuple[str, str] | None:
    """(the name's text, the string) of `name == "text"` (a name or an attribute chain)."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq) \
            and isinstance(test.left, (ast.Name, ast.Attribute)) and isinstance(test.comparators[0], ast.Constant) \
            and isinstance(test.comparators[0].value, str):
        return ast.unparse(test.left), test.comparators[0].value
    return None


def _spelled_apart(filename: str, block: ast.With) -> tuple[Suggestion, Location] | None:
    """(help, header location) for `with torch.set_grad_enabled(phase == "training"):` that ran with
    gradients off while the statement it holds was backpropagated: the block's function calls
    backward() only inside `if phase == "train":`, so the backward that ran saw phase == "train",
    and the header compares the same name with another string. The header compares with the
    spelling the backward's branch uses (one spelling only; none when the function has several)."""
    from autograd_doctor.analysis.errors.build import line_change
    from autograd_doctor.analysis.errors.context import enclosing_function

    item = _grad_off_item(block, filename).context_expr
    if not (isinstance(item, ast.Call) and call_name(item) == "set_grad_enabled" and len(item.args) == 1):
        return None
    header = _string_test(item.args[0])
    if header is None or item.lineno != item.end_lineno:
        return None
    tree = parse_file(filename)
    function = enclosing_function(tree, block.lineno) if tree is not None else None
    if function is None:
        return None
    spellings, lines = set(), []
    for node in ast.walk(function):
        if not isinstance(node, ast.If):
            continue
        test = _string_test(node.test)
        runs_backward = any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                            and call.func.attr == "backward" for stmt in node.body for call in ast.walk(stmt))
        if runs_backward and test is not None and test[0] == header[0]:
            spellings.add(test[1])
            lines.append(node.lineno)
    if len(spellings) != 1 or header[1] in spellings:
        return None
    other = spellings.pop()
    old, new = ast.unparse(item.args[0]), f"{header[0]} == {other!r}"
    if old not in source_line(filename, block.lineno):
        old, new = old.replace("'", '"'), new.replace("'", '"')
    help = line_change(filename, block.lineno, old, new,
                       f"compare {header[0]} with {other!r}, the value backward() runs for (line {lines[0]}): "
                       f"{header[0]} == {header[1]!r} was false here, so the block ran with gradients off")
    if help is None:
        return None
    return help, help.location


def _stacked_literal(filename: str, call: ast.Call, non_tensors: frozenset) -> str | None:
    """`torch.tensor([...])` of a list written out, as torch.stack: one stack per level of a nested
    list (`[[c, -s], [s, c]]` -> `torch.stack([torch.stack([c, -s]), torch.stack([s, c])])`, which
    torch.stack needs: it takes tensors, not lists); `dtype=` / `device=`, which torch.stack does
    not take, move to `.to(...)` and `requires_grad=` goes. None when an element is a number or a
    name holding no tensor (torch.stack would refuse it), rows differ in length, or another
    keyword is given."""
    suffix = stack_keywords_suffix(call, lambda node: segment(filename, node))
    if suffix is None:
        return None

    def level(node: ast.expr, depth: int) -> str | None:
        if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts or depth > 5 or any(
                isinstance(elt, ast.Starred) for elt in node.elts):
            return None
        if all(isinstance(elt, (ast.List, ast.Tuple)) for elt in node.elts):
            if len({len(elt.elts) for elt in node.elts}) != 1:
                return None
            parts = [level(elt, depth + 1) for elt in node.elts]
            if any(part is None for part in parts):
                return None
        elif any(isinstance(elt, (ast.List, ast.Tuple)) or not [n for n in loaded_names(elt) if n not in non_tensors]
                 for elt in node.elts):
            return None
        else:
            parts = [segment(filename, elt) for elt in node.elts]
        return f"torch.stack([{', '.join(parts)}])"

    stacked = level(call.args[0], 0)
    return stacked + suffix if stacked is not None else None


def cut_suggestions(cut: Cut) -> list[Suggestion]:
    filename, statement, mark = cut.filename, cut.statement, cut.mark
    location = statement_location(filename, statement)
    node = mark.node
    suggestions: list[Suggestion] = []
    spelled = _spelled_apart(filename, mark.context) if mark.kind == "no_grad" and isinstance(
        mark.context, ast.With) else None
    if spelled is not None:
        suggestions.append(spelled[0])
    if mark.kind == "detach" and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        kept = segment(filename, node.func.value)
        replaced = replace_node_text(filename, statement, node, kept)
        message = "remove the detach() so gradients can flow"
        if isinstance(statement, ast.Assign) and statement.value is node and all(
                segment(filename, target) == kept for target in statement.targets):
            message += f" (the line is then `{replaced}`, which does nothing: delete it)"
        suggestions.append(Suggestion(message, replaced, location))
    elif mark.kind == "data" and isinstance(node, ast.Attribute):
        replaced = replace_node_text(filename, statement, node, segment(filename, node.value))
        suggestions.append(Suggestion("use the tensor itself, not `.data`", replaced, location))
    elif mark.kind == "variable" and isinstance(node, ast.Call):
        # The wrapper is a no-op kept from PyTorch < 0.4 code, except that it detaches: the tensor
        # itself has the same values and keeps its graph.
        replaced = replace_node_text(filename, statement, node, segment(filename, node.args[0]))
        suggestions.append(Suggestion(f"use the tensor itself, not `{mark.text}`: the wrapper only detaches it",
                                      replaced, location))
    elif mark.kind == "new_leaf" and isinstance(node, ast.Call) and node.args:
        data = node.args[0]
        if isinstance(data, (ast.List, ast.Tuple)):
            new = _stacked_literal(filename, node, cut.non_tensors)
            if new is not None:
                suggestions.append(Suggestion("build the tensor with torch.stack, which keeps the graph",
                                              replace_node_text(filename, statement, node, new), location))
            else:
                suggestions.append(Suggestion(
                    f"build the tensor from the tensors with torch.stack (one per level of a nested list), which "
                    f"keeps the graph: `{mark.text}` copies the values; a plain number among them must become a "
                    "tensor first (torch.stack takes tensors of one shape)"))
        else:
            inner = data
            # Strip what left the graph: `torch.tensor(y.detach().numpy())` -> `y`.
            while True:
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and not inner.args \
                        and call_name(inner) in LEAVE_TORCH | {"detach", "cpu"}:
                    inner = inner.func.value
                elif isinstance(inner, ast.Attribute) and inner.attr == "data":
                    inner = inner.value
                else:
                    break
            # Only a tensor can replace the copy: a name holding a float or a NumPy array cannot.
            if any(n in cut.non_tensors for n in loaded_names(inner)) or not any(
                    isinstance(n, ast.Name) for n in ast.walk(inner)):
                suggestions.append(Suggestion(
                    f"`{mark.text}` makes a new tensor from values that already left the graph: compute them "
                    "from the tensors with torch ops (no .item(), .tolist(), .numpy() or detach() on the way)"))
            else:
                suggestions.append(Suggestion("use the tensor itself instead of copying its values",
                                              replace_node_text(filename, statement, node, segment(filename, inner)),
                                              location))
    elif mark.kind == "no_grad":
        context = mark.context
        moved = _moved_out_of_block(filename, context, statement)
        message = f"compute this outside the `with {mark.text}:` block (line {context.lineno}) so autograd records it"
        header = _header_without_grad_off(filename, context) if len(context.items) > 1 else None
        if header is not None and len(context.body) == 1:
            # `with torch.autocast(...), torch.no_grad():` around this line alone: only the item that
            # turns gradients off goes; the others (autocast, a timer) still apply to the line.
            replacement, header_location = header
            suggestions.append(Suggestion(f"drop `{mark.text}` from the `with` statement (line {context.lineno}) so "
                                          "autograd records this line; the statement's other context managers stay",
                                          replacement, header_location))
        elif len(context.items) > 1:
            # Moving the line out of the block would also take it out of the other context managers.
            suggestions.append(Suggestion(f"{message}; keep the `with` statement's other context managers "
                                          "around it"))
        elif moved is not None:
            how = "the block dropped (it holds only this line)" if len(context.body) == 1 else \
                "the line moved to just after the block"
            suggestions.append(Suggestion(f"{message}: {how}", moved, statement_location(filename, context)))
        else:
            suggestions.append(Suggestion(message))
    elif mark.kind == "round_trip" and cut.change is not None:
        replacement, end_line = cut.change
        span = replace(location, end_line=end_line, end_column=None)
        suggestions.append(Suggestion(f"drop the round trip through NumPy: compute with the tensors themselves "
                                      f"(`{mark.text}` becomes `{segment(filename, node.args[0])}`) and remove the "
                                      f"conversion back at line {end_line}, so the graph goes on", replacement, span))
    elif mark.kind in ("leave_torch", "round_trip"):
        suggestions.append(Suggestion("keep the computation in torch ops on tensors; use `.item()`, `.tolist()` "
                                      "and `.numpy()` only for logging, after backward()"))
    elif mark.kind == "integer":
        suggestions.append(Suggestion("argmax/comparisons/integer casts have no gradient: compute the loss from "
                                      "the floating-point scores (e.g. cross_entropy on logits, or softmax)"))
    elif mark.kind == "requires_grad_false":
        suggestions.append(Suggestion("remove requires_grad_(False) for tensors that should be trained"))
    elif mark.kind == "sample" and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        receiver = segment(filename, node.func.value)
        replaced = replace_node_text(filename, statement, node.func, f"{receiver}.rsample") if receiver else None
        suggestions.append(Suggestion("draw with rsample(): the same distribution, sampled through the "
                                      "reparameterisation trick, so gradients reach its parameters", replaced,
                                      location if replaced else None))
    elif mark.kind == "data_write":
        attributes = data_attributes(statement)
        # Nested `.data` (`x.data.data`) would overlap: then only the advice.
        nested = any(inner is not outer and inner in ast.walk(outer) for outer in attributes for inner in attributes)
        replaced = None if nested else replace_nodes_text(
            filename, statement, [(attribute, segment(filename, attribute.value)) for attribute in attributes])
        suggestions.append(Suggestion("write through the tensors themselves, not `.data`: autograd records the copy, "
                                      "so gradients reach what the written value was computed from", replaced,
                                      location if replaced else None))
    elif mark.kind in ("grad_no_graph", "functional_no_graph") and isinstance(node, ast.Call):
        keywords = [k for k in node.keywords if k.arg != "create_graph"]
        parts = [segment(filename, a) for a in node.args] + [segment(filename, k) for k in keywords]
        new_call = f"{segment(filename, node.func)}({', '.join(parts + ['create_graph=True'])})"
        suggestions.append(Suggestion(
            "pass create_graph=True, so the gradient is itself differentiable (gradient penalties, "
            "higher-order derivatives)", replace_node_text(filename, statement, node, new_call), location))
    elif mark.kind == "constant_derivative":
        # No change is written: where the zero belongs (skip the term, or differentiate the sum of the
        # terms once) is the program's choice, and both give the same values.
        suggestions.append(Suggestion(
            "nothing was cut: the next derivative of this one is zero. Differentiate the sum of the terms "
            "once (a constant term then drops out of the next derivative), or give zeros where the derivative "
            "has no grad history (`if not first.requires_grad: return torch.zeros_like(x)`, with your names)"))
    else:
        suggestions.append(Suggestion("check the function called here: it returns a result without grad history "
                                      "(a detach(), .data, torch.no_grad() or a copy inside it)"))
    return suggestions


def cut_diagnosis(cut: Cut, severity: str, backward_site: Site | None, title: str | None = None,
                  tensor=None, name: str | None = None, parameter: str | None = None) -> Diagnosis:
    explanation = CUT_EXPLANATIONS[cut.mark.kind].format(text=cut.mark.text)
    primary = statement_location(cut.filename, cut.statement, role="cut", note=explanation)
    if cut.mark.node is not None and cut.mark.kind != "no_grad" and cut.mark.node.lineno == cut.statement.lineno:
        primary.column = cut.mark.node.col_offset
        primary.end_column = cut.mark.node.end_col_offset
        primary.end_line = cut.mark.node.end_lineno
    related = []
    spelled = _spelled_apart(cut.filename, cut.mark.context) if cut.mark.kind == "no_grad" and isinstance(
        cut.mark.context, ast.With) else None
    if spelled is not None:
        # The line to change is the header, whose comparison was false where backward() ran.
        related.append(primary)
        primary = replace(spelled[1], role="cut", note="gradient recording is off in this block: "
                                                      "its comparison was false when it ran")
    elif cut.mark.kind == "no_grad" and cut.mark.context is not None:
        related.append(statement_location(cut.filename, cut.mark.context, role="no_grad",
                                          note="gradient recording is off in this block"))
        related[-1].end_line, related[-1].end_column = related[-1].line, None
    if cut.called_at is not None and cut.called_at[1] is not None:
        caller_file, caller_statement, note = cut.called_at
        related.append(statement_location(caller_file, caller_statement, role="call", note=note))
    backward_loc = location_of(backward_site, role="backward", note="backward() called here")
    if backward_loc is not None:
        related.append(backward_loc)
    notes = []
    if cut.evidence and cut.mark.kind == "unknown":
        notes.append(cut.evidence)
    if title is None and cut.mark.kind == "constant_derivative":
        title = "a derivative that is constant has no grad history: differentiating it again fails"
    diagnosis = Diagnosis(code=codes.GRADIENT_PATH_CUT, title=title or codes.title(codes.GRADIENT_PATH_CUT),
                          severity=severity, primary=primary, related=related,
                          tensor=tensor_info(tensor, name, parameter) if tensor is not None else None,
                          notes=notes, help=cut_suggestions(cut))
    diagnosis.extra.update({"cut": cut.mark.kind, "cut_variable": cut.name})
    return diagnosis


# ---- AD301: backward of something without grad history --------------------------------------



def _upstream_cut_diagnosis(primary, related, notes, helps, loss, name: str, cut_kind: str) -> Diagnosis:
    """AD301 whose cut was found upstream of the loss's lines (`cut_kind` goes to the JSON)."""
    diagnosis = Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT),
                          severity="error", primary=primary, related=related,
                          tensor=tensor_info(loss, name) if loss is not None else None, notes=notes, help=helps)
    diagnosis.extra.update({"cut": cut_kind, "cut_variable": name})
    return diagnosis


def _context_manager_cut_diagnosis(helper: GradOffContextManager, site: Site, loss, name: str) -> Diagnosis:
    """AD301 for a loss computed inside `with helper(...):` whose helper turns gradients off around its
    yield (analysis/grad_off_context_managers.py)."""
    kind = segment(helper.filename, helper.block.items[0].context_expr)
    primary = statement_location(helper.filename, helper.block, role="cut",
                                 note=f"{helper.function}() runs the body of every `with {helper.function}(...):` "
                                      f"under {kind}")
    caller = statement_location(site.filename, helper.caller, role="with",
                                note=f"{name} is computed inside this block: autograd records nothing in it")
    related = [r for r in (caller, location_of(site, role="backward", note="backward() called here")) if r is not None]
    message = (f"drop `with {kind}:` from {helper.function}() if the code run inside it must be trained: the "
               "block's body then runs with gradients on, and gives the same values")
    helps = [block_dropped(helper, message) or Suggestion(message, location=primary)]
    notes = [f"{name} has no grad_fn: {helper.function}() is a context manager that opens {kind} around its yield"]
    return _upstream_cut_diagnosis(primary, related, notes, helps, loss, name, "grad_off_context_manager")


def _enter_switch_cut_diagnosis(entered: GradOffEnter, site: Site, loss, name: str) -> Diagnosis:
    """AD301 for a loss computed inside `with Helper():` whose class turns gradients off in its
    `__enter__` (analysis/grad_off_context_managers.py)."""
    primary = statement_location(entered.filename, entered.switch, role="cut",
                                 note=f"{entered.class_name}.__enter__ turns gradients off for the body of every "
                                      f"`with {entered.class_name}(...):`")
    caller = statement_location(site.filename, entered.caller, role="with",
                                note=f"{name} is computed inside this block: autograd records nothing in it")
    related = [r for r in (caller, location_of(site, role="backward", note="backward() called here")) if r is not None]
    message = (f"delete this line if the code run inside `with {entered.class_name}(...):` must be trained: the "
               "block's body then runs with gradients as its caller has them, and gives the same values")
    helps = [switch_deleted(entered, message) or Suggestion(message, location=primary)]
    notes = [f"{name} has no grad_fn: {entered.class_name} is a context manager whose __enter__ calls "
             "torch.set_grad_enabled(False); its __exit__ turns them back on, so nothing after the block shows it"]
    return _upstream_cut_diagnosis(primary, related, notes, helps, loss, name, "grad_off_enter")


def _off_at_entry_diagnosis(entry: OffAtEntry, site: Site, loss, name: str) -> Diagnosis:
    """AD301 for a function entered with gradients off by its caller (analysis/grad_off_caller.py)."""
    function = entry.function.name
    primary = statement_location(entry.filename, entry.loss_statement, role="cut",
                                 note=f"computed with gradients off: {function}() was entered with them off")
    related = [entry.caller] if entry.caller is not None else []
    related.append(location_of(site, role="backward", note="backward() called here"))
    notes = [entry_note(entry, name)]
    helps = [decorator_help(entry)]
    if entry.callback is not None:
        # The grad-off function calls a callable it was given: its call is the line to change.
        related = [r for r in (entry.caller, primary, *related[1:]) if r is not None]
        primary = callback_call_location(entry.callback)
        helps = [callback_call_help(entry.callback), decorator_help(entry)]
        helps[1].message = "or " + helps[1].message
    return _upstream_cut_diagnosis(primary, [r for r in related if r is not None], notes, helps,
                                   loss, name, "grad_off_at_entry")


def _derivative_off_at_entry_diagnosis(entry: DerivativeOffAtEntry, site: Site, output, name: str) -> Diagnosis:
    """AD301 for a derivative taken inside a function entered with gradients off (grad_off_caller.py)."""
    primary = statement_location(entry.filename, entry.statements[0], role="cut",
                                 note=f"computed with gradients off: {entry.function.name}() was entered with them off")
    related = [entry.caller] if entry.caller is not None else []
    related.append(location_of(site, role="backward", note="the derivative is asked for here"))
    notes = [derivative_entry_note(entry)]
    return _upstream_cut_diagnosis(primary, [r for r in related if r is not None], notes,
                                   [enable_grad_block_help(entry)], output, name, "grad_off_at_entry")


def _gradients_without_graph_diagnosis(recorder, call, args, kwargs) -> Diagnosis | None:
    """AD301 for `torch.autograd.grad(grads, params)` where each output is the `.grad` of one of the
    inputs (a Hessian-vector product, Hutchinson's estimate in SophiaH or AdaHessian): those gradients
    were left by an earlier backward() run without `create_graph=True`, so they have no graph to
    differentiate. The line to change is that backward()."""
    outputs = args[0] if args else kwargs.get("outputs")
    inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
    outputs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs or ())
    inputs = [inputs] if isinstance(inputs, torch.Tensor) else list(inputs or ())
    if not outputs or not inputs or any(output.grad_fn is not None for output in outputs) or not all(
            any(output is getattr(tensor, "grad", None) for tensor in inputs) for output in outputs):
        return None
    earlier = [c for c in recorder.backward_calls if c.seq < call.seq and c.site is not None]
    if not earlier:
        return None
    backward_site = earlier[-1].site
    statement = Scope(backward_site.filename, backward_site.lineno).statement_at(backward_site.lineno)
    backward = backward_call_node(statement) if statement is not None else None
    if backward is None or any(keyword.arg == "create_graph" for keyword in backward.keywords):
        return None
    call_text = segment(backward_site.filename, backward)
    helps = []
    if call_text is not None and call_text.endswith(")"):
        inner = call_text[call_text.index("(", len(segment(backward_site.filename, backward.func) or "")) + 1:-1].strip()
        new_call = call_text[:-1] + (", " if inner else "") + "create_graph=True)"
        replacement = replace_node_text(backward_site.filename, statement, backward, new_call)
        if replacement is not None:
            helps.append(Suggestion("keep the graph of the gradients, so they can be differentiated again: "
                                    "create_graph=True", replacement, statement_location(backward_site.filename, statement)))
    primary = statement_location(backward_site.filename, statement, role="backward",
                                 note="computes the gradients without a graph")
    related = [location_of(call.site, role="differentiated", note="differentiates those gradients again")]
    notes = ["the tensors differentiated are the inputs' .grad, left by this backward(): without create_graph=True "
             "autograd does not record how they were computed, so they have no grad_fn"]
    return Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="error",
                     primary=primary, related=[r for r in related if r is not None], notes=notes, help=helps)


def _no_grad_fn_diagnosis(recorder, error, call, args, kwargs) -> Diagnosis | None:
    site = call.site
    if site is None:
        return None
    second_order = _gradients_without_graph_diagnosis(recorder, call, args, kwargs)
    if second_order is not None:
        return second_order
    switch = switches.switch_in_force()
    frame = live_frame(site)
    scope = Scope(site.filename, site.lineno)
    statement = scope.statement_at(site.lineno) if scope.tree is not None else None
    root = root_expression(statement) if statement is not None else None
    if switch is not None:
        roots = backward_roots(args, kwargs)
        entry = off_at_entry(frame, statement.lineno, loaded_names(root), switch) if root is not None else None
        return switch_diagnosis(switch, site, roots[0] if roots else None, entry)
    if root is None:
        return None
    # A caller's grad-off mode (its with block, its decorator, a library's) is the caller's: the
    # function that computes the loss turns gradients on for itself.
    entry = off_at_entry(frame, statement.lineno, loaded_names(root))
    if entry is not None:
        roots = backward_roots(args, kwargs)
        return _off_at_entry_diagnosis(entry, site, roots[0] if roots else None, segment(site.filename, root))
    derivative = derivative_off_at_entry(frame, statement.lineno, loaded_names(root))
    if derivative is not None:
        roots = backward_roots(args, kwargs)
        return _derivative_off_at_entry_diagnosis(derivative, site, roots[0] if roots else None,
                                                  segment(site.filename, root))
    running = running_grad_off_block(frame) if frame is not None else None
    if running is not None:
        roots = backward_roots(args, kwargs)
        name = segment(site.filename, root)
        primary, notes, helps = running_block_parts(running, name)
        related = [location_of(site, role="backward", note="the gradient is asked for here, inside the block")]
        return _upstream_cut_diagnosis(primary, related, notes, helps, roots[0] if roots else None, name,
                                       "running_block")
    names = loaded_names(root)
    frame_locals = frame_values(frame) if frame is not None else None
    cut = find_cut(site.filename, statement.lineno, names, frame_locals)
    roots = backward_roots(args, kwargs)
    loss = roots[0] if roots else None
    name = segment(site.filename, root)
    # The statement that computed the loss (the cut's), or the backward() call's own.
    computed = cut.statement if cut is not None and cut.statement is not None else statement
    helper = grad_off_context_manager(site.filename, computed.lineno, frame_locals) \
        if cut is None or cut.mark.kind == "unknown" else None
    if helper is not None:
        return _context_manager_cut_diagnosis(helper, site, loss, segment(site.filename, root))
    entered = grad_off_enter(site.filename, computed.lineno, frame_locals) \
        if cut is None or cut.mark.kind == "unknown" else None
    if entered is not None:
        return _enter_switch_cut_diagnosis(entered, site, loss, segment(site.filename, root))
    # A cut found only as an explicit construct whose inputs could not be judged (`.detach()` of
    # what a plain function returned) is weak: a grad-off block that ran in this run, in a function
    # that another of the loss's statements calls, explains the loss's missing history instead, and
    # the construct (on the other statement) is not on the cut path.
    weak = cut is not None and cut.evidence == "explicit construct"
    if cut is None or cut.mark.kind == "unknown" or weak:
        called = find_called_cut(site.filename, statement, names, frame_locals)
        if called is not None and weak and (cut.filename != site.filename or called.call is cut.statement
                                            or called.call.lineno == cut.statement.lineno):
            called = None
        if called is not None:
            primary, related, notes, helps = called_cut_parts(called, site.filename, name)
            related.append(location_of(site, role="backward", note="backward() called here"))
            return _upstream_cut_diagnosis(primary, related, notes, helps, loss, name, "no_grad")
    if cut is not None and cut.mark.kind == "unknown":
        checkpointed = find_reentrant_checkpoint(cut.statement, frame_locals)
        if checkpointed is not None:
            primary, notes, helps = reentrant_checkpoint_parts(checkpointed, name)
            related = [statement_location(site.filename, cut.statement, role="called from",
                                          note=f"{checkpointed.module} carries gradients; the result does not"),
                       location_of(site, role="backward", note="backward() called here")]
            return _upstream_cut_diagnosis(primary, related, notes, helps, loss, name, "reentrant_checkpoint")
    if cut is not None and cut.mark.kind == "unknown":
        constant = _constant_loss_diagnosis(cut, frame_locals, site, loss, name)
        if constant is not None:
            return constant
        sampled = _sample_cut_diagnosis(cut, frame_locals, site, loss, name)
        if sampled is not None:
            return sampled
        written = _data_write_cut_diagnosis(cut, frame_locals, site, loss, name)
        if written is not None:
            return written
        frozen = frozen_when_called(cut.filename, cut.statement, frame_locals, statement.lineno) \
            if cut.filename == site.filename else None
        if frozen is not None:
            primary, related, notes, helps = frozen_when_called_parts(frozen, name)
            related.append(location_of(site, role="backward", note="backward() called here"))
            return _upstream_cut_diagnosis(primary, related, notes, helps, loss, name, "frozen_when_called")
    if cut is None or cut.mark.kind == "unknown" and not cut.evidence:
        freezing = find_freezing(site.filename)
        if freezing is not None and (cut is None or _frozen_module(frame_locals or {}, loaded_names(cut.statement))):
            cut = Cut(freezing, CutMark("requires_grad_false", freezing, segment(site.filename, freezing)),
                      site.filename, None, "parameters frozen")
    if cut is None:
        read = gradient_read_input(site.filename, scope.tree, statement, names, frame_locals)
        if read is not None:
            primary = statement_location(site.filename, read.assignment, role="created",
                                         note=f"{read.name} is made here without requires_grad=True")
            related = [location_of(site, role="backward", note=f"{name} has no grad_fn")]
            notes = [f"{name} does not require grad: nothing it is computed from requires grad, and the program "
                     f"reads {read.name}.grad after backward() (line {read.grad_read_line}), so {read.name} is "
                     f"meant to require grad"]
            return _upstream_cut_diagnosis(primary, related, notes, [read.help], loss, name, "input_without_grad")
        backward_loc = location_of(site, role="backward", note=f"{name} has no grad_fn")
        return Diagnosis(
            code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="error",
            primary=backward_loc, tensor=tensor_info(loss, name) if loss is not None else None,
            notes=[f"{name} does not require grad: nothing it was computed from requires grad, or the path was "
                   "cut by detach(), .data, torch.no_grad(), torch.tensor(...) or a NumPy round trip"],
            help=[Suggestion("make sure the parameters require grad and that the loss is computed from them with "
                             "torch ops under grad mode")])
    if cut.mark.kind == "unknown":
        derivative = _derivative_with_graph(cut.statement)
        if derivative is not None:
            # torch.autograd.grad(..., create_graph=True), nothing around it that cuts, and still no grad
            # history: the derivative depends on no tensor that requires grad (a term linear in the input)
            cut = replace(cut, mark=CutMark("constant_derivative", derivative, segment(cut.filename, derivative)))
    diagnosis = cut_diagnosis(cut, "error", site, tensor=loss, name=name)
    if cut.mark.kind == "requires_grad_false":
        diagnosis.primary.note = "requires_grad is turned off here, so nothing the loss depends on requires grad"
        diagnosis.help = [Suggestion("leave at least the parameters you train with requires_grad=True")]
        both = _branches_both_freezing(cut.filename, cut.statement)
        if both is not None:
            _both_branches_diagnosis(diagnosis, cut.filename, both)
    if cut.mark.kind == "constant_derivative":
        diagnosis.notes.insert(0, f"{name} has no grad_fn: it is computed from the derivative of line "
                                  f"{cut.statement.lineno}, which is a constant")
    else:
        diagnosis.notes.insert(0, f"{name} has no grad_fn: the path from the parameters to it was cut at line "
                                  f"{cut.statement.lineno}")
    return diagnosis


def _freezes(statement: ast.stmt) -> str | None:
    """The target of `X.requires_grad = False` (its source text), else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
            isinstance(statement.targets[0], ast.Attribute) and statement.targets[0].attr == "requires_grad" and \
            isinstance(statement.value, ast.Constant) and statement.value.value is False:
        return ast.unparse(statement.targets[0])
    return None


def _branches_both_freezing(filename: str, freezing: ast.stmt) -> tuple[ast.If, ast.stmt] | None:
    """(the `if`, the `else` branch's statement) when the freezing statement is one branch of an
    `if`/`else` inside a loop whose two branches are each a single `X.requires_grad = False` of the
    same target: the condition (`name in ["encoder"]`) picks a group of parameters, yet both
    branches freeze, so every parameter is frozen and the condition decides nothing."""
    tree = parse_file(filename)
    if tree is None or _freezes(freezing) is None:
        return None
    for loop in ast.walk(tree):
        if not isinstance(loop, (ast.For, ast.While)):
            continue
        for node in ast.walk(loop):
            if not isinstance(node, ast.If) or len(node.body) != 1 or len(node.orelse) != 1:
                continue
            if freezing not in (node.body[0], node.orelse[0]) and \
                    freezing.lineno not in (node.body[0].lineno, node.orelse[0].lineno):
                continue
            first, second = _freezes(node.body[0]), _freezes(node.orelse[0])
            if first is not None and first == second:
                return node, node.orelse[0]
    return None


def _both_branches_diagnosis(diagnosis: Diagnosis, filename: str, found: tuple[ast.If, ast.stmt]) -> None:
    """Name the `else` branch's freezing and offer it `= True` (the group the condition picks
    stays frozen, the rest trains), as code."""
    branch, other = found
    target = _freezes(other)
    condition = ast.unparse(branch.test)
    diagnosis.primary = statement_location(filename, other, role="else",
                                           note=f"the else branch freezes {target} too: both branches of "
                                                f"`if {condition}` turn requires_grad off")
    diagnosis.related.insert(0, statement_location(filename, branch.body[0], role="if",
                                                   note=f"the branch for `{condition}` freezes"))
    diagnosis.notes.append(f"both branches of `if {condition}` set {target} = False, so every parameter the "
                           "loop visits is frozen and the condition decides nothing")
    diagnosis.help = [Suggestion(f"freeze only what `{condition}` picks: the else branch keeps the other "
                                 "parameters trainable", replacement=f"{target} = True",
                                 location=diagnosis.primary),
                      Suggestion("or, if everything is meant to stay frozen, drop the condition; then the "
                                 "loss has nothing to train")]


def _derivative_with_graph(statement: ast.stmt) -> ast.Call | None:
    """The `torch.autograd.grad(..., create_graph=True)` call in ``statement``, if any."""
    return next((node for node in ast.walk(statement) if isinstance(node, ast.Call) and call_name(node) == "grad"
                 and _is_autograd_grad(node) and _creates_graph(node)), None)


ZERO_FACTORIES = ("zeros", "zeros_like", "new_zeros")


def _zero_constant(call: ast.AST) -> bool:
    """`torch.tensor(0.)`, `torch.zeros(...)`, `x.new_zeros(...)`, `torch.zeros_like(x)`: a zero made
    without a graph (no requires_grad= given)."""
    if not isinstance(call, ast.Call) or any(k.arg == "requires_grad" for k in call.keywords):
        return False
    name = call_name(call)
    if name in ZERO_FACTORIES:
        return True
    return name in ("tensor", "new_tensor") and len(call.args) == 1 and isinstance(call.args[0], ast.Constant) \
        and isinstance(call.args[0].value, (int, float)) and call.args[0].value == 0


def _function_called(value: ast.AST, frame_locals: dict):
    """(code, definition) of the user's function or method that `value` calls (`loss_fn(...)`,
    `head.loss(...)`), or None."""
    for call in (node for node in ast.walk(value) if isinstance(node, ast.Call)):
        target = None
        if isinstance(call.func, ast.Name):
            target = frame_locals.get(call.func.id)
        elif isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            owner = frame_locals.get(call.func.value.id)
            target = getattr(owner, call.func.attr, None) if owner is not None else None
        code = getattr(getattr(target, "__func__", target), "__code__", None)
        if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
            continue
        definition = function_definition(code)
        if definition is not None:
            return code, definition
    return None


def _constant_return(definition: ast.AST):
    """(return statement, [statements that made its zero constants]) for the one `return` of the
    function whose value is made only of zeros created without a graph in the statements just
    before it (`loss_a = torch.tensor(0.0)`, `return loss_a + loss_b`), or None."""
    found = []
    for block in (node for node in ast.walk(definition) if hasattr(node, "body") and isinstance(node.body, list)):
        for index, statement in enumerate(block.body):
            if not isinstance(statement, ast.Return) or statement.value is None:
                continue
            names = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}
            calls = [n for n in ast.walk(statement.value) if isinstance(n, ast.Call)]
            makers = []
            for earlier in reversed(block.body[:index]):
                if isinstance(earlier, ast.Assign) and len(earlier.targets) == 1 and \
                        isinstance(earlier.targets[0], ast.Name) and earlier.targets[0].id in names and \
                        _zero_constant(earlier.value):
                    makers.insert(0, earlier)
                else:
                    break
            if makers and {m.targets[0].id for m in makers} == names and not calls:
                found.append((statement, makers))
    return found[0] if len(found) == 1 else None


def _constant_loss_diagnosis(cut: Cut, frame_locals: dict | None, site: Site, loss, name: str) -> Diagnosis | None:
    """AD301 for a loss that is a constant zero: the function the cut statement calls returned, in one
    branch, zeros made without a graph (`loss_cls = torch.tensor(0.0)` for a batch with no positive
    anchor), so backward() has nothing to run. Such a batch is meant to train nothing: the help makes
    those constants leaves that require grad (requires_grad=True), with which backward() runs and
    leaves the parameters without a gradient, so that the optimizer does not move them."""
    if frame_locals is None or not isinstance(loss, torch.Tensor) or loss.numel() != 1 or loss.requires_grad:
        return None
    try:
        if float(loss.detach()) != 0.0:
            return None
    except Exception:
        return None
    found = _function_called(cut.statement.value if hasattr(cut.statement, "value") else cut.statement, frame_locals)
    constant = _constant_return(found[1]) if found is not None else None
    if constant is None:
        return None
    code, definition = found
    filename = code.co_filename
    returned, makers = constant
    lines = [m.lineno for m in makers]
    contiguous = lines == list(range(makers[0].lineno, makers[0].lineno + len(makers))) and \
        all(m.end_lineno == m.lineno and m.col_offset == makers[0].col_offset for m in makers)
    changed = []
    for maker in makers:
        call = maker.value
        parts = [segment(filename, a) for a in call.args] + [segment(filename, k) for k in call.keywords]
        text = None if None in parts else replace_node_text(
            filename, maker, call, f"{segment(filename, call.func)}({', '.join(parts + ['requires_grad=True'])})")
        changed.append(text)
    first = statement_location(filename, makers[0], role="made",
                               note=f"a zero made without a graph: {definition.name}() returns it as the loss "
                                    f"(line {returned.lineno})")
    message = ("make these zeros leaves that require grad (requires_grad=True): for such a batch backward() then "
               "runs and gives the parameters no gradient, so the optimizer leaves them as they are")
    help_ = Suggestion(message)
    if contiguous and None not in changed:
        span = Location(**{**first.__dict__, "end_line": makers[-1].end_lineno,
                           "end_column": makers[-1].end_col_offset, "role": "", "note": ""})
        help_ = Suggestion(message, "\n".join(changed), span)
    related = [statement_location(site.filename, cut.statement, role="called from",
                                  note=f"{definition.name}() returned a constant here"),
               location_of(site, role="backward", note=f"{name} is a constant: no graph to run")]
    notes = [f"{name} has no grad_fn: {definition.name}() returned `{segment(filename, returned.value)}`, zeros "
             "created without a graph (a batch without anything to learn from), so nothing the loss depends on "
             "requires grad",
             "a loss made of parameters' outputs times zero (`pred.sum() * 0`) would give them zero gradients instead "
             "of none: with momentum or weight decay the optimizer would still move them"]
    return Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="error",
                     primary=first, related=[r for r in related if r is not None],
                     tensor=tensor_info(loss, name), notes=notes, help=[help_])


def _sample_cut_diagnosis(cut: Cut, frame_locals: dict | None, site: Site, loss, name: str) -> Diagnosis | None:
    """AD301 at a distribution's `sample()` inside the module that the cut statement calls (see
    analysis/distribution_samples.py); None when there is none."""
    sampled = sample_in_called_module(cut.statement, frame_locals)
    if sampled is None:
        return None
    filename, calls, module_class = sampled
    statement, call = calls[0]
    # A draw written over several lines is shown on one.
    text = " ".join((segment(filename, call) or "").split())
    diagnosis = _cut_in_called_module_diagnosis(cut, CutMark("sample", call, text), filename,
                                                statement, module_class, "draws the sample", site, loss, name)
    if diagnosis.help and diagnosis.help[0].replacement:
        # Every draw of the class runs without gradient (a weight's and a bias's): each changes the
        # same way, or the parameters of the others still get none.
        for other_statement, other_call in calls[1:]:
            receiver = segment(filename, other_call.func.value)
            replaced = replace_node_text(filename, other_statement, other_call.func, f"{receiver}.rsample") \
                if receiver else None
            if replaced is not None:
                diagnosis.help.append(Suggestion(f"{NEXT_LINE} ({codes.GRADIENT_PATH_CUT})", replaced,
                                                 statement_location(filename, other_statement)))
    return diagnosis


def _data_write_cut_diagnosis(cut: Cut, frame_locals: dict | None, site: Site, loss, name: str) -> Diagnosis | None:
    """AD301 at a write through `.data` inside the module that the cut statement calls (see
    analysis/data_writes.py); None when there is none."""
    written = data_write_in_called_module(cut.statement, frame_locals)
    if written is None:
        return None
    filename, statement, module_class = written
    return _cut_in_called_module_diagnosis(cut, CutMark("data_write", statement, segment(filename, statement)),
                                           filename, statement, module_class, "writes through .data", site, loss,
                                           name)


def _cut_in_called_module_diagnosis(cut: Cut, mark: CutMark, filename: str, statement: ast.stmt, module_class: str,
                                    what: str, site: Site, loss, name: str) -> Diagnosis:
    """AD301 at `mark` in `statement` of the forward of the module that the cut statement calls,
    which is shown as where it was called from."""
    inner = Cut(statement, mark, filename, None, mark.kind)
    diagnosis = cut_diagnosis(inner, "error", site, tensor=loss, name=name)
    note = f"{module_class}.forward {what}"
    diagnosis.related.insert(0, statement_location(cut.filename, cut.statement, role="called from",
                                                   note=f"{cut.evidence}: {note}" if cut.evidence else note))
    diagnosis.notes.insert(0, f"{name} has no grad_fn: the path from the parameters to it was cut inside "
                              f"{module_class}.forward, called on line {cut.statement.lineno}")
    return diagnosis


def backward_error_diagnosis(recorder, error: BaseException, call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD301 / AD302 for a backward() that raised; None for other errors."""
    message = str(error)
    if "does not require grad and does not have a grad_fn" in message:
        if _inside_torch_func_transform():
            return None  # the path is not cut: the tape cannot see through vmap/grad (the catalogue's AD141)
        cached = _cached_transform_cut(call, args, kwargs)
        return cached or _no_grad_fn_diagnosis(recorder, error, call, args, kwargs)
    if "backward through the graph a second time" in message:
        from autograd_doctor.analysis.backward_twice import backward_twice_diagnosis

        return backward_twice_diagnosis(recorder, error, call, args, kwargs)
    return None


def _cached_transform_cut(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """torch.autograd.grad with respect to a tensor a caching torch.distributions transform
    produced (analysis/cached_transforms.py)."""
    from autograd_doctor.analysis.cached_transforms import cached_transform_diagnosis

    inputs = kwargs.get("inputs", args[1] if len(args) > 1 else None)
    if inputs is None:
        return None
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    return cached_transform_diagnosis(inputs, user_frames(),
                                      location_of(call.site, role="grad",
                                                  note="the gradient with respect to that tensor"))


def _inside_torch_func_transform() -> bool:
    peek = getattr(getattr(torch._C, "_functorch", None), "peek_interpreter_stack", None)
    return peek is not None and peek() is not None


# ---- after a successful backward: parameters left without a gradient -------------------------


def on_start(recorder) -> None:
    """When the doctor starts: track module forwards from the first forward pass, so that
    the first backward() already knows which modules ran (an auxiliary head the forward
    never calls got no gradient because it took no part, not because of a cut)."""
    if is_active(recorder) and TRACKER_KEY not in recorder.state:
        recorder.state[TRACKER_KEY] = ModuleForwardTracker(recorder, from_start=True)


def on_backward_start(recorder, call, func, args: tuple, kwargs: dict) -> None:
    """Before a backward(): track module forwards for the first few calls."""
    state = recorder.state
    count = state.get("gradient_path_count", 0)
    state["gradient_path_count"] = count + 1
    if count < CHECKED_BACKWARDS and TRACKER_KEY not in state:
        if is_active(recorder):
            state[TRACKER_KEY] = ModuleForwardTracker(recorder)


def _modules_in_frames(frames) -> list[tuple[str, torch.nn.Module]]:
    return modules_in(frames)


def after_backward(recorder, call, func, args: tuple, kwargs: dict, result) -> list[Diagnosis]:
    """Parameters that took part in the forward pass but got no gradient (AD301 warnings).

    Only the first `CHECKED_BACKWARDS` backward calls are examined; a parameter is
    reported when its module's forward ran and it was not reached by any examined
    backward, or at once when the source shows where its path was cut.
    """
    try:
        return _examine_backward(recorder, call, func, args, kwargs)
    finally:
        if recorder.state.get("gradient_path_count", 0) >= CHECKED_BACKWARDS:
            # The last examined backward() has been read: what the tracker would record from
            # now on is never looked at, and its global hooks cost every module call.
            _stop_tracker(recorder.state)


def _stop_tracker(state: dict) -> None:
    tracker = state.get(TRACKER_KEY)
    if tracker is not None:
        tracker.stop()
        state[TRACKER_KEY] = None


def _examine_backward(recorder, call, func, args: tuple, kwargs: dict) -> list[Diagnosis]:
    state = recorder.state
    count = state.get("gradient_path_count", 0)
    tracker = state.get(TRACKER_KEY)
    if count > CHECKED_BACKWARDS:
        return []
    if func is AUTOGRAD_GRAD:
        if kwargs.get("create_graph") or (len(args) > 4 and args[4]):
            # A loss built from derivatives (a physics-informed residual, a gradient penalty)
            # need not depend on every parameter that ran: a last layer's bias drops out of
            # du/dx. Without a cut found in the source, a missing gradient is then no evidence.
            state["gradient_path_higher_order"] = True
        return []
    if kwargs.get("inputs") is not None:
        return []
    if func is TENSOR_BACKWARD and len(args) > 4 and args[4] is not None:
        return []
    roots = backward_roots(args, kwargs)
    if not roots:
        return []
    walked, _finished = graph_nodes([t.grad_fn for t in roots if t.grad_fn is not None])
    leaves = [node.variable for node in walked if getattr(node, "variable", None) is not None]
    reached = {id(leaf) for leaf in leaves}  # this backward's graph holds them: ids are enough
    # Kept across backward() calls, by identity: a parameter freed since (a model made anew) must
    # not lend "reached" to a later one at its address.
    ever_reached: IdentitySet = state.setdefault("gradient_path_reached", IdentitySet())
    ever_reached.update(leaves)
    ran = tracker.ran if tracker is not None and (count > 1 or tracker.from_start) else None
    results = (tracker.output_nodes, list(tracker.consumers)) if tracker is not None else (IdentityMap(), [])
    own_backward_results = tracker.own_backward_results if tracker is not None else []
    if tracker is not None:
        tracker.own_backward_results = []
        tracker.ran = IdentitySet()
        tracker.output_nodes = IdentityMap()
        tracker.output_storages.clear()
        tracker.consumers.clear()
    loss_nodes: list = []  # the ids of the loss graph's nodes, walked when first needed
    warned: IdentitySet = state.setdefault("gradient_path_warned", IdentitySet())
    frames = user_frames()
    site = call.site
    frame = live_frame(site)
    diagnoses = []
    if own_backward_results:
        # a module's own backward(self, grad) method, which this backward() went around (AD223)
        walked_keys = {node_key(node) for node in walked}
        diagnoses += never_called_diagnoses(state, own_backward_results, walked_keys)
    for model_name, model in _modules_in_frames(frames):
        try:
            parameters = list(model.named_parameters())
        except Exception:
            continue
        if not any(id(p) in reached for _, p in parameters):
            # This model did not take part in this backward; it is reported only when the
            # source cuts it off the loss while an optimizer trains it (below).
            detached = _detached_model_diagnosis(state, model_name, model, parameters, ran, results, count,
                                                 reached, ever_reached, warned, frame, site)
            if detached is not None:
                diagnoses.append(detached)
            continue
        for module_name, module in model.named_modules():
            unreached = []
            forward_cut = None  # where the module's forward read the first unreached parameter outside the graph
            for param_name, parameter in module.named_parameters(recurse=False):
                if not parameter.requires_grad or grad_of(parameter) is not None or parameter in ever_reached:
                    continue
                if parameter in warned:
                    continue
                if ran is not None and module in ran and tracker.unused_by_its_module(parameter):
                    # Its module's forward left it out of the graph: kept for another configuration
                    # (nothing cut it), unless the forward read its values outside the graph.
                    read_outside = _forward_cut(module, param_name)
                    if read_outside is None:
                        continue
                    forward_cut = forward_cut or read_outside
                unreached.append((".".join(filter(None, (model_name, module_name, param_name))), parameter))
            if not unreached:
                continue
            cut = _source_cut(frame, site, unreached[0][1], target_made_graph=bool(results[0].get(module)))
            cut = cut or forward_cut
            if cut is None and ran is not None and module in ran:
                cut = _owner_method_cut(state, model, module_name, unreached, reached)
            # a module known not to have run since the last backward (an auxiliary head
            # the forward never calls) got no gradient because it took no part: even a
            # cut found in the source is not its cause
            # without a cut in the source, only a later backward() can tell that no examined
            # backward reaches it (two heads, one backward each): never the first
            if (cut is None and (ran is None or count <= 1 or state.get("gradient_path_higher_order"))) \
                    or (ran is not None and module not in ran):
                continue
            if cut is None and not _result_reached_loss(module, results, roots, loss_nodes):
                # Its result never reached the loss, not even through a detached copy: it was
                # thrown away (a probabilistic program's trace of a guide), nothing was cut.
                continue
            if cut is not None:
                training = _optimizer_training(state, unreached, reached)
                if training == OTHERS_TRAINED:
                    # The optimizers step what this loss reached and hold none of these: a target
                    # network or a teacher evaluated under no_grad, cut off on purpose.
                    continue
                if training != TRAINED and _new_leaf_on_purpose(cut):
                    # `x.detach().requires_grad_()` makes a leaf to differentiate with respect to
                    # (a saliency map, an attribution, an adversarial input): the cut is the point,
                    # and no optimizer says the parameters behind it were meant to learn from it.
                    continue
            warned.update(p for _, p in unreached)
            diagnoses.append(_unreached_parameter_diagnosis([path for path, _ in unreached], unreached[0][1],
                                                            module, cut, site, ran is not None))
    return diagnoses


# Calls that keep a detached tensor a fresh tensor of the same values on the way to requires_grad_().
_SAME_VALUES_CALLS = frozenset({"clone", "contiguous", "float", "double", "half", "to", "cpu", "cuda"})


def _new_leaf_on_purpose(cut: Cut) -> bool:
    """Whether the cut is a `detach()` whose result is made to require grad: chained
    (`x.detach().requires_grad_()`, through `.clone()` and the like) or on the name the statement
    binds, later in the same function (`emb = x.detach()`, then `emb.requires_grad_(True)` or
    `emb.requires_grad = True`)."""
    if cut.mark.kind != "detach" or cut.mark.node is None:
        return False
    for node in ast.walk(cut.statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "requires_grad_" and _asks_for_grad(node):
            receiver = node.func.value
            while receiver is not cut.mark.node and isinstance(receiver, ast.Call) \
                    and isinstance(receiver.func, ast.Attribute) and receiver.func.attr in _SAME_VALUES_CALLS:
                receiver = receiver.func.value
            if receiver is cut.mark.node:
                return True
    if cut.name is None:
        return False
    tree = parse_file(cut.filename)
    if tree is None:
        return False
    from autograd_doctor.analysis.errors.context import enclosing_function

    for node in ast.walk(enclosing_function(tree, cut.statement.lineno)):
        if getattr(node, "lineno", 0) <= cut.statement.lineno:
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == cut.name and _asks_for_grad(node):
            return True
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True \
                and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)
                        and t.value.id == cut.name for t in node.targets):
            return True
    return False


def _asks_for_grad(call: ast.Call) -> bool:
    """`requires_grad_()` or `requires_grad_(True)` (not `requires_grad_(False)` or a variable)."""
    arguments = list(call.args) + [keyword.value for keyword in call.keywords]
    return not arguments or (isinstance(arguments[0], ast.Constant) and arguments[0].value is True)


# What the live optimizers say of parameters a cut kept from the loss (see _optimizer_training).
TRAINED, OTHERS_TRAINED, NO_OPTIMIZER, UNKNOWN = "trained", "others trained", "no optimizer", "unknown"


def _optimizer_training(state: dict, unreached: list, reached: set) -> str:
    """TRAINED when a live optimizer holds one of the unreached parameters, OTHERS_TRAINED when
    none does but one holds a parameter this backward reached, NO_OPTIMIZER when neither (updates
    written by hand), UNKNOWN when the scans are spent. The answer is kept for the parameters: the
    same loss runs at every step."""
    judged: IdentityMap = state.setdefault("gradient_path_optimizer_training", IdentityMap())
    parameters = [parameter for _, parameter in unreached]
    known = [judged.get(parameter) for parameter in parameters if parameter in judged]
    if known:
        return TRAINED if TRAINED in known else known[0]
    budget = state.setdefault("gradient_path_optimizer_scans", Budget(scans=2))
    unreached_ids = {id(parameter) for parameter in parameters}
    holding = optimizers_holding_ids(unreached_ids | reached, budget)
    if holding is None:
        return UNKNOWN
    held = {id(p) for optimizer in holding for group in optimizer.param_groups for p in group["params"]}
    answer = TRAINED if held & unreached_ids else OTHERS_TRAINED if held & reached else NO_OPTIMIZER
    for parameter in parameters:
        judged[parameter] = answer
    return answer


def _forward_cut(module, param_name: str) -> Cut | None:
    """Where the module's forward (a function of the user's files) reads the parameter
    `self.<param_name>` outside the graph: `.data` or `.detach()` of it, or of a name the forward
    computed from it (`p = self.prompt.data.unsqueeze(0)`, then `p.data.squeeze(1)` after the first
    is fixed). The first such statement, or None."""
    code = getattr(getattr(type(module), "forward", None), "__code__", None)
    if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
        return None
    definition = function_definition(code)
    if definition is None:
        return None
    derived: set[str] = set()

    def reads_parameter(node: ast.AST) -> bool:
        return any((isinstance(sub, ast.Attribute) and sub.attr == param_name and isinstance(sub.value, ast.Name)
                    and sub.value.id == "self") or (isinstance(sub, ast.Name) and sub.id in derived)
                   for sub in ast.walk(node))

    statements = sorted((node for node in ast.walk(definition)
                         if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr))
                         and node.value is not None), key=lambda node: (node.lineno, node.col_offset))
    for statement in statements:
        for node in ast.walk(statement.value):
            mark = None
            if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load) \
                    and reads_parameter(node.value):
                mark = CutMark("data", node, segment(code.co_filename, node))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach" \
                    and not node.args and reads_parameter(node.func.value):
                mark = CutMark("detach", node, segment(code.co_filename, node))
            if mark is not None:
                names = _bound_names(statement) if isinstance(statement, (ast.Assign, ast.AugAssign)) else set()
                return Cut(statement, mark, code.co_filename, next(iter(sorted(names)), None),
                           f"{type(module).__name__}.forward reads self.{param_name} outside the graph")
        if isinstance(statement, (ast.Assign, ast.AugAssign)) and reads_parameter(statement.value):
            derived |= _bound_names(statement)
    return None


def _owner_method_cut(state: dict, model, module_name: str, unreached: list, reached: set) -> Cut | None:
    """Where a method of the module that owns the submodule `module_name` (a class of the user's
    files) detaches what it computed from the submodule's output, `adj = softmax(self.phi(x) @
    self.theta(x).t()).detach()`: the submodule ran, its parameters got no gradient, and an
    optimizer that holds them also holds parameters this backward() reached, so its step trains the
    rest and never these. A target network or a teacher detached on purpose is in no such
    optimizer. The first such construct, or None."""
    if not module_name:
        return None
    owner_path, _, attribute = module_name.rpartition(".")
    try:
        owner = model.get_submodule(owner_path) if owner_path else model
    except AttributeError:
        return None
    found = _user_class_node(type(owner))
    if found is None:
        return None
    filename, class_node = found
    cut = None
    for method in (n for n in class_node.body if isinstance(n, ast.FunctionDef)):
        cut = _detach_of_attribute(filename, method, attribute, f"{type(owner).__name__}.{method.name}")
        if cut is not None:
            break
    if cut is None:
        return None
    budget = state.setdefault("gradient_path_optimizer_scans", Budget(scans=2))
    holding = optimizers_holding([p for _, p in unreached], budget) or []
    if not any(id(p) in reached for optimizer in holding for group in optimizer.param_groups for p in group["params"]):
        return None
    return cut


def _user_class_node(cls) -> tuple[str, ast.ClassDef] | None:
    """(file, class statement) of a class defined in the user's files, found through its methods'
    code (a program run as `__main__` has no module to look its file up in)."""
    codes_of = [getattr(value, "__code__", None) for value in vars(cls).values()]
    code = next((c for c in codes_of if c is not None), None)
    if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
        return None
    tree = parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__ \
                and node.lineno <= code.co_firstlineno <= node.end_lineno:
            return code.co_filename, node
    return None


def _detach_of_attribute(filename: str, method: ast.FunctionDef, attribute: str, where: str) -> Cut | None:
    """The first statement of `method` that detaches (`.detach()`, `.data`) a value computed from
    `self.<attribute>(...)`, directly or through the names the method bound from it.

    The submodule's own output detached as it is (`self.embedding(tokens).detach()`, or a name
    bound to that call and nothing else) is not counted: that is how a model freezes a part it
    uses as a fixed feature extractor, and nothing shows the program meant to train the part (an
    optimizer over the whole model's parameters holds it either way). A value computed from the
    output (A-GCN's `softmax(self.phi(x) @ self.theta(x).t()).detach()`) is."""
    derived: set[str] = set()
    output_names: set[str] = set()  # names bound to the submodule's output itself

    def is_submodule_call(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attribute \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "self"

    def reads_submodule(node: ast.AST) -> bool:
        return any(is_submodule_call(sub) or (isinstance(sub, ast.Name) and sub.id in derived)
                   for sub in ast.walk(node))

    def is_output_itself(node: ast.AST) -> bool:
        return is_submodule_call(node) or (isinstance(node, ast.Name) and node.id in output_names)

    statements = sorted((node for node in ast.walk(method)
                         if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr))
                         and node.value is not None), key=lambda node: (node.lineno, node.col_offset))
    for statement in statements:
        for node in ast.walk(statement.value):
            mark = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach" \
                    and not node.args and reads_submodule(node.func.value) and not is_output_itself(node.func.value):
                mark = CutMark("detach", node, segment(filename, node))
            elif isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.ctx, ast.Load) \
                    and reads_submodule(node.value) and not is_output_itself(node.value):
                mark = CutMark("data", node, segment(filename, node))
            if mark is not None:
                names = _bound_names(statement) if isinstance(statement, (ast.Assign, ast.AugAssign)) else set()
                return Cut(statement, mark, filename, next(iter(sorted(names)), None),
                           f"{where} detaches what it computes from self.{attribute}")
        if isinstance(statement, (ast.Assign, ast.AugAssign)):
            bound = _bound_names(statement)
            if isinstance(statement, ast.Assign) and is_submodule_call(statement.value):
                output_names |= bound
            else:
                output_names -= bound
            if reads_submodule(statement.value):
                derived |= bound
    return None


def _source_cut(frame, site: Site | None, target: torch.Tensor, target_made_graph: bool = False) -> Cut | None:
    """The construct in the source of the backward() line's loss that cuts `target` off it."""
    if frame is None or site is None:
        return None
    statement = Scope(site.filename, site.lineno).statement_at(site.lineno)
    root = root_expression(statement) if statement is not None else None
    if root is None:
        return None
    try:
        return find_cut(site.filename, statement.lineno, loaded_names(root), frame_values(frame), target=target,
                        target_made_graph=target_made_graph)
    except Exception:
        return None


def _detached_model_diagnosis(state: dict, model_name: str, model, parameters: list, ran, results: tuple,
                              count: int, reached: set, ever_reached: set, warned: set, frame,
                              site: Site | None) -> Diagnosis | None:
    """AD301 for a whole model that ran and that the source cuts off the loss
    (`(encoder(x).detach() * w).sum()`) while the optimizer holding it also holds parameters
    this backward() reached: the step that follows trains the rest and never this model.

    Never at the first backward(): a GAN's generator, an actor, detached in the first loss, is
    reached by the next one. Its own optimizer (a WGAN's generator, trained every fifth step)
    holds nothing the other loss reached; a target network or a teacher, detached on purpose,
    is in no optimizer."""
    if count < 2 or ran is None or model not in ran:
        return None
    trained = [(name, p) for name, p in parameters if p.requires_grad]
    if not trained or any(grad_of(p) is not None or p in ever_reached or p in warned for _, p in trained):
        return None
    made_graph = any(results[0].get(module) for module in model.modules())
    cut = _source_cut(frame, site, trained[0][1], target_made_graph=made_graph)
    if cut is None:
        return None
    budget = state.setdefault("gradient_path_optimizer_scans", Budget(scans=2))
    holding = optimizers_holding([p for _, p in trained], budget) or []
    optimizer = next((o for o in holding if any(id(p) in reached for g in o.param_groups for p in g["params"])),
                     None)
    if optimizer is None:
        return None  # no optimizer steps it with what this loss trains (or the scans are spent)
    warned.update(p for _, p in trained)
    paths = [".".join(filter(None, (model_name, name))) for name, _ in trained]
    diagnosis = _unreached_parameter_diagnosis(paths, trained[0][1], model, cut, site, True)
    diagnosis.notes.append(f"{type(optimizer).__name__} holds {model_name or type(model).__name__}'s parameters "
                           "together with the ones this loss reached: its step() trains those and leaves these "
                           "where they started")
    diagnosis.help.append(Suggestion(f"if {model_name or type(model).__name__} is meant to stay fixed, say so: "
                                     f"{model_name or 'the module'}.requires_grad_(False), which also spares "
                                     "computing its gradients"))
    return diagnosis


def _result_reached_loss(module, results: tuple, roots: list, loss_nodes: list) -> bool:
    """Whether the module's result reached the loss's graph: one of its graph nodes is in it, or
    its memory was handed (detached, or made under no_grad) to a module whose result is.
    `loss_nodes` caches the loss graph's node keys (None when the walk did not finish)."""
    output_nodes, consumers = results
    result_nodes = output_nodes.get(module, set())
    handed_on = [nodes for producers, nodes in consumers if module in producers]
    if not result_nodes and not handed_on:
        return False
    if not loss_nodes:
        walked, finished = graph_nodes([t.grad_fn for t in roots if t.grad_fn is not None])
        loss_nodes.append({node_key(node) for node in walked} if finished else None)
    graph = loss_nodes[0]
    if graph is None:
        return False
    return bool(result_nodes & graph) or any(nodes & graph for nodes in handed_on)


def _unreached_parameter_diagnosis(paths: list[str], parameter, module, cut: Cut | None,
                                  site: Site | None, seen_running: bool) -> Diagnosis:
    path = paths[0]
    what = f"parameter {path}" if len(paths) == 1 else "parameters " + ", ".join(paths)
    title = f"{what} got no gradient: the gradient path from the loss was cut"
    if cut is not None:
        diagnosis = cut_diagnosis(cut, "warning", site, title=title, tensor=parameter, name=path, parameter=path)
    else:
        diagnosis = Diagnosis(
            code=codes.GRADIENT_PATH_CUT, title=title, severity="warning",
            primary=location_of(site, role="backward", note=f"{path}.grad is None after this backward()"),
            tensor=tensor_info(parameter, path, path),
            help=[Suggestion("compute the loss from this module's output without detach(), .data or "
                             "torch.no_grad() in between; if the module is meant to stay fixed, call "
                             "requires_grad_(False) on it")])
    ran = f"{type(module).__name__} ran its forward pass, but the" if seen_running else "The"
    diagnosis.notes.insert(0, f"{ran} loss does not depend on {path} through recorded operations, "
                              f"so {path}.grad is None")
    diagnosis.extra["parameters"] = list(paths)
    return diagnosis


# ---- why_no_grad ---------------------------------------------------------------------------


@dataclass
class NoGradReport:
    """Answer of `why_no_grad`: whether gradients from the loss reach the tensor, and why not."""

    reaches: bool
    reason: str
    path: list[str] | None = None
    diagnosis: Diagnosis | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"reaches": self.reaches, "reason": self.reason, "path": self.path,
                "diagnosis": self.diagnosis.to_dict() if self.diagnosis else None, "notes": list(self.notes)}

    def __str__(self) -> str:
        lines = [self.reason] + [f"  - {note}" for note in self.notes]
        if self.diagnosis is not None:
            lines.append(str(self.diagnosis))
        return "\n".join(lines)


def why_no_grad(tensor: torch.Tensor, loss: torch.Tensor) -> NoGradReport:
    """Explain why `tensor` gets (or would get) no gradient from `loss.backward()`.

        >>> import torch
        >>> w = torch.ones(2, requires_grad=True)
        >>> why_no_grad(w, (w * 2).sum()).reaches
        True
        >>> feature = (w * 2).detach()
        >>> report = why_no_grad(w, (feature * 3).sum())
        >>> report.reaches, report.diagnosis.code
        (False, 'AD301')

    The cut line is found from the calling frame's source (the assignments the loss was
    built from); `report.diagnosis.primary` is that line when it can be found.
    """
    frames = user_frames()
    caller = frames[0] if frames else None
    name = parameter_path(tensor, frames) or variable_for(tensor, frames) or "tensor"
    loss_name = variable_for(loss, frames) or "loss"
    if not tensor.requires_grad:
        return NoGradReport(False, f"{name} does not require grad (requires_grad=False): it is frozen or was "
                                   "created without requires_grad=True", None, _frozen_diagnosis(name, tensor, caller))
    path = gradient_path(loss, tensor)
    if path is not None:
        notes = []
        if not tensor.is_leaf:
            notes.append(f"{name} is not a leaf: backward() fills .grad only for leaves; call "
                         f"{name}.retain_grad() before backward() to keep its gradient")
        return NoGradReport(True, f"gradients from {loss_name} reach {name} through " + " -> ".join(path), path,
                            None, notes)
    cut = None
    if caller is not None:
        site_line = caller.f_lineno
        try:
            if loss.grad_fn is None:
                cut = find_cut(caller.f_code.co_filename, site_line + 1, [loss_name], frame_values(caller))
            else:
                cut = find_cut(caller.f_code.co_filename, site_line + 1, [loss_name], frame_values(caller),
                               target=tensor)
        except Exception:
            cut = None
    if loss.grad_fn is None:
        reason = f"{loss_name} has no grad_fn: it was computed without grad history, so backward() reaches nothing"
    else:
        reason = f"gradients from {loss_name} do not reach {name}: no path from {loss_name}.grad_fn to it"
    if cut is not None:
        reason += f" (cut at line {cut.statement.lineno})"
        diagnosis = cut_diagnosis(cut, "warning", None, tensor=tensor, name=name,
                                  parameter=name if "." in name else None)
    else:
        diagnosis = Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT),
                              severity="warning", primary=None, tensor=tensor_info(tensor, name),
                              notes=["the line that cut the path was not found in the calling function"],
                              help=[Suggestion("look for detach(), .data, torch.no_grad(), torch.tensor(...) or "
                                               "NumPy round trips between the tensor and the loss")])
    return NoGradReport(False, reason, None, diagnosis)


def _frozen_diagnosis(name: str, tensor, caller: FrameType | None) -> Diagnosis:
    primary = None
    if caller is not None:
        freezing = find_freezing(caller.f_code.co_filename)
        if freezing is not None:
            primary = statement_location(caller.f_code.co_filename, freezing, role="cut",
                                         note="requires_grad is turned off here")
    return Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="warning",
                     primary=primary, tensor=tensor_info(tensor, name),
                     help=[Suggestion(f"call {name}.requires_grad_(True) if it should be trained")])


__all__ = ["why_no_grad", "NoGradReport", "after_backward", "backward_error_diagnosis", "on_backward_start", "on_start",
           "find_cut", "cut_marks"]
