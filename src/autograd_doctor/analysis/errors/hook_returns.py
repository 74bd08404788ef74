"""AD319: a backward hook returned gradients that do not match the ones it replaces.

PyTorch checks what a hook returns against the gradients it was given and raises "hook 'NAME'
has changed the size of value", "hook 'NAME' has returned an incorrect number of values" or
"Backward hook returned an invalid number of grad_input", naming at best the hook's function
(for a full backward hook, a closure of torch's). The hook's frames are gone by then; what is
left is the hook itself, still registered on the user's modules. The diagnosis names the hook's
`return` statement and explains what it had to return:

- a module hook from `register_backward_hook` (deprecated) gets and must return the gradients of
  the inputs of the module's *last operation*, not of forward's arguments (an `nn.Linear` with a
  bias ends in `addmm`: (bias, input, weight.T); without one, in a matrix product: (input,
  weight.T));
- a hook from `register_full_backward_hook` must return None or a tuple with one gradient per
  tensor argument of forward; a bare tensor is unpacked along its first dimension. Where forward
  takes one tensor and the `return` is not a tuple, the change wraps a returned tensor as a
  1-tuple (a tuple is returned unchanged), which is the gradient the hook meant.
"""

from __future__ import annotations

import ast
import inspect
import re

import torch

from autograd_doctor.analysis.errors.build import diagnosis, statement_change
from autograd_doctor.analysis.errors.context import ErrorContext
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, statement_location
from autograd_doctor.recording.frames import in_installed_package, is_internal_file

_NAMED = re.compile(r"hook '(?P<name>[^']*)' has (changed the size of value|returned an incorrect number of values)")
_FULL_COUNT = re.compile(r"Backward hook returned an invalid number of grad_input, got (?P<got>\d+), "
                         r"but expected (?P<expected>\d+)")


def _modules_reached(context: ErrorContext) -> list:
    """The nn.Modules bound in the user's frames (and one attribute deep in the objects bound
    there), with their submodules; nothing is called."""
    found, seen = [], set()

    def add(value):
        if isinstance(value, torch.nn.Module) and id(value) not in seen:
            for module in value.modules():
                if id(module) not in seen:
                    seen.add(id(module))
                    found.append(module)

    for frame, _ in context.user_frames():
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            add(value)
            attributes = getattr(value, "__dict__", None) if not isinstance(value, type) else None
            if isinstance(attributes, dict) and not isinstance(value, torch.nn.Module):
                for attribute in list(attributes.values()):
                    add(attribute)
    return found


def _registered_hooks(modules: list) -> list:
    """(hook function, module, full) for each backward hook on those modules."""
    hooks = []
    for module in modules:
        full = bool(getattr(module, "_is_full_backward_hook", False))
        for hook in list(getattr(module, "_backward_hooks", {}).values()):
            hooks.append((hook, module, full))
    return hooks


def _user_function(hook):
    """The hook's Python function when it is defined in the user's files."""
    function = getattr(hook, "func", hook)  # functools.partial
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    filename = code.co_filename
    if is_internal_file(filename) or in_installed_package(filename):
        return None
    return function


def _function_node(function) -> tuple[str, ast.FunctionDef] | None:
    filename, first = function.__code__.co_filename, function.__code__.co_firstlineno
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function.__name__:
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if start == first or node.lineno == first:
                return filename, node
    return None


def _returns(node: ast.FunctionDef) -> list[ast.Return]:
    """The function's own `return VALUE` statements (not those of nested functions)."""
    found = []

    def visit(body):
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(statement, ast.Return) and statement.value is not None and not (
                    isinstance(statement.value, ast.Constant) and statement.value.value is None):
                found.append(statement)
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list):
                    visit(inner)

    visit(node.body)
    return found


def _registration(filename: str, name: str):
    """The user's `...register_*hook(name)` call that registered the hook, when there is one."""
    tree = parse_file(filename)
    if tree is None:
        return None
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr in ("register_backward_hook", "register_full_backward_hook", "register_hook")
             and any(isinstance(arg, ast.Name) and arg.id == name for arg in node.args)]
    if len(calls) != 1:
        return None
    for statement in ast.walk(tree):
        if isinstance(statement, ast.stmt) and not isinstance(statement, (ast.FunctionDef, ast.ClassDef, ast.If,
                                                                          ast.For, ast.While, ast.With, ast.Try)) \
                and statement.lineno <= calls[0].lineno <= (statement.end_lineno or statement.lineno):
            return statement_location(filename, statement, role="registered",
                                      note=f"{name} is registered here")
    return None


def _one_tensor_argument(module) -> bool:
    """Whether the module's forward takes exactly one argument (its gradient is a 1-tuple)."""
    try:
        parameters = list(inspect.signature(module.forward).parameters.values())
    except (TypeError, ValueError):
        return False
    return len(parameters) == 1 and parameters[0].kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                           inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _may_be_bare_tensor(value: ast.expr) -> bool:
    if isinstance(value, (ast.Tuple, ast.List, ast.ListComp, ast.Constant, ast.Dict, ast.Set)):
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("tuple", "list"):
        return False
    return True


def _wrap_help(function, node: ast.FunctionDef, filename: str, statement: ast.Return) -> Suggestion | None:
    """`return EXPR` -> keep the value, return a tensor as a 1-tuple (a tuple unchanged)."""
    if function.__globals__.get("torch") is not torch:
        return None
    used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {a.arg for a in ast.walk(node)
                                                                          if isinstance(a, ast.arg)}
    name = next(candidate for candidate in ("returned", "returned_grad", "hook_result", "_returned") + tuple(
        f"returned_{i}" for i in range(100)) if candidate not in used)
    expression = ast.get_source_segment(open(filename, encoding="utf-8").read(), statement.value)
    if expression is None or "\n" in expression:
        return None
    location = statement_location(filename, statement)
    return statement_change(
        location,
        "return a tuple: a full backward hook replaces the gradients of forward's tensor arguments and must "
        "return None or one gradient per argument; a bare tensor is unpacked along its first dimension. This "
        "module's forward takes one tensor, so a returned tensor is wrapped as a 1-tuple (a tuple is returned "
        "unchanged)",
        f"{name} = {expression}\nreturn ({name},) if isinstance({name}, torch.Tensor) else {name}")


def hook_returned_wrong_gradients(context: ErrorContext, already):
    named = _NAMED.search(context.message)
    count = _FULL_COUNT.search(context.message)
    returned = None
    if count is not None:
        frame = context.torch_frame("hook")
        if frame is not None and "out" in frame.f_locals:
            returned = frame.f_locals.get("out")
    hooks = _registered_hooks(_modules_reached(context))
    if named is not None and named.group("name") != "hook":
        # An old-style module hook (or a tensor hook) named by PyTorch.
        candidates = [(hook, module, full) for hook, module, full in hooks
                      if getattr(getattr(hook, "func", hook), "__name__", None) == named.group("name")]
    else:
        # torch's own closure ("hook") runs the full backward hooks.
        candidates = [(hook, module, full) for hook, module, full in hooks if full]
    functions = {id(_user_function(hook)): _user_function(hook) for hook, _, _ in candidates
                 if _user_function(hook) is not None}
    raised = context.raise_location("backward", "the backward() that ran the hook")
    if len(functions) != 1:
        return None
    function = next(iter(functions.values()))
    found = _function_node(function)
    if found is None:
        return None
    filename, node = found
    modules = [module for hook, module, _ in candidates if _user_function(hook) is function]
    full = all(f for hook, _, f in candidates if _user_function(hook) is function)
    returns = _returns(node)
    if len(returns) == 1:
        primary = statement_location(filename, returns[0], note=f"{function.__name__} returns these gradients")
    else:
        primary = statement_location(filename, node, note=f"the hook {function.__name__}")
    related = [_registration(filename, function.__name__), raised]
    notes, helps = [], []
    module_names = sorted({type(module).__name__ for module in modules})
    if full:
        notes.append("a hook registered with register_full_backward_hook gets the gradients of forward's tensor "
                     "arguments (grad_input) and of its outputs, and must return None or a tuple with one gradient "
                     "per argument, each of that argument's shape; a tensor returned instead is unpacked along its "
                     "first dimension")
        if returned is not None:
            notes.append(f"it returned a {type(returned).__name__}"
                         + (f" of shape {tuple(returned.shape)}" if isinstance(returned, torch.Tensor) else ""))
        bare = isinstance(returned, torch.Tensor) if returned is not None else None
        if len(returns) == 1 and bare is not False and _may_be_bare_tensor(returns[0].value) \
                and modules and all(_one_tensor_argument(module) for module in modules):
            change = _wrap_help(function, node, filename, returns[0])
            if change is not None:
                helps.append(change)
    else:
        notes.append("a hook registered with register_backward_hook (deprecated) gets and must return the gradients "
                     "of the inputs of the module's last autograd operation, not of forward's arguments: their "
                     "number and order depend on that operation, and each returned gradient must have the shape of "
                     "the one it replaces")
        linear = [module for module in modules if isinstance(module, torch.nn.Linear)]
        if linear:
            without = sorted({type(m).__name__ for m in linear if m.bias is None})
            with_bias = sorted({type(m).__name__ for m in linear if m.bias is not None})
            if without:
                notes.append(f"the hook is on {', '.join(without)} layers without a bias: their last operation is a "
                             "matrix product, whose grad_input is (input, weight.T); with a bias it is addmm, whose "
                             "grad_input is (bias, input, weight.T)")
            elif with_bias:
                notes.append(f"the hook is on {', '.join(with_bias)} layers with a bias: their last operation is "
                             "addmm, whose grad_input is (bias, input, weight.T)")
        helps.append(Suggestion("index grad_input by the layout of the module's last operation (it changes with "
                                "the module's configuration, e.g. with or without a bias), or register the hook "
                                "with register_full_backward_hook, whose grad_input holds the gradients of "
                                "forward's arguments"))
    if module_names:
        notes.append(f"{function.__name__} is registered on {', '.join(module_names)}")
    return diagnosis(codes.HOOK_RETURNED_WRONG_GRADIENTS, primary, related=related, notes=notes, help=helps)


MATCHERS = [
    (_NAMED.pattern, hook_returned_wrong_gradients),
    (_FULL_COUNT.pattern, hook_returned_wrong_gradients),
]
