"""Optimizer construction errors: a single tensor instead of an iterable of tensors, an
empty parameter list (most often a `model.parameters()` generator already used up), and
parameter groups that share parameters (`model.parameters()` next to `model.head.parameters()`)."""

from __future__ import annotations

import ast
import types

from autograd_doctor.analysis.live_values import attribute_without_running_code, chain_value, frame_lookup
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, statement_of, text_of
from autograd_doctor.analysis.errors.context import (
    ErrorContext, last_assignment, made_where, module_attribute_assignment, one_shot_iterator, uses_between, value_of,
)
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import function_definition, replace_node_text, source_line, statement_location


def _optimizer_call(context: ErrorContext):
    """(frame, filename, statement, location, call, optimizer class name) of the failing construction."""
    found = context.innermost_user()
    frame_init = context.torch_frame("__init__")
    optimizer = frame_init.f_locals.get("self") if frame_init is not None else None
    class_name = type(optimizer).__name__ if optimizer is not None else None
    if found is None or class_name is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    if statement is None:
        return None
    calls = [c for c in find_calls(statement, class_name) if c.args]
    return frame, filename, statement, location, (calls[0] if len(calls) == 1 else None), class_name


def params_not_iterable(context: ErrorContext, already):
    found = _optimizer_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call, class_name = found
    location.note = f"{class_name} is given one tensor, not a list of tensors"
    helps = []
    caller = _caller_passing(context, frame, call.args[0]) if call is not None and call.args else None
    if caller is not None:
        # The optimizer is built in a helper (make_optimizer(params, lr)) from its argument: the
        # caller passed one tensor; wrapping it there leaves the helper right for its other callers.
        caller_file, caller_statement, caller_location, passed = caller
        text = text_of(caller_file, passed)
        caller_location.role, caller_location.note = "passed", f"{text} is one tensor, given to the helper"
        return diagnosis(codes.OPTIMIZER_PARAMS_NOT_ITERABLE, caller_location, [location], notes=[
            "optimizers take an iterable of parameters (or of parameter-group dicts); a tensor is iterable along "
            f"its first dimension, so PyTorch refuses it explicitly; {class_name} is built from what this call "
            "passes"], help=[statement_change(caller_location, f"pass a list: [{text}]",
                                              replace_node_text(caller_file, caller_statement, passed, f"[{text}]"))])
    unwrapped = _unwrapping_return(context, frame, call.args[0]) if call is not None and call.args else None
    if unwrapped is not None:
        # The argument is a call of the user's function that returns its list's one element when the
        # list has one (`ps[0] if len(ps) == 1 else ps`): returning the list always keeps the optimizer
        # right however many tensors the list holds, where wrapping the call is right for one only.
        helper_file, returned, listed = unwrapped
        returned_location = statement_location(helper_file, returned, role="returned",
                                               note=f"returns the one tensor of {listed} instead of the list")
        return diagnosis(codes.OPTIMIZER_PARAMS_NOT_ITERABLE, returned_location, [location], notes=[
            "optimizers take an iterable of parameters (or of parameter-group dicts); a tensor is iterable along "
            f"its first dimension, so PyTorch refuses it explicitly; the function {class_name} is given returns "
            f"the element of {listed} when it holds one"], help=[statement_change(
                returned_location, f"return the list, {listed}, whatever its length", f"return {listed}")])
    if call is not None:
        argument = call.args[0]
        text = text_of(filename, argument)
        helps.append(statement_change(location, f"pass a list: [{text}] (or model.parameters() for all of "
                                      "a module's parameters)", replace_node_text(filename, statement, argument, f"[{text}]")))
    else:
        helps.append(Suggestion("pass an iterable of tensors: [w], model.parameters(), or a list of dicts "
                                "for parameter groups"))
    return diagnosis(codes.OPTIMIZER_PARAMS_NOT_ITERABLE, location,
                     notes=["optimizers take an iterable of parameters (or of parameter-group dicts); a "
                            "tensor is iterable along its first dimension, so PyTorch refuses it explicitly"],
                     help=helps)


def _unwrapping_return(context: ErrorContext, frame, argument: ast.expr):
    """(file, return statement, list name) where `argument` calls a function of the user's files,
    called nowhere else in them, whose return is `L[0] if len(L) == 1 else L` (or `L if len(L) > 1
    else L[0]`): a list of one unwrapped into its element. None otherwise."""
    from autograd_doctor.diagnosis.source import parse_file, statement_at

    if not (isinstance(argument, ast.Call) and isinstance(argument.func, (ast.Name, ast.Attribute))):
        return None
    function = value_of(frame, argument.func)
    code = getattr(function, "__code__", None)
    if code is None or code.co_filename not in context.files_reached():
        return None
    definition = function_definition(code)
    if definition is None:
        return None
    calls = 0
    for filename in context.files_reached():
        other = parse_file(filename)
        calls += sum(1 for node in ast.walk(other) if isinstance(node, ast.Call)
                     and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == code.co_name) \
            if other is not None else 0
    if calls != 1:
        return None
    found = []
    for node in ast.walk(definition):
        if not (isinstance(node, ast.Return) and isinstance(node.value, ast.IfExp)):
            continue
        branches = (node.value.body, node.value.orelse)
        listed = [b.id for b in branches if isinstance(b, ast.Name)]
        element = [b for b in branches if isinstance(b, ast.Subscript) and isinstance(b.value, ast.Name)
                   and isinstance(b.slice, ast.Constant) and b.slice.value == 0]
        lengths = [n for n in ast.walk(node.value.test) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "len"
                   and len(n.args) == 1 and isinstance(n.args[0], ast.Name)]
        if len(listed) == 1 and len(element) == 1 and element[0].value.id == listed[0] \
                and any(n.args[0].id == listed[0] for n in lengths):
            found.append((code.co_filename, statement_at(code.co_filename, node.lineno), listed[0]))
    return found[0] if len(found) == 1 and found[0][1] is not None else None


def _caller_passing(context: ErrorContext, frame, argument: ast.expr):
    """(file, statement, location, argument node) of the call, in the next user frame out, that
    passed the value `argument` names, when `argument` is a parameter of the function that built
    the optimizer; None otherwise."""
    if not isinstance(argument, ast.Name):
        return None
    code = frame.f_code
    if argument.id not in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        return None
    frames = context.user_frames()
    outer = next((i for i, (f, _) in enumerate(frames) if f is frame), None)
    if outer is None or outer + 1 >= len(frames):
        return None
    caller, line = frames[outer + 1]
    caller_file = caller.f_code.co_filename
    statement, location = statement_of(caller_file, line)
    value = frame.f_locals.get(argument.id)
    passed = [node for c in ast.walk(statement) if isinstance(c, ast.Call)
              for node in [*c.args, *(k.value for k in c.keywords)]
              if value_of(caller, node) is value] if statement is not None else []
    return (caller_file, statement, location, passed[0]) if len(passed) == 1 else None


def empty_parameter_list(context: ErrorContext, already):
    found = _optimizer_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call, class_name = found
    location.note = f"{class_name} receives no parameters"
    argument = call.args[0] if call is not None else None
    made_file, made, name = made_where(frame, filename, argument, location.line) if argument is not None \
        else (None, None, None)
    value = value_of(frame, argument) if made is not None else None
    if one_shot_iterator(value):
        # A generator, or filter(...)/map(...), stored in a name or on self and used up before.
        kind = "a generator" if isinstance(value, types.GeneratorType) else f"a {type(value).__name__} iterator"
        if isinstance(made, ast.Assign):
            made_location = statement_location(made_file, made, role="made",
                                               note=f"{name} is {kind}: it can be iterated only once")
            users = uses_between(filename, name, made.end_lineno, location.line) if name.isidentifier() else []
            value_text = text_of(made_file, made.value)
            helps = [statement_change(made_location, "keep the parameters in a list, which can be read "
                                      "any number of times", f"{ast.unparse(made.targets[0])} = list({value_text})")]
            notes = [f"{name} was already iterated (used up) before {class_name} read it, so it yielded nothing"]
            return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, made_location, [*users, location], notes, helps)
    unregistered = _unregistered_container(frame, argument) if argument is not None else None
    if unregistered is not None:
        return _container_diagnosis(unregistered, location, class_name)
    moved = _optimizer_after_unfreezing(filename, statement, argument) if argument is not None else None
    if moved is not None:
        unfrozen, new_text, end_line = moved
        change = statement_location(filename, statement)
        change.end_line = end_line
        notes = [f"the parameters are filtered by requires_grad when {class_name} is made, and every one of them "
                 "is frozen then: the line that unfreezes some runs later"]
        return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, location, [unfrozen], notes, [statement_change(
            change, "make the optimizer after the parameters it trains are unfrozen, so that the requires_grad "
                    "filter keeps them", new_text)])
    notes = ["the iterable given to the optimizer yielded no tensor: a parameters() generator used up "
             "earlier, a filter such as `if p.requires_grad` with every parameter frozen, or a model whose "
             "layers are not registered (plain lists instead of nn.ModuleList)"]
    return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, location, notes=notes, help=[Suggestion(
        "check what the expression passed to the optimizer yields: list(...) it and print its length")])


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _unfreezes(statement: ast.stmt) -> set[str]:
    """The root names a statement makes require grad: `model[2].requires_grad_(True)` (or without
    an argument), `p.requires_grad = True`, also inside a loop over a module's parameters."""
    roots = set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" \
                and (not node.args or isinstance(node.args[0], ast.Constant) and node.args[0].value is True):
            roots.add(_root_name(node.func.value))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is True:
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == "requires_grad":
                    roots.add(_root_name(target.value))
        elif isinstance(node, ast.For):
            loop_roots = _unfreezes(ast.Module(body=node.body, type_ignores=[]))
            target_names = {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
            if loop_roots & target_names:
                roots.add(_root_name(node.iter))
    roots.discard(None)
    return roots


def _optimizer_after_unfreezing(filename: str, statement: ast.stmt, argument: ast.expr):
    """(the unfreezing statement's location, the reordered text, its last line) when the optimizer is
    given the parameters that require grad (`[p for p in model.parameters() if p.requires_grad]`,
    `filter(lambda p: p.requires_grad, ...)`) and a later statement of the same block unfreezes
    some of that model's (`model.head.requires_grad_(True)`), with nothing between reading the
    optimizer: the optimizer made after it is given what it was meant to train. None otherwise."""
    from autograd_doctor.diagnosis.source import parse_file

    filters = any(isinstance(node, ast.Attribute) and node.attr == "requires_grad" for node in ast.walk(argument))
    models = {n.id for n in ast.walk(argument) if isinstance(n, ast.Name)}
    tree = parse_file(filename)
    if not filters or tree is None or not isinstance(statement, ast.Assign):
        return None
    bound = {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list) or statement not in block:
                continue
            position = block.index(statement)
            later = block[position + 1:]
            last = max((i for i, sibling in enumerate(later) if _unfreezes(sibling) & models), default=None)
            if last is None or any(isinstance(n, ast.Name) and n.id in bound
                                   for sibling in later[:last + 1] for n in ast.walk(sibling)):
                return None
            lines = [source_line(filename, number) for number in range(later[0].lineno, later[last].end_lineno + 1)]
            lines += [source_line(filename, number) for number in range(statement.lineno, statement.end_lineno + 1)]
            indent = len(lines[-1]) - len(lines[-1].lstrip())
            text = "\n".join(line[indent:] if line[:indent].isspace() or not line[:indent] else line for line in lines)
            unfrozen = statement_location(filename, later[last], role="unfrozen",
                                          note="the parameters the optimizer should train are unfrozen here, after it "
                                               "was made")
            return unfrozen, text, later[last].end_lineno
    return None


# The registering container for a plain Python sequence (False) or dict (True) of modules or of
# parameters.
_REGISTERING = {(False, "module"): "ModuleList", (True, "module"): "ModuleDict",
                (False, "parameter"): "ParameterList", (True, "parameter"): "ParameterDict"}


def _unregistered_container(frame, argument: ast.expr):
    """For `<module>.parameters()` that yielded nothing: (module, attribute, container kind) of
    a plain list, tuple or dict on the module (or one of its submodules) that holds modules or
    parameters, which nn.Module does not register, so parameters() never sees them."""
    from torch import nn

    if not (isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute)
            and argument.func.attr == "parameters"):
        return None
    model = _module_chain(frame, argument.func.value)
    if not isinstance(model, nn.Module):
        return None
    for module in model.modules():
        for attribute, value in vars(module).items():
            if attribute.startswith("_") or not isinstance(value, (list, tuple, dict)) or not value:
                continue
            keyed = isinstance(value, dict)
            items = list(value.values()) if keyed else list(value)
            if all(isinstance(item, nn.Module) for item in items) \
                    and any(True for item in items for _ in item.parameters()):
                return module, attribute, _REGISTERING[(keyed, "module")]
            if all(isinstance(item, nn.Parameter) for item in items):
                return module, attribute, _REGISTERING[(keyed, "parameter")]
    return None


def _container_diagnosis(unregistered, optimizer_location, class_name: str):
    """The optimizer got nothing because the layers (or parameters) sit in a plain container:
    point at the line that stores it and wrap its value in the registering container (same
    items, same order, same indexing and iteration, so forward computes the same values)."""
    module, attribute, container = unregistered
    filename, statement = module_attribute_assignment(module, attribute)
    kind = "modules" if container.startswith("Module") else "parameters"
    plain = type(getattr(module, attribute)).__name__
    notes = [f"nn.Module registers the {kind} assigned to its attributes one by one, or inside nn.{container}; "
             f"in a plain {plain} they are invisible to parameters(), state_dict(), .to() and the optimizer"]
    if statement is None or not isinstance(statement, ast.Assign):
        return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, optimizer_location, notes=notes, help=[Suggestion(
            f"store self.{attribute} as nn.{container}(...) so that its {kind} are registered")])
    location = statement_location(filename, statement, role="stored",
                                  note=f"self.{attribute} is a plain {plain}: its {kind} are not registered")
    value_text = text_of(filename, statement.value)
    namespace = getattr(type(module).__init__, "__globals__", {})
    prefix = "nn." if "nn" in namespace else "torch.nn."
    replacement = (replace_node_text(filename, statement, statement.value, f"{prefix}{container}({value_text})")
                   if value_text is not None else None)
    help = statement_change(location, f"keep them in nn.{container}: the same {kind} in the same order, now "
                            f"registered, so {class_name} receives their parameters and trains them", replacement)
    return diagnosis(codes.OPTIMIZER_EMPTY_PARAMETERS, location, [optimizer_location], notes, [help])


def overlapping_groups(context: ErrorContext, already):
    """PyTorch says only that some parameters are shared; the frame of add_param_group holds
    the new group and the earlier ones, so the doctor can say which parameters and groups."""
    frame_add = context.torch_frame("add_param_group")
    found = context.innermost_user()
    if frame_add is None or found is None:
        return None
    new_group, optimizer = frame_add.f_locals.get("param_group"), frame_add.f_locals.get("self")
    earlier = getattr(optimizer, "param_groups", None)
    if not isinstance(new_group, dict) or earlier is None:
        return None
    new_params = {id(p) for p in new_group.get("params", ())}
    shared = [p for group in earlier for p in group["params"] if id(p) in new_params]
    first = next(i for i, group in enumerate(earlier) if any(id(p) in new_params for p in group["params"]))
    frame, line = found
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    if statement is None:
        return None
    names = _parameter_names(frame, shared)
    listed = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    location.note = f"groups {first} and {len(earlier)} both hold {listed}"
    notes = [f"each parameter may belong to one group only (one learning rate, one weight decay); "
             f"{len(shared)} parameter{'s are' if len(shared) != 1 else ' is'} in group {first} and in group "
             f"{len(earlier)}"]
    found_change = _exclude_subgroup(frame, filename, statement, location)
    if found_change is None:
        found_change = _exclude_tied(frame, filename, statement, location, new_params, shared)
    if found_change is None:
        added = _group_added_to_whole_model(frame, filename, statement)
        if added is not None:
            # `optimizer = SGD(model.parameters())` then `optimizer.add_param_group({"params":
            # model.head.parameters(), ...})`: the constructor's group is the one to narrow.
            made, change = added
            made_location = statement_location(filename, made, role="group",
                                               note=f"group {first} is made here, from all of the model's parameters")
            return diagnosis(codes.OPTIMIZER_OVERLAPPING_GROUPS, made_location, [location], notes=notes, help=[change])
    change = found_change[0] if found_change is not None else None
    primary = location
    if found_change is not None and found_change[1].lineno != location.line:
        # The groups written one per line: the group to change is named, not only the statement.
        group_line = source_line(filename, found_change[1].lineno)
        indent = len(group_line) - len(group_line.lstrip())
        primary = Location(file=filename, line=found_change[1].lineno, column=indent, end_line=found_change[1].lineno,
                           end_column=len(group_line.rstrip()), source=group_line.strip(), role=location.role,
                           note=location.note)
    helps = [change] if change is not None else [Suggestion("build the groups from disjoint lists: filter model.named_parameters() by name "
                            "(e.g. not name.startswith(\"head.\")) for the general group, so every parameter is "
                            "listed once")]
    return diagnosis(codes.OPTIMIZER_OVERLAPPING_GROUPS, primary, [location] if primary is not location else [],
                     notes=notes, help=helps)


def _parameter_names(frame, params) -> list[str]:
    """`head.weight` style names of `params`, from a module among the frame's variables."""
    from torch import nn

    for scope in (frame.f_locals, frame.f_globals):
        for variable, value in list(scope.items()):
            if isinstance(value, nn.Module):
                by_id = {id(p): f"{variable}.{name}" for name, p in value.named_parameters()}
                if all(id(p) in by_id for p in params):
                    return [by_id[id(p)] for p in params]
    return [f"a tensor of shape {list(p.shape)}" for p in params]


def _module_chain(frame, node: ast.expr):
    """The value of a plain `a.b.c` expression in `frame` (nothing of the user's runs), else None."""
    return chain_value(frame_lookup(frame), node)


def _group_added_to_whole_model(frame, filename, statement):
    """(the optimizer's construction, the change) for `optimizer.add_param_group({"params":
    m.sub.parameters(), ...})` when `optimizer` was made, earlier in the same scope, from
    `m.parameters()`: that first group rewritten to skip `sub.`'s parameters (the added group keeps
    its own options). None otherwise."""
    from torch import nn

    call = statement.value if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) else None
    if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr != "add_param_group" \
            or not isinstance(call.func.value, ast.Name) or not call.args or not isinstance(call.args[0], ast.Dict):
        return None
    added = next((value for key, value in zip(call.args[0].keys, call.args[0].values)
                  if isinstance(key, ast.Constant) and key.value == "params"), None)
    made = last_assignment(filename, call.func.value.id, statement.lineno)
    constructor = made.value if isinstance(made, ast.Assign) and isinstance(made.value, ast.Call) else None
    first = (constructor.args[0] if constructor is not None and constructor.args else
             next((k.value for k in constructor.keywords if k.arg == "params"), None) if constructor else None)
    if not all(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parameters"
               and not node.args and not node.keywords for node in (added, first)):
        return None
    outer, inner = text_of(filename, first.func.value), text_of(filename, added.func.value)
    module, sub = _module_chain(frame, first.func.value), _submodule_chain(frame, added.func.value)
    path = next((name for name, m in module.named_modules() if m is sub and name), None) \
        if isinstance(module, nn.Module) and isinstance(sub, nn.Module) else None
    if path is None:
        return None
    prefix = path + "."
    if {id(p) for name, p in module.named_parameters() if name.startswith(prefix)} != {id(p) for p in sub.parameters()}:
        return None
    comprehension = f'[p for name, p in {outer}.named_parameters() if not name.startswith("{prefix}")]'
    new_statement = replace_node_text(filename, made, first, comprehension)
    change = statement_change(statement_location(filename, made), f"leave {inner}'s parameters out of the group "
                              f"made from {outer}.parameters(), so they are only in the group add_param_group() adds",
                              new_statement)
    return made, change


def _submodule_chain(frame, node: ast.expr):
    """As _module_chain, also through `[i]` of a module container (`model[2]`, `blocks[0]`):
    indexing an nn.Sequential or nn.ModuleList runs no user code."""
    from torch import nn

    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
        container = _submodule_chain(frame, node.value)
        index = node.slice.value
        if isinstance(container, (nn.Sequential, nn.ModuleList)) and -len(container) <= index < len(container):
            return container[index]
        return None
    if isinstance(node, ast.Attribute):
        owner = _submodule_chain(frame, node.value)
        return attribute_without_running_code(owner, node.attr) if owner is not None else None
    return _module_chain(frame, node)


def _tied(frame, parameter) -> bool:
    """Whether `parameter` is registered under two names of one module among the frame's variables
    (weights tied: `decoder.weight = embedding.weight`)."""
    from torch import nn

    for scope in (frame.f_locals, frame.f_globals):
        for value in list(scope.values()):
            if isinstance(value, nn.Module):
                names = [n for n, p in value.named_parameters(remove_duplicate=False) if p is parameter]
                if len(names) > 1:
                    return True
    return False


def _exclude_tied(frame, filename, statement, location, new_params, shared):
    """For a group `{"params": m.sub.parameters(), ...}` that holds a weight tied to one an earlier
    group already holds (`decoder.weight = embedding.weight`, the groups by module): that group's
    `m.sub.parameters()` rewritten to skip the tied weights, which keep the earlier group's options
    (the group of the module that registered them first, as `model.parameters()` lists them).
    (the change, the call it rewrites), or None."""
    from torch import nn

    if not shared or not all(_tied(frame, p) for p in shared):
        return None
    shared_ids = {id(p) for p in shared}
    # The later group is the one to change: when both modules hold only the tied weight (a decoder
    # without bias), their parameter sets are equal, so the last matching group is taken.
    groups = sorted((n for n in ast.walk(statement) if isinstance(n, ast.Dict)),
                    key=lambda n: (n.lineno, n.col_offset), reverse=True)
    for group in groups:
        for key, value in zip(group.keys, group.values):
            call = value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "list" \
                    and len(call.args) == 1 and not call.keywords:
                call = call.args[0]
            if not (isinstance(key, ast.Constant) and key.value == "params" and isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute) and call.func.attr == "parameters"
                    and not call.args and not call.keywords):
                continue
            module = _submodule_chain(frame, call.func.value)
            if not isinstance(module, nn.Module) or {id(p) for p in module.parameters()} != new_params:
                continue
            names = [name for name, p in module.named_parameters() if id(p) in shared_ids]
            if not names:
                return None
            owner = text_of(filename, call.func.value)
            quoted = ", ".join(f'"{n}"' for n in names)
            test = f"name != {quoted}" if len(names) == 1 else f"name not in ({quoted})"
            comprehension = f"[p for name, p in {owner}.named_parameters() if {test}]"
            new_statement = replace_node_text(filename, statement, value, comprehension)
            listed = ", ".join(f"{owner}.{n}" for n in names)
            message = (f"leave the tied {listed} out of this group: it is the same tensor as a parameter of an earlier "
                       f"group, which keeps it (and its options); to give it this group's options instead, leave it "
                       f"out of the earlier group")
            return statement_change(location, message, new_statement), value
    return None


def _exclude_subgroup(frame, filename, statement, location):
    """For `[{"params": m.parameters()}, {"params": m.sub.parameters(), ...}]`: the general group's
    `m.parameters()` rewritten to skip `sub.`'s parameters (the one change that keeps both
    learning rates as written), with the call it rewrites; None when no such group is found."""
    from torch import nn

    receivers = []
    for group in (n for n in ast.walk(statement) if isinstance(n, ast.Dict)):
        for key, value in zip(group.keys, group.values):
            if isinstance(key, ast.Constant) and key.value == "params" and isinstance(value, ast.Call) \
                    and isinstance(value.func, ast.Attribute) and value.func.attr == "parameters" \
                    and not value.args and not value.keywords:
                module = _module_chain(frame, value.func.value)
                if isinstance(module, nn.Module):
                    receivers.append((value, text_of(filename, value.func.value), module))
    for outer_call, outer, module in receivers:
        for _, inner, sub in receivers:
            if not inner.startswith(outer + "."):
                continue
            prefix = inner[len(outer) + 1:] + "."
            # The prefix must name the submodule's parameters in the outer module.
            own = {id(p) for name, p in module.named_parameters() if name.startswith(prefix)}
            if own != {id(p) for p in sub.parameters()}:
                continue
            comprehension = f'[p for name, p in {outer}.named_parameters() if not name.startswith("{prefix}")]'
            new_statement = replace_node_text(filename, statement, outer_call, comprehension)
            return statement_change(location, f"leave {inner}'s parameters out of the group of {outer}.parameters(), "
                                    f"so they are only in their own group", new_statement), outer_call
    return None


MATCHERS = [
    (r"params argument given to the optimizer should be an iterable of Tensors or dicts", params_not_iterable),
    (r"optimizer got an empty parameter list", empty_parameter_list),
    (r"some parameters appear in more than one parameter group", overlapping_groups),
]
