"""AD307 for a value handed over through an attribute: a method decorated with @torch.no_grad()
(or @torch.inference_mode()) stores a tensor on `self`, and another method of the same object
computes the loss from that attribute.

    @torch.no_grad()
    def on_train_batch_start(self, batch):
        self.logits = self.net(batch[0])        # stored without history
    def training_step(self, batch):
        return F.cross_entropy(self.logits, batch[1])

decorator_cut (grad_api.py) follows the functions the loss's statement calls; an attribute read
is not a call. The evidence here, every link from the run or the source: the decorated method ran
in this session under its decorator (switches' entry); its body assigns `self.<name>`; a method
called on the same object upstream of the failing statement reads `self.<name>`; and the object
holds, now, a tensor under that name that has no history and does not require grad. Nothing of the
user's runs: the object's `__dict__` and its class's functions are read statically.
"""

from __future__ import annotations

import ast
import inspect

import torch

from autograd_doctor.analysis.errors.context import statements_feeding, value_of
from autograd_doctor.diagnosis.source import parse_file, statement_at


def attribute_from_decorated_method(frame, filename: str, line: int, entries) -> tuple:
    """(the decorator's entry, the method it decorates, the attribute, the method that reads it)
    for the first such hand-over upstream of the statement at `line`; None when there is none."""
    for instance, method_name in _methods_called_upstream(frame, filename, line):
        reader = _function_of(type(instance), method_name)
        if reader is None:
            continue
        read = _self_attributes(reader, ast.Load)
        for entry in entries:
            decorated = _function_of(type(instance), entry.function)
            if decorated is None or decorated.__code__.co_filename != entry.filename \
                    or decorated is reader:
                continue
            for name in sorted(_self_attributes(decorated, ast.Store) & read):
                held = instance.__dict__.get(name) if isinstance(getattr(instance, "__dict__", None), dict) else None
                if isinstance(held, torch.Tensor) and held.grad_fn is None and not held.requires_grad:
                    return entry, entry.function, name, method_name
    return None


def _methods_called_upstream(frame, filename: str, line: int, depth: int = 3) -> list:
    """(object, method name) for each `obj.method(...)` in the statement at `line` and in the
    assignments that feed it, where `obj` is a plain object the frame holds (not a class)."""
    found = []
    for node in statements_feeding(filename, statement_at(filename, line), depth):
        for call in (n for n in ast.walk(node) if isinstance(n, ast.Call)):
            if not isinstance(call.func, ast.Attribute):
                continue
            instance = value_of(frame, call.func.value)
            if instance is None or isinstance(instance, type) or \
                    any(i is instance and m == call.func.attr for i, m in found):
                continue
            found.append((instance, call.func.attr))
    return found


def _function_of(cls, name: str):
    """The plain function `cls.name` (unwrapped from a decorator made with functools.wraps), read
    without running a descriptor; None for anything else."""
    try:
        value = inspect.getattr_static(cls, name)
    except AttributeError:
        return None
    while getattr(value, "__wrapped__", None) is not None and not hasattr(value, "__code__"):
        value = value.__wrapped__
    wrapped = getattr(value, "__wrapped__", None)
    if wrapped is not None and getattr(wrapped, "__code__", None) is not None:
        value = wrapped  # torch.no_grad()'s wrapper keeps the user's function here
    return value if isinstance(getattr(value, "__code__", None), type((lambda: 0).__code__)) else None


def _self_attributes(function, context) -> set[str]:
    """The names `self.<name>` is stored to (ast.Store) or read from (ast.Load) in the function's body."""
    code = function.__code__
    tree = parse_file(code.co_filename)
    if tree is None:
        return set()
    definition = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and n.name == code.co_name and _starts_at(n, code.co_firstlineno)), None)
    if definition is None or not definition.args.args:
        return set()
    receiver = definition.args.args[0].arg
    return {n.attr for n in ast.walk(definition) if isinstance(n, ast.Attribute) and isinstance(n.ctx, context)
            and isinstance(n.value, ast.Name) and n.value.id == receiver}


def _starts_at(definition, first_line: int) -> bool:
    """A def whose decorators or `def` line is the code object's first line."""
    return first_line in {definition.lineno, *(d.lineno for d in definition.decorator_list)}
