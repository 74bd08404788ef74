"""In-place LeakyReLU / ELU with a negative slope: PyTorch fails in backward ("In-place
leakyReLu backward calculation is triggered with a negative slope"), long after the line
that asked for inplace=True, which is usually in the model's definition."""

from __future__ import annotations

import ast
import functools

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, statement_change, text_of
from autograd_doctor.analysis.errors.context import ErrorContext
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import (
    parse_file, replace_node_text, replace_nodes_text, source_line, statement_at, statement_location,
)

ACTIVATIONS = {"leaky": ("LeakyReLU", "leaky_relu"), "elu": ("ELU", "elu")}


def _negative_literal(node: ast.AST | None) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)


def _called_name(node: ast.AST) -> str | None:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)


def _inplace_calls(tree: ast.Module, class_name: str, function: str):
    """(call, inplace keyword, slope expression) of in-place uses of the activation, also through
    functools.partial(F.leaky_relu, ..., inplace=True) (the activation chosen in a config); the
    keyword is None for the in-place function itself (F.leaky_relu_(x, -0.5), F.elu_)."""
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        name = _called_name(call.func)
        keyword = next((k for k in call.keywords if k.arg == "inplace"), None)
        slope = next((k.value for k in call.keywords if k.arg in ("negative_slope", "alpha")), None)
        if name == "partial" and call.args and _called_name(call.args[0]) in (class_name, function):
            if keyword is not None:
                yield call, keyword, slope
            continue
        if name == class_name and keyword is not None:
            yield call, keyword, slope if slope is not None else (call.args[0] if call.args else None)
        elif name == function and keyword is not None:
            yield call, keyword, slope if slope is not None else (call.args[1] if len(call.args) > 1 else None)
        elif name == f"{function}_":
            yield call, None, slope if slope is not None else (call.args[1] if len(call.args) > 1 else None)


def negative_slope_inplace(context: ErrorContext, already):
    kind = "elu" if context.message.startswith("In-place elu") else "leaky"
    class_name, function = ACTIVATIONS[kind]
    candidates, computed = [], []
    for filename in context.files_reached():
        tree = parse_file(filename)
        if tree is None:
            continue
        for call, keyword, slope in _inplace_calls(tree, class_name, function):
            if keyword is None or isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                candidates.append((not _negative_literal(slope), filename, call, keyword))
            elif not isinstance(keyword.value, ast.Constant):
                computed.append((filename, call, keyword))  # inplace=config["inplace"]
    if not candidates and len(computed) == 1:
        # No literal inplace=True anywhere, so the one whose flag is computed is the one that ran in
        # place (the error proves one did); inplace=False computes the same values.
        candidates.append((True, *computed[0]))
    use = context.raise_location(role="backward", note="backward() failed here")
    notes = [f"{class_name} with a negative slope cannot run in place: its backward needs the input's "
             "sign, which the in-place forward overwrote"]
    if kind == "leaky" and all(not_negative for not_negative, *_ in candidates):
        slope_set = _slope_set_after_construction(context)
        if slope_set is not None:
            filename, statement, target = slope_set
            location = statement_location(filename, statement, role="inplace",
                                          note="the slope made negative on a LeakyReLU built with inplace=True")
            new_statement = f"{text_of(filename, statement)}\n{text_of(filename, target)}.inplace = False"
            helps = [statement_change(location, "make that module compute out of place too: the same values, "
                                      "in a new tensor, so backward still sees the input's sign", new_statement)]
            return diagnosis(codes.NEGATIVE_SLOPE_INPLACE, location, [use], notes, helps)
    if not candidates:
        return diagnosis(codes.NEGATIVE_SLOPE_INPLACE, use, notes=notes, help=[Suggestion(
            f"find the {class_name}(..., inplace=True) or F.{function}(..., inplace=True) with a negative "
            "slope and make it inplace=False")])
    candidates.sort(key=lambda item: item[0])
    _, filename, call, keyword = candidates[0]
    statement = statement_at(filename, call.lineno)
    location = statement_location(filename, statement, role="inplace",
                                  note=f"{class_name} in place, with a negative slope")
    if keyword is None:
        # F.leaky_relu_(h, -0.5) -> F.leaky_relu(h, -0.5): the same values, in a new tensor.
        new_statement = _kept(context, filename, statement, call,
                              replace_node_text(filename, statement, call.func, text_of(filename, call.func)[:-1]))
        helps = [statement_change(location, f"call {function}, the out-of-place function: the same values, in a "
                                  "new tensor, so backward still sees the input's sign", new_statement)]
        return diagnosis(codes.NEGATIVE_SLOPE_INPLACE, location, [use], notes, helps)
    # Every in-place use of the statement that is as likely as this one (nn.Sequential(..., LeakyReLU(s,
    # inplace=True), ..., LeakyReLU(s, inplace=True)) on one line): backward reaches the last one first,
    # and a change of one of them leaves the program failing at another.
    alike = [other for rank, other_file, other_call, other in candidates
             if rank == candidates[0][0] and other_file == filename and other is not None
             and statement.lineno <= other_call.lineno and other_call.end_lineno <= statement.end_lineno]
    new_statement = _kept(context, filename, statement, call,
                          replace_nodes_text(filename, statement, [(other.value, "False") for other in alike]))
    own_line = _own_line_change(filename, statement, call, keyword) if len(alike) == 1 else None
    if own_line is not None:
        # One element of a multi-line nn.Sequential(...): name and change that line only.
        location.line = location.end_line = call.lineno
        location.column, location.end_column = call.col_offset, call.end_col_offset
        location.source = source_line(filename, call.lineno).strip()
        new_statement = own_line
    helps = [statement_change(location, "compute it out of place", new_statement)]
    return diagnosis(codes.NEGATIVE_SLOPE_INPLACE, location, [use], notes, helps)


def _slope_set_after_construction(context: ErrorContext):
    """(file, statement, target) of the one assignment `<module>.negative_slope = ...` in the user's
    files, where no LeakyReLU is written with a negative slope and a module bound in the user's frames
    is an nn.LeakyReLU in place whose slope is negative now: the slope was set on the built module
    (an ablation run with model.apply(), a loop over model.modules()), and `inplace = False` set
    there too computes the same values. None where there is not exactly one such assignment."""
    import torch

    from autograd_doctor.analysis.errors.hook_returns import _modules_reached

    if not any(isinstance(module, torch.nn.LeakyReLU) and module.inplace and module.negative_slope < 0
               for module in _modules_reached(context)):
        return None
    found = []
    for filename in context.files_reached():
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "negative_slope":
                found.append((filename, node, node.targets[0].value))
    return found[0] if len(found) == 1 else None


def _kept(context: ErrorContext, filename: str, statement: ast.stmt, call: ast.Call,
          new_statement: str | None) -> str | None:
    """An in-place call written as a statement (`F.leaky_relu_(h, s)`) wrote its result into its
    input; out of place, the result must be bound to that input's name (`h = F.leaky_relu(h, s)`)
    or the activation is lost. Where that input is a parameter of the enclosing function that the
    function does not read again, the write was the function's effect on its caller's tensor, which
    a rebound parameter does not carry: the result is returned instead where the function is a
    forward hook registered on the user's modules whose argument is the module's output (a forward
    hook's returned value replaces that output) and the statement ends it; otherwise no concrete
    change."""
    if new_statement is None or not (isinstance(statement, ast.Expr) and statement.value is call and call.args):
        return new_statement
    target = call.args[0]
    if not isinstance(target, (ast.Name, ast.Attribute)):
        return None  # nothing to bind the result to: no concrete change
    function = _enclosing_function(filename, statement)
    if isinstance(target, ast.Name) and function is not None and _written_parameter_unread(function, statement, target.id):
        ends_it = function.body[-1] is statement and not any(
            isinstance(node, ast.Return) and node.value is not None for node in ast.walk(function))
        if ends_it and _forward_hook_output(context, filename, function, target.id):
            return f"return {new_statement.lstrip()}"
        return None
    return f"{text_of(filename, target)} = {new_statement.lstrip()}"


def _enclosing_function(filename: str, statement: ast.stmt):
    """The innermost def whose body holds `statement` (None at module level)."""
    tree = parse_file(filename)
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                inner is statement for inner in ast.walk(node)):
            if found is None or node.lineno > found.lineno:
                found = node
    return found


def _written_parameter_unread(function, statement: ast.stmt, name: str) -> bool:
    """Whether `name` is a parameter of `function` that no statement after `statement` reads."""
    arguments = function.args
    names = [a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs]
    if name not in names:
        return False
    return not any(isinstance(node, ast.Name) and node.id == name and node.lineno > statement.end_lineno
                   for node in ast.walk(function))


def _forward_hook_output(context: ErrorContext, filename: str, function, name: str) -> bool:
    """Whether `function` is a forward hook registered on a module bound in the user's frames (directly
    or through functools.partial), and `name` the parameter it is given the module's output in:
    (module, args, output), or (module, args, kwargs, output) for a hook registered with_kwargs."""
    from autograd_doctor.analysis.errors.hook_returns import _modules_reached, _user_function

    arguments = function.args
    positional = [a.arg for a in arguments.posonlyargs + arguments.args]
    for module in _modules_reached(context):
        own = object.__getattribute__(module, "__dict__")  # the module's own dict: no user code runs
        with_kwargs = own.get("_forward_hooks_with_kwargs") or {}
        for key, hook in list((own.get("_forward_hooks") or {}).items()):
            hooked = _user_function(hook)
            code = getattr(hooked, "__code__", None)
            if code is None or (code.co_filename, code.co_name) != (filename, function.name) \
                    or code.co_firstlineno not in [function.lineno] + [d.lineno for d in function.decorator_list]:
                continue
            bound = len(hook.args) if isinstance(hook, functools.partial) else 0  # positional arguments bound first
            index = bound + (3 if with_kwargs.get(key) else 2)
            if index < len(positional) and positional[index] == name:
                return True
    return False


def _own_line_change(filename: str, statement: ast.stmt, call: ast.Call, keyword: ast.keyword) -> str | None:
    """The call's line with the keyword's value made False, when the call is written on a line of
    its own inside a statement of several lines (an element of `nn.Sequential(...)`); None otherwise."""
    if statement.lineno == statement.end_lineno or call.lineno != call.end_lineno:
        return None
    line = source_line(filename, call.lineno)
    if line[:call.col_offset].strip():
        return None
    rest = line[call.end_col_offset:].split("#")[0].strip()
    if rest not in ("", ","):
        return None
    value = keyword.value
    return (line[call.col_offset:value.col_offset] + "False" + line[value.end_col_offset:call.end_col_offset]
            + ("," if rest.startswith(",") else ""))


MATCHERS = [
    (r"In-place (leakyReLu|elu) backward calculation is triggered with a negative slope", negative_slope_inplace),
]
