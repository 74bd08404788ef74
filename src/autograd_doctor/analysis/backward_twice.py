"""AD302: "Trying to backward through the graph a second time": which earlier backward()
freed the graph, and which tensor brought the old graph into this one (a hidden state
carried across loop iterations, or a tensor made before the loop).

Older graphs are told apart by node sequence numbers: nodes numbered at or below the
newest node of the previous backward()'s graph were made before it.
"""

from __future__ import annotations

import ast
import types
from typing import Any

import torch

from autograd_doctor.analysis.live_values import readable_grad_fn
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.graph_reach import graph_reaches
from autograd_doctor.analysis.source_scope import (
    MAX_NODES, Scope, backward_call_node, backward_roots, block_holding, frame_values, graph_nodes, leaves_below,
    live_frame, loaded_names, reached_leaves, root_expression,
)
from autograd_doctor.analysis.describe import tensor_info
from autograd_doctor.analysis.state_resets import detach_after_reset, reset_write_site, resets_into_freed_graph
from autograd_doctor.analysis.errors.context import enclosing_function, walk_own_scope
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.recording.frames import in_installed_package
from autograd_doctor.diagnosis.source import (
    call_name, location_of, parse_file, replace_node_text, replace_nodes_text, segment, statement_location,
)


def _is_freed(node) -> bool | None:
    names = [n for n in dir(node) if n.startswith("_saved_")]
    for name in names:
        try:
            getattr(node, name)
        except RuntimeError as error:
            if "freed" in str(error) or "second time" in str(error):
                return True
            continue
        except Exception:
            continue
        return False
    return None


def _frontier(roots: list[torch.Tensor], is_boundary, max_nodes: int = MAX_NODES) -> list[Any]:
    """The first nodes, walking from the roots toward the inputs, for which `is_boundary`
    holds (the walk does not go past them)."""
    frontier = []
    seen = set()
    queue = [t.grad_fn for t in roots if t.grad_fn is not None]
    while queue and len(seen) < max_nodes:
        node = queue.pop(0)
        if node in seen:
            continue
        seen.add(node)
        if is_boundary(node):
            frontier.append(node)
            continue
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return frontier


def older_graph_frontier(roots: list[torch.Tensor], newest_before: int, max_nodes: int = MAX_NODES) -> list[Any]:
    """Where an older graph, made before the previous backward(), joins this one."""

    def is_older(node) -> bool:
        if getattr(node, "variable", None) is not None:
            return False  # AccumulateGrad (a leaf) is never "older"
        try:
            return node._sequence_nr() <= newest_before
        except Exception:
            return False

    return _frontier(roots, is_older, max_nodes)


def freed_frontier(roots: list[torch.Tensor], max_nodes: int = MAX_NODES) -> list[Any]:
    """The first nodes (from the roots) whose saved tensors an earlier backward freed."""
    return _frontier(roots, lambda node: bool(_is_freed(node)), max_nodes)


def _reaches(tensor: torch.Tensor, nodes: list[Any], max_nodes: int = MAX_NODES) -> bool:
    return graph_reaches(tensor.grad_fn, set(nodes), max_nodes)


def _tensors_in(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)) and len(value) < 100:
        return [v for v in value if isinstance(v, torch.Tensor)]
    if isinstance(value, torch.distributions.Distribution):
        return _computed_tensors_of_distribution(value)
    return []


def _computed_tensors_of_distribution(distribution, depth: int = 0) -> list[torch.Tensor]:
    """The tensors with a grad_fn that a torch.distributions object holds (`Normal(loc, log_scale.exp())`
    keeps the exp()'s result as its scale; `Independent` and other wrappers hold their base
    distribution): a distribution built once, from parameters, keeps that graph for every later call
    (set 24). The parameters themselves (leaves) are not state that carries a graph."""
    found = []
    for held in list(vars(distribution).values())[:32]:
        if isinstance(held, torch.Tensor) and readable_grad_fn(held) is not None:
            found.append(held)
        elif isinstance(held, torch.distributions.Distribution) and depth < 3:
            found.extend(_computed_tensors_of_distribution(held, depth + 1))
    return found


def _module_state_carrier(frame_locals: dict, frontier: list[Any]):
    """A tensor kept on an nn.Module (`self.hidden = ...` in forward) that reaches the freed
    graph: (its path such as `model.hidden`, the attribute, the module, the value)."""
    for local_name, value in frame_locals.items():
        if not isinstance(value, torch.nn.Module) or local_name.startswith("_"):
            continue
        for sub_name, module in list(value.named_modules())[:200]:
            # A buffer (`register_buffer`) lives in the module's `_buffers` dict, not as an attribute.
            held_items = [*vars(module).items(), *getattr(module, "_buffers", {}).items()]
            for attribute, held in held_items:
                if attribute.startswith("__"):
                    continue  # a private `_cache` counts: torch's own state is dicts, never a tensor
                tensors = _tensors_in(held)
                if tensors and any(t.grad_fn is not None and _reaches(t, frontier) for t in tensors):
                    path = ".".join(part for part in (local_name, sub_name, attribute) if part)
                    return path, attribute, module, held
    return None


def _buffer_registration(module: torch.nn.Module, name: str) -> tuple[str, ast.stmt, ast.expr] | None:
    """The statement in the module's class that registers the buffer `name` with a value that was
    computed (`self.register_buffer("cdf_low", normal.cdf(alpha))`): its file, the statement and
    the value's node. None for any other way of making it."""
    if name not in getattr(module, "_buffers", {}):
        return None
    found = _class_definition(module)
    if found is None:
        return None
    filename, definition = found
    for statement in ast.walk(definition):
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            continue
        call = statement.value
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "register_buffer"
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"):
            continue
        arguments = dict(zip(("name", "tensor"), call.args))
        arguments.update({k.arg: k.value for k in call.keywords if k.arg in ("name", "tensor")})
        given, value = arguments.get("name"), arguments.get("tensor")
        if isinstance(given, ast.Constant) and given.value == name and isinstance(value, ast.Call) \
                and statement.lineno == statement.end_lineno and not _holds_no_program_value(value):
            # A start value made of numbers (`torch.zeros(0)`) carries no graph: the graph came later.
            return filename, statement, value
    return None


def _plain_objects(frame_locals: dict):
    """(name, its first 100 attributes) for each local bound to a plain object: not a tensor, a
    module, a class, a module of Python's or a callable, and with a `__dict__`."""
    for name, value in frame_locals.items():
        if (name.startswith("_") or isinstance(value, (torch.Tensor, torch.nn.Module, type, types.ModuleType))
                or callable(value) or not hasattr(value, "__dict__")):
            continue
        try:
            yield name, list(vars(value).items())[:100]
        except TypeError:
            continue


def _object_state_set_before_loop(scope: Scope, loop: ast.AST, frame_locals: dict, frontier: list[Any]):
    """A plain object (not a module: a graph, a buffer holder) whose attribute holds a tensor that
    reaches the freed graph, and the one-line statement before the loop that gave it its starting
    state (`g.set_n_repr(features)`, `g.x = features`): (the object's name, the attribute, that
    statement), or None. Every iteration replaces the attribute with its own output, so the next
    one starts from a graph that backward() freed."""
    for name, attributes in _plain_objects(frame_locals):
        held = next((attribute for attribute, item in attributes if not attribute.startswith("__") and any(
            t.grad_fn is not None and _reaches(t, frontier) for t in _tensors_in(item))), None)
        if held is None:
            continue
        setting = [node for node in ast.walk(scope.node) if isinstance(node, ast.stmt)
                   and node.lineno < loop.lineno and node.lineno == node.end_lineno
                   and scope.parents.get(node) is scope.parents.get(loop) and _sets_state_of(node, name)]
        inside = [node for node in ast.walk(loop) if isinstance(node, ast.stmt) and _sets_state_of(node, name)]
        if setting and not inside:
            return name, held, setting[-1]
    return None


def _object_attribute_written_in_loop(scope: Scope, loop: ast.AST, frame_locals: dict, frontier: list[Any]):
    """A plain object (not a module) bound to a local, whose attribute holds a tensor that reaches
    the freed graph, and the assignment `name.<attribute> = ...` inside the loop that wrote it: the
    object outlives the iteration (drawn again from a cache, a list of cameras or agents), so the
    next time it is drawn its attribute brings that iteration's graph in. (the object's name, the
    attribute, that statement), or None; only one-target assignments whose target is exactly
    `name.<attribute>`, and only where nothing sets the object's state before the loop (that is
    `_object_state_set_before_loop`'s case)."""
    for name, attributes in _plain_objects(frame_locals):
        for attribute, item in attributes:
            if attribute.startswith("__") or not any(
                    t.grad_fn is not None and _reaches(t, frontier) for t in _tensors_in(item)):
                continue
            writes = [node for node in walk_own_scope(loop) if isinstance(node, ast.Assign)
                      and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)
                      and node.targets[0].attr == attribute and isinstance(node.targets[0].value, ast.Name)
                      and node.targets[0].value.id == name]
            if writes:
                return name, attribute, writes[0]
    return None


def _state_read_then_stored(frame_locals: dict):
    """A user object's attribute that one of its methods reads and then, later in the same method,
    stores from a computation (`ratio = losses / self.previous` ... `self.previous = losses`): state
    carried from one call into the next. When backward() fails the attribute already holds this
    call's value (its graph is not freed yet), so the carry is found in the class's code, not by the
    value: (path, attribute, value held, file, the storing statement, the object), or None. A
    module's submodules count too (`model.w2`, a layer that keeps its last input statistics)."""
    for local_name, value in _objects_and_submodules(frame_locals):
        try:
            attributes = list(vars(value).items())[:100]
        except TypeError:
            continue
        held = [(attribute, item) for attribute, item in attributes if not attribute.startswith("_")
                and any(t.grad_fn is not None for t in _tensors_in(item))]
        found = _class_definition(value) if held else None
        if found is None or in_installed_package(found[0]):
            continue
        filename, definition = found
        for attribute, item in held:
            for method in (node for node in definition.body if isinstance(node, ast.FunctionDef)):
                for store in ast.walk(method):
                    if not (_stores_self(store, attribute) and len(store.targets) == 1
                            and isinstance(store.targets[0], ast.Attribute) and store.lineno == store.end_lineno):
                        continue
                    detached = isinstance(store.value, ast.Call) and getattr(store.value.func, "attr", None) == "detach"
                    read_before = any(_is_self_attribute(node, attribute) and isinstance(node.ctx, ast.Load)
                                      and node.lineno < store.lineno for node in ast.walk(method))
                    if read_before and not detached:
                        return f"{local_name}.{attribute}", attribute, item, filename, store, value
    return None


def _objects_and_submodules(frame_locals: dict):
    """(path, object) for each local bound to a user object (not a tensor, a class, a module of
    code or a plain function), and for a local nn.Module each of its submodules (`model.w2`)."""
    for local_name, value in list(frame_locals.items()):
        if (local_name.startswith("_") or isinstance(value, (torch.Tensor, type, types.ModuleType))
                or callable(value) and not isinstance(value, torch.nn.Module) or not hasattr(value, "__dict__")):
            continue
        yield local_name, value
        if isinstance(value, torch.nn.Module):
            for sub_name, module in list(value.named_modules())[1:200]:
                yield f"{local_name}.{sub_name}", module


def _sets_state_of(statement: ast.stmt, name: str) -> bool:
    """`name.method(...)` as a statement, or `name.attribute = ...`."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        function = statement.value.func
        return isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name) \
            and function.value.id == name
    if isinstance(statement, ast.Assign):
        return any(isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                   and target.value.id == name for target in statement.targets)
    return False


def _attribute_assignment(module: torch.nn.Module, attribute: str) -> tuple[str, ast.stmt] | None:
    """The statement in the module's class that carries `self.<attribute>` from one call to the
    next (`self.mem = self.beta * self.mem + x`, `out, self.hidden = self.lstm(x, self.hidden)`),
    else the first that stores it from a call, with its file."""
    found = _class_definition(module)
    if found is None:
        return None
    filename, definition = found

    def reads_itself(value: ast.expr) -> bool:
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "detach":
            return False
        return any(_is_self_attribute(element, attribute) for element in ast.walk(value))

    assignments = sorted((statement for statement in ast.walk(definition) if _stores_self(statement, attribute)),
                         key=lambda statement: statement.lineno)
    for statement in assignments:
        if reads_itself(statement.value):
            return filename, statement
    # A tensor factory (`torch.zeros(...)`, the state a first call starts from) or a constant
    # carries no graph: the statement that kept the graph is one that stores a computed value.
    carrying = [statement for statement in assignments if _may_carry_graph(statement.value)]
    for statement in carrying:
        if isinstance(statement.value, ast.Call):
            return filename, statement
    for statement in carrying:
        return filename, statement
    return None


# Tensor constructors: what they return has no grad_fn, so it never points into a freed graph.
TENSOR_FACTORIES = frozenset({
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace", "eye", "tensor",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "new_zeros", "new_ones",
    "new_empty", "new_full",
})


def _may_carry_graph(value: ast.expr | None) -> bool:
    """Whether an assigned value can be a tensor with a graph: not a constant (None) and not a
    tensor factory call; anything else (a call, a name, an expression) may be."""
    if value is None or isinstance(value, ast.Constant):
        return False
    if isinstance(value, ast.Call):
        func = value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        return name not in TENSOR_FACTORIES
    return True


RESET_METHODS = ("reset", "reset_state", "reset_states", "reset_hidden", "reset_mem")


def _stored_init_argument(module: torch.nn.Module, attribute: str):
    """(file, statement, value) of `self.<attribute> = <name>` in the module's `__init__`, where
    `<name>` is one of `__init__`'s parameters: a tensor the module is built with and keeps as
    given. None for anything else (a computed value, a buffer, an assignment in forward)."""
    found = _class_definition(module)
    if found is None:
        return None
    filename, definition = found
    init = next((node for node in definition.body if isinstance(node, ast.FunctionDef) and node.name == "__init__"),
                None)
    if init is None:
        return None
    parameters = {argument.arg for argument in init.args.args[1:] + init.args.kwonlyargs}
    stores = [statement for statement in ast.walk(definition) if _stores_self(statement, attribute)]
    if len(stores) != 1:
        return None
    statement = stores[0]
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement in init.body
            and isinstance(statement.value, ast.Name) and statement.value.id in parameters):
        return None
    return filename, statement, statement.value


def _class_definition(module: torch.nn.Module) -> tuple[str, ast.ClassDef] | None:
    """The module's class as written, with its file."""
    from autograd_doctor.diagnosis.source import class_definition

    return class_definition(type(module))


def _is_self_attribute(node: ast.AST, attribute: str) -> bool:
    """`self.<attribute>`."""
    return isinstance(node, ast.Attribute) and node.attr == attribute \
        and isinstance(node.value, ast.Name) and node.value.id == "self"


def _stores_self(statement: ast.AST, attribute: str) -> bool:
    return isinstance(statement, ast.Assign) and any(
        _is_self_attribute(element, attribute) for target in statement.targets for element in ast.walk(target))


def _state_reset(module: torch.nn.Module, attribute: str) -> str | None:
    """How the module's own code starts `self.<attribute>` again, as code after the module's
    path: `.reset()` for a method that takes no argument and sets it again (snnTorch's
    neurons), else `.<attribute> = None` when `__init__` sets it to None (the forward then
    builds it anew). None when the code gives no such way: nothing is guessed."""
    found = _class_definition(module)
    if found is None:
        return None
    definition = found[1]
    for method in definition.body:
        if not (isinstance(method, ast.FunctionDef) and method.name in RESET_METHODS):
            continue
        arguments = method.args
        if len(arguments.args) - len(arguments.defaults) != 1 or arguments.vararg or \
                len([d for d in arguments.kw_defaults if d is None]) > 0:
            continue  # only `reset(self)`: a method that needs a batch size or a device is not called blind
        if any(_stores_self(statement, attribute) for statement in ast.walk(method)):
            return f".{method.name}()"
    for method in definition.body:
        if isinstance(method, ast.FunctionDef) and method.name == "__init__":
            for statement in ast.walk(method):
                if _stores_self(statement, attribute) and isinstance(statement.value, ast.Constant) \
                        and statement.value.value is None and len(statement.targets) == 1:
                    return f".{attribute} = None"
    return None


def _stateful_submodules(top: torch.nn.Module, frontier: list[Any]) -> list[tuple[str, torch.nn.Module, str]]:
    """Every module under `top` that keeps, on one of its attributes, a tensor reaching the
    freed graph: (its path below `top`, the module, the attribute)."""
    found = []
    for sub_name, module in list(top.named_modules())[:200]:
        for attribute, held in vars(module).items():
            if attribute.startswith("__"):
                continue
            tensors = _tensors_in(held)
            if tensors and any(t.grad_fn is not None and _reaches(t, frontier) for t in tensors):
                found.append((sub_name, module, attribute))
    return found


def _module_expression(top_name: str, sub_name: str) -> str:
    """Python that reaches a submodule from its path in named_modules(): `model.blocks.0.lif`
    -> `model.blocks[0].lif` (a Sequential's or ModuleList's children are indexed)."""
    expression = top_name
    for part in sub_name.split(".") if sub_name else []:
        expression += f"[{part}]" if part.isdigit() else f".{part}"
    return expression


def _in_a_loop(definition: ast.AST, node: ast.AST) -> bool:
    """Whether `node` lies in a loop or comprehension within `definition` (itself included)."""
    return any(isinstance(loop, _REPEATING) and _encloses(loop, node) for loop in ast.walk(definition))


def _state_steps_within_a_call(top: torch.nn.Module, sub_name: str, module: torch.nn.Module, attribute: str) -> bool:
    """Whether one call of `top` moves the state several times: the statement that stores it
    lies in a loop of its module's code, or the module is called in a loop of its parent's
    (a spiking layer stepped over time steps). True where the code cannot be read."""
    found = _attribute_assignment(module, attribute)
    if found is None:
        return True
    if _in_a_loop(_class_definition(module)[1], found[1]):
        return True
    if not sub_name:
        return False
    parent_path, _, child = sub_name.rpartition(".")
    try:
        parent = top.get_submodule(parent_path) if parent_path else top
    except AttributeError:
        return True
    parent_class = _class_definition(parent)
    if parent_class is None or child.isdigit():
        return True  # a Sequential's or ModuleList's member: called by torch's own loop
    calls = [node for node in ast.walk(parent_class[1]) if isinstance(node, ast.Call)
             and _is_self_attribute(node.func, child)]
    return not calls or any(_in_a_loop(parent_class[1], call) for call in calls)


def _inside_inner_loop(loop: ast.AST, node: ast.AST) -> bool:
    """Whether `node` lies in a loop or comprehension nested in `loop`'s body (run once per inner
    iteration, so several times per iteration of `loop`)."""
    return any(_in_a_loop(statement, node) for statement in loop.body)


# Statements and expressions that run their body several times: `sum(model(x) for _ in range(3))`
# calls the model three times as surely as a for statement does.
_REPEATING = (ast.For, ast.AsyncFor, ast.While, ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)


def _encloses(outer: ast.AST, node: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (node.lineno, node.col_offset) \
        and (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _reset_at_loop_start(scope: Scope, loop: ast.AST | None, statement: ast.stmt | None, top_name: str,
                         top: torch.nn.Module, frontier: list[Any]) -> Suggestion | None:
    """Start every state that carries the freed graph again at the start of each iteration of
    the loop around backward() (a new batch, a new pass over the sequence), in the way the
    module's code gives. None when one state has no such way, the model is not called in the
    loop, or the loop's first statement is not a one-line statement to put the resets before."""
    if loop is None or statement is None or scope.tree is None or not getattr(loop, "body", None):
        return None
    resets, stepped_within_a_call = [], False
    for sub_name, module, attribute in _stateful_submodules(top, frontier):
        how = _state_reset(module, attribute)
        if how is None:
            return None  # one state left carried keeps the error: offer nothing rather than half a fix
        resets.append(_module_expression(top_name, sub_name) + how)
        stepped_within_a_call = stepped_within_a_call or _state_steps_within_a_call(top, sub_name, module, attribute)
    model_calls = [node for node in ast.walk(loop) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                   and node.func.id == top_name and loop.lineno < node.lineno <= statement.lineno]
    first = loop.body[0]
    if not resets or not model_calls or isinstance(first, (ast.For, ast.While, ast.If, ast.With, ast.Try)) \
            or first.lineno != first.end_lineno:
        return None
    if len(model_calls) == 1 and not _inside_inner_loop(loop, model_calls[0]) and not stepped_within_a_call:
        # The state moves once per iteration (one call of the model, the state stored once per
        # call): started again before that call, it would be its starting value at every read and
        # carry nothing. Carrying it is what the code means (a memory of the previous segment,
        # truncated backpropagation): not a reset.
        return None
    return Suggestion(
        "start the carried state again at the start of each iteration, in the way its module's code does "
        "(its reset method, or the value __init__ gives it), so each backward() goes through its own pass only",
        "\n".join(resets + [segment(scope.filename, first)]), statement_location(scope.filename, first),
        # The failing backward()'s loss is computed again from a state started again: its values
        # are meant to differ from the original's, built on the previous iteration's state.
        recomputes_failing_forward=True)


def _handed_in(frame, scope: Scope, loop: ast.AST, frame_locals: dict, frontier: list[Any]):
    """A parameter of the function around backward() that its loop reads every iteration and
    whose tensor brings in the freed graph (latents handed to another model's `fit()`): traced
    to the caller's line that passed it. (name, caller file, caller statement, argument node,
    value) or None."""
    from autograd_doctor.diagnosis.source import statement_at

    function = scope.node
    caller = frame.f_back if frame is not None else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or caller is None:
        return None
    parameters = [argument.arg for argument in function.args.args]
    for name in _names_loaded_in(loop):
        value = frame_locals.get(name)
        if name not in parameters or not isinstance(value, torch.Tensor) or value.grad_fn is None \
                or not _reaches(value, frontier) or scope.latest_assignment(name, loop.lineno) is not None:
            continue
        filename = caller.f_code.co_filename
        statement = statement_at(filename, caller.f_lineno)
        if statement is None:
            return None
        for call in ast.walk(statement):
            if not isinstance(call, ast.Call) or call_name(call) != function.name:
                continue
            shift = 1 if isinstance(call.func, ast.Attribute) and parameters[:1] == ["self"] else 0
            position = parameters.index(name) - shift
            argument = next((keyword.value for keyword in call.keywords if keyword.arg == name), None)
            if argument is None and 0 <= position < len(call.args):
                argument = call.args[position]
            if argument is not None and not isinstance(argument, ast.Starred):
                return name, filename, statement, argument, value
        return None
    return None


def _loop_carried(scope: Scope, loop: ast.AST) -> list[tuple[str, ast.stmt]]:
    """Names assigned in the loop body that the body also reads from the previous iteration."""
    carried = []
    assigned: dict[str, ast.stmt] = {}
    for statement, names, value in scope.assignments:
        if loop.lineno <= statement.lineno <= loop.end_lineno:
            for name in names:
                assigned.setdefault(name, statement)
    for name, statement in assigned.items():
        if isinstance(statement, ast.AugAssign):
            carried.append((name, statement))  # `total += loss` reads the previous iteration's total
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load) \
                    and node.lineno <= statement.end_lineno:
                carried.append((name, statement))
                break
    return carried


def _names_loaded_in(loop: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id not in names:
            names.append(node.id)
    return names


def _detached_assignment(filename: str, assignment: ast.stmt) -> str | None:
    """`x = <value>` -> `x = <value>.detach()` for a one-line assignment to one name."""
    if not (isinstance(assignment, ast.Assign) and len(assignment.targets) == 1
            and isinstance(assignment.targets[0], ast.Name) and assignment.lineno == assignment.end_lineno):
        return None
    if not any(isinstance(node, ast.Name) for node in ast.walk(assignment.value)):
        return None  # `total = 0`: a number has nothing to detach; the tensor is made later
    value = segment(filename, assignment.value)
    if not isinstance(assignment.value, (ast.Call, ast.Attribute, ast.Name, ast.Subscript)):
        value = f"({value})"
    return f"{assignment.targets[0].id} = {value}.detach()"


def _graph_reaches_no_trained_leaf(tensor: torch.Tensor, recorder) -> bool:
    """Whether the whole graph of `tensor` was walked and none of its leaves is a parameter
    (`nn.Parameter`) or a tensor that an optimizer which stepped holds."""
    if tensor.grad_fn is None:
        return False
    walked, finished = graph_nodes([tensor.grad_fn], MAX_NODES)
    if not finished:
        return False
    stepped = recorder.optimizer_clears.stepped_parameters
    leaves = [node.variable for node in walked if getattr(node, "variable", None) is not None]
    return bool(leaves) and not any(isinstance(leaf, torch.nn.Parameter) or leaf in stepped for leaf in leaves)


def _leaves_only_through(roots: list[torch.Tensor], nodes: list, max_nodes: int = MAX_NODES) -> set[int]:
    """Ids of the leaves that require grad which the graph of `roots` reaches only through
    `nodes` (graph nodes; their links stay after backward() freed their saved tensors): weights
    that a detach at those nodes would leave without any gradient. Empty when unknown."""
    nodes = [node for node in nodes if node is not None]
    if not nodes:
        return set()
    through: set[int] = set()
    for node in nodes:
        leaves, finished = leaves_below([node], max_nodes)
        if finished:
            through |= leaves
    elsewhere, finished = leaves_below([t.grad_fn for t in roots if t.grad_fn is not None], max_nodes, avoid=nodes)
    if not through or not finished:
        return set()  # nothing below, or a graph too large to walk: say nothing rather than guess
    return through - elsewhere


def backward_twice_diagnosis(recorder, error, call, args, kwargs) -> Diagnosis | None:
    site = call.site
    roots = backward_roots(args, kwargs)
    # Nodes numbered at or below the previous backward()'s newest node belong to older graphs.
    earlier = [c for c in recorder.backward_calls if c.seq < call.seq and c.newest_node is not None]
    newest_before = earlier[-1].newest_node if earlier else None
    frontier = older_graph_frontier(roots, newest_before) if earlier else []
    if not frontier:
        frontier = freed_frontier(roots)
    previous = None
    for earlier in reversed(recorder.backward_calls):
        if earlier.seq < call.seq and not earlier.retain_graph:
            previous = earlier
            break
    frame = live_frame(site)
    frame_locals = frame_values(frame) if frame is not None else {}
    scope = Scope(site.filename, site.lineno) if site is not None else None
    statement = scope.statement_at(site.lineno) if scope is not None and scope.tree is not None else None
    root_expr = root_expression(statement) if statement is not None else None
    root_name = segment(site.filename, root_expr) if root_expr is not None else "the loss"

    repeated = _same_loss_backpropagated_again(recorder, previous, call, roots, scope, statement, root_name)
    if repeated is not None:
        return repeated
    reset = _reset_in_place(recorder, roots, frontier, previous, call, site)
    if reset is not None:
        return reset

    carrier = None  # (name, assignment statement, value)
    # carried: loop state from the previous iteration; outside: made before the loop;
    # shared: one tensor that two backward() calls of the same pass go through.
    kind = None
    loop = scope.enclosing_loop(statement) if statement is not None else None
    if loop is not None and frontier:
        for name, assignment in _loop_carried(scope, loop):
            value = frame_locals.get(name)
            tensors = _tensors_in(value)
            if tensors and any(t.grad_fn is not None and _reaches(t, frontier) for t in tensors):
                if name not in loaded_names(root_expr) or len(_loop_carried(scope, loop)) == 1:
                    carrier = (name, assignment, value)
                    kind = "carried"
                    break
    outside = None  # a tensor made before the loop, with a graph, used in every iteration
    if carrier is None and loop is not None and frontier:
        for name in _names_loaded_in(loop):
            value = frame_locals.get(name)
            # A tensor, or a tuple that holds one (a PackedSequence, an (h, c) pair).
            if not any(t.grad_fn is not None and _reaches(t, frontier) for t in _tensors_in(value)):
                continue
            found = scope.latest_assignment(name, loop.lineno)
            if found is not None and found[0].lineno < loop.lineno:
                carrier = outside = (name, found[0], value)
                kind = "outside"
                break
    handed = None  # a tensor with a graph handed in by the caller (`flow.fit(z)`), used every iteration
    if carrier is None and loop is not None and frontier and scope is not None:
        handed = _handed_in(frame, scope, loop, frame_locals, frontier)
        if handed is not None:
            carrier = (handed[0], None, handed[4])
            kind = "handed"
    if carrier is None and frontier and scope is not None and site is not None and previous is not None \
            and previous.site is not None and previous.site.code is site.code:
        # The function that calls backward() ran before and its backward() freed the graph: a
        # tensor it reads but never assigns (`pred` in an optimizer's closure) was made outside
        # it, once, and every call goes through that tensor's old graph.
        made_outside = _made_outside_function(scope, frame_locals, frontier)
        if made_outside is not None:
            carrier = made_outside
            kind = "enclosing"
    if carrier is None and frontier:
        for name, value in frame_locals.items():
            if isinstance(value, torch.Tensor) and readable_grad_fn(value) is not None and value.grad_fn in frontier \
                    and not name.startswith("_"):
                found = scope.latest_assignment(name, site.lineno + 1) if scope is not None else None
                carrier = (name, found[0] if found else None, value)
                kind = "shared"
                break

    kept_on_module = None  # a module attribute (`self.hidden`) that holds the old graph
    if carrier is not None and kind == "shared" and carrier[1] is None and frontier:
        # A name with no assignment in this scope (a global the closure reads) whose very tensor a
        # module keeps (`ContentLoss(target)`): the module's class says where it is stored.
        kept = _module_state_carrier(frame_locals, frontier)
        if kept is not None and any(t is carrier[2] for t in _tensors_in(kept[3])) \
                and _stored_init_argument(kept[2], kept[1]) is not None:
            carrier = None
    if carrier is None and frontier:
        kept_on_module = _module_state_carrier(frame_locals, frontier)
    kept_on_object = None  # a plain object's state (`g.set_n_repr(features)`) set once before the loop
    if carrier is None and kept_on_module is None and frontier and loop is not None and scope is not None \
            and scope.node is not None:
        kept_on_object = _object_state_set_before_loop(scope, loop, frame_locals, frontier)
    written_on_object = None  # a kept object's attribute written inside the loop (`cam.pose = adjusted`)
    if carrier is None and kept_on_module is None and kept_on_object is None and frontier and loop is not None \
            and scope is not None and scope.node is not None:
        written_on_object = _object_attribute_written_in_loop(scope, loop, frame_locals, frontier)
    kept_across_calls = None  # an object's method reads self.<attr>, then stores this call's result there
    if carrier is None and kept_on_module is None and kept_on_object is None and written_on_object is None \
            and frontier:
        kept_across_calls = _state_read_then_stored(frame_locals)
    memoised = None  # a function memoised with functools.lru_cache/cache returns the first call's tensor
    if carrier is None and kept_on_module is None and kept_on_object is None and kept_across_calls is None \
            and written_on_object is None and frontier:
        memoised = _memoised_function(frame_locals, frontier)

    leaf_write_note = None  # a weight of the freed graph written in place between the two backward()s
    related: list[Location] = []
    same_line = previous is not None and site is not None and previous.site is not None and \
        previous.site.code is site.code and previous.site.lineno == site.lineno
    if previous is not None and previous.site is not None and not same_line:
        related.append(location_of(previous.site, role="freed", note="this backward() freed the graph"))
    backward_loc = location_of(site, role="backward", note="second backward() through the freed graph")
    notes = []
    helps: list[Suggestion] = []
    primary = backward_loc
    tensor = None
    if carrier is not None and kind != "handed":
        name, assignment, value = carrier
        tensor = next((t for t in _tensors_in(value) if t.grad_fn is not None), _tensors_in(value)[0])
        if assignment is not None:
            if outside is not None:
                note = (f"{name} is made here, before the loop, with a graph that every iteration's "
                        "backward() goes through")
            elif kind == "enclosing":
                note = (f"{name} is made here, outside {scope.node.name}(), with a graph that every call of "
                        f"{scope.node.name}() goes through")
            else:
                note = (f"{name} carries the previous iteration's graph into this one" if kind == "carried"
                        else f"{name} holds part of the graph that was freed")
            primary = statement_location(site.filename, assignment, role="carried", note=note)
            related.append(backward_loc)
        if kind == "enclosing":
            notes.append(f"the backward() on line {previous.site.lineno} in the previous call of {scope.node.name}() "
                         f"freed the graph that {name} still points into")
        elif same_line:
            notes.append(f"the backward() on line {site.lineno} in the previous iteration of the loop freed the graph "
                         f"that {name} still points into")
        elif previous is not None and previous.site is not None:
            notes.append(f"the backward() on line {previous.site.lineno} freed the graph that {name} still points into")
        if outside is not None:
            notes.append(f"the first iteration's backward() freed the part of the graph that {name} brings in; "
                         "the next iteration goes through it again")
            # `.detach()` is a tensor's: a tuple (a PackedSequence, a pair) is not detached that way.
            detached = _detached_assignment(site.filename, assignment) if isinstance(value, torch.Tensor) else None
            chain = _graph_chain_before_loop(scope, frame_locals, loop, assignment)
            recompute = _recompute_in_loop(site.filename, loop, chain)
            built_from = [segment(site.filename, s.targets[0]) for s in chain[:-1] if isinstance(s, ast.Assign)]
            with_chain = f", with the lines that build its graph ({', '.join(built_from)})" if built_from else ""
            trained_only_through = _leaves_only_through(
                roots, [t.grad_fn for t in _tensors_in(value) if t.grad_fn is not None])
            if trained_only_through:
                notes.append(f"{len(trained_only_through)} tensor(s) that require grad (weights) get their gradient "
                             f"only through {name}: detached, {name} would leave them untrained, so it is computed "
                             "again in each iteration instead")
            anonymous = _anonymous_leaf_input(site.filename, chain, value, trained_only_through) \
                if isinstance(value, torch.Tensor) and trained_only_through else None
            if anonymous is not None:
                made, replaced, factory = anonymous
                notes[-1] = (f"the only tensor that requires grad behind {name} is made inside the expression, by "
                             f"{factory}: nothing in the program holds it, so no optimizer steps it and no one can "
                             f"read its gradient; the graph it gives {name} trains nothing")
                helps.append(Suggestion(
                    f"drop requires_grad=True from {factory}: {name} keeps its values and carries no graph, so "
                    f"every iteration's backward() goes through its own graph only (a {name}.requires_grad_() after it "
                    f"makes {name} itself a leaf whose gradient backward() fills)", replaced, statement_location(site.filename, made)))
                detached = None
            elif (isinstance(root_expr, ast.Name) and root_expr.id == name) or trained_only_through:
                # backward() is called on the tensor itself, or weights are trained only through
                # it (a layer applied once before the loop): detached, it would cut them off;
                # the tensor is meant to be computed anew in every iteration.
                detached = None
                if recompute is not None:
                    helps.append(Suggestion(
                        f"compute {name} inside the loop{with_chain}, so that each iteration's backward() goes "
                        "through the graph built in that iteration", recompute[1], recompute[0]))
            if detached:
                helps.append(Suggestion(
                    f"if {name} is a fixed target (old log-probabilities, a teacher's output), detach it where it "
                    "is made, or compute it under torch.no_grad()", detached,
                    statement_location(site.filename, assignment)))
        elif kind == "enclosing":
            helps.extend(_enclosing_input_helps(scope, roots, name, tensor, assignment))
        elif kind == "carried" and statement is not None and statement.lineno == statement.end_lineno:
            reset = _accumulator_reset(scope, loop, statement, root_expr, name, assignment)
            if reset is not None:
                boundary, initial = reset
                notes.append(f"{name} sums terms ({segment(site.filename, assignment)}) and backward() is called on "
                             f"{name} itself: once its gradient is applied, the sum starts again from {initial}")
                helps.append(Suggestion(
                    f"start {name} again from {initial} after its backward(), as it starts before the loop: "
                    f"the next backward() then goes through the new terms only, and {name} holds their sum",
                    f"{segment(site.filename, boundary)}\n{name} = {initial}",
                    statement_location(site.filename, boundary)))
            else:
                boundary = _iteration_boundary(scope, statement, assignment)
                text = segment(site.filename, boundary)
                helps.append(Suggestion(
                    f"detach {name} at the iteration boundary so each backward() only goes through its own "
                    "iteration (truncated backpropagation)",
                    f"{text}\n{_detach_again(name, value)}", statement_location(site.filename, boundary)))
        elif kind == "shared" and same_line and loop is not None and assignment is not None \
                and assignment.lineno < loop.lineno and tensor is not None \
                and _graph_reaches_no_trained_leaf(tensor, recorder):
            # Made once before the loop from tensors no optimizer trains (inputs that require
            # grad, a data point being optimised elsewhere): detaching it where it is made changes
            # no parameter's gradient, and every iteration reads the same values.
            detached = _detached_assignment(site.filename, assignment)
            if detached:
                notes.append(f"{name} is made once, before the loop, from tensors that require grad but that no "
                             "optimizer trains and that are not parameters: no weight gets a gradient through it")
                helps.append(Suggestion(
                    f"detach {name} where it is made: each iteration then reads its values without the graph that "
                    "the first backward() freed, and no parameter's gradient changes", detached,
                    statement_location(site.filename, assignment)))
        elif kind == "shared" and scope is not None and previous is not None and not same_line:
            leaf_write = _leaf_written_between(recorder, previous, call, tensor)
            recompute = _recompute_in_statement(scope, statement, name, assignment)
            if leaf_write is not None:
                # The weights behind `name` changed in place since its graph was built (a
                # sharpness-aware step, a hand-written update): retain_graph=True would fail on
                # them, and the second loss is meant at the weights as they are now.
                written_line, written_function = leaf_write
                where = f"line {written_line}" + (f" (in {written_function}())" if written_function else "")
                leaf_write_note = (f"{where} wrote a leaf of {name}'s graph (a weight it was computed from) in place "
                                   "between the two backward() calls, so retain_graph=True is not suggested: the "
                                   "second backward() would go through the graph of the old weights, and fails "
                                   "with 'modified by an inplace operation' where that graph saved them")
            if leaf_write is not None and recompute is not None:
                helps.append(Suggestion(
                    f"compute {name} again for the second backward(): a new forward pass builds a new graph, "
                    "through the weights as they are now", recompute, statement_location(site.filename, statement),
                    recomputes_failing_forward=True))
                primary.role, primary.note = "made", f"{name} is computed here, before the first backward()"
                related.remove(backward_loc)
                related.insert(0, primary)
                backward_loc.note = f"the second backward() reuses {name}, whose graph the first one freed"
                primary = backward_loc
            shared = _shared_graph_suggestions(scope, frame_locals, previous, statement, name, tensor, assignment) \
                if leaf_write is None else []
            helps.extend(shared)
            detached_use = shared and shared[0].replacement and f"{name}.detach()" in shared[0].replacement
            use = shared[0].location if detached_use else None
            if use is not None and assignment is not None and use.line != assignment.lineno and primary is not backward_loc:
                # The line to change is where the other loss takes `name` in, not where it is made.
                use_statement = scope.statement_at(use.line)
                primary.role, primary.note = "made", f"{name} made here"
                related.insert(0, primary)
                primary = statement_location(site.filename, use_statement, role="carried",
                                             note=f"{name} enters this loss's graph here, with the part that the "
                                                  "earlier backward() freed")
    elif kind == "handed":
        name, caller_file, caller_statement, argument, value = handed
        tensor = value
        given = segment(caller_file, argument)
        function_name = scope.node.name
        primary = statement_location(caller_file, caller_statement, role="carried",
                                     note=f"{given} is handed to {function_name}() here with the graph that made it")
        related.append(backward_loc)
        notes.append(f"{function_name}()'s loop goes through the graph of {name} ({given}) in every iteration; the "
                     "first backward() freed it")
        trained = _optimizer_parameters(scope, frame_locals, loop.lineno)
        producer, finished = leaves_below([value.grad_fn])
        detached = replace_node_text(caller_file, caller_statement, argument,
                                     f"{given}.detach()" if isinstance(argument, (ast.Name, ast.Attribute, ast.Call,
                                                                                   ast.Subscript))
                                     else f"({given}).detach()")
        if trained is not None and finished and producer and not producer & trained and detached is not None:
            # The loop's optimizer updates none of the weights that made the tensor: the loop
            # is not meant to train them, so the hand-over is where the graph must stop.
            notes.append(f"the optimizer that {function_name}() steps updates none of the {len(producer)} "
                         f"tensor(s) that require grad behind {given}: its loop does not train them")
            helps.append(Suggestion(
                f"detach {given} where it is handed to {function_name}(), so its loop trains only its own weights",
                detached, statement_location(caller_file, caller_statement)))
        else:
            helps.append(Suggestion(
                f"if {function_name}() must not train what made {given}, detach it where it is handed over "
                f"({given}.detach()); if it must, compute {given} again inside {function_name}()'s loop"))
    elif kept_on_module is not None and _buffer_registration(kept_on_module[2], kept_on_module[1]) is not None:
        # A buffer registered with a computed value keeps that computation's graph: every later loss
        # that reads the buffer goes through it, and the first backward() freed it.
        path, attribute, module, held = kept_on_module
        tensor = _tensors_in(held)[0]
        carrier = (path, None, held)
        filename, registration, value = _buffer_registration(module, attribute)
        primary = statement_location(filename, registration, role="carried",
                                     note=f"the buffer {attribute} is registered here with the graph of the value "
                                          "it is computed from")
        related.append(backward_loc)
        notes.append(f"{path} is a buffer that still points into the graph it was computed in (it requires grad "
                     f"and has a grad_fn): every loss that reads it goes through that graph, which the backward() "
                     f"on line {previous.site.lineno if previous is not None and previous.site else '?'} freed")
        value_text = segment(filename, value)
        replaced = replace_node_text(filename, registration, value, f"{value_text}.detach()") if value_text else None
        helps.append(Suggestion(
            "register a detached value: a buffer is state (saved with the module, moved by .to()), a constant for "
            "each loss, not a path for gradients; its value stays the same",
            replaced, statement_location(filename, registration) if replaced else None))
    elif kept_on_module is not None:
        path, attribute, module, held = kept_on_module
        tensor = _tensors_in(held)[0]
        carrier = (path, None, held)
        found = _attribute_assignment(module, attribute)
        if previous is not None and previous.site is not None:
            notes.append(f"the backward() on line {previous.site.lineno} freed the graph that {path} still points "
                         f"into: {type(module).__name__} keeps it on self.{attribute} for the next call")
        guard = _cache_return_guard(module, attribute)
        if guard is not None:
            # `if <same input>: return self.<cache>`: a cache of a value computed from inputs
            # that require grad hands the first call's graph to every later call.
            filename, statement = guard
            primary = statement_location(filename, statement, role="cached",
                                         note=f"returns self.{attribute}, kept from an earlier call with its graph")
            related.append(backward_loc)
            test_text = segment(filename, statement.test)
            replaced = replace_node_text(filename, statement, statement.test,
                                         f"({test_text}) and not self.{attribute}.requires_grad") if test_text else None
            if replaced is not None:
                helps.append(Suggestion(
                    f"reuse self.{attribute} only when it carries no graph: where its inputs require grad, each "
                    "call computes it again and each backward() goes through a graph of its own (the values and "
                    "gradients are those of computing it every time)", replaced,
                    statement_location(filename, statement)))
        elif _stored_init_argument(module, attribute) is not None and not _leaves_only_through(
                roots, [t.grad_fn for t in _tensors_in(held) if t.grad_fn is not None]):
            # The module is built with the tensor (`ContentLoss(target)`, `self.target = target`): a
            # value handed in once, with the graph it was computed in, which the first backward()
            # freed; the weights behind it also get gradients another way, so a detach cuts nothing
            # off that nothing else trains.
            filename, assignment, value = _stored_init_argument(module, attribute)
            own = f"self.{attribute}"
            primary = statement_location(filename, assignment, role="carried",
                                         note=f"{own} keeps the tensor {type(module).__name__} is built with, and the "
                                              "graph it was computed in")
            related.append(backward_loc)
            value_text = segment(filename, value)
            replaced = replace_node_text(filename, assignment, value, f"{value_text}.detach()") if value_text else None
            helps.append(Suggestion(
                f"if {own} is a fixed target (a content image's features, a teacher's output), detach it where it is "
                "stored: its values stay the same and every loss that reads it goes through its own graph only",
                replaced, statement_location(filename, assignment) if replaced else None))
        elif found is not None and newest_before is not None and _made_before(tensor, newest_before):
            # Not state remade in every call from the previous one (a hidden state): a value
            # computed once and reused, whose graph went with the backward() that freed it.
            filename, assignment = found
            primary = statement_location(filename, assignment, role="carried",
                                         note=f"self.{attribute} is computed here once and kept: later calls reuse "
                                              "its graph")
            related.append(backward_loc)
            notes.append(f"{path} was computed before that backward() and not computed again since: each later "
                         "loss goes through its freed graph (and through the weights as they were then)")
            helps.extend(_recompute_cached(filename, assignment, attribute))
        elif found is not None:
            filename, assignment = found
            primary = statement_location(filename, assignment, role="carried",
                                         note=f"self.{attribute} keeps this call's graph for the next batch")
            related.append(backward_loc)
            own = f"self.{attribute}"
            top_name = path.split(".")[0]
            top = frame_locals.get(top_name)
            reset = _reset_at_loop_start(scope, loop, statement, top_name, top, frontier) \
                if scope is not None and isinstance(top, torch.nn.Module) else None
            trained_only_through = _leaves_only_through(roots, frontier)
            if trained_only_through:
                # Detaching the kept state would cut the weights it started from (an initial
                # state that is a parameter) off for good: the state is meant to start again.
                notes.append(f"{len(trained_only_through)} tensor(s) that require grad (weights) get their gradient "
                             f"only through the graph {own} carries over: detached, {own} would leave them untrained "
                             "after the first backward()")
            if reset is not None:
                # The module's code says how its state starts (a reset method, the value __init__
                # gives it): a new iteration is a new pass, so starting again keeps the meaning
                # where a detach would carry the old pass's values into the new one.
                notes.append(f"{own} is not started again between iterations: the next pass begins from the "
                             "previous pass's state and its freed graph")
                helps.append(reset)
            elif trained_only_through:
                helps.append(Suggestion(
                    f"start {own} again where a new pass over the sequence begins (set it back to the value "
                    f"{type(module).__name__} starts from before each pass), or, if carrying it over is meant, detach "
                    "it after storing it and train its starting value some other way", None, None))
            elif assignment.lineno == assignment.end_lineno:
                helps.append(Suggestion(
                    f"detach {own} after storing it, so the next batch starts from its value without the graph "
                    "that backward() frees (truncated backpropagation)",
                    f"{segment(filename, assignment)}\n{_detach_again(own, held)}",
                    statement_location(filename, assignment)))
    elif kept_on_object is not None:
        name, attribute, setting = kept_on_object
        tensor = _tensors_in(getattr(frame_locals[name], attribute))[0]
        carrier = (f"{name}.{attribute}", setting, tensor)
        primary = statement_location(site.filename, setting, role="carried",
                                     note=f"{name}'s state is set here once, before the loop")
        related.append(backward_loc)
        notes.append(f"each iteration replaces {name}.{attribute} with its own output, so the next iteration starts "
                     f"from that output and from the graph that the previous backward() freed")
        first = loop.body[0]
        helps.append(Suggestion(
            f"set {name}'s state at the start of each iteration instead, so every iteration starts from the same "
            "input and builds its own graph",
            f"{segment(site.filename, setting)}\n{segment(site.filename, first)}",
            statement_location(site.filename, first), recomputes_failing_forward=True))
        helps.append(Suggestion(
            f"if carrying the previous output over is meant, detach {name}.{attribute} at the end of each iteration "
            "(truncated backpropagation)"))
    elif written_on_object is not None:
        name, attribute, write = written_on_object
        tensor = next(t for t in _tensors_in(getattr(frame_locals[name], attribute)) if t.grad_fn is not None)
        carrier = (f"{name}.{attribute}", write, tensor)
        primary = statement_location(site.filename, write, role="carried", note=(
            f"writes this iteration's result, with its graph, into {name}.{attribute}; {name} outlives the "
            "iteration"))
        related.append(backward_loc)
        notes.append(f"{name} is drawn again in a later iteration (the same {type(frame_locals[name]).__name__} "
                     f"object): its {attribute} then still holds the result written here, and the computation "
                     "goes through the graph that the previous backward() freed")
        helps.append(Suggestion(
            f"keep {name}'s own state unwritten: compute with a copy of it (`{name} = copy.copy({name})` before "
            f"the write) or keep the result in a local; a .detach() in the write would run, but each visit would "
            f"then start from the previous visit's result instead of {name}'s own {attribute} (other values)"))
    elif kept_across_calls is not None:
        path, attribute, held, filename, store, owner = kept_across_calls
        tensor = _tensors_in(held)[0]
        carrier = (path, None, held)
        own = f"self.{attribute}"
        primary = statement_location(filename, store, role="carried",
                                     note=f"{own} keeps this call's result, with its graph, for the next call")
        related.append(backward_loc)
        notes.append(f"{type(owner).__name__} reads {own} before storing the new value: "
                     f"the next call computes from the previous call's result and goes through its graph, which the "
                     f"backward() {'on line ' + str(previous.site.lineno) + ' ' if previous and previous.site else ''}"
                     "freed")
        helps.append(Suggestion(
            f"detach {own} after storing it: the next call reads its value, as a constant, without the graph that "
            "backward() frees", f"{segment(filename, store)}\n{_detach_again(own, held)}",
            statement_location(filename, store)))
    elif memoised is not None:
        decorator, function_name = memoised
        primary = decorator
        related.append(backward_loc)
        notes.append(f"{function_name}() is memoised: every call after the first returns the first call's tensor, "
                     f"with its graph, which the backward() "
                     f"{'on line ' + str(previous.site.lineno) + ' ' if previous and previous.site else ''}freed "
                     f"(the cache has answered calls: {function_name}.cache_info().hits > 0)")
        helps.append(Suggestion(f"compute {function_name}() on every call (delete this cache decorator): each forward "
                                "then builds its own graph, through the weights as they are now",
                                None, Location(**{**decorator.__dict__, "role": "", "note": ""})))
    else:
        if previous is not None and previous.site is not None:
            notes.append(f"the backward() on line {previous.site.lineno} freed the saved tensors of this graph")
    write = _inplace_write_between(scope, frame_locals, previous, statement, loop if same_line else None) \
        if scope is not None else None
    if kind == "enclosing":
        notes.append(f"{scope.node.name}() is called again after its backward() (an optimizer's closure is "
                     "evaluated again at new weights), so retain_graph=True is not suggested: each call is meant to "
                     f"compute {carrier[0]} anew, and with the old graph it would reuse the first call's values")
    elif _step_ran_between(recorder, previous, call):
        notes.append("an optimizer step() runs between the two backward() calls, so retain_graph=True is not "
                     "suggested: the second backward() would go through a graph whose saved parameters step() "
                     "may have changed in place")
    elif write is not None:
        written, line = write
        notes.append(f"line {line} writes {written} in place between the two backward() calls, so retain_graph=True "
                     f"is not suggested: if the graph saved {written}, the second backward() would fail with "
                     "'modified by an inplace operation'")
    elif leaf_write_note is not None:
        notes.append(leaf_write_note)
    else:
        helps.append(_retain_graph_suggestion(previous, alternative=any(h is not None for h in helps)))
    if not [h for h in helps if h is not None]:
        helps.append(Suggestion(
            f"decide which backward() should go through the graph of {carrier[0] if carrier else root_name}: "
            "compute it again before the second backward(), or detach it where the other loss uses it"))
    primary, related = _earlier_backward_first(primary, backward_loc, related, helps, previous)
    diagnosis = Diagnosis(code=codes.BACKWARD_TWICE, title=codes.title(codes.BACKWARD_TWICE), severity="error",
                          primary=primary, related=[loc for loc in related if loc is not None],
                          tensor=tensor_info(tensor, carrier[0]) if tensor is not None else (
                              tensor_info(roots[0], root_name) if roots else None),
                          notes=notes, help=[h for h in helps if h is not None])
    diagnosis.extra.update({"freed_nodes": [type(n).__name__ for n in frontier[:5]],
                            "carrier": carrier[0] if carrier else None,
                            "freed_by_line": previous.site.lineno if previous is not None and previous.site else None})
    return diagnosis


def _reset_in_place(recorder, roots, frontier, previous, call, site) -> Diagnosis | None:
    """State cleared in place (`state.zero_()`) between the two backward() calls: the reset's node
    links the new graph to the freed one. The reset's line, and the detach after it."""
    if not frontier or previous is None:
        return None
    methods = resets_into_freed_graph(roots, frontier)
    found = reset_write_site(recorder, methods, previous.seq, call.seq) if methods else None
    if found is None:
        return None
    write_site, method = found
    change = detach_after_reset(write_site, method)
    reset_text = change[0] if change is not None else f"{method}()"
    primary = location_of(write_site, role="reset",
                          note=f"{reset_text} sets new values but keeps the state's graph: the next forward starts "
                               "from it")
    same_line = previous.site is not None and site is not None and previous.site.code is site.code and \
        previous.site.lineno == site.lineno
    related = [location_of(previous.site, role="freed", note="this backward() freed the graph")
               if previous.site is not None and not same_line else None,
               location_of(site, role="backward", note="second backward() through the freed graph")]
    notes = [f"{method}() writes in place, and autograd records the write on top of the state's history: the state "
             "is new constants, yet its graph still leads into the graph of the sample before, which the backward() "
             f"{'on line ' + str(previous.site.lineno) + ' ' if previous.site is not None else ''}"
             f"{'in the previous iteration ' if same_line else ''}freed"]
    helps = [change[1]] if change is not None else [Suggestion(
        f"detach the state right after {method}() (or make a new tensor for it), so each sample's graph starts "
        "from constants")]
    diagnosis = Diagnosis(code=codes.BACKWARD_TWICE, title=codes.title(codes.BACKWARD_TWICE), severity="error",
                          primary=primary, related=[loc for loc in related if loc is not None],
                          tensor=tensor_info(roots[0], "the loss") if roots else None, notes=notes, help=helps)
    diagnosis.extra.update({"freed_nodes": [type(n).__name__ for n in frontier[:5]], "carrier": None,
                            "reset": method,
                            "freed_by_line": previous.site.lineno if previous.site is not None else None})
    return diagnosis


def _same_loss_backpropagated_again(recorder, previous, call, roots, scope, statement, root_name
                                    ) -> Diagnosis | None:
    """AD302 for a backward() of the very tensor whose backward() already ran (the same root node),
    with no step() between and the first call's gradients still on every leaf: a helper (a loss
    criterion) that calls backward() on the loss it returns, and a caller that calls it again.
    The gradients the program means are already accumulated; retain_graph=True on the first call
    would add them a second time. The help deletes the second call (the statement is rewritten
    together with its neighbour in the block, as the neighbour alone)."""
    site = call.site
    if previous is None or previous.site is None or previous.newest_node is None or site is None \
            or len(roots) != 1 or roots[0].grad_fn is None or statement is None or scope is None:
        return None
    if roots[0].grad_fn._sequence_nr() != previous.newest_node or _step_ran_between(recorder, previous, call):
        return None
    if previous.site.code is site.code and previous.site.lineno == site.lineno:
        return None  # the same line in a loop: another iteration's loss, not a second call on this one
    call_node = backward_call_node(statement)
    if not (isinstance(statement, ast.Expr) and statement.value is call_node and call_name(call_node) == "backward"
            and statement.lineno == statement.end_lineno):
        return None
    walked, finished = graph_nodes([roots[0].grad_fn])
    leaves = [node.variable for node in walked if getattr(node, "variable", None) is not None]
    # A zero_grad() (or `.grad = None`) between the two calls leaves no gradient behind: then the
    # second call is what puts them back, and deleting it would change what trains.
    if not finished or not leaves or any(leaf.grad is None for leaf in leaves) \
            or not any(bool(leaf.grad.any()) for leaf in leaves):
        return None
    block = block_holding(scope.tree, statement) if scope.tree is not None else None
    if not block or len(block) < 2:
        return None
    index = block.index(statement)
    neighbour = block[index - 1] if index > 0 else block[index + 1]
    kept_text = segment(site.filename, neighbour)
    if kept_text is None or neighbour.lineno != neighbour.end_lineno or "\n" in kept_text:
        return None
    first, last = (neighbour, statement) if index > 0 else (statement, neighbour)
    change_location = statement_location(site.filename, first)
    change_location.end_line, change_location.end_column = last.end_lineno, last.end_col_offset
    primary = location_of(site, role="backward", note=f"backward() of {root_name} a second time")
    earlier = location_of(previous.site, role="freed",
                          note=f"this backward() already ran on the same tensor ({root_name}) and freed its graph")
    earlier_frames = [location_of(s, role="called", note="called from here") for s in previous.stack[1:2]
                      if s is not None and not in_installed_package(s.filename)]
    notes = [f"both backward() calls start from the same tensor ({root_name}, the same {type(roots[0].grad_fn).__name__} "
             f"node): the one on line {previous.site.lineno} already put its gradients into .grad, and no step() ran "
             "between the two",
             "retain_graph=True on the first call is not suggested: the second backward() would add the same "
             "gradients again (every gradient doubled)"]
    helps = [Suggestion(f"delete this second {root_name}.backward(): the backward() on line {previous.site.lineno} "
                        "has already computed these gradients", kept_text, change_location)]
    diagnosis = Diagnosis(code=codes.BACKWARD_TWICE, title=codes.title(codes.BACKWARD_TWICE), severity="error",
                          primary=primary, related=[earlier] + earlier_frames,
                          tensor=tensor_info(roots[0], root_name), notes=notes, help=helps)
    diagnosis.extra.update({"freed_nodes": [type(roots[0].grad_fn).__name__], "carrier": None,
                            "freed_by_line": previous.site.lineno, "same_root": True})
    return diagnosis


# The decorators of functools that memoise a function's results.
CACHE_DECORATORS = ("lru_cache", "cache")


def _cached_tensors(wrapper) -> list[torch.Tensor]:
    """The tensors a functools.lru_cache/cache wrapper holds as results (its cache, read through the
    references the garbage collector sees: a dict of results, or of entries holding them)."""
    import gc

    found = []
    for referent in gc.get_referents(wrapper):
        if not isinstance(referent, dict):
            continue
        for entry in list(referent.values()):
            held = [entry] if isinstance(entry, torch.Tensor) else \
                [r for r in gc.get_referents(entry) if isinstance(r, torch.Tensor)] if not isinstance(
                    entry, (str, bytes, int, float, type(None))) else []
            found.extend(held)
    return found


def _memoised_function(values: dict, frontier: list[Any]) -> tuple[Location, str] | None:
    """(the decorator's location, the function's name) of the one function of the user's code,
    memoised with functools.lru_cache or functools.cache, whose cache has answered a call and holds
    a tensor whose graph the failing backward() reaches (a method of the class of a module in
    `values`, or a function among them): that tensor is returned again, with the graph of the call
    that made it. None when there is none, or several."""
    import functools

    objects = list(values.values())
    for value in list(objects):
        if isinstance(value, torch.nn.Module):
            objects.extend(value.modules())
    found = {}
    for value in objects:
        owners = [vars(cls) for cls in type(value).__mro__ if cls.__module__ not in ("builtins",)
                  and not cls.__module__.startswith("torch")] if isinstance(value, torch.nn.Module) else [{"": value}]
        for attributes in owners:
            for candidate in attributes.values():
                if isinstance(candidate, functools._lru_cache_wrapper) and candidate.cache_info().hits > 0 \
                        and any(t.grad_fn is not None and _reaches(t, frontier) for t in _cached_tensors(candidate)):
                    found[id(candidate)] = candidate
    if len(found) != 1:
        return None
    wrapper = next(iter(found.values()))
    code = getattr(getattr(wrapper, "__wrapped__", None), "__code__", None)
    if code is None or in_installed_package(code.co_filename):
        return None
    tree = parse_file(code.co_filename)
    function = next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == code.co_name and node.decorator_list
                     and node.decorator_list[0].lineno == code.co_firstlineno), None) if tree is not None else None
    decorators = [d for d in (function.decorator_list if function is not None else [])
                  if _decorator_name(d) in CACHE_DECORATORS]
    if len(decorators) != 1 or decorators[0].lineno != decorators[0].end_lineno:
        return None
    location = statement_location(code.co_filename, decorators[0], role="cached",
                                  note=f"{code.co_name}() keeps the tensor of its first call, with its graph")
    return location, code.co_name


def _decorator_name(node: ast.expr) -> str | None:
    """`lru_cache` for `@functools.lru_cache(maxsize=None)`, `cache` for `@cache`."""
    target = node.func if isinstance(node, ast.Call) else node
    return getattr(target, "attr", getattr(target, "id", None))


def _made_outside_function(scope: Scope, values: dict, frontier: list[Any]):
    """(name, assignment, value) for a tensor with a graph through the freed nodes that the
    function around the backward() reads but never assigns, and that a one-line statement of the
    enclosing scope makes (`pred = model(x)` before `def closure(): ...`); None otherwise."""
    function = scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    assigned = {name for _statement, names, _value in scope.assignments for name in names}
    enclosing = scope.parents.get(function)
    while enclosing is not None and not isinstance(enclosing, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        enclosing = scope.parents.get(enclosing)
    if enclosing is None:
        return None
    outer = Scope(scope.filename, enclosing.lineno if not isinstance(enclosing, ast.Module) else 0)
    for name in _names_loaded_in(function):
        value = values.get(name)
        if name in assigned or not isinstance(value, torch.Tensor) or value.grad_fn is None \
                or not _reaches(value, frontier):
            continue
        found = outer.latest_assignment(name, function.lineno) or outer.latest_assignment(name, function.end_lineno + 10**6)
        if found is None or not isinstance(found[0], ast.Assign) or found[0].lineno != found[0].end_lineno:
            continue
        return name, found[0], value
    return None


def _enclosing_input_helps(scope: Scope, roots: list[torch.Tensor], name: str, tensor: torch.Tensor | None,
                           assignment: ast.stmt) -> list[Suggestion]:
    """For `name`, made outside the function that calls backward() and read by every call: compute
    it inside the function, before the statement that first reads it, so that each call builds
    its own graph through the weights as they are at that call (what an optimizer's closure is
    for); when no weight gets its gradient only through it, detaching it where it is made (a
    fixed input) is the alternative."""
    filename, function = scope.filename, scope.node
    trained_only_through = _leaves_only_through(roots, [tensor.grad_fn]) if tensor is not None else set()
    first = next((statement for statement in function.body if name in _names_loaded_in(statement)), None)
    made, first_text = segment(filename, assignment), segment(filename, first) if first is not None else None
    through = (f" ({len(trained_only_through)} tensor(s) that require grad get their gradient only through {name})"
               if trained_only_through else "")
    message = (f"compute {name} inside {function.name}(), before its first use, so that each call builds its own "
               f"graph through the weights as they are at that call{through}")
    if first is None or first_text is None or made is None or first.lineno != first.end_lineno:
        helps = [Suggestion(message)]
    else:
        helps = [Suggestion(message, f"{made}\n{first_text}", statement_location(filename, first))]
    detached = _detached_assignment(filename, assignment) if not trained_only_through else None
    if detached is not None:
        helps.append(Suggestion(f"or, if {name} is a fixed input of {function.name}() (a target, old values), "
                                "detach it where it is made", detached, statement_location(filename, assignment)))
    return helps


def _made_before(tensor: torch.Tensor | None, newest_before: int) -> bool:
    """Whether the tensor's own node was made before the earlier backward() (it is the old
    graph itself, not a new value built on top of it)."""
    try:
        return tensor is not None and tensor.grad_fn is not None and tensor.grad_fn._sequence_nr() <= newest_before
    except Exception:
        return False


def _cache_return_guard(module: torch.nn.Module, attribute: str) -> tuple[str, ast.If] | None:
    """In the module's class, an `if <test>:` whose body only returns `self.<attribute>` and whose
    test reads a `self.` attribute (the key the cache was made for), with no else; None if none or
    several."""
    definition = _class_definition(module)
    if definition is None:
        return None
    filename, class_node = definition
    guards = []
    for node in ast.walk(class_node):
        if not (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
                and isinstance(node.body[0], ast.Return) and node.body[0].value is not None):
            continue
        if not _is_self_attribute(node.body[0].value, attribute):
            continue
        if any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
               for n in ast.walk(node.test)):
            guards.append(node)
    return (filename, guards[0]) if len(guards) == 1 else None


def _recompute_cached(filename: str, assignment: ast.stmt, attribute: str) -> list[Suggestion]:
    """`if self.x is None: self.x = f(...)`: compute it in every call (the guard goes), so each
    loss gets its own graph, through the weights as they are now. Detaching it instead would
    leave those weights untrained by every later loss."""
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    guard = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.If) and node.body == [assignment] and not node.orelse:
            guard = node
    reads_attribute = guard is not None and any(
        isinstance(n, ast.Attribute) and n.attr == attribute for n in ast.walk(guard.test))
    advice = (f"compute self.{attribute} in every call instead of keeping it from an earlier one: each backward() "
              "then goes through its own graph, and through the weights as they are now (detaching it would "
              "stop every later loss from training the weights it is computed from)")
    if not reads_attribute or assignment.lineno != assignment.end_lineno:
        return [Suggestion(advice)]
    return [Suggestion(advice, segment(filename, assignment), statement_location(filename, guard))]


def _earlier_backward_first(primary: Location, backward_loc: Location, related: list, helps: list,
                            previous) -> tuple[Location, list]:
    """When the first help changes the earlier backward() (retain_graph=True, or create_graph=True
    on an earlier torch.autograd.grad), that earlier call is the line to change: it becomes the
    primary location, and the failing call and the tensor that carries the graph (when one is
    named) related ones. A second loss computed in a helper function from a tensor of the first
    loss's graph (GDPP on the discriminator's features) fails inside the helper, far from the line."""
    first = next((h for h in helps if h is not None), None)
    if first is None or not first.replacement or first.location is None \
            or previous is None or previous.site is None:
        return primary, related
    freed = next((loc for loc in related if loc is not None and loc.role == "freed"), None)
    if freed is None or freed.file != first.location.file or freed.line != first.location.line:
        return primary, related
    shown_before = [primary] if primary is not backward_loc else []
    return freed, shown_before + [backward_loc] + [loc for loc in related if loc is not freed and loc is not backward_loc]


def _retain_graph_suggestion(previous, alternative: bool = True) -> Suggestion | None:
    message = ("if both backward passes are meant to go through the same graph, pass retain_graph=True to "
               "the earlier backward()")
    if alternative:
        message = "or, " + message
    if previous is None or previous.site is None:
        return Suggestion(message)
    filename = previous.site.filename
    scope = Scope(filename, previous.site.lineno)
    statement = scope.statement_at(previous.site.lineno) if scope.tree is not None else None
    call = backward_call_node(statement) if statement is not None else None
    keyword = "retain_graph"
    if call is not None and call_name(call) == "grad":
        # The earlier pass is torch.autograd.grad: when the second loss uses the gradient it returned
        # (a gradient penalty), retain_graph=True would keep the graph but leave that gradient a
        # constant, and the penalty would train nothing; create_graph=True keeps the graph too and
        # gives the gradient a graph of its own. When the second loss does not use it, both give
        # the same gradients.
        keyword = "create_graph"
        message = ("if the second loss uses the gradient torch.autograd.grad returns (a gradient penalty), pass "
                   "create_graph=True to that call: it keeps the graph, as retain_graph=True would, and the "
                   "gradient then has a graph of its own that the second backward() differentiates "
                   "(with retain_graph=True alone the penalty would train nothing)")
        if alternative:
            message = "or, " + message
    if call is None or statement.lineno != statement.end_lineno or \
            any(k.arg in ("retain_graph", keyword) for k in call.keywords):
        return Suggestion(message)
    call_text = segment(filename, call)
    inner = call_text[:-1].rstrip()
    new_call = inner + (f"{keyword}=True)" if inner.endswith("(") else f", {keyword}=True)")
    return Suggestion(message, replace_node_text(filename, statement, call, new_call), statement_location(filename, statement))


def _iteration_boundary(scope: Scope, backward_statement: ast.stmt, assignment: ast.stmt | None) -> ast.stmt:
    """The statement after which the carried tensor is detached: the backward() call, or the
    assignment that carries the tensor to the next iteration when it comes later in the same
    block (`hidden = state` after `loss.backward()`: a detach before it would be overwritten)."""
    if assignment is None or assignment.lineno <= backward_statement.lineno \
            or assignment.lineno != assignment.end_lineno or scope is None or scope.tree is None:
        return backward_statement
    for node in ast.walk(scope.tree):
        for block in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if isinstance(block, list) and backward_statement in block and assignment in block:
                return assignment
    return backward_statement


def _accumulator_reset(scope: Scope, loop: ast.AST, backward_statement: ast.stmt, root_expr, name: str,
                       assignment: ast.stmt) -> tuple[ast.stmt, str] | None:
    """(the statement after which to reset, the initial value's text) when `name` is a sum carried
    across iterations (`total = total + loss`, `total += loss`), backward() is called on `name`
    itself, and before the loop `name` starts from a value without tensors of the program (`0.0`,
    `torch.zeros(())`): the sum has been backpropagated and starts again, where a detach would keep
    the old terms' values in it. The reset goes after the last statement of backward()'s block that
    reads `name` (`losses.append(total.item())`). None otherwise."""
    if not (isinstance(root_expr, ast.Name) and root_expr.id == name and scope is not None and scope.tree is not None):
        return None
    adds = isinstance(assignment, ast.AugAssign) and isinstance(assignment.op, ast.Add) or (
        isinstance(assignment, ast.Assign) and isinstance(assignment.value, ast.BinOp)
        and isinstance(assignment.value.op, ast.Add)
        and any(isinstance(side, ast.Name) and side.id == name
                for side in (assignment.value.left, assignment.value.right)))
    found = scope.latest_assignment(name, loop.lineno)
    start = found[0] if found is not None else None
    if not adds or not (isinstance(start, ast.Assign) and start.lineno < loop.lineno and len(start.targets) == 1):
        return None
    if not _holds_no_program_value(start.value):
        return None
    for node in ast.walk(loop):
        for block in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not (isinstance(block, list) and backward_statement in block):
                continue
            after = block[block.index(backward_statement) + 1:]
            readers = [s for s in after if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(s))]
            if any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                   for s in after for n in ast.walk(s)):
                return None  # the block already rebinds it
            boundary = readers[-1] if readers else backward_statement
            if boundary.lineno != boundary.end_lineno:
                return None
            return boundary, segment(scope.filename, start.value)
    return None


_FACTORIES = {"rand", "randn", "randint", "rand_like", "randn_like", "zeros", "ones", "full", "empty", "tensor",
              "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace", "logspace", "eye",
              "as_tensor", "normal"}


def _requires_grad_keyword(node: ast.AST) -> ast.keyword | None:
    """The literal `requires_grad=True` of a torch factory call (`torch.rand(..., requires_grad=True)`)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FACTORIES
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"):
        return None
    for keyword in node.keywords:
        if keyword.arg == "requires_grad" and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
            return keyword
    return None


def _held_by_the_program(leaf: torch.Tensor) -> bool:
    """Whether anything but autograd's graph (and this analysis) holds the leaf: a name, a list, a
    module's parameters, an optimizer's groups. Unknown counts as held."""
    import gc
    import sys

    if isinstance(leaf, torch.nn.Parameter):
        return True
    try:
        referrers = gc.get_referrers(leaf)
    except Exception:
        return True
    here = sys._getframe()
    try:
        for referrer in referrers:
            if isinstance(referrer, types.FrameType):
                if referrer is here or "autograd_doctor" in referrer.f_code.co_filename:
                    continue
            return True
        return False
    finally:
        del referrers, here


def _anonymous_leaf_input(filename: str, chain: list[ast.stmt], value: torch.Tensor,
                          only_through: set[int]) -> tuple[ast.stmt, str, str] | None:
    """(statement, that statement without the keyword, the factory call's text) where the only
    tensor that requires grad behind `value` is made inside the expression that computes it
    (`t = 1 + 3 * torch.rand(20, 1, requires_grad=True)`): a leaf nothing in the program holds, so
    no one can read its gradient and no optimizer steps it; the graph it gives `value` trains
    nothing. Without the keyword the values are the same and `value` carries no graph. None unless
    exactly one such call is in the lines that build `value` and its leaf is the one reached only
    through `value`, with no other leaf below it."""
    if len(only_through) != 1 or value.grad_fn is None:
        return None
    walked, finished = graph_nodes([value.grad_fn], MAX_NODES)
    leaves = [node.variable for node in walked if getattr(node, "variable", None) is not None]
    if not finished or len(leaves) != 1 or id(leaves[0]) not in only_through:
        return None
    leaf = leaves[0]
    del walked, leaves
    if _held_by_the_program(leaf):
        return None
    found = []
    for statement in chain:
        if any(isinstance(node, ast.NamedExpr) for node in ast.walk(statement)):
            return None
        value_node = statement.value if isinstance(statement, ast.Assign) else None
        for node in ast.walk(statement):
            keyword = _requires_grad_keyword(node)
            if keyword is not None:
                if node is value_node:
                    return None  # the statement's result is the leaf itself, held by its name
                found.append((statement, node, keyword))
    if len(found) != 1:
        return None
    statement, call, keyword = found[0]
    call_text = segment(filename, call)
    if call_text is None or keyword.lineno != call.lineno or keyword.end_lineno != call.lineno:
        return None
    start, end = keyword.col_offset - call.col_offset, keyword.end_col_offset - call.col_offset
    head = call_text[:start].rstrip()
    if head.endswith(","):
        head = head[:-1].rstrip()
    elif call_text[end:].lstrip().startswith(","):
        end = end + call_text[end:].index(",") + 1
        head = call_text[:start]
    new_call = head + call_text[end:].lstrip() if head.endswith("(") else head + call_text[end:]
    replaced = replace_node_text(filename, statement, call, new_call)
    if replaced is None:
        return None
    return statement, replaced, call_text


def _holds_no_program_value(node: ast.expr) -> bool:
    """A number (`0.0`, `-1`), or a torch factory called on numbers (`torch.zeros(())`,
    `torch.tensor(0.0)`): a start value made of nothing the program computes."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float))
    if isinstance(node, ast.UnaryOp):
        return _holds_no_program_value(node.operand)
    if isinstance(node, ast.Tuple):
        return all(_holds_no_program_value(element) for element in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
            and node.func.value.id == "torch":
        return all(_holds_no_program_value(argument) for argument in node.args) and all(
            isinstance(keyword.value, (ast.Constant, ast.Attribute)) for keyword in node.keywords)
    return False


def _detach_again(name: str, value) -> str:
    """The statement that rebinds `name` to its value without grad history (element-wise
    for a tuple or list, such as an LSTM's (h, c))."""
    if isinstance(value, (tuple, list)):
        return f"{name} = tuple(s.detach() for s in {name})"
    return f"{name} = {name}.detach()"


def _graph_chain_before_loop(scope: Scope, values: dict, loop: ast.AST | None,
                             assignment: ast.stmt) -> list[ast.stmt]:
    """The statements before `loop` that build the graph of the tensor `assignment` makes: that
    statement and, through the names it reads, every earlier statement whose tensor is itself
    part of a graph (has a grad_fn). Those are the lines that must run again in each iteration:
    computing only the last one again would still go through the freed graph of the others.
    Tensors without a graph (data, one-hot inputs, weights) stay where they are."""
    if loop is None:
        return [assignment]
    assigned_in_loop = set()
    for statement, names, _ in scope.assignments:
        if loop.lineno <= statement.lineno <= loop.end_lineno:
            assigned_in_loop |= names
    chain, pending = {id(assignment): assignment}, [assignment]
    while pending:
        statement = pending.pop()
        value = statement.value if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else None
        for name in loaded_names(value) if value is not None else ():
            tensors = _tensors_in(values.get(name))
            if name in assigned_in_loop or not tensors or all(t.grad_fn is None for t in tensors):
                continue
            found = scope.latest_assignment(name, statement.lineno)
            # Only plain assignments in the loop's own block: a statement inside another loop
            # (`loss += ...` over the data) cannot be repeated as it is.
            if found is not None and id(found[0]) not in chain and found[0].lineno < loop.lineno \
                    and isinstance(found[0], ast.Assign) and scope.parents.get(found[0]) is scope.parents.get(loop):
                chain[id(found[0])] = found[0]
                pending.append(found[0])
    return sorted(chain.values(), key=lambda statement: statement.lineno)


def _recompute_in_loop(filename: str, loop: ast.AST | None, statements: list[ast.stmt]) -> tuple[Location, str] | None:
    """(where, replacement) that repeats one-line assignments made before a loop (in their
    order) at the top of the loop's body, so the tensor is computed anew (with a new graph) in
    each iteration."""
    if loop is None or not statements:
        return None
    if any(not isinstance(s, ast.Assign) or s.lineno != s.end_lineno for s in statements):
        return None
    first = loop.body[0]
    first_text = segment(filename, first)
    assigned = [segment(filename, s) for s in statements]
    if first.lineno != first.end_lineno or first_text is None or any(text is None for text in assigned):
        return None
    return statement_location(filename, first), "\n".join(assigned + [first_text])


_NOT_DATA_WRITES = {"requires_grad_", "share_memory_", "retain_grad", "detach_", "record_stream"}


def _inplace_write_between(scope: Scope, values: dict, previous, statement: ast.stmt | None,
                           loop: ast.AST | None) -> tuple[str, int] | None:
    """(name, line) of the first in-place write to a tensor variable between the earlier
    backward() and this one (in a loop where both are the same line: anywhere in its body).
    Writes to gradients (`w.grad.zero_()`) do not count: a graph never saves a .grad."""
    if statement is None:
        return None
    if loop is not None:
        region, lo, hi = loop, loop.lineno - 1, loop.end_lineno + 1
    elif previous is not None and previous.site is not None and previous.site.filename == scope.filename \
            and enclosing_function(scope.tree, previous.site.lineno) is (scope.node or scope.tree):
        # Lines are in running order only within one function: an earlier backward() inside a helper
        # the loop calls is above the loop's own lines, not before them.
        region, lo, hi = scope.node or scope.tree, previous.site.lineno, statement.lineno
    else:
        return None
    found = []
    for node in ast.walk(region):
        if not lo < getattr(node, "lineno", 0) < hi:
            continue
        target = None
        if isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
            target = node.targets[0].value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                and not node.func.attr.startswith("_") and node.func.attr not in _NOT_DATA_WRITES:
            target = node.func.value
        while isinstance(target, (ast.Subscript, ast.Attribute)) and not (
                isinstance(target, ast.Attribute) and target.attr == "grad"):
            target = target.value  # w[0] += 1, w.data.mul_(2): the write lands in w
        if isinstance(target, ast.Name) and isinstance(values.get(target.id), torch.Tensor):
            found.append((node.lineno, target.id))
    if not found:
        return None
    line, name = min(found)
    return name, line


def _leaf_written_between(recorder, previous, call, tensor: torch.Tensor | None) -> tuple[int, str] | None:
    """(line, function) of a logged in-place write, run between the earlier backward() and this
    one, into a leaf that `tensor`'s graph reaches (a weight it was computed from)."""
    if previous is None or tensor is None:
        return None
    leaves = reached_leaves([tensor])
    for entry in getattr(recorder.write_log, "entries", ()):
        if not previous.seq < entry.seq < call.seq or entry.target_ref is None or not entry.stack:
            continue
        target = entry.target_ref()
        if target is not None and id(target) in leaves:
            site = entry.stack[0]
            return site.lineno, site.code.co_name if site.code.co_name != "<module>" else ""
    return None


def _recompute_in_statement(scope: Scope, statement: ast.stmt | None, name: str,
                            assignment: ast.stmt | None) -> str | None:
    """The one-line `statement` with each read of `name` replaced by the value it was assigned
    (`criterion(output, y).backward()` -> `criterion(model(x), y).backward()`): the forward pass
    done again, when nothing it reads was rebound in between."""
    if statement is None or statement.lineno != statement.end_lineno or not isinstance(assignment, ast.Assign) \
            or len(assignment.targets) != 1 or not isinstance(assignment.targets[0], ast.Name) \
            or assignment.lineno != assignment.end_lineno or assignment.lineno >= statement.lineno:
        return None
    inputs = set(loaded_names(assignment.value)) | {name}
    if any(assignment.lineno < other.lineno < statement.lineno and names & inputs
           for other, names, _value in scope.assignments):
        return None
    value = segment(scope.filename, assignment.value)
    text = segment(scope.filename, statement)
    if value is None or text is None:
        return None
    if not isinstance(assignment.value, (ast.Call, ast.Name, ast.Attribute, ast.Subscript)):
        value = f"({value})"
    reads = [node for node in ast.walk(statement)
             if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)]
    text = replace_nodes_text(scope.filename, statement, [(node, value) for node in reads])
    return text if reads else None


def _statement_calling(scope: Scope, method: str, after_line: int, before_line: int) -> ast.stmt | None:
    """The first statement of the scope strictly between two lines that calls `<x>.<method>()`."""
    best = None
    for node in ast.walk(scope.node or scope.tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) \
                and node.value.func.attr == method and after_line < node.lineno < before_line:
            if best is None or node.lineno < best.lineno:
                best = node
    return best


def _step_ran_between(recorder, previous, call) -> bool:
    """Whether an optimizer step() ran, at run time, between the earlier backward() and
    this one (the recorder sees every step() call; a `.step(` in the source may not run)."""
    if previous is None:
        return False
    return any(previous.seq < seq < call.seq for _optimizer, _name, _stack, seq in recorder.optimizer_steps)


def _optimizer_parameters(scope: Scope, values: dict, after_line: int) -> set[int] | None:
    """Ids of the parameters updated by the first `<optimizer>.step()` after a line."""
    step = _statement_calling(scope, "step", after_line, 10**9)
    if step is None:
        return None
    optimizer = step.value.func.value
    value = values.get(optimizer.id) if isinstance(optimizer, ast.Name) else None
    groups = getattr(value, "param_groups", None)
    if not isinstance(groups, list):
        return None
    return {id(p) for group in groups for p in group.get("params", [])}


def _first_use(scope: Scope, name: str, after_line: int, before_line: int) -> ast.stmt | None:
    """The first one-line assignment, or call (`kept.append(x * name)`), strictly between two
    lines that reads `name`."""
    found = [statement for statement, _names, value in scope.assignments
             if after_line < statement.lineno < before_line and statement.lineno == statement.end_lineno
             and name in loaded_names(value)]
    for node in ast.walk(scope.node or scope.tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                after_line < node.lineno < before_line and node.lineno == node.end_lineno and \
                name in loaded_names(node.value) and backward_call_node(node) is None:
            found.append(node)
    return min(found, key=lambda statement: statement.lineno) if found else None


def _with_detached(filename: str, statement: ast.stmt, name: str) -> str | None:
    """The one-line statement with every read of `name` replaced by `name.detach()`."""
    text = segment(filename, statement)
    if text is None:
        return None
    reads = [node for node in ast.walk(statement)
             if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)]
    text = replace_nodes_text(filename, statement, [(node, f"{name}.detach()") for node in reads])
    return text if reads else None


def _shared_graph_suggestions(scope: Scope, values: dict, previous, statement: ast.stmt | None, name: str,
                              tensor: torch.Tensor, assignment: ast.stmt | None) -> list[Suggestion]:
    """Two backward() calls of one pass through the graph of `name` (two losses, a GAN)."""
    filename = scope.filename
    first_line = previous.site.lineno
    if statement is None or previous.site.filename != filename:
        return []
    first = scope.statement_at(first_line)
    helps: list[Suggestion] = []
    # A GAN's discriminator step: the optimizer stepped after one backward() does not own the
    # parameters behind `name`; that loss should see `name` detached.
    leaves = reached_leaves([tensor])
    first_owner = _optimizer_parameters(scope, values, first_line)
    second_owner = _optimizer_parameters(scope, values, statement.lineno)
    made_at = assignment.lineno if assignment is not None else 0
    use = None
    if first_owner is not None and second_owner is not None:
        if not (first_owner & leaves) and second_owner & leaves:
            use = _first_use(scope, name, made_at, first_line)
        elif first_owner & leaves and not (second_owner & leaves):
            use = _first_use(scope, name, first_line, statement.lineno)
    if use is not None:
        replaced = _with_detached(filename, use, name)
        if replaced:
            helps.append(Suggestion(
                f"the optimizer stepped after this loss does not train what made {name}: give this loss "
                f"{name}.detach(), so its backward() leaves {name}'s graph to the other loss",
                replaced, statement_location(filename, use)))
            return helps
    # Two losses ready before the first backward(), with their backward() calls side by side:
    # one backward() of their sum gives the same gradients.
    first_call = backward_call_node(first) if first is not None else None
    second_call = backward_call_node(statement)
    first_root = root_expression(first) if first is not None else None
    second_root = root_expression(statement)
    if (first is not None and first.end_lineno + 1 == statement.lineno and first_call is not None
            and second_call is not None and call_name(first_call) == call_name(second_call) == "backward"
            and not first_call.args and not first_call.keywords and not second_call.args
            and not second_call.keywords and isinstance(second_root, ast.Name) and first_root is not None
            and scope.latest_assignment(second_root.id, first_line) is not None
            and scope.parents.get(first) is scope.parents.get(statement)):
        total = f"({segment(filename, first_root)} + {second_root.id}).backward()"
        location = statement_location(filename, first)
        location.end_line = statement.end_lineno
        location.end_column = statement.end_col_offset
        helps.append(Suggestion("both losses are ready before the first backward(): call backward() once, on "
                                "their sum (the gradients add up the same way)", total, location))
    return helps
