"""DistributedDataParallel's "Expected to have finished reduction in the prior iteration":
some parameters got no gradient in the previous iteration. PyTorch lists their indices;
the doctor names them and shows the forward branches that use them."""

from __future__ import annotations

import ast
import re

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, text_of
from autograd_doctor.analysis.errors.context import ErrorContext, line_location
from autograd_doctor.recording.frames import is_internal_file
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, statement_at, statement_location

DDP_NAMES = ("DistributedDataParallel", "DDP")


def _ddp_module(context: ErrorContext):
    for frame, _ in reversed(context.frames):
        candidate = frame.f_locals.get("self")
        if type(candidate).__name__ == "DistributedDataParallel" and hasattr(candidate, "module"):
            return candidate
    return None


def reducer_parameter_names(ddp) -> list[str]:
    """Parameter names in the reducer's order (DDP's own rule: requires_grad, not ignored,
    shared parameters once)."""
    names, seen = [], set()
    ignored = getattr(ddp, "parameters_to_ignore", set())
    for module_name, module in ddp.module.named_modules():
        for param_name, param in module.named_parameters(recurse=False):
            full = f"{module_name}.{param_name}" if module_name else param_name
            if param.requires_grad and full not in ignored and id(param) not in seen:
                seen.add(id(param))
                names.append(full)
    return names


def _branches_using(module, prefixes: set[str]) -> list:
    """`if` statements in the module's forward whose body uses `self.<prefix>`."""
    code = getattr(type(module).forward, "__code__", None)
    if code is None or is_internal_file(code.co_filename):
        return []
    tree = parse_file(code.co_filename)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "forward" and node.lineno >= code.co_firstlineno and \
                node.lineno <= code.co_firstlineno + len(node.decorator_list):
            for branch in ast.walk(node):
                if not isinstance(branch, ast.If):
                    continue
                used = {n.attr for part in (branch.body, branch.orelse) for stmt in part for n in ast.walk(stmt)
                        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"}
                hit = sorted(used & prefixes)
                if hit:
                    found.append(line_location(code.co_filename, branch.lineno, role="branch",
                                               note=f"a branch: self.{', self.'.join(hit)} used only on some paths"))
    return found[:3]


def _ddp_construction(context: ErrorContext):
    """(filename, statement, call) of the user's DistributedDataParallel(...) call."""
    for frame, _ in context.user_frames():
        filename = frame.f_code.co_filename
        tree = parse_file(filename)
        if tree is None:
            continue
        for name in DDP_NAMES:
            for call in find_calls(tree, name):
                statement = statement_at(filename, call.lineno)
                if statement is not None:
                    return filename, statement, call
    return None


def unfinished_reduction(context: ErrorContext, already):
    ddp = _ddp_module(context)
    indices = re.search(r"Parameter indices which did not receive grad for rank \d+: ([\d ]+)", context.message)
    names = []
    if ddp is not None and indices:
        order = reducer_parameter_names(ddp)
        names = [order[int(i)] for i in indices.group(1).split() if int(i) < len(order)]
    listed = re.search(r"Parameters which did not receive grad for rank \d+: ([^\n]+)", context.message)
    if not names and listed:
        names = [n.strip() for n in listed.group(1).split(",") if n.strip()]
    use = context.raise_location(role="forward", note="the next forward pass")
    label = ", ".join(names) if names else "some parameters"
    notes = [f"in the previous iteration, the loss did not depend on {label}; DDP waits for every "
             "parameter's gradient before it starts the next iteration"]
    branches = _branches_using(ddp.module, {n.split(".")[0] for n in names}) if ddp is not None and names else []
    helps = []
    found = _ddp_construction(context)
    if found is not None:
        filename, statement, call = found
        location = statement_location(filename, statement, role="ddp", note="DistributedDataParallel is created here")
        if not any(k.arg == "find_unused_parameters" for k in call.keywords):
            new_call = text_of(filename, call)[:-1].rstrip() + ", find_unused_parameters=True)"
            new_statement = replace_node_text(filename, statement, call, new_call)
            helps.append(statement_change(location, "if some parameters are unused on purpose in some "
                                          "iterations, let DDP look for them (costs a graph traversal per "
                                          "iteration)", new_statement))
        primary, related = location, [*branches, use]
    else:
        primary, related = use, branches
    helps.append(Suggestion(f"otherwise make every forward pass use {label} (or add them to the loss "
                            "with weight 0), or freeze them (requires_grad_(False)) if they never train"))
    return diagnosis(codes.DDP_UNUSED_PARAMETERS, primary, related, notes, helps)


CHECKPOINT_NAMES = ("checkpoint", "checkpoint_sequential")


def _wrapped_ddp(context: ErrorContext):
    """The DistributedDataParallel module bound in a frame of the traceback (the training loop
    that called backward() holds it, as a local, a global or an attribute of its `self`)."""
    for frame, _ in reversed(context.frames):
        values = list(frame.f_locals.values())
        owner = frame.f_locals.get("self")
        if owner is not None:
            values += list(getattr(owner, "__dict__", {}).values())
        values += list(frame.f_globals.values())
        for value in values:
            if type(value).__name__ == "DistributedDataParallel" and hasattr(value, "module"):
                return value
    return None


def _reentrant_checkpoints(module) -> list[tuple[str, ast.stmt, ast.Call]]:
    """(filename, statement, call) of each `checkpoint(...)` call with `use_reentrant=True` (or
    without the argument, which means True) in the files of the wrapped model's classes."""
    files = []
    for submodule in module.modules():
        code = getattr(type(submodule).forward, "__code__", None)
        if code is not None and not is_internal_file(code.co_filename) and code.co_filename not in files:
            files.append(code.co_filename)
    found = []
    for filename in files:
        tree = parse_file(filename)
        if tree is None:
            continue
        for name in CHECKPOINT_NAMES:
            for call in find_calls(tree, name):
                reentrant = next((k.value for k in call.keywords if k.arg == "use_reentrant"), None)
                if reentrant is None or (isinstance(reentrant, ast.Constant) and reentrant.value is True):
                    statement = statement_at(filename, call.lineno)
                    if statement is not None:
                        found.append((filename, statement, call))
    return found


def _non_reentrant_call(filename: str, call: ast.Call) -> str | None:
    text = text_of(filename, call)
    if text is None:
        return None
    if not any(k.arg == "use_reentrant" for k in call.keywords):
        return text[:-1].rstrip() + ", use_reentrant=False)"
    changed, count = re.subn(r"use_reentrant\s*=\s*True", "use_reentrant=False", text, count=1)
    return changed if count else None


def marked_ready_twice(context: ErrorContext, already):
    named = re.search(r"Parameter at index (\d+)(?: with name (\S+))? has been marked as ready twice", context.message)
    ddp = _wrapped_ddp(context)
    label = None
    if named:
        label = named.group(2)
        if label is None and ddp is not None:
            order = reducer_parameter_names(ddp)
            index = int(named.group(1))
            label = order[index] if index < len(order) else None
    what = label or "a parameter"
    backward = context.raise_location(role="backward", note="the backward() that fired DDP's hook twice")
    notes = [f"DistributedDataParallel marked {what} ready for its all-reduce twice in one backward(): "
             "its gradient hook fired again"]
    checkpoints = _reentrant_checkpoints(ddp.module) if ddp is not None else []
    if not checkpoints:
        notes.append("a parameter used outside the wrapped model's forward, or by several concurrent "
                     "forward/backward passes, does this too")
        return diagnosis(codes.DDP_REENTRANT_CHECKPOINT, backward, [], notes,
                         [Suggestion("use the parameters only inside the DDP-wrapped model's forward; if the "
                                     "graph is the same every iteration, `DistributedDataParallel(..., "
                                     "static_graph=True)`")])
    filename, statement, call = checkpoints[0]
    primary = statement_location(filename, statement, role="checkpoint",
                                 note="a reentrant checkpoint: the block's backward runs as a backward() of its own")
    notes.append("a reentrant checkpoint (`use_reentrant=True`, the default when the argument is left out) "
                 "recomputes the block and runs its backward inside the outer backward(); with DDP's "
                 "unused-parameter search, or a block checkpointed twice, the hooks of its parameters fire again")
    related = [statement_location(f, s, role="checkpoint", note="another reentrant checkpoint")
               for f, s, _ in checkpoints[1:3]] + [backward]
    found = _ddp_construction(context)
    if found is not None:
        related.append(statement_location(found[0], found[1], role="ddp", note="DistributedDataParallel is created here"))
    new_call = _non_reentrant_call(filename, call)
    new_statement = replace_node_text(filename, statement, call, new_call) if new_call is not None else None
    helps = [statement_change(primary, "checkpoint without reentrance: the block is recomputed within the one "
                              "backward(), each hook fires once, and the gradients are the same", new_statement)]
    # With the unused-parameter search the steps before the raise already treated the block's
    # parameters as unused: the change corrects those steps too.
    helps[0].corrects_earlier_steps = bool(getattr(ddp, "find_unused_parameters", False))
    if len(checkpoints) > 1:
        helps.append(Suggestion(f"the same for the other {len(checkpoints) - 1} reentrant checkpoint "
                                "call(s) of the model"))
    return diagnosis(codes.DDP_REENTRANT_CHECKPOINT, primary, related, notes, helps)


MATCHERS = [
    (r"Expected to have finished reduction in the prior iteration before starting a new one", unfinished_reduction),
    (r"Expected to mark a variable ready only once", marked_ready_twice),
]
