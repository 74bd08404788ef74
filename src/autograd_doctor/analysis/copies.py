"""AD303 (`copy.deepcopy` of non-leaf tensors) and AD304 (`torch.tensor(...)` of tensors
that require grad): which tensor, where it is held, where it came from, and the fix.

Doctor wiring (see the functions' docstrings):

- `deepcopy_error_diagnosis(error, obj, stack)` from a wrapper around `copy.deepcopy`
  (or around `Tensor.__deepcopy__`) when it raised;
- `tensor_copy_diagnosis(args, kwargs, stack)` from the `torch.tensor` factory wrapper, kept
  by the doctor until a backward() whose loss has the copy as a term (`copy_is_loss_term`).
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import inspect
from typing import Any

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis import number_terms
from autograd_doctor.analysis.source_scope import flows_to_return
from autograd_doctor.analysis.describe import tensor_info
from autograd_doctor.recording.frames import Site, capture_user_stack, is_internal_file, is_user_frame
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import (
    class_definition, location_of, parse_file, parse_quietly, source_line, statement_at, statement_location,
)

DEEPCOPY_MESSAGE = "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol"
MAX_OBJECTS = 10_000
# nn.Module internals that hold no user tensors (hooks, flags) or are walked explicitly.
_MODULE_INTERNALS = {"_parameters", "_buffers", "_modules", "training"}


def find_non_leaf_tensors(obj: Any, root_name: str = "obj") -> list[tuple[str, torch.Tensor]]:
    """(attribute path, tensor) for every non-leaf tensor reachable from `obj`.

    Walks modules (parameters, buffers, submodules, plain attributes), dicts, lists,
    tuples, sets, dataclasses and objects' `__dict__`, each object once.

        >>> import torch
        >>> model = torch.nn.Linear(2, 2)
        >>> model.cache = {"h": model(torch.ones(2))}
        >>> [path for path, _ in find_non_leaf_tensors(model, "model")]
        ["model.cache['h']"]
    """
    found: list[tuple[str, torch.Tensor]] = []
    seen: set[int] = set()
    stack: list[tuple[str, Any]] = [(root_name, obj)]
    while stack and len(seen) < MAX_OBJECTS:
        path, value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, torch.Tensor):
            if not value.is_leaf:
                found.append((path, value))
            continue
        children: list[tuple[str, Any]] = []
        if isinstance(value, torch.nn.Module):
            children += [(f"{path}.{name}", t) for name, t in value._parameters.items() if t is not None]
            children += [(f"{path}.{name}", t) for name, t in value._buffers.items() if t is not None]
            children += [(f"{path}.{name}", m) for name, m in value._modules.items() if m is not None]
            children += [(f"{path}.{name}", v) for name, v in vars(value).items()
                         if name not in _MODULE_INTERNALS and not _is_hook_dict(name)]
        elif isinstance(value, dict):
            children += [(f"{path}[{key!r}]", v) for key, v in value.items()]
        elif isinstance(value, (list, tuple)):
            children += [(f"{path}[{index}]", v) for index, v in enumerate(value)]
        elif isinstance(value, (set, frozenset)):
            children += [(f"{path}{{...}}", v) for v in value]
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            children += [(f"{path}.{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value)]
        elif hasattr(value, "__dict__") and not isinstance(value, (type, type(inspect))) and not callable(value):
            try:
                children += [(f"{path}.{name}", v) for name, v in vars(value).items()]
            except TypeError:
                pass
        for child in reversed(children):
            if _worth_walking(child[1]):
                stack.append(child)
    return found


def _is_hook_dict(name: str) -> bool:
    return name.startswith("_") and ("hook" in name or name.endswith("_pre_hooks"))


def _worth_walking(value: Any) -> bool:
    return not isinstance(value, (str, bytes, int, float, bool, complex, type(None), type))


def _deepcopy_argument(stack: tuple[Site, ...]) -> tuple[str | None, ast.stmt | None]:
    """The source text of the deepcopy call's argument (`model` in `copy.deepcopy(model)`)."""
    site = stack[0] if stack else None
    if site is None:
        return None, None
    statement = statement_at(site.filename, site.lineno)
    if statement is None:
        return None, None
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name == "deepcopy":
                try:
                    return ast.unparse(node.args[0]), statement
                except Exception:
                    return None, statement
    return None, statement


def _assignment_site(obj: Any, path: str, root_name: str, stack: tuple[Site, ...]) -> tuple[str, ast.stmt] | None:
    """Where `<owner>.<attr> = ...` was written: in the owner's class source or the user's file."""
    attribute = path.rsplit(".", 1)[-1] if "." in path else None
    if attribute is None or "[" in attribute:
        attribute = path.split("[", 1)[0].rsplit(".", 1)[-1] if "." in path else None
    if not attribute:
        return None
    files = []
    owner = _owner_of(obj, path, root_name)
    definition = class_definition(type(owner)) if owner is not None else None
    if definition is not None:
        files.append(definition[0])
    if stack:
        files.append(stack[0].filename)
    if isinstance(owner, torch.nn.Module):
        # A forward hook stores on the module it is given (`module.last_output = output`): its
        # file may be neither the class's nor the one that copies.
        files.extend(_hook_files(owner))
    tail = "." + ".".join(path[len(root_name):].lstrip(".").split(".")[-2:])
    best = None
    for filename in filter(None, files):
        if is_internal_file(filename):
            continue  # a library's own attribute (nn.Linear.weight): not a line the user can change
        tree = parse_file(filename)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign) or isinstance(node.value, ast.Constant):
                continue  # `self.h = None` initialises; it does not store the tensor
            for target in node.targets:
                if isinstance(target, ast.Attribute) and target.attr == attribute:
                    score = 2 if ("." + ast.unparse(target)).endswith(tail) else 1
                    if best is None or score > best[0]:
                        best = (score, filename, node)
    return (best[1], best[2]) if best is not None else None


def _hook_files(module: torch.nn.Module) -> list[str]:
    """The files of the functions registered as forward (pre-)hooks on `module` (the function a
    functools.partial wraps, for a partial)."""
    files = []
    for hooks in (module._forward_hooks, module._forward_pre_hooks):
        for hook in hooks.values():
            function = getattr(hook, "func", hook)
            code = getattr(function, "__code__", None)
            if code is not None and code.co_filename not in files:
                files.append(code.co_filename)
    return files


def _owner_of(obj: Any, path: str, root_name: str) -> Any:
    """The object whose attribute holds the tensor (`model.cache` for `model.cache.h`)."""
    parts = path[len(root_name):].lstrip(".").split(".")[:-1]
    owner = obj
    for part in parts:
        name = part.split("[", 1)[0]
        if isinstance(owner, torch.nn.Module) and name in owner._modules:
            owner = owner._modules[name]
        else:
            owner = getattr(owner, name, None)
        if owner is None:
            return None
    return owner


def deepcopy_error_diagnosis(error: BaseException, obj: Any, stack: tuple[Site, ...] = (),
                             root_name: str | None = None) -> Diagnosis | None:
    """AD303 for a `copy.deepcopy(obj)` that raised PyTorch's non-leaf error; None otherwise.

    `stack` is the user's stack at the deepcopy call (`capture_user_stack`); the primary
    location is that call, and the attribute path of every non-leaf tensor is named.

        >>> import copy, torch
        >>> model = torch.nn.Linear(2, 2)
        >>> model.last = model(torch.ones(2))
        >>> try:
        ...     copy.deepcopy(model)
        ... except RuntimeError as error:
        ...     d = deepcopy_error_diagnosis(error, model)
        >>> d.code, d.extra["non_leaf_paths"]
        ('AD303', ['model.last'])
    """
    if DEEPCOPY_MESSAGE not in str(error):
        return None
    if not stack:
        stack = traceback_stack(error)
    argument, statement = _deepcopy_argument(stack)
    if root_name is None:
        root_name = argument if argument and argument.isidentifier() else (argument or "obj")
    offenders = find_non_leaf_tensors(obj, root_name)
    site = stack[0] if stack else None
    primary = location_of(site, role="deepcopy", note="deepcopy fails here")
    if primary is not None and statement is not None:
        primary = statement_location(site.filename, statement, role="deepcopy", note="deepcopy fails here")
    related: list[Location] = []
    helps: list[Suggestion] = []
    notes: list[str] = []
    tensor = offenders[0][1] if offenders else (obj if isinstance(obj, torch.Tensor) else None)
    if offenders:
        listed = ", ".join(f"{path} (grad_fn={type(t.grad_fn).__name__})" for path, t in offenders[:5])
        notes.append(f"non-leaf tensor{'s' if len(offenders) > 1 else ''} held by the copied object: {listed}")
        path = offenders[0][0]
        in_literal = _detach_in_literal(site.filename, statement, path[len(root_name):]) \
            if statement is not None and argument and not argument.isidentifier() else None
        if in_literal is not None:
            # deepcopy({"loss": loss, ...}): the tensor is written in the copied literal itself, so the
            # copy can hold its value without the graph (the original object is built anew each time).
            helps.append(Suggestion(f"copy the value of {in_literal[0]} without its grad history: "
                                    f"{in_literal[0]}.detach() has the same value and is a leaf",
                                    in_literal[1], statement_location(site.filename, statement)))
        elif path != root_name:
            assignment = _assignment_site(obj, path, root_name, stack)
            memo = _copy_with_values(site.filename, statement, argument, [p for p, _ in offenders]) \
                if statement is not None and argument else None
            detached, appended = None, None
            if assignment is not None and _container_literal(assignment[1].value) and "[" in path[len(root_name):]:
                # `self.history = []` then `self.history.append(loss)`: the tensor is put into the
                # container by the append, which is the line to change (a record, not a weight).
                appended = _detach_appended(assignment[0], assignment[1])
            constructed = _detach_constructor_argument(obj, path[len(root_name):]) if assignment is None else None
            if appended is not None:
                append_location, detached = appended
                related.append(append_location)
            elif constructed is not None:
                # StepOutput(loss=loss, ...): a dataclass's generated __init__ stored the tensor; the line
                # that passes it is the user's.
                related.append(constructed.location)
                detached = constructed
            elif assignment is not None:
                filename, node = assignment
                related.append(statement_location(filename, node, role="stored",
                                                  note="a tensor with grad history is stored here"))
                detached = _detach_assignment(filename, node)
            if assignment is not None and appended is None and _read_by_another_method(*assignment):
                # A computed weight (a home-made weight norm: stored by one method, used by the
                # forward): detached where it is stored, it stops training. Copy the values
                # instead and leave the original's graph alone.
                notes.append(f"{path} is stored by one method and read by another: a value the object computes "
                             "with (a weight), not a record; detaching it where it is stored would cut its gradient")
                if detached is not None:
                    detached.message = ("or, if nothing trains through it, store the value without its grad "
                                        "history")
                helps.extend([memo, detached])
            else:
                if memo is not None:
                    memo.message = "or " + memo.message
                helps.extend([detached, memo])
    elif isinstance(obj, torch.Tensor):
        notes.append(f"the tensor has grad_fn={type(obj.grad_fn).__name__}: it is an intermediate result, not a leaf")
    weight_norm = [path for path, t in offenders if type(t.grad_fn).__name__ == "WeightNormInterfaceBackward0"]
    if weight_norm:
        return _legacy_weight_norm_diagnosis(error, primary, stack, weight_norm, offenders)
    spectral_norm = _spectral_norm_paths(obj, offenders)
    if spectral_norm:
        return _legacy_weight_norm_diagnosis(error, primary, stack, spectral_norm, offenders, "spectral_norm")
    pruned = _pruned_paths(obj, offenders)
    if pruned and len(pruned) == len(offenders) and statement is not None and site is not None:
        # torch.nn.utils.prune keeps the pruned weight as a plain attribute, `weight_orig * mask`,
        # computed again by its forward pre-hook at every forward: its current value can be kept
        # without history, and the copy is pruned the same way (weight_orig, mask and hook copied).
        detached = _pruned_detached_before_copy(site.filename, statement, pruned)
        notes.insert(0, f"{', '.join(pruned)} {'is' if len(pruned) == 1 else 'are'} computed by "
                        "torch.nn.utils.prune (weight_orig * mask) at every forward, with grad history")
        if detached is not None:
            helps.insert(0, detached)
    if isinstance(obj, torch.Tensor) and statement is not None and argument:
        call_text = _call_text(site.filename, statement)
        helps.append(Suggestion(
            "copy the tensor with detach().clone() (an independent copy with no grad history)",
            _replace_text(site.filename, statement, call_text, f"{argument}.detach().clone()") if call_text else None,
            statement_location(site.filename, statement) if call_text else None))
    else:
        helps.append(Suggestion("store `t.detach()` (or `t.detach().clone()`) in the object instead of the tensor "
                                "with grad history, or clear it before deepcopy"))
    notes.append(f"PyTorch: \"{_pytorch_message(error)}\"")
    diagnosis = Diagnosis(code=codes.DEEPCOPY_NON_LEAF, title=codes.title(codes.DEEPCOPY_NON_LEAF),
                          severity="error", primary=primary, related=related,
                          tensor=tensor_info(tensor, offenders[0][0] if offenders else argument) if tensor is not None
                          else None, notes=notes, help=[h for h in helps if h is not None])
    diagnosis.extra["non_leaf_paths"] = [path for path, _ in offenders]
    return diagnosis


def _pytorch_message(error: BaseException) -> str:
    """PyTorch's whole message (its hints included), without a diagnosis already added to it."""
    message = str(error.args[0]) if error.args and isinstance(error.args[0], str) else str(error)
    return message.split("\n\nautograd-doctor:")[0].strip()


# The legacy reparametrisations of torch.nn.utils, which recompute the weight as a plain attribute
# with grad history before every forward, and what their torch.nn.utils.parametrizations
# counterparts compute and rename: function -> (the weight computed, renamed parameters, the
# grad_fn of the legacy weight as the note names it).
LEGACY_REPARAMETRISATIONS = {
    "weight_norm": ("the same weight (g * v / |v|)",
                    "parametrizations.weight.original0/original1 instead of weight_g/weight_v",
                    "WeightNormInterfaceBackward0"),
    "spectral_norm": ("the same normalisation (the weight divided by its largest singular value, estimated by "
                      "power iteration)",
                      "parametrizations.weight.original instead of weight_orig",
                      "DivBackward0"),
}


def _pruned_paths(obj: Any, offenders) -> list[str]:
    """The paths of the non-leaf tensors that a torch.nn.utils.prune method computes: the attribute
    its forward pre-hook writes on a module inside `obj`."""
    from torch.nn.utils.prune import BasePruningMethod

    if not isinstance(obj, torch.nn.Module):
        return []
    computed = [getattr(module, hook._tensor_name, None) for module in obj.modules()
                for hook in module._forward_pre_hooks.values() if isinstance(hook, BasePruningMethod)]
    return [path for path, tensor in offenders if any(tensor is weight for weight in computed)]


def _pruned_detached_before_copy(filename: str, statement: ast.stmt, paths: list[str]) -> Suggestion | None:
    """`model[0].weight = model[0].weight.detach()` for each pruned path, then the deepcopy statement."""
    if statement.lineno != statement.end_lineno:
        return None
    texts = []
    for path in paths:
        parts = path.split(".")
        if not all(part.isidentifier() or part.isdigit() for part in parts) or not parts[0].isidentifier():
            return None
        texts.append(parts[0] + "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in parts[1:]))
    line = source_line(filename, statement.lineno)
    code = line[statement.col_offset:statement.end_col_offset]
    replacement = "\n".join([f"{text} = {text}.detach()" for text in texts] + [code])
    return Suggestion("keep the current value of the pruned weight without its grad history before copying: "
                      "the pruning recomputes it from weight_orig and the mask at every forward, so training is "
                      "unchanged, and the copy is pruned the same way", replacement,
                      statement_location(filename, statement))


def _spectral_norm_paths(obj: Any, offenders) -> list[str]:
    """The paths of the non-leaf tensors that the legacy torch.nn.utils.spectral_norm computes: the
    attribute its forward pre-hook (SpectralNorm) writes on a module inside `obj`."""
    from torch.nn.utils.spectral_norm import SpectralNorm

    if not isinstance(obj, torch.nn.Module):
        return []
    computed = []
    for module in obj.modules():
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm):
                computed.append(getattr(module, hook.name, None))
    return [path for path, tensor in offenders if any(tensor is weight for weight in computed)]


def _legacy_weight_norm_diagnosis(error, deepcopy_call, stack, paths: list[str], offenders,
                                  function: str = "weight_norm") -> Diagnosis:
    """The non-leaf tensors are weights that the legacy torch.nn.utils.weight_norm (or spectral_norm)
    recomputes before every forward (as a plain attribute with grad history): deepcopy cannot copy them."""
    applied = [_weight_norm_location(filename, line, function)
               for filename, line in _weight_norm_calls(stack, function)]
    helps = [help for help in (_parametrizations_help(location, function) for location in applied) if help is not None]
    if not helps:  # `weight_norm(conv)` after `from torch.nn.utils import weight_norm`: change the import
        imports = [_parametrizations_import_help(filename, function)
                   for filename in dict.fromkeys(loc.file for loc in applied)]
        imports = [found for found in imports if found is not None]
        if imports:
            location, help = imports[0]
            applied.insert(0, location)
            helps.append(help)
    if not helps:
        helps.append(Suggestion(f"apply torch.nn.utils.parametrizations.{function} instead of the deprecated "
                                f"torch.nn.utils.{function} (or remove it with torch.nn.utils.remove_{function} "
                                "before copying)"))
    if helps[0].replacement:  # the line to change is the weight_norm call; the deepcopy is where it failed
        primary = next(loc for loc in applied if loc.line == helps[0].location.line)
        related = [deepcopy_call] + [loc for loc in applied if loc is not primary]
    else:
        primary, related = deepcopy_call, applied
    listed = ", ".join(paths[:5])
    grad_fn = LEGACY_REPARAMETRISATIONS[function][2]
    notes = [f"{listed} {'is' if len(paths) == 1 else 'are'} recomputed by the legacy torch.nn.utils.{function} "
             f"before every forward: a tensor with grad history ({grad_fn}), which deepcopy refuses",
             f"PyTorch: \"{_pytorch_message(error)}\""]
    diagnosis = Diagnosis(code=codes.DEEPCOPY_NON_LEAF, title=codes.title(codes.DEEPCOPY_NON_LEAF), severity="error",
                          primary=primary, related=[loc for loc in related if loc is not None],
                          tensor=tensor_info(offenders[0][1], offenders[0][0]), notes=notes, help=helps)
    diagnosis.extra["non_leaf_paths"] = [path for path, _ in offenders]
    diagnosis.extra["weight_norm"] = True
    return diagnosis


def _weight_norm_location(filename: str, line: int, function: str = "weight_norm") -> Location:
    text = source_line(filename, line)
    code_part = text.split("#")[0].rstrip()
    return Location(file=filename, line=line, column=len(text) - len(text.lstrip()), end_line=line,
                    end_column=len(code_part), source=text.strip(), role="weight_norm",
                    note=f"the legacy {function} stores the weight as an attribute with grad history")


def _parametrizations_help(location: Location, function: str = "weight_norm") -> Suggestion | None:
    """`nn.utils.parametrizations.weight_norm(` for `nn.utils.weight_norm(` on that line (or spectral_norm)."""
    code_part = location.source.split("#")[0].rstrip()
    if code_part.count(f"utils.{function}(") != 1:
        return None
    computed, renamed, _grad_fn = LEGACY_REPARAMETRISATIONS[function]
    change = Location(**{**location.__dict__, "role": "", "note": ""})
    return Suggestion(f"use torch.nn.utils.parametrizations.{function}: {computed}, computed on "
                      "access, so the module holds only leaves and can be deep-copied (its parameters are then named "
                      f"{renamed}: rename them in old checkpoints)",
                      code_part.replace(f"utils.{function}(", f"utils.parametrizations.{function}(", 1), change)


def _parametrizations_import_help(filename: str, function: str = "weight_norm") -> tuple[Location, Suggestion] | None:
    """`from torch.nn.utils import weight_norm` -> `from torch.nn.utils.parametrizations import
    weight_norm` (the same call signature), other names imported on that line kept (or spectral_norm)."""
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module == "torch.nn.utils" and node.level == 0):
            continue
        found = [alias for alias in node.names if alias.name == function]
        if not found or node.lineno != node.end_lineno:
            continue
        others = [alias for alias in node.names if alias.name != function]
        lines = [f"from torch.nn.utils.parametrizations import {ast.unparse(found[0])}"]
        if others:
            lines.insert(0, f"from torch.nn.utils import {', '.join(ast.unparse(alias) for alias in others)}")
        location = statement_location(filename, node, role="weight_norm",
                                      note=f"the legacy {function}, imported here")
        change = Location(**{**location.__dict__, "role": "", "note": ""})
        computed, renamed, _grad_fn = LEGACY_REPARAMETRISATIONS[function]
        help = Suggestion(f"import {function} from torch.nn.utils.parametrizations: {computed}, "
                          "computed on access, so the module holds only leaves and can be deep-copied (its parameters "
                          f"are then named {renamed}: rename them in old checkpoints)", "\n".join(lines), change)
        return location, help
    return None


def _weight_norm_calls(stack: tuple[Site, ...], function: str = "weight_norm") -> list[tuple[str, int]]:
    """(file, line) of the `weight_norm(` (or `spectral_norm(`) calls, outside parametrizations, in the
    user's files of the stack."""
    found = []
    for filename in dict.fromkeys(site.filename for site in stack):
        tree = parse_file(filename)
        if tree is None:
            continue
        for node in ast.walk(tree):
            named = _call_attr(node) if isinstance(node, ast.Call) else None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                named = node.func.id  # `weight_norm(conv)` after `from torch.nn.utils import weight_norm`
            if named == function:
                func = ast.unparse(node.func)
                if "parametrizations" not in func:
                    found.append((filename, node.lineno))
    return sorted(found)


def explain_deepcopy_failure(obj: Any, error: BaseException) -> Diagnosis | None:
    """`deepcopy_error_diagnosis` located at the failing deepcopy call (from the error's
    traceback); call it in an `except` block."""
    return deepcopy_error_diagnosis(error, obj, traceback_stack(error) or capture_user_stack(1, limit=3))


def traceback_stack(error: BaseException, limit: int = 3) -> tuple[Site, ...]:
    """User sites of an exception's traceback, innermost first (where the call failed)."""
    sites = []
    tb = error.__traceback__
    while tb is not None:
        if is_user_frame(tb.tb_frame) and tb.tb_frame.f_code.co_filename != copy.__file__:
            sites.append(Site(tb.tb_frame.f_code, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    return tuple(reversed(sites))[:limit]


def _detach_assignment(filename: str, node: ast.Assign) -> Suggestion | None:
    if node.lineno != node.end_lineno or isinstance(node.value, ast.Call) and _call_attr(node.value) == "detach":
        return None
    if _container_literal(node.value):
        return None  # `self.history = []`: a container has no detach(); what is put into it does
    value = source_line(filename, node.lineno)[node.value.col_offset:node.value.end_col_offset]
    if not isinstance(node.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        value = f"({value})"
    targets = " = ".join(ast.unparse(t) for t in node.targets)
    return Suggestion("store the value without its grad history",
                      f"{targets} = {value}.detach()", statement_location(filename, node))


def _detach_constructor_argument(obj: Any, suffix: str) -> Suggestion | None:
    """`.loss` of a dataclass instance: the one call `StepOutput(loss=loss, ...)` (or positional) in the
    file defining the class that passes that field, with `.detach()` on the value. None when the
    field is not a direct attribute of a dataclass, the call is not unique, or the file backpropagates
    through that field (`out.loss.backward()`), which a detached record would cut."""
    from autograd_doctor.diagnosis.source import replace_node_text

    field = suffix[1:] if suffix.startswith(".") else None
    if not field or not field.isidentifier() or not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return None
    names = [f.name for f in dataclasses.fields(obj) if f.init]
    definition = class_definition(type(obj))
    filename = definition[0] if definition is not None else None
    tree = parse_file(filename) if filename else None
    if tree is None or field not in names:
        return None
    class_name = type(obj).__name__
    found = []
    for call in ast.walk(tree):
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == class_name):
            continue
        value = next((k.value for k in call.keywords if k.arg == field), None)
        index = names.index(field)
        if value is None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args):
            value = call.args[index]
        if value is not None:
            found.append((call, value))
    backpropagated = any(isinstance(n, ast.Attribute) and n.attr == "backward" and isinstance(n.value, ast.Attribute)
                         and n.value.attr == field for n in ast.walk(tree))
    if len(found) != 1 or backpropagated:
        return None
    call, value = found[0]
    statement = statement_at(filename, call.lineno)
    text = source_line(filename, value.lineno)[value.col_offset:value.end_col_offset] \
        if value.lineno == value.end_lineno else None
    if statement is None or text is None:
        return None
    if not isinstance(value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        text = f"({text})"
    new_statement = replace_node_text(filename, statement, value, f"{text}.detach()")
    location = statement_location(filename, statement, role="stored",
                                  note=f"{class_name}.{field} is given a tensor with grad history here")
    return Suggestion(f"store the value of {class_name}.{field} without its grad history ({text}.detach(): the "
                      "same value, a leaf that deepcopy can copy)", new_statement, location)


def _container_literal(value: ast.AST) -> bool:
    """`[]`, `{}`, `()`, `list()`, `dict()`: an empty or literal container, filled later."""
    if isinstance(value, (ast.List, ast.Dict, ast.Tuple, ast.Set)):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "dict") \
        and not value.args


def _detach_appended(filename: str, node: ast.Assign) -> tuple[Location, Suggestion] | None:
    """(location, help) of the one `<...>.<attribute>.append(value)` in the file that fills the
    container `node` makes: the value appended without its grad history."""
    from autograd_doctor.diagnosis.source import replace_node_text

    attributes = {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
    tree = parse_file(filename)
    appends = [call for call in ast.walk(tree) if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
               and call.func.attr == "append" and isinstance(call.func.value, ast.Attribute)
               and call.func.value.attr in attributes and len(call.args) == 1] if tree is not None else []
    if len(appends) != 1 or not isinstance(appends[0].args[0], (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return None
    call = appends[0]
    statement = statement_at(filename, call.lineno)
    value = ast.unparse(call.args[0])
    new_statement = replace_node_text(filename, statement, call.args[0], f"{value}.detach()") \
        if statement is not None else None
    if new_statement is None:
        return None
    location = statement_location(filename, statement, role="stored",
                                  note=f"{value}, a tensor with grad history, is appended here")
    return location, Suggestion(f"append {value}.detach(): the same value, without the graph it was computed "
                                "in, so the container can be copied (and does not keep every graph alive)",
                                new_statement, statement_location(filename, statement))


def _read_by_another_method(filename: str, node: ast.Assign) -> bool:
    """Is the attribute `node` stores (`self.weight = ...`) read by a method of the same class other
    than the one that stores it?"""
    attributes = {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
    tree = parse_file(filename)
    for cls in ast.walk(tree) if tree is not None else ():
        if not isinstance(cls, ast.ClassDef) or not cls.lineno <= node.lineno <= (cls.end_lineno or 0):
            continue
        for method in cls.body:
            if not isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    or method.lineno <= node.lineno <= (method.end_lineno or 0):
                continue
            if any(isinstance(n, ast.Attribute) and n.attr in attributes and isinstance(n.ctx, ast.Load)
                   and isinstance(n.value, ast.Name) and n.value.id == "self" for n in ast.walk(method)):
                return True
    return False


def _copy_with_values(filename: str, statement: ast.stmt, argument: str, paths: list[str]) -> Suggestion | None:
    """`copy.deepcopy(model, {id(model.w): model.w.detach().clone()})`: deepcopy's memo hands the
    copy each tensor's values without grad history; the original object is not changed."""
    call_text = _call_text(filename, statement)
    if call_text is None or not paths or len(paths) > 8:
        return None
    call = parse_quietly(call_text, mode="eval").body
    if not isinstance(call, ast.Call) or len(call.args) != 1 or call.keywords:
        return None  # a memo of the user's own, or more: leave the call as it is
    for path in paths:
        try:
            expression = parse_quietly(path, mode="eval").body
        except SyntaxError:
            return None
        if not all(isinstance(n, (ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Load))
                   for n in ast.walk(expression)):
            return None
    if len(paths) == 1:
        memo = f"{{id({paths[0]}): {paths[0]}.detach().clone()}}"
    else:
        memo = f"{{id(t): t.detach().clone() for t in ({', '.join(paths)})}}"
    new_call = f"{call_text[:-1]}, {memo})"
    replacement = _replace_text(filename, statement, call_text, new_call)
    if replacement is None:
        return None
    return Suggestion(
        f"give deepcopy the values of {', '.join(paths[:3])}{' ...' if len(paths) > 3 else ''} without grad history "
        "(its memo argument): the copy gets them as plain tensors (recomputed where the object recomputes them), "
        f"and {argument} keeps its graph", replacement, statement_location(filename, statement))


def _call_attr(call: ast.Call) -> str | None:
    return call.func.attr if isinstance(call.func, ast.Attribute) else None


def _detach_in_literal(filename: str, statement: ast.stmt, subscript: str) -> tuple[str, str] | None:
    """(element, new statement) when deepcopy's argument is a dict, list or tuple written in the
    call and `subscript` ("['loss']", "[0]") names one of its elements, a name or an attribute:
    the statement with that element detached."""
    from autograd_doctor.diagnosis.source import replace_node_text

    try:
        key = ast.literal_eval(subscript[1:-1]) if subscript.startswith("[") and subscript.endswith("]") else None
    except (ValueError, SyntaxError):
        return None
    for node in ast.walk(statement):
        name = getattr(node.func, "attr", getattr(node.func, "id", None)) if isinstance(node, ast.Call) else None
        if name != "deepcopy" or not node.args:
            continue
        literal, element = node.args[0], None
        if isinstance(literal, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else None for k in literal.keys]
            element = literal.values[keys.index(key)] if key in keys else None
        elif isinstance(literal, (ast.List, ast.Tuple)) and isinstance(key, int) and 0 <= key < len(literal.elts):
            element = literal.elts[key]
        if isinstance(element, (ast.Name, ast.Attribute)):
            text = ast.unparse(element)
            new_statement = replace_node_text(filename, statement, element, f"{text}.detach()")
            return (text, new_statement) if new_statement is not None else None
    return None


def _call_text(filename: str, statement: ast.stmt) -> str | None:
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name == "deepcopy" and node.lineno == node.end_lineno:
                return source_line(filename, node.lineno)[node.col_offset:node.end_col_offset]
    return None


def _replace_text(filename: str, statement: ast.stmt, old: str, new: str) -> str | None:
    if statement.lineno != statement.end_lineno:
        return None
    text = source_line(filename, statement.lineno)[statement.col_offset:statement.end_col_offset]
    return text.replace(old, new, 1) if old in text else None


# ---- AD304: torch.tensor(...) of tensors that require grad -----------------------------------


def _grad_tensors_in(data: Any, depth: int = 0) -> list[torch.Tensor]:
    if isinstance(data, torch.Tensor):
        return [data] if data.requires_grad else []
    if isinstance(data, (list, tuple)) and depth < 6:
        found = []
        for item in data[:10_000]:
            found += _grad_tensors_in(item, depth + 1)
        return found
    return []


def _factory_call(statement: ast.stmt, line: int) -> ast.Call | None:
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "tensor", "as_tensor", "Tensor", "FloatTensor") and node.args:
            return node
    return None


def tensor_copy_diagnosis(args: tuple, kwargs: dict, stack: tuple[Site, ...] = ()) -> Diagnosis | None:
    """AD304 when `torch.tensor(data)` gets a tensor that requires grad, or a (nested) list of them.

        >>> import torch
        >>> w = torch.ones(2, requires_grad=True)
        >>> losses = [(w * 2).sum(), (w * 3).sum()]
        >>> tensor_copy_diagnosis((losses,), {}).code
        'AD304'
        >>> tensor_copy_diagnosis(([1.0, 2.0],), {}) is None
        True
    """
    data = args[0] if args else kwargs.get("data")
    carriers = _grad_tensors_in(data)
    if not carriers:
        return None
    site = stack[0] if stack else None
    primary = location_of(site, role="copy", note="the values are copied into a new tensor with no grad history")
    helps: list[Suggestion] = []
    statement = statement_at(site.filename, site.lineno) if site is not None else None
    call = _factory_call(statement, site.lineno) if statement is not None else None
    if call is not None and call.lineno == call.end_lineno == statement.lineno == statement.end_lineno:
        filename = site.filename
        line = source_line(filename, call.lineno)
        call_text = line[call.col_offset:call.end_col_offset]
        first = call.args[0]
        first_text = line[first.col_offset:first.end_col_offset]
        location = statement_location(filename, statement)
        if isinstance(data, (list, tuple)):
            stacked = _stack_call_text(call, line, data)
            if stacked is not None:
                helps.append(Suggestion("build the tensor with torch.stack, which keeps the graph",
                                        _replace_text(filename, statement, call_text, stacked), location))
        else:
            helps.append(Suggestion("use the tensor itself to keep the graph",
                                    _replace_text(filename, statement, call_text, first_text), location))
            receiver = first_text if isinstance(first, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) \
                else f"({first_text})"
            helps.append(Suggestion("or, for an explicit independent copy without gradients, detach().clone()",
                                    _replace_text(filename, statement, call_text, f"{receiver}.detach().clone()"),
                                    location))
    elif statement is not None and isinstance(data, (list, tuple)):
        stacked = _stacked_statement(site.filename, statement, site.lineno)
        if stacked is not None:
            helps.append(Suggestion("build the tensor with torch.stack, which keeps the graph (a torch.tensor() "
                                    "around it, which would copy the stacked values again, becomes torch.stack too)",
                                    stacked, statement_location(site.filename, statement)))
    if not helps:
        helps.append(Suggestion("use torch.stack([...]) to combine tensors and keep the graph, or t.detach().clone() "
                                "for an explicit copy"))
    notes = [f"{len(carriers)} tensor{'s' if len(carriers) > 1 else ''} with requires_grad=True "
             f"{'are' if len(carriers) > 1 else 'is'} copied by value: gradients will not flow back through "
             "the result"]
    first_carrier = carriers[0]
    diagnosis = Diagnosis(code=codes.TENSOR_COPY_CUTS_GRAPH, title=codes.title(codes.TENSOR_COPY_CUTS_GRAPH),
                          severity="warning", primary=primary, tensor=tensor_info(first_carrier, None),
                          notes=notes, help=helps)
    diagnosis.extra["copied_tensors"] = len(carriers)
    return diagnosis


def stack_keywords_suffix(call: ast.Call, text_of) -> str | None:
    """What the keywords of a `torch.tensor(...)` call become on a torch.stack of the same values
    (`text_of(node)` gives a node's source): `dtype=` and `device=`, which torch.stack does not
    take, a `.to(...)` suffix ("" for neither); `requires_grad=` goes (the stacked tensor has the
    gradients). None for another keyword."""
    moved = []
    for keyword in call.keywords:
        if keyword.arg in ("dtype", "device"):
            moved.append(f"{keyword.arg}={text_of(keyword.value)}")
        elif keyword.arg != "requires_grad":
            return None
    return f".to({', '.join(moved)})" if moved else ""


def _stack_call_text(call: ast.Call, line: str, data: list | tuple) -> str | None:
    """The `torch.tensor(...)` call on one line, written with torch.stack so the graph is kept:
    a list written out of same-shaped tensors, `torch.tensor([l1, l2])`, becomes
    `torch.stack([l1, l2])`; a nested one, `torch.as_tensor([[c, -s], [s, c]])`, one stack per
    level, `torch.stack([torch.stack([c, -s]), torch.stack([s, c])])`; a variable holding a flat
    list of same-shaped tensors, `torch.stack(losses)`. `dtype=` and `device=`, which torch.stack
    does not take, move to `.to(...)`; `requires_grad=` goes (the stacked tensor has the
    gradients). None (advice only) when a value is not a tensor (a float next to a tensor), the
    shapes differ, a variable holds a nested list, or another keyword is given: torch.stack
    would fail there, or do something else.

        >>> import torch
        >>> c, s = torch.ones((), requires_grad=True), torch.zeros(())
        >>> node = ast.parse("torch.tensor([[c, -s], [s, c]], dtype=torch.float64)").body[0].value
        >>> _stack_call_text(node, "torch.tensor([[c, -s], [s, c]], dtype=torch.float64)", [[c, -s], [s, c]])
        'torch.stack([torch.stack([c, -s]), torch.stack([s, c])]).to(dtype=torch.float64)'
        >>> node = ast.parse("torch.tensor([c, 1.0])").body[0].value
        >>> _stack_call_text(node, "torch.tensor([c, 1.0])", [c, 1.0]) is None
        True
    """
    first = call.args[0]
    if len(call.args) != 1:
        return None
    suffix = stack_keywords_suffix(call, lambda node: line[node.col_offset:node.end_col_offset])
    if suffix is None:
        return None
    if isinstance(first, (ast.List, ast.Tuple)):
        if _same_shaped_tensors(data):
            text = line[first.col_offset:first.end_col_offset]
            return (f"torch.stack({text})" if isinstance(first, ast.List) else f"torch.stack([{text[1:-1]}])") + suffix
        nested = _nested_stack_text(first, line, data)
        return nested + suffix if nested is not None else None
    return f"torch.stack({line[first.col_offset:first.end_col_offset]}){suffix}" if _same_shaped_tensors(data) else None


def _same_shaped_tensors(values: Any) -> bool:
    return isinstance(values, (list, tuple)) and len(values) > 0 and all(
        isinstance(value, torch.Tensor) and value.shape == values[0].shape for value in values)


def _nested_stack_text(node: ast.expr, line: str, value: Any, depth: int = 0) -> str | None:
    """One torch.stack per level of a nested list written out, when the lists of each level are
    all the same length and end in same-shaped tensors; None otherwise."""
    if depth > 5 or not isinstance(node, (ast.List, ast.Tuple)) or not isinstance(value, (list, tuple)) or \
            len(node.elts) != len(value) or not value or any(isinstance(elt, ast.Starred) for elt in node.elts):
        return None
    if _same_shaped_tensors(value):
        parts = [line[elt.col_offset:elt.end_col_offset] for elt in node.elts]
    elif all(isinstance(item, (list, tuple)) and len(item) == len(value[0]) for item in value):
        parts = [_nested_stack_text(elt, line, item, depth + 1) for elt, item in zip(node.elts, value)]
        if any(part is None for part in parts):
            return None
        if not _leaves_same_shaped(value):
            return None
    else:
        return None
    return f"torch.stack([{', '.join(parts)}])"


def _leaves_same_shaped(value: Any) -> bool:
    leaves: list[torch.Tensor] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(item)
        else:
            leaves.append(item)
    return all(isinstance(leaf, torch.Tensor) and leaf.shape == leaves[0].shape for leaf in leaves)


def _stacked_statement(filename: str, statement: ast.stmt, line: int) -> str | None:
    """The statement written over several lines with the `torch.tensor([...])` call that made the
    copy at `line`, and every such call around it, as `torch.stack([...])`: an enclosing
    `torch.tensor([...])` would copy the stacked values out of the graph again. None when a call's
    data is not a list written out (a variable may hold anything) or it has keywords
    (`dtype=` / `device=`, which torch.stack does not take)."""
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call) and node.args
             and _called_name(node) in ("tensor", "as_tensor") and node.lineno <= line <= node.end_lineno]
    if not calls:
        return None
    made = max(calls, key=lambda node: (node.lineno, node.col_offset))
    targets = [node for node in calls if node is made or _encloses(node, made)]
    if any(node.keywords or len(node.args) != 1 or not isinstance(
            node.args[0], (ast.List, ast.ListComp, ast.Tuple, ast.GeneratorExp)) for node in targets):
        return None
    lines = [source_line(filename, n) for n in range(statement.lineno, statement.end_lineno + 1)]
    lines[-1] = lines[-1][:statement.end_col_offset]
    for node in sorted(targets, key=lambda node: (node.func.lineno, node.func.col_offset), reverse=True):
        if node.func.lineno != node.func.end_lineno:
            return None
        row = node.func.lineno - statement.lineno
        text = lines[row]
        prefix = "torch." if isinstance(node.func, ast.Attribute) else ""
        new_func = "torch.stack" if prefix or _called_name(node) == "tensor" else None
        if new_func is None:
            return None
        lines[row] = text[:node.func.col_offset] + new_func + text[node.func.end_col_offset:]
    lines[0] = lines[0][statement.col_offset:]
    indent = len(source_line(filename, statement.lineno)) - len(source_line(filename, statement.lineno).lstrip())
    return "\n".join([lines[0]] + [line[indent:] if line[:indent].isspace() else line.lstrip() for line in lines[1:]])


def _encloses(outer: ast.AST, inner: ast.AST) -> bool:
    return (outer.lineno, outer.col_offset) <= (inner.lineno, inner.col_offset) and \
        (outer.end_lineno, outer.end_col_offset) >= (inner.end_lineno, inner.end_col_offset) and outer is not inner


def copy_is_loss_term(copy_site: Site, backward_site: Site, caller_sites: tuple[Site, ...] = ()) -> bool:
    """Whether the `torch.tensor(...)` call at `copy_site` made a term added into the loss
    backpropagated at `backward_site`: that term then trains nothing. A copy made for anything
    else (an expected value in a test, a logged or averaged figure, a metric, a constant target
    passed to a loss function) is the copy its author wanted, and says nothing.

    The loss's added terms are read as AD206 reads them (`number_terms.loss_terms`); a term is the
    copy when its base (the object its methods and indexing apply to: `torch.tensor(aux).sum()`,
    `copied[0]`) is the call itself or a name whose last assignment before the term is such a
    term of the copy, also through arithmetic (`(features * scales).sum()`). A copy in another
    function is a term when that function returns a value computed from it and a term (or the
    last assignment of its name) calls that function: `loss = sum(losses_of(batch))`, or has a call
    written over a line of `caller_sites` (the user's lines that were calling it when the copy was
    made, from the copy's stack): a module's forward() is called as `module(...)` or
    `wrapper(...)`, which no name matches. Copies in another file are not followed."""
    if copy_site.filename != backward_site.filename:
        return False
    found = number_terms.loss_terms(backward_site)
    if found is None:
        return False
    terms, reading = found
    line = copy_site.lineno
    returning = _function_returning_copy(copy_site)
    caller_lines = {site.lineno for site in caller_sites if site.filename == backward_site.filename}
    for term, holder in terms:
        before = holder.lineno if holder is not None else backward_site.lineno
        expressions = [term]
        for base in _operand_bases(term):
            if _factory_call_at(base, line):
                return True
            if isinstance(base, ast.Name):
                for statement in number_terms.assignments_of(base.id, reading, before, unpacking=True)[:1]:
                    value = getattr(statement, "value", None)
                    assigned = _term_base(value) if value is not None else None
                    if isinstance(statement, ast.Assign) and _factory_call_at(assigned, line):
                        return True
                    if value is not None:
                        expressions.append(value)
        if returning is not None and any(
                isinstance(node, ast.Call) and (_called_name(node) == returning or _calls_from(node, caller_lines))
                for expression in expressions for node in ast.walk(expression)):
            return True  # the loss is computed from what a function returns, and it returns the copy
    return False


def _calls_from(call: ast.Call, lines: set[int]) -> bool:
    """Whether `call` is written over one of `lines`, the lines that were calling the copy's function."""
    return any(call.lineno <= line <= (call.end_lineno or call.lineno) for line in lines)


def _called_name(call: ast.Call) -> str | None:
    function = call.func
    return function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)


def _function_returning_copy(copy_site: Site) -> str | None:
    """The name of the function around `copy_site` when what it returns is computed from the copy
    made there (the copy's statement binds names that a return statement reads, directly or
    through later assignments in the function)."""
    tree = parse_file(copy_site.filename)
    if tree is None:
        return None
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.lineno <= copy_site.lineno <= node.end_lineno]
    if not functions:
        return None
    function = max(functions, key=lambda node: node.lineno)  # the innermost
    statement = statement_at(copy_site.filename, copy_site.lineno)
    if isinstance(statement, ast.Return):
        return function.name
    if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return None
    return function.name if flows_to_return(function, statement, _stored_names(statement), _stored_names) else None


def _stored_names(node: ast.AST) -> set[str]:
    return {name.id for name in ast.walk(node) if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store)}


def _operand_bases(term: ast.AST) -> list:
    """The bases of a term and, through arithmetic, of its operands: `features` and `scales` of
    `(features * scales).sum()`. Arguments of calls are not followed (a constant target handed to
    a loss function is a copy its author wanted)."""
    bases, todo = [], [term]
    while todo:
        base = _term_base(todo.pop())
        if isinstance(base, ast.BinOp):
            todo.extend((base.left, base.right))
        elif isinstance(base, ast.UnaryOp):
            todo.append(base.operand)
        else:
            bases.append(base)
    return bases


def _factory_call_at(node: ast.AST | None, line: int) -> bool:
    """Is `node` a `torch.tensor(...)` call (or `tensor(...)`, `as_tensor`, ...) written over `line`?"""
    if not isinstance(node, ast.Call) or not node.lineno <= line <= node.end_lineno:
        return False
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
    return name in _FACTORY_NAMES


def _term_base(node: ast.AST) -> ast.AST:
    """`torch.tensor(aux)` of `torch.tensor(aux).sum()`, `t` of `t[0].mean()`: what the term's
    method calls and indexing are applied to."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and not isinstance(node.func.value, ast.Name):
            node = node.func.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr not in _FACTORY_NAMES:
            node = node.func.value
        elif isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        else:
            return node


_FACTORY_NAMES = ("tensor", "as_tensor", "Tensor", "FloatTensor")


__all__ = ["find_non_leaf_tensors", "deepcopy_error_diagnosis", "explain_deepcopy_failure",
           "tensor_copy_diagnosis", "copy_is_loss_term", "DEEPCOPY_MESSAGE"]
