"""A `backward` method written on an `nn.Module` (AD223): autograd never calls it.

Only `torch.autograd.Function.backward` is called by autograd; an `nn.Module`'s gradient is the
derivative of the operations its `forward()` recorded. A gradient-reversal layer written as a
module with `forward(self, x): return x` and `backward(self, grad): return -grad` is therefore
the identity in both directions (pitchtron#3), silently.

Evidence, checked after one of the first backward() calls (the gradient-path tracker's modules):
the module's class is the user's (its `backward` is defined in a user file, in a class below
`nn.Module`), the method takes a gradient (one argument besides `self`) and returns a value,
calls no backward() itself (a trainer's or wrapper's `backward(self, loss)` helper that the user
calls is another thing), and the module's result is a node of the graph this backward() ran
through: that gradient went through `forward()`'s own operations, not through the method.
Only the classes of modules that ran are looked at, each once.
"""

from __future__ import annotations

import ast
import inspect

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, source_line, statement_location
from autograd_doctor.recording.frames import is_internal_file

_SEEN_KEY = "module_backward_methods_seen"
_BACKWARD_NAMES = {"backward", "grad", "autograd_backward", "run_backward"}


def _method_def(function) -> tuple[str, ast.FunctionDef] | None:
    code = getattr(function, "__code__", None)
    if code is None or is_internal_file(code.co_filename):
        return None
    tree = parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function.__name__ and node.lineno <= code.co_firstlineno \
                and code.co_firstlineno <= (node.body[0].lineno if node.body else node.lineno):
            return code.co_filename, node
    return None


def _takes_gradient(definition: ast.FunctionDef) -> bool:
    """One positional argument besides self, a returned value, and no backward() call inside."""
    arguments = definition.args
    if len(arguments.posonlyargs) + len(arguments.args) != 2 or arguments.vararg or arguments.kwarg \
            or arguments.kwonlyargs:
        return False
    if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in definition.decorator_list):
        return False
    returns = [n for n in ast.walk(definition) if isinstance(n, ast.Return) and n.value is not None
               and not (isinstance(n.value, ast.Constant) and n.value.value is None)]
    calls_backward = any(isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Attribute) and n.func.attr in _BACKWARD_NAMES)
        or (isinstance(n.func, ast.Name) and n.func.id in _BACKWARD_NAMES)) for n in ast.walk(definition))
    return bool(returns) and not calls_backward


def _own_backward(cls) -> tuple[str, ast.FunctionDef] | None:
    """The user's `backward` of a module class (the first in its MRO), when it takes a gradient."""
    for klass in cls.__mro__:
        if klass is torch.nn.Module or not issubclass(klass, torch.nn.Module):
            return None
        function = vars(klass).get("backward")
        if function is None:
            continue
        if not inspect.isfunction(function):
            return None
        found = _method_def(function)
        return found if found is not None and _takes_gradient(found[1]) else None
    return None


def _one_return(definition) -> ast.Return | None:
    body = [s for s in definition.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return body[0] if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None else None


def _function_help(cls, filename: str, backward_def: ast.FunctionDef) -> Suggestion | None:
    """`return EXPR` of a one-argument forward that reads only its argument, rewritten to run
    through a torch.autograd.Function whose backward calls the module's own method."""
    forward = vars(cls).get("forward")
    found = _method_def(forward) if inspect.isfunction(forward) else None
    if found is None or found[0] != filename:
        return None
    _, forward_def = found
    returned = _one_return(forward_def)
    arguments = forward_def.args
    if returned is None or len(arguments.args) != 2 or arguments.posonlyargs or arguments.vararg \
            or arguments.kwarg or arguments.kwonlyargs:
        return None
    argument = arguments.args[1].arg
    names = {n.id for n in ast.walk(returned.value) if isinstance(n, ast.Name)}
    if "self" in names or argument not in names:
        return None
    globals_ = getattr(forward, "__globals__", {})
    if globals_.get("torch") is not torch:
        return None
    expression = ast.get_source_segment("\n".join(source_line(filename, n) for n in range(1, returned.end_lineno + 1)),
                                        returned.value)
    if expression is None or "\n" in expression:
        return None
    if expression.strip() == argument:
        expression = f"{argument}.view_as({argument})"  # a Function's output must not be its input itself
    gradient = backward_def.args.args[1].arg
    replacement = "\n".join([
        "own_backward = self.backward",
        "",
        "class _WithOwnBackward(torch.autograd.Function):",
        "    @staticmethod",
        f"    def forward(ctx, {argument}):",
        f"        return {expression}",
        "",
        "    @staticmethod",
        f"    def backward(ctx, {gradient}):",
        f"        return own_backward({gradient})",
        "",
        f"return _WithOwnBackward.apply({argument})",
    ])
    location = statement_location(filename, returned)
    return Suggestion(f"run forward() through a torch.autograd.Function whose backward calls "
                      f"{cls.__name__}.backward, so that autograd uses it (or make {cls.__name__} a "
                      "torch.autograd.Function applied with .apply)", replacement, location)


def never_called_diagnoses(state: dict, results: list, walked_keys: set) -> list[Diagnosis]:
    """AD223 for each module class (once) whose instance ran, whose result this backward went
    through, and whose user-defined `backward(self, grad)` autograd therefore did not use.
    `results`: (weak reference to the module's class, node keys of its result) per call."""
    seen = state.setdefault(_SEEN_KEY, set())
    diagnoses = []
    for class_reference, keys in results:
        cls = class_reference()
        if cls is None or cls.__qualname__ + cls.__module__ in seen:
            continue
        if not keys & walked_keys:
            continue
        seen.add(cls.__qualname__ + cls.__module__)
        found = _own_backward(cls)
        if found is None:
            continue
        filename, definition = found
        text = source_line(filename, definition.lineno)
        primary = Location(file=filename, line=definition.lineno, column=definition.col_offset,
                           end_line=definition.lineno, end_column=len(text.rstrip()), source=text.strip(),
                           note=f"{cls.__name__}.backward is never called by autograd")
        gradient = definition.args.args[1].arg
        notes = [f"{cls.__name__} is an nn.Module: backward() differentiates the operations its forward() "
                 f"recorded; a module's backward({gradient}) method is an ordinary method, and nothing calls it",
                 f"the gradient that reached {cls.__name__}'s result in this backward() went through forward() "
                 "unchanged by the method"]
        helps = []
        function_help = _function_help(cls, filename, definition)
        if function_help is not None:
            helps.append(function_help)
        else:
            helps.append(Suggestion(f"write {cls.__name__} as a torch.autograd.Function (static forward(ctx, ...) "
                                    f"and backward(ctx, {gradient})) and call it with {cls.__name__}.apply(...); "
                                    "a module can call that Function in its forward()"))
        diagnoses.append(Diagnosis(code=codes.MODULE_BACKWARD_NEVER_CALLED,
                                   title=codes.title(codes.MODULE_BACKWARD_NEVER_CALLED), severity="warning",
                                   primary=primary, related=[], notes=notes, help=helps))
    return diagnoses
