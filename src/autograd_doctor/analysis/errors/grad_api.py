"""`torch.autograd.grad` / `backward` arguments: an input not used for the output, an input
that does not require grad, a gradient of the wrong shape, empty inputs; and a loss computed through a
function decorated with @torch.no_grad() / @torch.inference_mode()."""

from __future__ import annotations

import ast
import re
import types

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, statement_of, text_of, user_statement
from autograd_doctor.analysis.errors.context import (
    ErrorContext, carrying_assignment, last_assignment, local_name_of, made_where, one_shot_iterator, uses_between, value_of,
)
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, call_name, location_of, method_receiver, parse_file, replace_node_text, replace_nodes_text,
    source_line, statement_at, statement_location,
)
from autograd_doctor.analysis.errors.decorated_attribute_cut import attribute_from_decorated_method
from autograd_doctor.analysis.errors.numpy_round_trip import describe as describe_round_trip, input_left_torch
from autograd_doctor.recording.copy_sites import deepcopy_site

FACTORIES = {"randn", "rand", "zeros", "ones", "empty", "full", "tensor", "randn_like", "zeros_like",
             "ones_like", "rand_like", "linspace"}


def _grad_call(context: ErrorContext):
    """(user frame, filename, statement, location, the grad(...) call node) of the failing call."""
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    calls = find_calls(statement, "grad") or find_calls(statement, "backward")
    return frame, filename, statement, location, (calls[0] if len(calls) == 1 else None)


def _inputs(context: ErrorContext) -> tuple:
    """The `inputs` given to torch.autograd.grad, read from its frame. The tuple grad() made of
    them comes first (`inputs_tuple`; `t_inputs` in older releases): `inputs` itself may be an
    iterator grad() has already consumed (`model.parameters()`), which gives nothing when read
    again, and reading an iterator that is not consumed would run the user's code."""
    frame = context.torch_frame("grad")
    if frame is None:
        return ()
    for made_by_grad in ("inputs_tuple", "t_inputs"):
        made = frame.f_locals.get(made_by_grad)
        if isinstance(made, tuple) and made:
            return made
    inputs = frame.f_locals.get("inputs")
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs)
    if isinstance(inputs, dict):
        return tuple(inputs.values())
    return (inputs,) if isinstance(inputs, torch.Tensor) else ()


def unused_input(context: ErrorContext, already):
    found = _grad_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call = found
    index_match = re.search(r"at index (\d+)", context.message)
    inputs = _inputs(context)
    index = int(index_match.group(1)) if index_match else None
    tensor = inputs[index] if index is not None and index < len(inputs) else None
    name = local_name_of(frame, tensor) if tensor is not None else None
    label = name or (f"input {index}" if index is not None else "an input")
    location.note = f"{label} is not used to compute the output"
    made = last_assignment(filename, name, location.line) if name else None
    related = [statement_location(filename, made, role="made", note=f"{name} is made here") if made is not None else None]
    notes = [f"the output does not depend on {label} through recorded operations (it is not used, or only "
             "through detach(), .item(), integer ops or torch.no_grad()), so it has no gradient"]
    copied = _computed_from_deepcopy(context, inputs)
    if copied is not None:
        return _deepcopy_instead_of_inputs(copied, location, label)
    helps = []
    copied_input = _copy_of_used_tensor(context, frame, filename, call, index)
    if copied_input is not None:
        copy_call, original = copied_input
        new_call = replace_node_text(filename, statement, copy_call, original)
        location.note = f"{text_of(filename, copy_call)} is a new tensor, made after the output was computed"
        helps.append(statement_change(location, f"ask for the gradient with respect to {original} itself: the output "
                                      f"was computed from {original}, and {text_of(filename, copy_call)} is a copy "
                                      "made in this call, which no operation of the output used", new_call))
    sliced = _slices_of_used_tensors(context, frame, filename, call) if copied_input is None else None
    if sliced is not None:
        # `grad(losses[i], params["weight"][i])`: the slice is a view made in this call, after the
        # output was computed from the whole tensor. A zero gradient for it (materialize_grads)
        # would run and train nothing; the gradient with respect to the whole tensor, indexed the
        # same way, is the one meant.
        new_call, bases = sliced
        location.note = f"{label} is a slice made in this call, after the output was computed from {bases[0]}"
        notes = [f"indexing a tensor makes a new tensor (a view): the output was computed from {bases[0]} itself, "
                 "never from this view, so autograd finds no path to it"]
        return diagnosis(codes.GRAD_INPUT_UNUSED, location, related, notes, [statement_change(
            location, f"ask for the gradient with respect to {' and '.join(bases)} and index it as the inputs were "
            "indexed: the same numbers the slices' gradients would be", replace_node_text(filename, statement, call,
                                                                                          new_call))])
    flagged_late = _flag_set_after_use(filename, name, location.line) if name else None
    if flagged_late is not None and copied_input is None:
        # The line to change is the flag's: it comes after the use it was meant for.
        flag, first_use, change = flagged_late
        location.role = "grad"
        flag_location = statement_location(filename, flag, role="flag",
                                           note=f"{name} is asked to require grad here, after the output was "
                                                "computed from it")
        used = statement_location(filename, first_use, role="used",
                                  note=f"{name} is used here, before it requires grad: nothing is recorded")
        return diagnosis(codes.GRAD_INPUT_UNUSED, flag_location, [used, location], notes,
                         [change, *helps])
    round_trip = input_left_torch(frame, filename, statement, call.args[0], name) \
        if name is not None and call is not None and call.args and copied_input is None else None
    if round_trip is not None:
        return _round_trip_diagnosis(round_trip, location, related, notes, label)
    if _none_used(context, inputs):
        # Not one input reaches the output: a zero gradient for all of them is a step that does
        # nothing, never what was meant. The output was computed from something else.
        rebinding = _parameters_rebound_in_loop(frame, filename, location.line, inputs)
        if rebinding is not None:
            given = call.args[1] if call is not None and len(call.args) > 1 else None
            return _rebinding_diagnosis(filename, rebinding, location,
                                        f"the tensors in {text_of(filename, given)}" if given is not None
                                        else f"{label} and the other inputs")
        notes.append("none of the inputs is used to compute the output: it was computed from other tensors "
                     "(copies of them, or tensors made anew)")
        made_as_leaf = _output_made_as_leaf(context, filename, call, location.line)
        if made_as_leaf is not None:
            # The output has no graph at all: a leaf made to require grad (`torch.tensor(v,
            # requires_grad=True)`, `.requires_grad_()`) from values computed without one. The line
            # that makes it is where the path ends, not the call that finds no path.
            location.role = "grad"
            helps.append(Suggestion(f"if the output should depend on {label}, compute it from {label} with torch "
                                    "operations under grad mode, without detach(), .item() or a new tensor between "
                                    "them; marking the result requires_grad does not connect it"))
            return diagnosis(codes.GRAD_INPUT_UNUSED, made_as_leaf, [location], notes, helps)
    elif _none_reached(context, inputs):
        # The same when an input is a computed tensor (a view, a reshape): a zero gradient for
        # every input runs and answers nothing that was asked.
        notes.append("none of the inputs is used to compute the output: a zero gradient for them "
                     "(materialize_grads=True) would run, but it is not the derivative asked for")
    elif call is not None and copied_input is None and \
            not any(k.arg in ("allow_unused", "materialize_grads") for k in call.keywords):
        new_call = replace_node_text(filename, statement, call,
                                     text_of(filename, call)[:-1].rstrip() + ", materialize_grads=True)")
        helps.append(statement_change(location, f"if {label} truly does not matter, ask for a zero gradient "
                                      "for it (materialize_grads=True; allow_unused=True would give None)", new_call))
    helps.append(Suggestion(f"if the output should depend on {label}, find where the path is cut "
                            "(a detach(), .item(), .numpy(), argmax, or torch.no_grad() between them)"))
    return diagnosis(codes.GRAD_INPUT_UNUSED, location, related, notes, helps)


def _output_made_as_leaf(context: ErrorContext, filename: str, call, line: int):
    """Where the output of grad(output, ...) is made, when it is one tensor named in the call that
    requires grad and has no grad_fn: a leaf, which records nothing it was computed from."""
    outputs = _outputs(context)
    output = outputs[0] if isinstance(outputs, (tuple, list)) and len(outputs) == 1 else outputs
    if not (isinstance(output, torch.Tensor) and output.requires_grad and output.grad_fn is None) or \
            call is None or not call.args or not isinstance(call.args[0], ast.Name):
        return None
    name = call.args[0].id
    made = last_assignment(filename, name, line)
    if not isinstance(made, ast.Assign):
        return None
    return statement_location(filename, made, role="made",
                              note=f"{name} is made here as a new leaf: it requires grad, but nothing it was "
                                   "computed from is recorded")


def _round_trip_diagnosis(found, location, related, notes, label: str):
    """AD305 naming where the input's values left torch (analysis/errors/numpy_round_trip.py)."""
    conversion = describe_round_trip(found)
    where = f"{found.function}() takes" if found.function else "this line takes"
    primary = statement_location(found.filename, found.statement, role="cut",
                                 note=f"{where} the values of {found.name} out of torch ({conversion}): nothing computed "
                                      "from them is recorded")
    location.role = "grad"
    made_from = f"what {found.function}() returns" if found.function else "values"
    notes = notes + [f"the output is computed from {made_from} made from {conversion}: NumPy and Python numbers carry "
                     f"no graph, and the tensor made from them again starts a new one, so autograd has no path from "
                     f"the output back to {label}"]
    subject = f"{found.function}()'s result" if found.function else "that value"
    helps = [Suggestion(f"compute {subject} with torch operations on {found.name} (torch has NumPy's functions: "
                        f"torch.exp, torch.linalg.norm, torch.cdist, ...), so that the path from the output to "
                        f"{label} is recorded; a computation that must stay outside torch needs a "
                        "torch.autograd.Function with its own backward()")]
    return diagnosis(codes.GRAD_INPUT_UNUSED, primary, [r for r in (*related, location) if r is not None], notes,
                     helps)


def _flag_set_after_use(filename: str, name: str, line: int):
    """`scores = model(images)`, then `images.requires_grad_()` (or `images.requires_grad = True`),
    then `grad(scores, images)`: the flag is set after the output was computed, so nothing recorded
    the use. In the block of the grad() call: (the flag statement, the first statement before it
    that reads `name`, the change moving the flag just before that statement); None when there is no
    such order, or `name` is assigned between the use and the flag (the flag is then on another tensor)."""
    from autograd_doctor.diagnosis.model import Location
    from autograd_doctor.diagnosis.source import display_path, source_line, source_text
    from autograd_doctor.recording.frames import in_installed_package

    tree = parse_file(filename)
    if tree is None or in_installed_package(filename):
        return None
    for block in (getattr(node, field, None) for node in ast.walk(tree) for field in ("body", "orelse", "finalbody")):
        if not isinstance(block, list) or not any(isinstance(statement, ast.stmt) and statement.lineno == line
                                                  for statement in block):
            continue
        before = [statement for statement in block if isinstance(statement, ast.stmt) and statement.end_lineno < line]
        flags = [statement for statement in before if _sets_requires_grad(statement, name)]
        if len(flags) != 1:
            return None
        flag = flags[0]
        earlier = [statement for statement in before if statement.end_lineno < flag.lineno]
        uses = [statement for statement in earlier if any(
            isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) for n in ast.walk(statement))]
        if not uses:
            return None
        first_use = uses[0]
        between = [statement for statement in earlier if statement.lineno >= first_use.lineno]
        if any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
               for statement in between for n in ast.walk(statement)) or flag.lineno != flag.end_lineno:
            return None
        first_line = source_line(filename, first_use.lineno)
        indent = first_line[: len(first_line) - len(first_line.lstrip())]
        moved = [source_line(filename, number).rstrip() for number in range(first_use.lineno, flag.lineno)]
        if not all(text.startswith(indent) or not text.strip() for text in moved):
            return None
        flag_text = ast.get_source_segment(source_text(filename), flag) or source_line(filename, flag.lineno).strip()
        replacement = "\n".join([flag_text.strip()] + [text[len(indent):] for text in moved])
        last = source_line(filename, flag.lineno).rstrip()
        location = Location(file=display_path(filename), line=first_use.lineno, column=len(indent),
                            end_line=flag.lineno, end_column=len(last), source=first_line.strip())
        return flag, first_use, Suggestion(
            f"ask {name} to require grad before it is used (move this line up): autograd records only the "
            f"operations on tensors that already require grad, so the output then depends on {name}",
            replacement, location)
    return None


def _sets_requires_grad(statement: ast.stmt, name: str) -> bool:
    """`name.requires_grad_()`, `name.requires_grad_(True)` or `name.requires_grad = True`."""
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        return isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_" and \
            isinstance(call.func.value, ast.Name) and call.func.value.id == name and not call.keywords and \
            (not call.args or isinstance(call.args[0], ast.Constant) and call.args[0].value is True)
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        return isinstance(target, ast.Attribute) and target.attr == "requires_grad" and \
            isinstance(target.value, ast.Name) and target.value.id == name and \
            isinstance(statement.value, ast.Constant) and statement.value.value is True
    return False


# Calls that make a new tensor from a tensor: given to grad() as an input, the copy is not in the
# graph its original was used in.
COPYING_METHODS = {"clone", "detach", "contiguous", "to", "float", "double", "half", "type", "requires_grad_"}


def _copy_of_used_tensor(context: ErrorContext, frame, filename: str, call, index: int | None):
    """`grad(loss, model.shared.weight.clone())`: the input at `index` is written in the call as a copy
    (`.clone()`, `.detach()`, `.to(...)`, ...) of a tensor the outputs' graph reaches. (the copying
    call node, the text of the original tensor) or None."""
    if call is None or index is None:
        return None
    given = next((k.value for k in call.keywords if k.arg == "inputs"), call.args[1] if len(call.args) > 1 else None)
    if isinstance(given, (ast.List, ast.Tuple)):
        given = given.elts[index] if index < len(given.elts) and not any(
            isinstance(e, ast.Starred) for e in given.elts) else None
    elif index != 0:
        given = None
    original = _copied_tensor_in_graph(context, frame, given)
    return (given, text_of(filename, original)) if original is not None else None


def _container_value(frame, node: ast.expr):
    """`value_of`, and also `box["key"]` / `box[0]` of a dict, list or tuple (reading them calls nothing
    of the user's)."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        owner = _container_value(frame, node.value)
        if isinstance(owner, dict):
            return owner.get(node.slice.value)
        if isinstance(owner, (list, tuple)) and isinstance(node.slice.value, int) and \
                -len(owner) <= node.slice.value < len(owner):
            return owner[node.slice.value]
        return None
    return value_of(frame, node)


def _slices_of_used_tensors(context: ErrorContext, frame, filename: str, call):
    """`grad(out, [params["weight"][i], params["bias"][i]])`: every input is written as the same
    index of a tensor that requires grad and that the outputs' graph reaches, and the input autograd
    got is a view of that tensor (made in the call). (the call rewritten to take the gradient with
    respect to the whole tensors and index it, the texts of the tensors) or None."""
    if call is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    given = next((k.value for k in call.keywords if k.arg == "inputs"), call.args[1] if len(call.args) > 1 else None)
    written = list(given.elts) if isinstance(given, (ast.List, ast.Tuple)) else [given]
    inputs = _inputs(context)
    if given is None or len(written) != len(inputs) or not all(isinstance(e, ast.Subscript) for e in written):
        return None
    indexes = {text_of(filename, e.slice) for e in written}
    outputs = _outputs(context)
    roots = [t.grad_fn for t in (outputs if isinstance(outputs, (tuple, list)) else (outputs,))
             if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    if len(indexes) != 1 or None in indexes or not roots:
        return None
    bases = []
    for element, tensor in zip(written, inputs):
        base = _container_value(frame, element.value)
        if not (isinstance(base, torch.Tensor) and base.requires_grad and isinstance(tensor, torch.Tensor)
                and tensor._base is not None and tensor._base is (base if base._base is None else base._base)
                and _reaches(roots, base)):
            return None
        bases.append(text_of(filename, element.value))
    if None in bases:
        return None
    call_text = replace_nodes_text(filename, call, [(element, text_of(filename, element.value)) for element in written])
    if call_text is None:
        return None
    index = indexes.pop()
    return f"tuple(gradient[{index}] for gradient in {call_text})", bases


def _input_node(call, name: str | None):
    """The one `name` among the inputs written in the grad(...) call."""
    given = call.args[1] if call is not None and len(call.args) > 1 else \
        next((k.value for k in call.keywords if k.arg == "inputs"), None) if call is not None else None
    found = [n for n in ast.walk(given) if isinstance(n, ast.Name) and n.id == name] if given is not None else []
    return found[0] if len(found) == 1 else None


def _copied_tensor_in_graph(context: ErrorContext, frame, node):
    """The node of `w` in `w.clone()`, `w.detach()`, ... (a chain of copying calls) when `w` is a
    tensor that requires grad and the outputs' graph reaches it; None otherwise."""
    original = node
    while isinstance(original, ast.Call) and isinstance(original.func, ast.Attribute) and \
            original.func.attr in COPYING_METHODS:
        original = original.func.value
    if original is node:
        return None
    tensor = value_of(frame, original)
    outputs = _outputs(context)
    roots = [t.grad_fn for t in (outputs if isinstance(outputs, (tuple, list)) else (outputs,))
             if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    if not isinstance(tensor, torch.Tensor) or not tensor.requires_grad or not roots or not _reaches(roots, tensor):
        return None
    return original


def _argument_requiring_grad_help(filename: str, name: str, line: int) -> Suggestion | None:
    """`def attack(model, images): ... grad(loss, images)` with images given by the caller: a copy of
    the argument that requires grad, made before its first use in the function (the same values;
    the caller's tensor is left as it was)."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import source_line

    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
            name not in [a.arg for a in function.args.args + function.args.kwonlyargs]:
        return None
    for statement in function.body:
        uses = any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement))
        if not uses:
            continue
        if statement.lineno > line or statement.lineno != statement.end_lineno or \
                isinstance(statement, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            return None
        text = source_line(filename, statement.lineno)[statement.col_offset:statement.end_col_offset]
        return statement_change(statement_location(filename, statement),
                                f"if you want the gradient for {name}, make a copy of the argument that requires "
                                f"grad before its first use ({name}.detach().requires_grad_(): the same values, "
                                "and the caller's tensor is left alone)",
                                f"{name} = {name}.detach().requires_grad_()\n{text}")
    return None


def _leaf_tensors(outputs, limit: int = 100_000) -> list | None:
    """The leaf tensors (AccumulateGrad variables) the outputs' graph reaches; None: too large."""
    reached = _reached(outputs, limit)
    return reached[1] if reached is not None else None


def _reached(outputs, limit: int = 100_000) -> tuple | None:
    """(the ids of the nodes, the leaf tensors) the outputs' graph reaches; None: too large."""
    roots = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    todo = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen, leaves = set(), []
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > limit:
            return None
        variable = getattr(node, "variable", None)
        if isinstance(variable, torch.Tensor):
            leaves.append(variable)
        todo.extend(next_node for next_node, _ in getattr(node, "next_functions", ()))
    return seen, leaves


def _outputs(context: ErrorContext):
    frame = context.torch_frame("grad")
    return frame.f_locals.get("outputs") if frame is not None else None


def _none_used(context: ErrorContext, inputs: tuple) -> bool:
    """Every input is a leaf and not one of them is in the outputs' graph."""
    if not inputs or not all(isinstance(t, torch.Tensor) and t.grad_fn is None for t in inputs):
        return False
    leaves = _leaf_tensors(_outputs(context))
    return leaves is not None and not any(leaf is t for leaf in leaves for t in inputs)


def _none_reached(context: ErrorContext, inputs: tuple) -> bool:
    """Not one input, leaf or computed, is in the outputs' graph: a computed input is reached when
    its grad_fn is, a leaf when its AccumulateGrad is. (A view made in the call, `t[-1, 0]`, has a
    grad_fn of its own that nothing computed before the call can reach.)"""
    outputs = _outputs(context)
    if outputs is None or not inputs or not all(isinstance(t, torch.Tensor) for t in inputs):
        return False
    reached = _reached(outputs)
    if reached is None:
        return False
    nodes, leaves = reached
    roots = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    leaves = leaves + [t for t in roots if isinstance(t, torch.Tensor) and t.grad_fn is None]
    return not any(id(t.grad_fn) in nodes if t.grad_fn is not None else any(leaf is t for leaf in leaves)
                   for t in inputs)


def _computed_from_deepcopy(context: ErrorContext, inputs: tuple):
    """The deepcopy site when no input reaches the output and the output's leaves include copies
    (made by `copy.deepcopy`) of the inputs: same shapes, and the copy made by one call."""
    if not _none_used(context, inputs):
        return None
    sites = {}
    for leaf in _leaf_tensors(_outputs(context)) or ():
        site = deepcopy_site(leaf)
        if site is not None:
            sites.setdefault(site, []).append(tuple(leaf.shape))
    for site, shapes in sites.items():
        if all(tuple(t.shape) in shapes for t in inputs):
            return site
    return None


def _deepcopy_instead_of_inputs(site, raised_at, label: str):
    """AD305 whose inputs were copied: the output is computed from a deepcopy of the module (or
    tensor) that holds them, so no gradient reaches them. The line to change is the copy."""
    primary = location_of(site, role="copy", note="the output is computed from this copy, not from the inputs")
    statement = statement_at(site.filename, site.lineno) if primary is not None else None
    helps = []
    call = next((node for node in ast.walk(statement) if isinstance(node, ast.Call)
                 and getattr(node.func, "attr", getattr(node.func, "id", None)) == "deepcopy"
                 and len(node.args) == 1), None) if statement is not None else None
    if call is not None:
        original = text_of(site.filename, call.args[0])
        new = replace_node_text(site.filename, statement, call, original) if original else None
        helps.append(statement_change(statement_location(site.filename, statement),
                                      f"compute the output from {original} itself: a deep copy has new leaves with "
                                      "no graph back to the tensors you differentiate", new))
    helps.append(Suggestion("if the copy must stay (its weights are changed in place), differentiate with respect "
                            "to the copy's tensors, or build the adapted tensors from the originals "
                            "(`w - lr * g`) and run the copy with them (torch.func.functional_call)"))
    raised_at.role, raised_at.note = "raised", f"{label} and the other inputs are not used to compute the output"
    notes = ["none of the inputs reaches the output; the output's graph ends at copies of them (same shapes) made "
             "by copy.deepcopy: new leaves, with no path back to the originals",
             "allow_unused=True or materialize_grads=True would give None or zeros for every input: a step that "
             "changes nothing"]
    return diagnosis(codes.GRAD_INPUT_UNUSED, primary or raised_at, [raised_at] if primary is not None else [],
                     notes, helps)


def input_without_grad(context: ErrorContext, already):
    found = _grad_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call = found
    offenders = [t for t in _inputs(context) if hasattr(t, "requires_grad") and not t.requires_grad]
    names = [local_name_of(frame, t) for t in offenders]
    label = ", ".join(n or "an input" for n in names) or "an input"
    if len(names) > 1 and not any(names):
        label = f"each of the {len(names)} inputs"
    elif len(names) > 1 and not all(names):
        # Some offenders have a name in the frame, others not: count them rather than repeat "an input".
        label = f"{len(names)} of the inputs ({', '.join(n for n in names if n)} among them)"
    several = label[0].isdigit()
    location.note = f"{label} {'do' if several else 'does'} not require grad"
    helps, related = [], []
    name = names[0] if len(names) == 1 else None
    made = last_assignment(filename, name, location.line) if name else None
    if made is not None and isinstance(made, ast.Assign) and _asks_for_grad(made.value):
        # `x_adv = x.clone().requires_grad_()` before a loop whose body later rebinds x_adv
        # (`x_adv = (...).detach()`): the value that does not require grad cannot be the first one,
        # it is the one the loop carried into this iteration.
        carried = carrying_assignment(filename, name, location.line)
        made = carried if carried is not None and carried is not made else None
    if made is not None:
        made_location = statement_location(filename, made, role="made", note=f"{name} is created here without "
                                           "requires_grad=True")
        related.append(made_location)
        factory = made.value if isinstance(made, ast.Assign) and isinstance(made.value, ast.Call) else None
        factory_name = factory.func.attr if factory is not None and isinstance(factory.func, ast.Attribute) else None
        original = _copied_tensor_in_graph(context, frame, made.value) if isinstance(made, ast.Assign) else None
        given = _input_node(call, name)
        if original is not None and given is not None:
            # `w = model.weight.detach()` then grad(loss, [w]): the loss was computed from model.weight,
            # not from the copy; a copy that requires grad would still not be in the graph.
            original_text = text_of(filename, original)
            helps.append(statement_change(location, f"ask for the gradient of {original_text} itself: the output was "
                                          f"computed from it, and {name} is a copy made at line {made.lineno}, "
                                          "which no operation of the output used",
                                          replace_node_text(filename, statement, given, original_text)))
        elif factory_name in FACTORIES and not any(k.arg == "requires_grad" for k in factory.keywords):
            new_value = text_of(filename, factory)[:-1].rstrip() + ", requires_grad=True)"
            helps.append(statement_change(made_location, f"if you want the gradient for {name}, create it "
                                          "with requires_grad=True", f"{ast.unparse(made.targets[0])} = {new_value}"))
        elif isinstance(made, ast.Assign) and len(made.targets) == 1 and isinstance(made.targets[0], ast.Name) \
                and offenders[0].grad_fn is None and (value := text_of(filename, made.value)) is not None:
            # Made by a chain (linspace(...).reshape(...)) or taken from data: without grad history it
            # is a leaf, which requires_grad_() turns into one that requires grad, values unchanged.
            chained = isinstance(made.value, (ast.Call, ast.Attribute, ast.Name, ast.Subscript))
            helps.append(statement_change(made_location, f"if you want the gradient for {name}, make it require "
                                          "grad where it is made: requires_grad_() keeps its values",
                                          f"{name} = {value if chained else f'({value})'}.requires_grad_()"))
    frozen = _frozen_parameters_help(frame, filename, statement, location, call, offenders)
    if frozen is not None and not helps:
        helps.append(frozen)
    copies = _state_dict_inputs_help(frame, filename, statement, location, call, offenders) if not helps else None
    if copies is not None:
        helps.append(copies)
    primary = location
    moved = bool(helps) and helps[0].location is not None and helps[0].location.line != location.line
    if moved and helps[0] is copies:
        primary = statement_location(filename, statement_at(filename, helps[0].location.line), role="made",
                                     note="state_dict() gives the parameters' values, detached from them")
        related = [location]
    elif moved and helps[0] is not frozen:
        # The change is where the input is made: that is the line to change, the call is where it shows.
        primary, related = related[0], [location]
    elif moved:
        # The list of parameters given by name is changed where it is made.
        primary = statement_location(filename, statement_at(filename, helps[0].location.line), role="made",
                                     note="the list of parameters, frozen ones included, is made here")
        related = [location]
    elif made is None and name is not None and not helps:
        argument = _argument_requiring_grad_help(filename, name, location.line)
        helps.extend([argument] if argument is not None else [])
    built = _never_trained_parameters(offenders, frame, call) if frozen is not None and helps and \
        helps[0] is frozen else None
    if built is not None:
        # Each frozen input is a parameter its module's class makes with requires_grad=False: a
        # parameter that never requires grad is a buffer, and the line that made it one is the origin.
        constructions, example = built
        related = [primary] + [r for r in related if r is not primary]
        primary = constructions[0]
        related[1:1] = constructions[1:]
        helps.insert(1, Suggestion(
            f"or keep them out of the parameters: a tensor that is never trained is a buffer "
            f"({example}); parameters() then gives only the trained ones, and the module's state_dict() keeps "
            "the same keys"))
    helps.append(Suggestion(f"{'otherwise ' if helps else ''}remove {label} from the inputs of the call"))
    notes = [f"gradients are only computed for tensors that require grad; {label} "
             f"{'are constants' if several else 'is a constant'} to autograd"]
    return diagnosis(codes.GRAD_INPUT_NO_GRAD, primary, related, notes, helps)


def _asks_for_grad(value: ast.AST) -> bool:
    """Whether an expression makes its tensor require grad itself (`.requires_grad_()`,
    `requires_grad=True`)."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" and not (
                    node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False):
                return True
            if any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
                   for k in node.keywords):
                return True
    return False


def _state_dict_inputs_help(frame, filename: str, statement, location, call, offenders: list):
    """`grad(loss, list(model.state_dict().values()))`: state_dict() holds the parameters' values
    detached from them (and the buffers), so none requires grad. For a module without buffers its
    values are its parameters' in the same order: ask for `model.parameters()` there, in the call
    or where the list given by name is made."""
    given = call.args[1] if call is not None and len(call.args) > 1 else \
        next((k.value for k in call.keywords if k.arg == "inputs"), None) if call is not None else None
    changed = statement
    if isinstance(given, ast.Name):
        changed = last_assignment(filename, given.id, location.line)
        given = changed.value if isinstance(changed, ast.Assign) and len(changed.targets) == 1 else None
    values = given.args[0] if isinstance(given, ast.Call) and isinstance(given.func, ast.Name) \
        and given.func.id in ("list", "tuple") and len(given.args) == 1 else given
    if not (isinstance(values, ast.Call) and isinstance(values.func, ast.Attribute) and values.func.attr == "values"
            and not values.args and isinstance(values.func.value, ast.Call)
            and isinstance(values.func.value.func, ast.Attribute) and values.func.value.func.attr == "state_dict"
            and not values.func.value.args and not values.func.value.keywords):
        return None
    owner = values.func.value.func.value
    module = value_of(frame, owner)
    if not isinstance(module, torch.nn.Module) or any(True for _ in module.buffers()):
        return None
    parameters = list(module.parameters())
    state = list(module.state_dict().values())
    memory = {p.data_ptr() for p in parameters}
    if len(parameters) != len(state) or not all(p.data_ptr() == t.data_ptr() for p, t in zip(parameters, state)) \
            or not all(t.data_ptr() in memory for t in offenders):
        return None
    owner_text = text_of(filename, owner)
    new_statement = replace_node_text(filename, changed, values, f"{owner_text}.parameters()")
    changed_location = location if changed is statement else statement_location(filename, changed)
    return statement_change(changed_location, f"ask for {owner_text}.parameters(): state_dict() holds their values "
                            "detached from them (for saving), so no gradient reaches those tensors; the parameters "
                            "come in the same order", new_statement)


MAX_LOCALS_SEARCHED = 50


def _never_trained_parameters(offenders: list, frame, call):
    """(the locations of the statements, one per frozen input, that make it a parameter with
    `requires_grad=False` in its module's class, `self.scale = nn.Parameter(x, requires_grad=False)`;
    a register_buffer example for the first), or None when one of the inputs was made otherwise
    (frozen later by `p.requires_grad = False`, built by a library class)."""
    from autograd_doctor.recording.frames import frame_locals, in_installed_package, is_internal_file

    if frame is None:
        return None
    # The modules among the frame's variables and their attributes (`self.policy`), one level deep.
    owners = []
    for value in list(frame_locals(frame).values())[:MAX_LOCALS_SEARCHED]:
        if isinstance(value, torch.nn.Module):
            owners.append(value)
        elif hasattr(value, "__dict__") and not isinstance(value, type):
            owners.extend(v for v in list(vars(value).values())[:MAX_LOCALS_SEARCHED] if isinstance(v, torch.nn.Module))
    found, example = [], None
    for tensor in offenders:
        place = next(((sub, name) for owner in owners for sub in owner.modules()
                      for name, p in sub._parameters.items() if p is tensor), None)
        if place is None:
            return None
        sub, name = place
        code = getattr(type(sub).__init__, "__code__", None)
        if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
            return None
        tree = parse_file(code.co_filename)
        definition = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                           and node.lineno <= code.co_firstlineno <= node.end_lineno
                           and node.name == "__init__"), None) if tree is not None else None
        if definition is None:
            return None
        made = [node for node in ast.walk(definition) if isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == name
                and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"
                and isinstance(node.value, ast.Call) and ast.unparse(node.value.func).split(".")[-1] == "Parameter"
                and len(node.value.args) == 1 and any(
                    k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is False
                    for k in node.value.keywords)]
        if len(made) != 1:
            return None
        found.append(statement_location(code.co_filename, made[0], role="made",
                                        note=f"{name} is made a parameter that never requires grad"))
        if example is None:
            example = f"`self.register_buffer({name!r}, {text_of(code.co_filename, made[0].value.args[0])})`"
    if not found:
        return None
    found.sort(key=lambda location: (location.file, location.line))
    return found, example


def _frozen_parameters_help(frame, filename: str, statement, location, call, offenders: list):
    """`grad(loss, model.parameters())` over a model with frozen parameters: ask only for those that
    require grad (`[p for p in model.parameters() if p.requires_grad]`), in the call or, for a list
    given by name (`params = list(model.parameters())`), where that list is made (its other uses,
    `zip(params, grads)`, then stay paired). Not when the gradients are zipped with the module's
    parameters, or with anything when the call itself changes (the pairing would shift), nor when
    no input requires grad."""
    from autograd_doctor.analysis.errors.context import enclosing_function

    given = call.args[1] if call is not None and len(call.args) > 1 else \
        next((k.value for k in call.keywords if k.arg == "inputs"), None) if call is not None else None
    changed, changed_node = statement, given
    if isinstance(given, ast.Name):
        made = last_assignment(filename, given.id, location.line)
        if not (isinstance(made, ast.Assign) and len(made.targets) == 1 and isinstance(made.targets[0], ast.Name)):
            return None
        changed, changed_node = made, made.value
    inner = changed_node
    if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id in ("list", "tuple") \
            and len(inner.args) == 1:
        inner = inner.args[0]
    if not (isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "parameters"
            and not inner.args):
        return None
    module = value_of(frame, inner.func.value)
    if not isinstance(module, torch.nn.Module):
        return None
    parameters = list(module.parameters())
    if not any(p.requires_grad for p in parameters) or all(p.requires_grad for p in parameters) or \
            not all(any(t is p for p in parameters) for t in offenders):
        return None
    targets = {n.id for t in getattr(statement, "targets", []) for n in ast.walk(t) if isinstance(n, ast.Name)}
    tree = parse_file(filename)
    scope = enclosing_function(tree, location.line) if tree is not None else None
    zips = [node for node in ast.walk(scope or tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "zip" and any(isinstance(n, ast.Name) and n.id in targets
                                              for a in node.args for n in ast.walk(a))] if tree is not None else []
    with_parameters = [z for z in zips if any(isinstance(n, ast.Attribute) and n.attr == "parameters"
                                              for a in z.args for n in ast.walk(a))]
    if not targets or with_parameters or (zips and changed is statement):
        return None
    owner = text_of(filename, inner.func.value)
    new_statement = replace_node_text(filename, changed, changed_node,
                                      f"[p for p in {owner}.parameters() if p.requires_grad]")
    changed_location = location if changed is statement else statement_location(filename, changed)
    return statement_change(changed_location, f"ask only for the parameters of {owner} that require grad: the "
                            "frozen ones have no gradient to give (the others' gradients are unchanged)", new_statement)


def _reordered_gradients(frame, filename: str, statement, outputs, gradients) -> str | None:
    """The statement with the list of gradients reordered, when the outputs and their gradients are
    written as lists of the same length (`backward([mean, value], grad_tensors=[grad_value,
    grad_mean])`) and exactly one order of the gradients gives every output a gradient of its own
    shape: the pairing is then not in doubt. None otherwise (two outputs of one shape, a value
    that cannot be read without running code)."""
    import itertools

    if not (isinstance(outputs, (ast.List, ast.Tuple)) and isinstance(gradients, (ast.List, ast.Tuple))
            and 2 <= len(outputs.elts) == len(gradients.elts) <= 4):
        return None
    output_values = [value_of(frame, node) for node in outputs.elts]
    gradient_values = [value_of(frame, node) for node in gradients.elts]
    if not all(isinstance(value, torch.Tensor) for value in output_values + gradient_values):
        return None
    fitting = [order for order in itertools.permutations(range(len(gradients.elts)))
               if all(gradient_values[j].shape == output.shape for output, j in zip(output_values, order))]
    if len(fitting) != 1 or list(fitting[0]) == list(range(len(gradients.elts))):
        return None
    texts = [text_of(filename, gradients.elts[j]) for j in fitting[0]]
    if None in texts:
        return None
    opening, closing = ("[", "]") if isinstance(gradients, ast.List) else ("(", ")")
    return replace_node_text(filename, statement, gradients, opening + ", ".join(texts) + closing)


def gradient_shape(context: ErrorContext, already):
    found = _grad_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call = found
    match = re.search(r"grad_output\[(\d+)\] has a shape of (torch\.Size\(\[[^\]]*\]\)) and output\[\d+\] has a "
                      r"shape of (torch\.Size\(\[[^\]]*\]\))", context.message)
    index, given, wanted = (match.group(1), match.group(2), match.group(3)) if match else ("0", "?", "?")
    location.note = f"the gradient given for output {index} has shape {given}, the output {wanted}"
    helps = []
    gradient, output = None, None
    if call is not None:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if getattr(call.func, "attr", None) == "backward" and receiver is not None and text_of(filename, receiver) not in (
                "torch.autograd", "autograd"):
            output = receiver
            gradient = call_argument(call, 0, "gradient")  # tensor.backward(gradient)
        elif call.args:
            output = call.args[0]
            # torch.autograd.backward(tensors, grad_tensors), torch.autograd.grad(outputs, inputs, grad_outputs)
            gradient = call_argument(call, 1, "grad_tensors") if getattr(call.func, "attr", None) == "backward" \
                else call_argument(call, 2, "grad_outputs")
    if gradient is not None and output is not None and not isinstance(output, (ast.List, ast.Tuple)) and \
            (_ones(gradient) or _holds_only_ones(frame, gradient)):
        # A seed of ones (`torch.ones(n)`, or a name bound to one: `idx = torch.ones(n_gpus)`) asks
        # for the gradient of the sum of the output's elements, whatever its shape: ones of the
        # output's own shape ask for the same.
        output_text = text_of(filename, output)
        new_statement = replace_node_text(filename, statement, gradient, f"torch.ones_like({output_text})")
        helps.append(statement_change(location, f"give a gradient of the output's own shape: "
                                      f"torch.ones_like({output_text})", new_statement))
    elif gradient is not None and output is not None and _ones_for_each_output(output, gradient):
        # `backward([loss0, loss1], [torch.ones(1), torch.ones(1)])` for 0-d losses: one seed of ones
        # per output, written in the call; each becomes ones of its own output's shape.
        seeds = ", ".join(f"torch.ones_like({text_of(filename, each)})" for each in output.elts)
        new_statement = replace_node_text(filename, statement, gradient, f"[{seeds}]")
        helps.append(statement_change(location, "give each output a gradient of ones of its own shape "
                                      "(torch.ones_like of that output)", new_statement))
    elif gradient is not None and output is not None and _same_but_unit_dimensions(given, wanted) \
            and (paired := _unit_dimension_lists(frame, output, gradient)) is not None:
        # Lists of outputs and gradients (`backward(loss_seq, grad_seq)` with `[torch.ones(1), ...]` for
        # 0-dim losses): every gradient holds its output's elements, only dimensions of size one
        # apart, so reshaping each one to its own output keeps the pairing of the lists.
        output_text, value_text = text_of(filename, output), text_of(filename, gradient)
        if paired and output_text and value_text:
            new_statement = replace_node_text(filename, statement, gradient,
                                              f"[g.reshape_as(o) for g, o in zip({value_text}, {output_text})]")
            helps.append(statement_change(location, f"give each gradient in {value_text} the shape of its output in "
                                          f"{output_text} ({wanted} for output {index}): the same elements, "
                                          "only dimensions of size one apart", new_statement))
    elif gradient is not None and output is not None and _same_but_unit_dimensions(given, wanted) \
            and not isinstance(output, (ast.List, ast.Tuple)) and not isinstance(gradient, (ast.List, ast.Tuple)) \
            and not isinstance(value_of(frame, output), (list, tuple)) \
            and not isinstance(value_of(frame, gradient), (list, tuple)):
        # [6] given for a [6, 1] output (REINFORCE's advantages for gathered log-probabilities): the
        # same elements in the same order, only a dimension of size one apart, so the pairing of
        # gradient and output elements is not in doubt.
        output_text, value_text = text_of(filename, output), text_of(filename, gradient)
        simple = isinstance(gradient, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        new_statement = replace_node_text(filename, statement, gradient,
                                          f"{value_text if simple else f'({value_text})'}.reshape_as({output_text})")
        helps.append(statement_change(location, f"give the gradient the output's shape {wanted}: the same elements, "
                                      f"one per element of {output_text}", new_statement))
    elif (reshaped := _pieces_reshaped_like_outputs(frame, filename, location.line, output, gradient)) is not None:
        # One flat piece per output with that output's number of elements (a flat vector split by
        # numel()): the pairing is the order of the lists, only the shapes are missing.
        made, change = reshaped
        return diagnosis(codes.GRAD_OUTPUTS_SHAPE, made, [location], notes=[
            "grad_outputs / backward(gradient) is the gradient of the final loss with respect to each output, "
            "so each piece has the shape of its output"], help=[change, *helps])
    elif (reordered := _reordered_gradients(frame, filename, statement, output, gradient)) is not None:
        helps.append(statement_change(location, "give the gradients in the order of the outputs: each one then has "
                                      "the shape of the output it belongs to", reordered))
    helps.append(Suggestion(f"the gradient passed for an output must have that output's shape {wanted} "
                            "(for a scalar loss, pass nothing)"))
    return diagnosis(codes.GRAD_OUTPUTS_SHAPE, location, notes=[
        "grad_outputs / backward(gradient) is the gradient of the final loss with respect to each output, "
        "so it has the output's shape"], help=helps)


def _pieces_reshaped_like_outputs(frame, filename: str, line: int, output, gradient):
    """`pieces = list(flat.split(sizes))` given as grad_outputs for outputs of other shapes but the
    same numbers of elements, one by one: (where the pieces are made, the change that gives each
    the shape of its output there). None unless `gradient` and `output` are names, the pieces are 1-d,
    and the outputs' name is bound before the pieces are made (it is read there)."""
    if not (isinstance(gradient, ast.Name) and isinstance(output, ast.Name)) or frame is None or \
            {gradient.id, output.id} & {"piece", "out"}:  # the names the change's comprehension binds
        return None
    pieces, outputs = value_of(frame, gradient), value_of(frame, output)
    if not (isinstance(pieces, (list, tuple)) and isinstance(outputs, (list, tuple)) and len(pieces) == len(outputs)
            and all(isinstance(t, torch.Tensor) for t in (*pieces, *outputs))):
        return None
    if not all(p.dim() == 1 and p.numel() == o.numel() for p, o in zip(pieces, outputs)) or \
            all(p.shape == o.shape for p, o in zip(pieces, outputs)):
        return None
    made = last_assignment(filename, gradient.id, line)
    bound = last_assignment(filename, output.id, made.lineno) if made is not None else None
    if not (isinstance(made, ast.Assign) and len(made.targets) == 1 and isinstance(bound, (ast.Assign, ast.AnnAssign))):
        return None
    value = made.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple") and \
            len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    reshaped = f"[piece.view_as(out) for piece, out in zip({text_of(filename, value)}, {output.id})]"
    made_location = statement_location(filename, made, role="made",
                                       note=f"{gradient.id} holds flat pieces: the outputs in {output.id} have other "
                                            "shapes with the same numbers of elements")
    change = statement_change(made_location, f"give each piece the shape of its output in {output.id} "
                              "(view_as: the same elements, in the same order)",
                              f"{text_of(filename, made.targets[0])} = {reshaped}")
    return made_location, change


def _unit_dimension_lists(frame, output, gradient) -> bool | None:
    """For `backward(outputs, gradients)` given as lists (or tuples) of tensors of one length: True
    when every gradient has its output's number of elements and differs from it only in dimensions
    of size one (so `g.reshape_as(o)` keeps the same elements), False when they are lists of
    tensors but some pair does not fit that way. None when either is not such a list (a tensor, a
    value that cannot be read)."""
    outputs, gradients = value_of(frame, output), value_of(frame, gradient)
    if not (isinstance(outputs, (list, tuple)) and isinstance(gradients, (list, tuple))):
        return None
    if not outputs or len(outputs) != len(gradients) or not all(
            isinstance(value, torch.Tensor) for value in (*outputs, *gradients)):
        return None
    return all(g.numel() == o.numel() and [s for s in g.shape if s != 1] == [s for s in o.shape if s != 1]
               for g, o in zip(gradients, outputs))


def _same_but_unit_dimensions(given: str, wanted: str) -> bool:
    """Two `torch.Size([...])` texts that differ only in dimensions of size 1 ([6] and [6, 1])."""
    def sizes(text):
        found = re.fullmatch(r"torch\.Size\(\[([\d, ]*)\]\)", text)
        return [int(s) for s in found.group(1).split(",") if s.strip()] if found else None
    a, b = sizes(given), sizes(wanted)
    return a is not None and b is not None and a != b and [s for s in a if s != 1] == [s for s in b if s != 1]


def _ones(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)) and \
        (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("ones", "ones_like")


def _holds_only_ones(frame, node: ast.AST) -> bool:
    """A name (or attribute) whose value in `frame` is a plain tensor holding nothing but ones: a
    seed made before the call. Read with analysis.live_values (value_of); comparing a plain
    tensor's values runs none of the user's code."""
    if frame is None or not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    value = value_of(frame, node)
    if type(value) is not torch.Tensor or value.numel() == 0 or value.is_meta:
        return False
    with torch.no_grad():
        return bool((value == 1).all())


def _ones_for_each_output(output: ast.AST, gradient: ast.AST) -> bool:
    """Outputs and gradients written as lists (or tuples) of one length in the call, every gradient
    a `torch.ones(...)` / `torch.ones_like(...)` call."""
    return isinstance(output, (ast.List, ast.Tuple)) and isinstance(gradient, (ast.List, ast.Tuple)) and \
        len(output.elts) == len(gradient.elts) > 0 and \
        not any(isinstance(each, ast.Starred) for each in (*output.elts, *gradient.elts)) and \
        all(_ones(each) for each in gradient.elts)


def assigned_gradient_shape(context: ErrorContext, already):
    """`p.grad = g` with g of another size than p."""
    match = re.search(r"assign a gradient of size '(\[[^\]]*\])' to a tensor of size '(\[[^\]]*\])'", context.message)
    found = context.innermost_user()
    if found is None or match is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    if location is None:
        return None
    given, wanted = match.group(1), match.group(2)
    location.note = f"a gradient of size {given} for a tensor of size {wanted}"
    target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
    owner = text_of(filename, target.value) if isinstance(target, ast.Attribute) and target.attr == "grad" else None
    value = text_of(filename, statement.value) if target is not None else None
    helps = [Suggestion(f"{owner or 'the tensor'}.grad must have {owner or 'its'}'s own size {wanted}: build the "
                        f"gradient with that shape (torch.zeros_like({owner or 'p'}), or reshape/expand "
                        f"{value or 'it'}), or assign it to the tensor it belongs to")]
    paired = _zipped_with_other_tensors(frame, filename, statement, target) if target is not None else None
    if paired is not None:
        # `for p, g in zip(model.parameters(), grads)` with grads = grad(loss, params) and params in
        # another order: the gradients belong to params, one for one, in the order grad() got them.
        loop, zipped, inputs_text, grads_text, new_loop = paired
        loop_location = statement_location(filename, loop, role="paired",
                                           note=f"pairs {text_of(filename, zipped)} with {grads_text}, the gradients "
                                                f"of {inputs_text}, in another order")
        loop_location.end_line, loop_location.end_column = loop.lineno, None
        notes = [f"{grads_text} holds the gradients of {inputs_text}, in the order of {inputs_text}; "
                 f"{text_of(filename, zipped)} lists the same tensors in another order, so each gradient is "
                 "assigned to another tensor"]
        change = Suggestion(f"zip the gradients with {inputs_text}, the tensors they are the gradients of", new_loop,
                            statement_location(filename, loop))
        change.location.end_line, change.location.end_column = loop.lineno, len(source_line(filename, loop.lineno))
        return diagnosis(codes.GRAD_ASSIGNED_SHAPE, loop_location, [location], notes, [change] + helps)
    if owner is not None and value is not None and given.count(",") == 0 and _same_count(given, wanted):
        # A flat gradient with the tensor's number of elements: a slice of one vector holding all
        # parameters' gradients, meant for this tensor in its order (another shape with the same
        # count, [3, 2] for [2, 3], may be a transpose: only the user can tell).
        helps.insert(0, statement_change(location, f"the gradient has {owner}'s number of elements in another "
                                         f"shape (a flattened gradient): give it {owner}'s shape",
                                         f"{ast.unparse(target)} = {method_receiver(statement.value, value)}"
                                         f".reshape_as({owner})"))
    elif owner is not None and value is not None and _trailing_dimensions_merged(given, wanted) and \
            _computed_from_own_flattened_grad(filename, statement, owner, line):
        # `flat = p.grad.flatten(1)`, each row (a conv filter's gradient) normalised, then assigned
        # back: the gradient's leading dimensions are p's, its last one p's trailing ones merged, and
        # it was computed from p's own gradient flattened so. The reshape is the flatten's inverse.
        helps.insert(0, statement_change(location, f"the gradient is {owner}'s own gradient with its trailing "
                                         f"dimensions merged (flattened): give it back {owner}'s shape",
                                         f"{ast.unparse(target)} = {method_receiver(statement.value, value)}"
                                         f".reshape_as({owner})"))
    elif owner is not None and value is not None and _reversed_matrix_sizes(given, wanted) and \
            _is_matrix_product(statement.value):
        # A product of matrices with the tensor's sizes the other way round: the gradient was computed
        # in the transposed layout (x.T @ grad_out for a weight stored (out, in), as nn.Linear does).
        # A reshape would keep the shape and scramble the entries; the transpose is the same matrix.
        helps.insert(0, statement_change(location, f"the product has {owner}'s sizes the other way round: it is "
                                         f"the gradient in the transposed layout ({owner} is stored {wanted}); "
                                         "transpose it (a reshape would mix up its entries)",
                                         f"{ast.unparse(target)} = ({value}).T"))
    return diagnosis(codes.GRAD_ASSIGNED_SHAPE, location, notes=[
        "a tensor's .grad always has the tensor's shape; optimizers read it element by element"], help=helps)


def _zipped_with_other_tensors(frame, filename: str, statement: ast.stmt, target: ast.expr):
    """(the loop, the other zipped iterable, the inputs' text, the gradients' text, the loop's first
    line with the inputs zipped instead) when `p.grad = g` runs in `for p, g in zip(A, grads)`, grads
    was bound by `grads = torch.autograd.grad(loss, inputs)` and A holds the same tensors as
    `inputs` in another order (checked on the values). None otherwise."""
    if not (isinstance(target, ast.Attribute) and target.attr == "grad" and isinstance(target.value, ast.Name)
            and isinstance(statement.value, ast.Name)):
        return None
    tree = parse_file(filename)
    loops = [node for node in ast.walk(tree) if isinstance(node, ast.For) and node.lineno < statement.lineno
             <= node.end_lineno] if tree is not None else []
    loop = max(loops, key=lambda node: node.lineno) if loops else None
    if loop is None or not (isinstance(loop.target, ast.Tuple) and len(loop.target.elts) == 2
                            and isinstance(loop.iter, ast.Call) and getattr(loop.iter.func, "id", None) == "zip"
                            and len(loop.iter.args) == 2 and loop.lineno != loop.body[0].lineno):
        return None
    names = [getattr(element, "id", None) for element in loop.target.elts]
    if names != [target.value.id, statement.value.id] or not isinstance(loop.iter.args[1], ast.Name):
        return None
    zipped, grads = loop.iter.args
    made = last_assignment(filename, grads.id, loop.lineno)
    call = made.value if isinstance(made, ast.Assign) and isinstance(made.value, ast.Call) else None
    if call is None or getattr(call.func, "attr", getattr(call.func, "id", None)) != "grad" or len(call.args) < 2:
        return None
    inputs = call.args[1]
    inputs_value = value_of(frame, inputs)
    if not isinstance(inputs_value, (list, tuple)) or not all(isinstance(t, torch.Tensor) for t in inputs_value):
        return None
    zipped_value = value_of(frame, zipped) if isinstance(zipped, (ast.Name, ast.Attribute)) else None
    if zipped_value is None and isinstance(zipped, ast.Call) and getattr(zipped.func, "attr", None) == "parameters" \
            and not zipped.args:
        owner = value_of(frame, zipped.func.value)
        zipped_value = list(owner.parameters()) if isinstance(owner, torch.nn.Module) else None
    if not isinstance(zipped_value, (list, tuple)) or len(zipped_value) != len(inputs_value) \
            or {id(t) for t in zipped_value} != {id(t) for t in inputs_value} \
            or [id(t) for t in zipped_value] == [id(t) for t in inputs_value]:
        return None
    inputs_text, zipped_text = text_of(filename, inputs), text_of(filename, zipped)
    first_line = source_line(filename, loop.lineno).rstrip()
    indent = first_line[:loop.col_offset]
    if zipped_text is None or inputs_text is None or first_line.count(zipped_text) != 1:
        return None
    return loop, zipped, inputs_text, grads.id, first_line[len(indent):].replace(zipped_text, inputs_text)


def _reversed_matrix_sizes(given: str, wanted: str) -> bool:
    """Whether the sizes '[3, 2]' and '[2, 3]' (as PyTorch prints them) are two sizes, reversed."""
    given_sizes = [part.strip() for part in given.strip("[]").split(",")]
    wanted_sizes = [part.strip() for part in wanted.strip("[]").split(",")]
    return len(given_sizes) == len(wanted_sizes) == 2 and given_sizes == wanted_sizes[::-1]


def _is_matrix_product(node: ast.AST) -> bool:
    """`a @ b`, `torch.mm(a, b)`, `a.matmul(b)`, `torch.outer(a, b)`."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
        node.func.attr in ("mm", "matmul", "outer", "einsum")


def _trailing_dimensions_merged(given: str, wanted: str) -> bool:
    """Whether the sizes '[6, 27]' are '[6, 3, 3, 3]' with its dimensions after the first k (k >= 1)
    merged into one, as `flatten(k)` gives them."""
    import math

    def sizes(text: str):
        parts = [part.strip() for part in text.strip("[]").split(",") if part.strip()]
        return [int(part) for part in parts] if all(part.isdigit() for part in parts) else None
    a, b = sizes(given), sizes(wanted)
    return a is not None and b is not None and 2 <= len(a) < len(b) and \
        a[:-1] == b[:len(a) - 1] and a[-1] == math.prod(b[len(a) - 1:])


# The calls that merge a tensor's trailing dimensions, as `flat = p.grad.flatten(1)` writes them.
_FLATTENING_CALLS = ("flatten", "view", "reshape")


def _computed_from_own_flattened_grad(filename: str, statement: ast.stmt, owner: str, line: int) -> bool:
    """Whether the assigned value reads `{owner}.grad.flatten(...)` (or `.view`/`.reshape`), itself
    or through a name bound to it before the statement."""
    def flattens_own_grad(node: ast.AST) -> bool:
        return any(isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                   and call.func.attr in _FLATTENING_CALLS and text_of(filename, call.func.value) == f"{owner}.grad"
                   for call in ast.walk(node))
    value = statement.value
    if flattens_own_grad(value):
        return True
    for name in {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}:
        made = last_assignment(filename, name, line)
        if isinstance(made, ast.Assign) and flattens_own_grad(made.value):
            return True
    return False


def _same_count(given: str, wanted: str) -> bool:
    """Whether the sizes '[6]' and '[2, 3]' (as PyTorch prints them) hold as many elements."""
    import math

    def count(size: str):
        parts = [part.strip() for part in size.strip("[]").split(",") if part.strip()]
        return math.prod(int(part) for part in parts) if all(part.isdigit() for part in parts) else None
    return count(given) is not None and count(given) == count(wanted)



def empty_inputs(context: ErrorContext, already):
    """grad(loss, params) / backward(inputs=params) with nothing in params: the line to change is
    where params was made (a generator used up earlier, a filter that matched nothing)."""
    found = _grad_call(context)
    if found is None:
        return None
    frame, filename, statement, location, call = found
    argument = None
    if call is not None:
        keyword = next((k for k in call.keywords if k.arg == "inputs"), None)
        is_grad = getattr(call.func, "attr", getattr(call.func, "id", None)) == "grad"
        argument = keyword.value if keyword is not None else (call.args[1] if is_grad and len(call.args) > 1 else None)
    if (isinstance(argument, ast.Call) and isinstance(argument.func, ast.Name) and argument.func.id in ("list", "tuple")
            and len(argument.args) == 1 and not argument.keywords):
        argument = argument.args[0]  # list(self.params): what is empty is what list() was given
    # A name, or `self.params` (made where the object's class assigns the attribute).
    made_file, made, name = made_where(frame, filename, argument, location.line) if argument is not None \
        else (None, None, None)
    location.note = f"{name or 'the inputs'} holds no tensor"
    if made is None or not isinstance(made, ast.Assign):
        return diagnosis(codes.GRAD_EMPTY_INPUTS, location, help=[Suggestion(
            "check what the inputs expression yields (list(...) it and print its length): a parameters() "
            "generator used up earlier, or a filter that matched no parameter")])
    value = value_of(frame, argument)
    target, value_text = ast.unparse(made.targets[0]), text_of(made_file, made.value)
    if one_shot_iterator(value):
        kind = "a generator" if isinstance(value, types.GeneratorType) else f"a {type(value).__name__} iterator"
        made_location = statement_location(made_file, made, role="made",
                                           note=f"{name} is {kind}: it can be iterated only once")
        users = uses_between(filename, name, made.end_lineno, location.line) if name.isidentifier() else []
        helps = [statement_change(made_location, "keep the tensors in a list, which can be read any number of "
                                  "times", f"{target} = list({value_text})")]
        notes = [f"{name} was already iterated (used up) before this call read it, so it yielded nothing"]
        return diagnosis(codes.GRAD_EMPTY_INPUTS, made_location, [*users, location], notes, helps)
    made_location = statement_location(made_file, made, role="made", note=f"{name} is made here, empty")
    filters = [text_of(made_file, f) for n in ast.walk(made.value) if isinstance(n, ast.comprehension) for f in n.ifs]
    notes = [f"the condition {' and '.join(filters)} matched nothing" if filters else f"{name} is empty"]
    by_flag = _filtered_by_grad_instead_of_flag(frame, made_file, made)
    if by_flag is not None:
        notes.append(f"{by_flag[0]}.grad is None until a backward() has reached {by_flag[0]}: before the first one, "
                     "no tensor has a gradient yet, trained or not")
        return diagnosis(codes.GRAD_EMPTY_INPUTS, made_location, [location], notes, [statement_change(
            made_location, f"choose the tensors by {by_flag[0]}.requires_grad, which says whether a tensor is "
            "trained before any backward() has run", by_flag[1])])
    parameterless = _parameterless_module_help(frame, filename, statement, location, call, made_file, made, name)
    if parameterless is not None:
        module_text, change = parameterless
        notes.append(f"{module_text} ({type(value_of(frame, _module_node(frame, made))).__name__}) has no parameters: "
                     "there is nothing to differentiate, and grad() refuses empty inputs instead of returning no "
                     "gradients")
        return diagnosis(codes.GRAD_EMPTY_INPUTS, made_location, [location], notes, [change, Suggestion(
            f"or, if {module_text} is not the module meant, make {name} hold the tensors you want gradients for")])
    return diagnosis(codes.GRAD_EMPTY_INPUTS, made_location, [location], notes, [Suggestion(
        f"make {name} hold the tensors you want gradients for (print the names you filter on, e.g. "
        "[n for n, _ in model.named_parameters()])")])


def _module_node(frame, made: ast.Assign):
    """The one name or attribute in `made`'s value bound (in `frame`) to an nn.Module, or None."""
    found = [node for node in ast.walk(made.value)
             if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(value_of(frame, node), torch.nn.Module)]
    outermost = [node for node in found if not any(other is not node and node in list(ast.walk(other))
                                                   for other in found)]
    return outermost[0] if len(outermost) == 1 else None


def _parameterless_module_help(frame, filename: str, statement, location, call, made_file: str, made, name: str):
    """`params = list(m.parameters())` (or a helper of m) where the module m has no parameters at all
    (an activation), then `grads = torch.autograd.grad(out, params, ...)`: asking for the gradients of
    nothing. The change skips the call when there is nothing to ask for and gives no gradients,
    `grads = torch.autograd.grad(...) if params else ()`, which is what grad() of no inputs means.
    Only when the module, read in the frame of the call, really has no parameter, and the call's
    result is bound to one name."""
    if made_file != filename or call is None or not name or not name.isidentifier():
        return None
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name) and statement.value is call):
        return None
    from autograd_doctor.analysis.errors.context import enclosing_function

    tree = parse_file(filename)
    if tree is None or enclosing_function(tree, made.lineno) is not enclosing_function(tree, statement.lineno):
        return None
    node = _module_node(frame, made)
    module = value_of(frame, node) if node is not None else None
    if not isinstance(module, torch.nn.Module) or any(True for _ in module.parameters()):
        return None
    call_text = text_of(filename, call)
    if call_text is None or "\n" in call_text:
        return None
    module_text = ast.unparse(node)
    target = statement.targets[0].id
    return module_text, statement_change(
        location, f"ask for gradients only when there are inputs: {module_text} has no parameters, so there is "
        "nothing to differentiate; the call then gives no gradients, as grad() of no inputs means",
        f"{target} = {call_text} if {name} else ()")


def _filtered_by_grad_instead_of_flag(frame, filename: str, made: ast.Assign):
    """(the loop variable, the statement rewritten) for `[p for p in X if p.grad is not None]`, one
    condition on the comprehension's own variable, over the parameters of a module (`m.parameters()`)
    or a list or tuple of tensors, some of which require grad: `if p.requires_grad` instead."""
    comprehension = made.value.generators[0] if isinstance(made.value, (ast.ListComp, ast.GeneratorExp)) \
        and len(made.value.generators) == 1 else None
    if comprehension is None or not isinstance(comprehension.target, ast.Name) or len(comprehension.ifs) != 1:
        return None
    variable, condition = comprehension.target.id, comprehension.ifs[0]
    if not (isinstance(condition, ast.Compare) and isinstance(condition.ops[0], ast.IsNot) and len(condition.ops) == 1
            and isinstance(condition.left, ast.Attribute) and condition.left.attr == "grad"
            and isinstance(condition.left.value, ast.Name) and condition.left.value.id == variable
            and isinstance(condition.comparators[0], ast.Constant) and condition.comparators[0].value is None):
        return None
    source = comprehension.iter
    if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and source.func.attr == "parameters" \
            and not source.args and not source.keywords:
        module = value_of(frame, source.func.value)
        tensors = list(module.parameters()) if isinstance(module, torch.nn.Module) else None
    else:
        value = value_of(frame, source)
        tensors = list(value) if isinstance(value, (list, tuple)) else None
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors) or not any(t.requires_grad for t in tensors):
        return None
    from autograd_doctor.diagnosis.source import replace_node_text

    rewritten = replace_node_text(filename, made, condition, f"{variable}.requires_grad")
    return (variable, rewritten) if rewritten is not None else None


def decorator_cut(context: ErrorContext, already):
    """The loss was computed through a function decorated with @torch.no_grad() / @torch.inference_mode()."""
    from autograd_doctor.recording import switches
    from autograd_doctor.recording.frames import is_internal_file
    from autograd_doctor.analysis.errors.context import line_location

    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    reachable = _user_files_reachable(frame)

    def this_program(entry) -> bool:
        # Entered in this session, or in a file this program uses (a notebook's earlier cell):
        # an entry of the same name that another program left in this process is not this one's.
        return entry.session == switches.session() or entry.filename in reachable

    # A library method wrapped on one instance (`model.forward = torch.no_grad()(model.forward)` of an
    # nn.Sequential) is matched by that instance's own forward only (_decorated_forwards), not by name.
    decorated = {entry.function: entry for kind in ("no_grad", "inference_mode")
                 for entry in reversed(switches.mode_entries(kind))
                 if entry.decorator and this_program(entry) and not is_internal_file(entry.filename)}
    for entry in reversed(_grad_disabling_decorators()):  # the most recent last, so that it wins
        known = decorated.get(entry.function)
        # An entry of the same name left by another program run in this process (mode entries are
        # kept across runs) gives way to a decorator in a file this program uses.
        if known is None or entry.filename in reachable and known.filename not in reachable:
            decorated[entry.function] = entry
    modules: list = []
    instances: list = []
    called = _functions_called_upstream(filename, line, frame, modules=modules, instances=instances)
    hits = [decorated[name] for name in called if name in decorated]
    entries = [entry for kind in ("no_grad", "inference_mode")
               for entry in switches.mode_entries(kind) if entry.decorator and this_program(entry)]
    if not hits and entries:
        last = _module_making_the_loss(frame, filename, line)
        # The loss is the result of a module's call: its decorated forward ran last, so every path
        # to the loss goes through it, whatever trained modules feed its arguments.
        hits = (_decorated_forwards([last], entries) if last is not None else []) or _decorated_forwards(modules, entries)
        if not hits:
            hits = _decorated_calls(instances, entries)
    handed_over = None
    if not hits:
        handed_over = attribute_from_decorated_method(frame, filename, line, list(decorated.values()))
        if handed_over is None:
            return _user_decorator_cut(context, frame, called) or _enclosing_decorator_cut(context, decorated)
        hits = [handed_over[0]]
    entry = hits[0]
    use = context.raise_location(role="backward", note="backward() of a loss computed through it")
    if not source_line(entry.filename, entry.line).lstrip().startswith("@"):
        # No decorator line above the function: it was wrapped by calling the decorator,
        # `model.forward = torch.no_grad()(model.forward)`, somewhere else.
        return _functional_wrap_cut(frame, entry, use)
    location = line_location(entry.filename, entry.line, role="decorator",
                             note=f"{entry.function}() runs with gradients off: its result has no history")
    spelled = SET_GRAD_DISABLED_DECORATOR if entry.kind == SET_GRAD_DISABLED else f"@torch.{entry.kind}()"
    message = (f"delete this {spelled} line if gradients must flow through {entry.function}() "
               "(keep it only on functions used for evaluation)")
    helps = [_decorator_deletion(entry.filename, entry.line, message) or Suggestion(message, location=location)]
    notes = [f"the loss is computed from {entry.function}(), decorated with {spelled}: nothing "
             "computed inside it is recorded"]
    if handed_over is not None:
        _entry, _function, attribute, reader = handed_over
        notes = [f"the loss is computed from self.{attribute}, which {entry.function}(), decorated with {spelled}, "
                 f"stores and {reader}() reads: nothing computed inside {entry.function}() is recorded"]
    return diagnosis(codes.DECORATOR_CUT, location, [use], notes, helps)


# Callers looked at, from backward()'s own function outwards, for an enclosing grad-off decorator.
MAX_ENCLOSING_FRAMES = 8
# Calls in a function's body that could turn recording back on under its decorator.
GRAD_ON_CALLS = {"enable_grad", "set_grad_enabled", "inference_mode", "no_grad"}


def _enclosing_decorator_cut(context: ErrorContext, decorated: dict):
    """AD307 when backward() runs inside a function that is itself decorated with a grad-off
    decorator: `@torch.inference_mode() def predict(...)` whose body fits a head and calls
    `loss.backward()` (replicate/cog#1681). No function called upstream of the loss is decorated
    (decorator_cut's search); the cut is around the whole body. The evidence is the run's: the
    decorator's entry was recorded for this very code object (its file and first line), and its
    frame is on the traceback, so the body was still under the decorator at the raise.

    Looked at: backward()'s own function, and, outwards, its callers whose decorator is
    `@torch.inference_mode()` (a `@torch.no_grad()` caller is grad_off_caller's AD301, whose
    `@torch.enable_grad()` help keeps the caller's mode). Silent when a function between the
    decorator and backward() (that one included) calls anything that could switch the mode back
    (enable_grad, set_grad_enabled, ...): then the source does not say the body ran without
    gradients. The help deletes the decorator line (the forward values are the same)."""
    from autograd_doctor.analysis.errors.context import line_location

    entries = {(entry.filename, entry.line): entry for entry in decorated.values()}
    for depth, (frame, _line) in enumerate(context.user_frames()[:MAX_ENCLOSING_FRAMES]):
        code = frame.f_code
        if _switches_grad_mode(code):
            return None
        entry = entries.get((code.co_filename, code.co_firstlineno))
        if entry is None or entry.function != code.co_name:
            continue
        if depth > 0 and entry.kind != "inference_mode":
            return None
        if not source_line(entry.filename, entry.line).lstrip().startswith("@"):
            return None
        spelled = SET_GRAD_DISABLED_DECORATOR if entry.kind == SET_GRAD_DISABLED else f"@torch.{entry.kind}()"
        own = depth == 0
        location = line_location(entry.filename, entry.line, role="decorator",
                                 note=f"{entry.function}() runs with gradients off"
                                 + (", backward() included" if own else ", and it calls the function that backpropagates"))
        use = context.raise_location(role="backward", note="backward() of a loss computed under the decorator")
        message = (f"delete this {spelled} line: {entry.function}() "
                   + ("computes a loss and calls backward() itself" if own else
                      "calls the code that computes a loss and calls backward()")
                   + ", so it must record a graph (a function that only predicts can keep it)")
        helps = [_decorator_deletion(entry.filename, entry.line, message) or Suggestion(message, location=location)]
        notes = [f"{entry.function}() is decorated with {spelled}: nothing computed while it runs is recorded, "
                 "so the loss has no grad_fn"]
        return diagnosis(codes.DECORATOR_CUT, location, [d for d in (use,) if d is not None], notes, helps)
    return None


def _switches_grad_mode(code) -> bool:
    """Whether the function of `code` calls a grad-mode switch anywhere in its body (by name;
    True, to stay silent, when its source cannot be read)."""
    tree = parse_file(code.co_filename)
    if tree is None:
        return True
    function = next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == code.co_name
                     and min([node.lineno, *(d.lineno for d in node.decorator_list)]) == code.co_firstlineno), None)
    if function is None:
        return code.co_name != "<module>"
    body = function.body if function is not None else []
    return any(isinstance(node, ast.Call) and call_name(node) in GRAD_ON_CALLS
               for statement in body for node in ast.walk(statement))


def _user_decorator_cut(context: ErrorContext, frame, called: list[str]):
    """AD307 for the user's own decorator: a called function is a wrapper made with functools.wraps
    (it has `__wrapped__`) whose body entered torch.no_grad() / torch.inference_mode() (a recorded
    with block inside the wrapper's code). The line to change is the decorator line above the
    wrapped def: deleting it makes the function record again (its values are the same). None when
    no called function is such a wrapper, or its decorator line is not found."""
    from autograd_doctor.recording import switches
    from autograd_doctor.analysis.errors.context import line_location
    from autograd_doctor.diagnosis.source import display_path

    blocks = [entry for kind in ("no_grad", "inference_mode") for entry in switches.mode_entries(kind)
              if not entry.decorator]
    for name in called:
        wrapper = value_of(frame, ast.Name(id=name, ctx=ast.Load()))
        wrapped = getattr(wrapper, "__wrapped__", None)
        code = getattr(wrapper, "__code__", None)
        if code is None or getattr(wrapped, "__code__", None) is None:
            continue
        last_line = max((line for _start, _end, line in code.co_lines() if line is not None), default=0)
        entry = next((e for e in reversed(blocks) if e.filename == code.co_filename
                      and code.co_firstlineno <= e.line <= last_line), None)
        decorator_line = _decorator_line_making(wrapped, code) if entry is not None else None
        if decorator_line is None:
            continue
        filename = wrapped.__code__.co_filename
        location = line_location(filename, decorator_line, role="decorator",
                                 note=f"{name}() runs with gradients off: its result has no history")
        block = line_location(entry.filename, entry.line, role="block",
                              note=f"the decorator's wrapper runs {name}() inside torch.{entry.kind}()")
        use = context.raise_location(role="backward", note="backward() of a loss computed through it")
        message = (f"delete this decorator line if gradients must flow through {name}(): its wrapper runs the "
                   f"function under torch.{entry.kind}() (keep it only on functions used for evaluation)")
        helps = [_decorator_deletion(filename, decorator_line, message) or Suggestion(message, location=location)]
        notes = [f"the loss is computed from {name}(), whose decorator calls it inside torch.{entry.kind}() "
                 f"({display_path(entry.filename)}:{entry.line}): nothing computed inside it is recorded"]
        return diagnosis(codes.DECORATOR_CUT, location, [d for d in (block, use) if d is not None], notes, helps)
    return None


def _decorator_line_making(wrapped, wrapper_code) -> int | None:
    """The line of the decorator above `wrapped`'s def whose function defines `wrapper_code` (the
    wrapper it returns is a function nested in it)."""
    filename = wrapped.__code__.co_filename
    tree = parse_file(filename)
    first_line = wrapped.__code__.co_firstlineno
    for node in ast.walk(tree) if tree is not None else ():
        if not (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == wrapped.__name__
                and node.decorator_list and node.decorator_list[0].lineno == first_line):
            continue
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            maker = wrapped.__globals__.get(target.id) if isinstance(target, ast.Name) else None
            maker_code = getattr(maker, "__code__", None)
            if maker_code is not None and _defines_code(maker_code, wrapper_code):
                return decorator.lineno
    return None


def _defines_code(outer, inner) -> bool:
    """Whether the code object `inner` is `outer` or nested in it."""
    return outer is inner or any(isinstance(const, types.CodeType) and _defines_code(const, inner)
                                 for const in outer.co_consts)


# `@torch.set_grad_enabled(False)` on a def: the same cut as `@torch.no_grad()`. It is recorded as a
# grad-mode switch (the call runs as the def is read), not as a mode entry.
SET_GRAD_DISABLED = "set_grad_enabled"
SET_GRAD_DISABLED_DECORATOR = "@torch.set_grad_enabled(False)"


def _grad_disabling_decorators() -> list:
    """The user's `set_grad_enabled(False)` calls written as a decorator line, as mode entries of the
    functions they decorate (the most recent first)."""
    from autograd_doctor.recording import switches

    entries = []
    for switch in switches.grad_switches():
        if switch.enabled:
            continue
        filename, line = switch.site.filename, switch.site.lineno
        if not source_line(filename, line).lstrip().startswith("@"):
            continue
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    decorator.lineno == line and isinstance(decorator, ast.Call)
                    and getattr(decorator.func, "attr", getattr(decorator.func, "id", None)) == "set_grad_enabled"
                    for decorator in node.decorator_list):
                entries.append(switches.ModeEntry(SET_GRAD_DISABLED, filename, line, True, node.name))
    return entries


def _functional_wrap_cut(frame, entry, use):
    """AD307 where the function was wrapped by calling the decorator (`model.forward =
    torch.no_grad()(model.forward)`, in a helper that makes a predictor): the wrapping call is
    found in the user's files reachable from the failing frame (its own, and those of the
    functions and modules it imported). Rebinding the function to its wrapped self turns
    gradients off for every later call, training included: deleting that statement is the change
    (the predictions keep their values; they are then recorded). Advice when the call is not
    found, or its result is kept under another name."""
    from autograd_doctor.analysis.errors.context import line_location

    wrap = f"torch.{entry.kind}()({entry.function})"
    found = _wrapping_statements(frame, entry)
    if len(found) != 1:
        return diagnosis(codes.DECORATOR_CUT, use, [], [
            f"{entry.function}() runs with gradients off: it was wrapped by calling the decorator ({wrap}), "
            "not with a decorator line above its def"], [Suggestion(
                f"find where {entry.function} is wrapped in torch.{entry.kind}() and keep the wrapped function "
                f"under another name for evaluation, so that training calls the original {entry.function}()")])
    filename, statement, target = found[0]
    location = statement_location(filename, statement, role="decorator",
                                  note=f"{target} is replaced by a version that runs with gradients off")
    defined = line_location(entry.filename, entry.line, role="",
                            note=f"{entry.function}() is defined here, without a decorator")
    notes = [f"every later call of {target}, training included, runs under torch.{entry.kind}(): nothing computed "
             "inside it is recorded"]
    helps = [Suggestion(f"delete this line, so that {target} keeps recording (the values it returns stay the same); "
                        f"for predictions without a graph, wrap those calls in `with torch.{entry.kind}():` instead",
                        None, location, deletes_statement=True)]
    return diagnosis(codes.DECORATOR_CUT, location, [d for d in (defined, use) if d is not None], notes, helps)


def _user_files_reachable(frame) -> list[str]:
    """The failing frame's file and the user's files of the functions, classes and modules its
    globals hold."""
    from autograd_doctor.recording.frames import is_internal_file

    files = [frame.f_code.co_filename]
    for value in list(frame.f_globals.values()):
        if isinstance(value, type):  # a class: the file of its first method (a notebook cell's too)
            value = next((member for member in vars(value).values() if hasattr(member, "__code__")), None)
        code = getattr(value, "__code__", None)
        filename = code.co_filename if code is not None else getattr(value, "__file__", None) \
            if isinstance(value, types.ModuleType) else None
        if isinstance(filename, str) and filename not in files and not is_internal_file(filename):
            files.append(filename)
    return files


def _wrapping_statements(frame, entry) -> list:
    """(file, statement, target text) of each `X = torch.no_grad()(X)` whose X ends in the
    function's name, in the failing frame's file and in the user's files of the functions and
    modules its globals hold."""
    files = _user_files_reachable(frame)
    found = []
    for filename in files[:16]:
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call)
                    and len(node.value.args) == 1 and isinstance(node.value.func, ast.Call)):
                continue
            name = getattr(node.value.func.func, "attr", getattr(node.value.func.func, "id", None))
            target, argument = ast.unparse(node.targets[0]), ast.unparse(node.value.args[0])
            if name == entry.kind and target == argument and target.split(".")[-1] == entry.function:
                found.append((filename, node, target))
    return found


def _decorator_deletion(filename: str, line: int, message: str) -> Suggestion | None:
    """The decorator at `line` deleted, as code: a Suggestion's replacement cannot be empty, so the
    change spans the decorator and the line after it (the `def`, or another decorator) and keeps
    the second. None in an installed library (autograd-doctor edits only the user's files) or when
    the two lines do not read as a decorator above its function."""
    from autograd_doctor.diagnosis.model import Location
    from autograd_doctor.diagnosis.source import display_path, source_line
    from autograd_doctor.recording.frames import in_installed_package

    if in_installed_package(filename):
        return None
    decorator, following = source_line(filename, line), source_line(filename, line + 1)
    indent = decorator[: len(decorator) - len(decorator.lstrip())]
    kept = following.rstrip()
    if not decorator.lstrip().startswith("@") or not kept.startswith(indent):
        return None
    if not kept[len(indent):].startswith(("def ", "async def ", "@")):
        return None
    location = Location(file=display_path(filename), line=line, column=len(indent), end_line=line + 1,
                        end_column=len(kept), source=decorator.strip())
    return Suggestion(message, kept[len(indent):], location)


def _module_making_the_loss(frame, filename: str, line: int):
    """The module whose call is the whole value backpropagated at `line`: `loss.backward()` with
    `loss = criterion(output, target)`, `criterion` a module (None for any other form)."""
    import torch

    from autograd_doctor.analysis.errors.context import value_of
    from autograd_doctor.diagnosis.source import statement_at

    statement = statement_at(filename, line)
    value = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "backward"
            and isinstance(value.func.value, ast.Name)):
        return None
    made = last_assignment(filename, value.func.value.id, line)
    call = made.value if isinstance(made, ast.Assign) and len(made.targets) == 1 else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, (ast.Name, ast.Attribute))):
        return None
    module = value_of(frame, call.func)
    return module if isinstance(module, torch.nn.Module) else None


def _decorated_calls(instances: list, entries: list) -> list:
    """The decorator entries of the `__call__` of an object called upstream of the loss (a
    diffusion pipeline, whose `__call__` carries @torch.no_grad()), matched by the function's code
    (file and first line) as for a module's forward."""
    import inspect

    found = []
    for value in instances:
        code = getattr(inspect.unwrap(type(value).__call__), "__code__", None)
        for entry in entries if code is not None else ():
            if (entry.filename, entry.line, entry.function) == (code.co_filename, code.co_firstlineno,
                                                                code.co_name) and entry not in found:
                found.append(entry)
    return found


def _decorated_forwards(modules: list, entries: list) -> list:
    """The decorator entries of the `forward` of a called module or of a module inside it: a
    wrapper (nn.DataParallel, a DDP-like class holding `.module`) runs the user's module, whose
    forward carries @torch.no_grad(). Matched by the function's code (file and first line), not
    by its name, so another class's decorated forward is not taken for this one."""
    import inspect

    from autograd_doctor.recording.frames import is_internal_file

    found = []
    for module in modules:
        own = []
        for inner in module.modules():
            for forward, of_class in ((type(inner).forward, True), (_instance_forward(inner), False)):
                code = getattr(inspect.unwrap(forward), "__code__", None) if forward is not None else None
                # The class's forward matches the user's decorated def; torch's own forward (recorded only
                # when wrapped on one instance) matches through that instance's forward alone.
                for entry in entries if code is not None and not (of_class and is_internal_file(code.co_filename)) \
                        else ():
                    if (entry.filename, entry.line, entry.function) == (code.co_filename, code.co_firstlineno,
                                                                        code.co_name) and entry not in own:
                        own.append(entry)
        if not own and any(p.requires_grad for p in module.parameters()):
            # Another trained module feeds the loss with gradients on: the cut may be there (a
            # detach() in the student while the decorated teacher gives the targets).
            return []
        found += [entry for entry in own if entry not in found]
    return found


def _instance_forward(module):
    """The `forward` the module's own `__dict__` holds (one rebound on this instance, `model.forward =
    torch.no_grad()(model.forward)`), or None. Read from the dict: no user code runs."""
    try:
        own = object.__getattribute__(module, "__dict__")
    except AttributeError:
        return None
    return own.get("forward") if isinstance(own, dict) else None


def _functions_called_upstream(filename: str, line: int, frame=None, depth: int = 4,
                               modules: list | None = None, instances: list | None = None) -> list[str]:
    """Names of functions called by the statement at `line` and by the assignments feeding it,
    and the methods that a module called there calls on `self` (its forward's helpers). The
    modules called there are added to `modules` when it is given."""
    import torch

    from autograd_doctor.analysis.errors.context import statements_feeding, value_of
    from autograd_doctor.diagnosis.source import statement_at

    called = []
    for node in statements_feeding(filename, statement_at(filename, line), depth):
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
            if name and name not in called:
                called.append(name)
            wrapped = _partial_function_name(frame, call.func)
            if wrapped and wrapped not in called:
                called.append(wrapped)
            # The module called (`model(x)`, `self.model(x)`) or whose method is called (`model.loss(x)`).
            receivers = [call.func] + ([call.func.value] if isinstance(call.func, ast.Attribute) else [])
            for method in (m for module in receivers for m in _methods_called_on_self(frame, module)):
                if method not in called:
                    called.append(method)
            value = value_of(frame, call.func) if frame is not None and isinstance(
                call.func, (ast.Name, ast.Attribute)) else None
            if modules is not None and isinstance(value, torch.nn.Module) and value not in modules:
                modules.append(value)
            elif instances is not None and value is not None and not isinstance(value, torch.nn.Module) \
                    and not isinstance(value, type) and not callable(getattr(value, "__code__", None)) \
                    and "__call__" in type(value).__dict__ and all(v is not value for v in instances):
                # An object of a class with its own __call__ (a diffusion pipeline) called here.
                instances.append(value)
    return called


def _partial_function_name(frame, callee: ast.AST) -> str | None:
    """The name of the function that a `functools.partial` object called here wraps
    (`score = partial(pooled_logits, model)`; `score(x)` runs pooled_logits)."""
    import functools

    from autograd_doctor.analysis.errors.context import value_of

    if frame is None or not isinstance(callee, (ast.Name, ast.Attribute)):
        return None
    value = value_of(frame, callee)
    if not isinstance(value, functools.partial):
        return None
    while isinstance(value, functools.partial):
        value = value.func
    return getattr(value, "__name__", None)


def _methods_called_on_self(frame, receiver: ast.AST) -> list[str]:
    """The methods that the class of the module `receiver` names in `frame` calls on `self`
    (`self.encode(x)` in its forward), read from the user's file that defines the class."""
    import torch

    from autograd_doctor.analysis.errors.context import value_of
    from autograd_doctor.recording.frames import is_internal_file

    module = value_of(frame, receiver) if frame is not None and isinstance(receiver, (ast.Name, ast.Attribute)) else None
    if not isinstance(module, torch.nn.Module):
        return []
    methods = []
    for cls in type(module).__mro__:
        # The file comes from the class's own functions: a script run as __main__ (runpy, a
        # notebook) has no module file that names it.
        files = {value.__code__.co_filename for value in vars(cls).values() if hasattr(value, "__code__")}
        for defined_in in (f for f in files if not is_internal_file(f)):
            tree = parse_file(defined_in)
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                    methods += [call.func.attr for call in ast.walk(node) if isinstance(call, ast.Call)
                                and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                                and call.func.value.id == "self"]
    return methods


def cut_path(context: ErrorContext, already):
    """Refines "element 0 of tensors does not require grad" (AD301, from gradient_path) when a
    decorator made the cut; a missing create_graph=True is AD301's own help. Under a torch.func
    transform the path is not cut: torch.autograd.grad cannot see through the transform (AD141)."""
    from autograd_doctor.analysis.errors import transforms

    if transforms.transform_name(context) is not None:
        return transforms.autograd_grad_in_transform(context, already)
    return cached_transform_cut(context, already) or decorator_cut(context, already)


def cached_transform_cut(context: ErrorContext, already):
    """torch.autograd.grad with respect to a tensor that a torch.distributions transform with
    `cache_size=1` produced (analysis/cached_transforms.py; gradient_path attaches it first, when
    the doctor watched the call)."""
    from autograd_doctor.analysis.cached_transforms import cached_transform_diagnosis

    inputs = _inputs(context)
    if not inputs:
        return None
    return cached_transform_diagnosis(inputs, [frame for frame, _ in context.user_frames()],
                                      context.raise_location("grad", "the gradient with respect to that tensor"))


# Forward operations with another way to compute the same values whose backward is differentiable:
# the keyword that selects it (given only where the call does not choose already).
_DIFFERENTIABLE_WAY = {"cdist": ("compute_mode", '"use_mm_for_euclid_dist"')}


def _grouped(text: str) -> str:
    """`text` in parentheses unless it is a name, an attribute chain or a call (safe before `.unsqueeze`)."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return f"({text})"
    return text if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"


def backward_without_derivative(context: ErrorContext, already):
    """AD184: "the derivative for '_cdist_backward' is not implemented": a loss on a gradient
    taken with create_graph=True differentiates a backward operation PyTorch has no derivative
    for. The message names the backward operation; the line to change is the user's call of its
    forward (`torch.cdist(...)`), found in the user's files when it is called once there."""
    match = re.search(r"the derivative for '(\w+)' is not implemented", context.message)
    found = user_statement(context)
    if match is None or found is None:
        return None
    frame, line, filename, statement, location = found
    backward_name = match.group(1)
    forward = backward_name.strip("_")
    forward = forward[:-len("_backward")] if forward.endswith("_backward") else forward
    location.note = f"this backward() differentiates {backward_name}, the backward of {forward}, which has no derivative"
    notes = [f"a gradient taken with create_graph=True recorded {forward}'s backward ({backward_name}); this "
             "backward() needs that backward's own derivative, and PyTorch has none"]
    calls = [(file, call) for file in context.files_reached() if (tree := parse_file(file)) is not None
             for call in find_calls(tree, forward)]
    if len(calls) != 1:
        return diagnosis(codes.BACKWARD_WITHOUT_DERIVATIVE, location, [], notes, [Suggestion(
            f"compute {forward} with operations whose backward is differentiable (or take the first gradient "
            "without create_graph=True, which drops the second-order terms)")])
    call_file, call = calls[0]
    call_statement = statement_at(call_file, call.lineno)
    made = statement_location(call_file, call_statement, role="recorded",
                              note=f"{forward} is called here; its backward has no derivative")
    helps = []
    keyword, value = _DIFFERENTIABLE_WAY.get(forward, (None, None))
    if keyword is not None and not any(k.arg == keyword for k in call.keywords) and \
            not any(k.arg == "p" for k in call.keywords) and len(call.args) <= 2:
        call_text = text_of(call_file, call)
        changed = replace_node_text(call_file, call_statement, call, f"{call_text[:-1].rstrip()}, {keyword}={value})") \
            if call_text else None
        first, second = (text_of(call_file, argument) for argument in call.args) if len(call.args) == 2 else (None, None)
        if forward == "cdist" and first and second and not call.keywords:
            # The differences' norm: the distances computed element by element, as cdist computes
            # them for small inputs, so distances near zero stay exact (the matrix-product form
            # computes |a|^2 - 2a.b + |b|^2, which rounds a distance of 1e-5 to 0, and its gradient
            # with it). Like cdist's elementwise form it costs memory for every pair's difference.
            exact = f"torch.linalg.vector_norm({_grouped(first)}.unsqueeze(-2) - {_grouped(second)}.unsqueeze(-3), dim=-1)"
            helps.append(Suggestion("compute the same Euclidean distances as the norm of the pairwise differences: "
                                    "its backward is made of operations autograd differentiates again, and distances "
                                    "near zero stay exact (a distance of exactly 0 has no second derivative there)",
                                    replace_node_text(call_file, call_statement, call, exact), made))
        if changed is not None:
            helps.append(Suggestion(f"{'or ' if helps else ''}compute the same Euclidean distances through matrix products "
                                    f"({keyword}={value}): their backward is made of operations autograd differentiates "
                                    "again, but a distance near zero is rounded (to 0 below about 1e-4 in float32), and "
                                    "its gradient with it", changed, made))
    helps.append(Suggestion(f"or write {forward} with elementary tensor operations; if the second-order terms are not "
                            "wanted, take the first gradient without create_graph=True (that changes the result)"))
    return diagnosis(codes.BACKWARD_WITHOUT_DERIVATIVE, made, [location], notes, helps)


MATCHERS = [
    (r"the derivative for '\w*_backward\w*' is not implemented", backward_without_derivative),
    (r"attempting to assign a gradient of size", assigned_gradient_shape),
    (r"element 0 of tensors does not require grad and does not have a grad_fn", cut_path),
    (r"(appears to not have been used in the graph|One of the differentiated Tensors appears to not have been used)",
     unused_input),
    (r"One of the differentiated Tensors does not require grad", input_without_grad),
    (r"`inputs` argument to `(grad|backward)\(\)` cannot be empty|grad requires non-empty inputs", empty_inputs),
    (r"Mismatch in shape: grad_output\[\d+\] has a shape of", gradient_shape),
]


# Graph nodes walked at most when looking for an input, or for a detached tensor, in a graph.
MAX_WALKED_NODES = 20_000


def detached_input_diagnosis(error: BaseException, args: tuple, kwargs: dict, detach_aliases: dict, since: int):
    """AD305 with the line that cut the path: torch.autograd.grad failed because an input is not
    in the outputs' graph, and the outputs were computed from a detach()ed tensor (`x =
    encoder(feats.detach())` in a recipe, then the gradient with respect to the waveform): that
    detach() is the line to change. `detach_aliases` is the recorder's record of detach() calls
    (alias -> source, site, sequence number); a detach() made after the sequence number `since`
    (the last backward() before this call) whose result the outputs' graph saved is taken, the
    latest such. None when every input is in the graph or no such detach() is known."""
    if not isinstance(error, RuntimeError) or not detach_aliases:
        return None
    outputs = kwargs.get("outputs", args[0] if args else None)
    inputs = kwargs.get("inputs", args[1] if len(args) > 1 else None)
    if outputs is None or inputs is None:
        return None
    outputs = tuple(outputs) if isinstance(outputs, (tuple, list)) else (outputs,)
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    roots = [t.grad_fn for t in outputs if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    if not roots or not any(isinstance(t, torch.Tensor) and t.requires_grad and not _reaches(roots, t) for t in inputs):
        return None
    aliases = [(seq, site, alias) for alias_ref, _source, site, seq in list(detach_aliases.values())
               if seq > since and site is not None and (alias := alias_ref()) is not None]
    if not aliases:
        return None
    saved = _saved_storages(roots)
    used = [(seq, site) for seq, site, alias in aliases if alias.untyped_storage().data_ptr() in saved]
    if not used:
        return None
    site = max(used, key=lambda entry: entry[0])[1]
    primary = location_of(site, role="cut", note="detach() cuts the path from the input to the output here")
    if primary is None:
        return None
    notes = ["torch.autograd.grad asked for the gradient with respect to an input that the output does not reach, "
             "and the output is computed from the detach()ed tensor made here: the graph stops at the detach(), so "
             "nothing computed before it, the input included, gets a gradient"]
    helps = [_without_detach(site, primary)]
    return diagnosis(codes.GRAD_INPUT_UNUSED, primary, (), notes, [h for h in helps if h is not None])


def _reaches(roots: list, tensor: torch.Tensor) -> bool:
    """Whether the graph from `roots` reaches `tensor` (its grad_fn, or for a leaf the node that
    accumulates its gradient); True past MAX_WALKED_NODES nodes (nothing is concluded)."""
    target = tensor.grad_fn
    todo, seen = list(roots), set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if len(seen) > MAX_WALKED_NODES:
            return True
        if node is target or (target is None and getattr(node, "variable", None) is tensor):
            return True
        todo.extend(next_node for next_node, _ in getattr(node, "next_functions", ()))
    return False


def _saved_storages(roots: list) -> set:
    """The data pointers of the storages of the tensors the graph from `roots` saved for
    backward (read while that graph and those tensors are alive)."""
    found, todo, seen = set(), list(roots), set()
    while todo and len(seen) < MAX_WALKED_NODES:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for name in dir(node):
            if name.startswith("_saved_"):
                try:
                    value = getattr(node, name)
                except Exception:
                    continue
                for tensor in (value if isinstance(value, (tuple, list)) else (value,)):
                    if isinstance(tensor, torch.Tensor):
                        found.add(tensor.untyped_storage().data_ptr())
        todo.extend(next_node for next_node, _ in getattr(node, "next_functions", ()))
    return found


def _without_detach(site, location) -> Suggestion | None:
    """The statement at the detach() site with its one `.detach()` call removed."""
    filename = site.filename
    statement = statement_at(filename, site.lineno)
    if statement is None:
        return None
    detaches = [node for node in ast.walk(statement) if isinstance(node, ast.Call) and not node.args
                and not node.keywords and isinstance(node.func, ast.Attribute) and node.func.attr == "detach"]
    if len(detaches) != 1:
        return None
    receiver = text_of(filename, detaches[0].func.value)
    new_statement = replace_node_text(filename, statement, detaches[0], receiver)
    return statement_change(statement_location(filename, statement), "keep the path from the input to the output: "
                            "use the tensor itself instead of its detach()ed copy (its gradient then reaches the "
                            "input; a training loop that needs the cut can keep it there)", new_statement)


def _parameters_rebound_in_loop(frame, filename: str, line: int, inputs: tuple):
    """`for given, own in zip(tensors, model.parameters()): own = given` before `line` in the
    frame's function, `tensors` holding the grad() inputs: the assignment only rebinds the loop
    variable, so the module keeps its own parameters and the output never uses the inputs.
    (the assignment, the name of the module) or None."""
    from autograd_doctor.analysis.errors.context import enclosing_function

    tree = parse_file(filename)
    if tree is None:
        return None
    scope = enclosing_function(tree, line) or tree
    values = {**frame.f_globals, **frame.f_locals}
    for loop in ast.walk(scope):
        if not isinstance(loop, ast.For) or loop.lineno >= line or not isinstance(loop.target, ast.Tuple):
            continue
        targets = [e.id for e in loop.target.elts if isinstance(e, ast.Name)]
        zipped = loop.iter
        if not (isinstance(zipped, ast.Call) and isinstance(zipped.func, ast.Name) and zipped.func.id == "zip"
                and len(zipped.args) == len(targets) == len(loop.target.elts)):
            continue
        module_of = {}
        holders = set()
        for target, argument in zip(targets, zipped.args):
            if isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute) \
                    and argument.func.attr == "parameters" and isinstance(values.get(_root_name(argument.func.value)),
                                                                        torch.nn.Module):
                module_of[target] = text_of(filename, argument.func.value) or ast.unparse(argument.func.value)
            elif isinstance(argument, ast.Name) and _holds_all(values.get(argument.id), inputs):
                holders.add(target)
        for statement in ast.walk(loop):
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id in module_of \
                    and isinstance(statement.value, ast.Name) and statement.value.id in holders:
                return statement, module_of[statement.targets[0].id]
    return None


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _holds_all(value, inputs: tuple) -> bool:
    """Whether `value` (a list or tuple) holds each of the grad() inputs."""
    if not isinstance(value, (list, tuple)) or not inputs:
        return False
    return all(any(item is tensor for item in value) for tensor in inputs)


def _rebinding_diagnosis(filename: str, found, raised_at, label: str):
    statement, module = found
    own, given = statement.targets[0].id, statement.value.id
    primary = statement_location(filename, statement, role="rebinds",
                                 note=f"this only rebinds the loop variable {own}: {module} keeps its own parameters")
    raised_at.role, raised_at.note = "raised", f"{label} are not used to compute the output"
    notes = [f"assigning to {own} binds the name to {given}; it does not put {given} into {module}, whose forward "
             f"still computes with its own parameters, so the output does not depend on the tensors given to grad()"]
    helps = [Suggestion(f"run {module} on the tensors themselves: torch.func.functional_call({module}, "
                        f"dict(zip(names, tensors)), args), with the names of {module}.named_parameters(), instead "
                        "of the loop")]
    return diagnosis(codes.GRAD_INPUT_UNUSED, primary, [raised_at], notes, helps)
