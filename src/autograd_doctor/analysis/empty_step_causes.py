"""What left an optimizer's parameters without gradients (AD214), found in the training loop
around its step() call and checked against what is there at run time.

Two causes, each named at the line to change:

- **a value computed from the parameters, assigned through `.data`.** `layer.weight.data = y`,
  where `y` was computed from the optimizer's parameters (a hypernetwork's output, a prompt
  projected into another model's embedding space), copies `y`'s values and drops its graph: the
  loss reaches `layer.weight`, a leaf, and stops there. Run-time evidence: the tensor bound to
  `y` at the step has a graph that reaches the optimizer's parameters. When `layer.weight` is a
  registered parameter of a module, rewritten by this statement at every pass of the loop and
  held by no optimizer, the help makes the computed value the module's attribute
  (`del layer.weight; layer.weight = y`): the forward values are the same, and the gradient goes
  on into `y`'s graph. The module no longer lists that tensor among its parameters (its
  state_dict loses the entry), which the help says.
- **the optimizer built on another model than the one the loop trains.**
  `AdamW(noise_pred_net.parameters())` while the loop calls `dp_noise_pred_net(...)`: the module
  the construction reads the parameters from is not mentioned in the loop, one module called in
  the loop has parameters with gradients, and no live optimizer holds them. The help builds the
  optimizer from that module's parameters instead. Where the loop is a helper's
  (`train(model, optimizer, ...)`) and the optimizer was built at the top level
  (`optimizer_dora = Adam(model_lora.parameters())`, then `train(model_dora, optimizer_dora)`), the
  construction is the one assignment to a name bound to this optimizer, and the help uses the one
  global name bound to the module the helper's loop calls (`model_dora`).
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import frame_values, live_frame, reached_leaves
from autograd_doctor.analysis.stale_optimizer import Budget, optimizer_construction, optimizers_holding
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, segment, statement_location

# Graph nodes walked from an assigned value in search of the optimizer's parameters.
MAX_WALKED_NODES = 5000


def innermost_loop(tree: ast.AST, line: int) -> ast.AST | None:
    """The innermost `for`/`while` loop whose body covers `line`, within its function."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.While)) and node.body \
                and node.body[0].lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    if best is None:
        return None
    # A loop in an outer function does not count: the step() must be in the loop's own scope.
    for node in ast.walk(best):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) \
                and node.lineno <= line <= (node.end_lineno or node.lineno):
            return None
    return best


def _loop_and_values(stack):
    if not stack:
        return None
    site = stack[0]
    tree = parse_file(site.filename)
    frame = live_frame(site)
    if tree is None or frame is None:
        return None
    loop = innermost_loop(tree, site.lineno)
    if loop is None:
        return None
    return site, loop, frame_values(frame)


def data_assignment_cut(parameters: list, stack) -> tuple[Location, list[str], Suggestion | None] | None:
    """(the assignment's location, notes, a change or None) for a `x.data = y` statement in the
    loop around step() whose `y` has a graph that reaches the optimizer's parameters; else None."""
    found = _loop_and_values(stack)
    if found is None:
        return None
    site, loop, values = found
    parameter_ids = {id(p) for p in parameters}
    for node in ast.walk(loop):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "data"
                and isinstance(node.value, ast.Name)):
            continue
        value = values.get(node.value.id)
        if not isinstance(value, torch.Tensor) or value.grad_fn is None:
            continue
        reached = reached_leaves([value], MAX_WALKED_NODES) & parameter_ids
        if not reached:
            continue
        owner = node.targets[0].value
        owner_text = segment(site.filename, owner)
        location = statement_location(site.filename, node, role="cut",
                                      note=f"assigning through .data copies {node.value.id}'s values and drops its graph")
        notes = [f"{node.value.id} was computed from {len(reached)} of the optimizer's parameters, but `.data = ` "
                 f"copies its values into {owner_text} without recording the copy: backward() stops at "
                 f"{owner_text}, a leaf, and never reaches the tensors the optimizer holds"]
        return location, notes, _attribute_help(site.filename, node, owner, owner_text, values)
    return None


def _attribute_help(filename: str, statement: ast.Assign, owner: ast.AST, owner_text: str | None,
                    values: dict) -> Suggestion | None:
    """`del m.w` then `m.w = y`, when `owner` is `<module>.<name>`, a registered parameter of a
    module, held by no live optimizer (this statement overwrites it at every pass anyway)."""
    if owner_text is None or not isinstance(owner, ast.Attribute):
        return None
    module = _resolve(owner.value, values)
    if not isinstance(module, torch.nn.Module) or owner.attr not in module._parameters:
        return None
    parameter = module._parameters[owner.attr]
    if parameter is None or optimizers_holding([parameter], Budget(scans=1)) != []:
        return None  # an optimizer trains it, or that cannot be known: replacing it would change more
    value_text = segment(filename, statement.value)
    change = f"del {owner_text}\n{owner_text} = {value_text}"
    return Suggestion(f"make {value_text} itself the module's `{owner.attr}`, so that backward() goes on into "
                      f"its graph (the module then holds it as a plain attribute, not a parameter: its "
                      f"state_dict no longer lists it)", change,
                      statement_location(filename, statement))


def _resolve(node: ast.AST, values: dict):
    """The object a `name.attr.attr` chain names, from the frame's values, or None."""
    attributes = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in values:
        return None
    value = values[node.id]
    for attribute in reversed(attributes):
        if not isinstance(value, torch.nn.Module):
            return None
        value = value._modules.get(attribute, value._parameters.get(attribute))
        if value is None:
            return None
    return value


def other_model_trained(optimizer, parameters: list, stack) -> tuple[Location, list[str], Suggestion] | None:
    """(the construction's location, notes, the change) when the optimizer was built from the
    parameters of a module the loop around step() never mentions, while one module the loop calls
    got gradients that no live optimizer holds; else None."""
    found = _loop_and_values(stack)
    if found is None:
        return None
    site, loop, values = found
    construction = optimizer_construction(optimizer, stack) or _construction_by_identity(optimizer, site, values)
    if construction is None:
        return None
    filename, built = construction
    if filename != site.filename:
        return None
    sources = [node.func.value for node in ast.walk(built.value)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "parameters" and isinstance(node.func.value, ast.Name)]
    if len(sources) != 1:
        return None
    held_name = sources[0].id
    held_module = values.get(held_name)
    parameter_ids = {id(p) for p in parameters}
    if not isinstance(held_module, torch.nn.Module) \
            or not parameter_ids <= {id(p) for p in held_module.parameters()}:
        return None
    mentioned = {node.id for node in ast.walk(loop) if isinstance(node, ast.Name)}
    if held_name in mentioned:
        return None  # the loop uses that model: its missing gradients have another cause
    called = {node.func.id for node in ast.walk(loop) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    trained = []
    for name in sorted(called):
        module = values.get(name)
        if isinstance(module, torch.nn.Module) and module is not held_module:
            with_gradients = [p for p in module.parameters() if p.requires_grad and p.grad is not None]
            if with_gradients:
                trained.append((name, with_gradients))
    if len(trained) != 1:
        return None
    trained_name, with_gradients = trained[0]
    if optimizers_holding(with_gradients, Budget(scans=1)) != []:
        return None  # another optimizer trains that module, or that cannot be known
    # The name the construction's own scope has for that module: the loop's name where the optimizer
    # is built in the loop's function; else (a `train(model, optimizer, ...)` helper called with a
    # model and an optimizer built at the top level) the one global bound to the same module.
    built_name = trained_name if _same_function(filename, built, site.lineno) \
        else _global_name_of(values.get(trained_name), stack)
    if built_name is None:
        return None
    change = replace_node_text(filename, built, sources[0], built_name)
    if change is None:
        return None
    location = statement_location(filename, built, role="optimizer",
                                  note=f"builds the optimizer from {held_name}'s parameters")
    called_as = trained_name if built_name == trained_name else f"{trained_name} ({built_name} here)"
    notes = [f"the loop around step() never uses {held_name}; it calls {called_as}, whose "
             f"{len(with_gradients)} trainable parameters got gradients that no optimizer holds, so they never change"]
    return location, notes, Suggestion(f"build the optimizer from the parameters of {built_name}, the model "
                                       f"the loop trains", change, location)


def _construction_by_identity(optimizer, site, values: dict) -> tuple[str, ast.stmt] | None:
    """(file, statement) that built the optimizer when step() is called on another name for it (a
    helper's `optimizer` parameter): the one `name = ...(...)` assignment in the step()'s file to a
    name bound to this very optimizer where step() runs (the frame's globals included)."""
    tree = parse_file(site.filename)
    if tree is None:
        return None
    names = {name for name, value in values.items() if value is optimizer}
    found = [node for node in ast.walk(tree) if isinstance(node, ast.Assign) and len(node.targets) == 1
             and isinstance(node.targets[0], ast.Name) and node.targets[0].id in names
             and isinstance(node.value, ast.Call)]
    if len(found) != 1:
        return None  # none, or several: which one built it is unknown
    return site.filename, found[0]


def _same_function(filename: str, statement: ast.stmt, line: int) -> bool:
    """Whether `statement` and `line` are in the same function (or both at the top level)."""
    tree = parse_file(filename)
    return tree is not None and enclosing_function(tree, statement.lineno) is enclosing_function(tree, line)


def _global_name_of(module, stack) -> str | None:
    """The one global name of the step()'s module bound to `module`, or None."""
    frame = live_frame(stack[0]) if stack else None
    if frame is None or not isinstance(module, torch.nn.Module):
        return None
    names = [name for name, value in frame.f_globals.items() if value is module]
    if len(names) > 1:
        # A top-level `for model in (first, second):` leaves its variable bound to the last module:
        # a loop's variable is not the module's own name.
        tree = parse_file(stack[0].filename)
        looped = {node.id for loop in ast.walk(tree) if isinstance(loop, ast.For)
                  for node in ast.walk(loop.target) if isinstance(node, ast.Name)} if tree is not None else set()
        names = [name for name in names if name not in looped]
    return names[0] if len(names) == 1 else None
