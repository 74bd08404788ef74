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


MATCHERS = [
    (r"Expected to have finished reduction in the prior iteration before starting a new one", unfinished_reduction),
]
