"""Read the value of an expression of the user's code in a live frame without running any of the
user's code: a help or a decision may look at what `self.encoder.weight` or `images[0]` holds, but
reading must not call a property, a `__getattr__` or a `__getitem__` the user wrote (it could print,
count, draw a random number or raise)."""

from __future__ import annotations

import ast
import types

import torch

_MISSING = object()
# Builtin containers and torch's own module containers, whose item lookup runs no user code.
_TORCH_CONTAINERS = (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict, torch.nn.ParameterList,
                     torch.nn.ParameterDict)


def attribute_without_running_code(owner, name: str):
    """`owner.<name>` when reading it runs none of the user's code: a value in the instance's
    `__dict__`, a parameter, buffer or submodule of an `nn.Module`, a plain class attribute, a
    method, or a descriptor that torch defines (`Tensor.grad`, `Tensor.T`). None for a property or
    a `__getattr__` the user wrote, and for an attribute that is not there."""
    if isinstance(owner, type):
        return _class_attribute(owner, name)
    found, defining = _found_in(type(owner), name)
    trusted = _ours_to_trust(defining)
    data_descriptor = found is not _MISSING and (hasattr(type(found), "__set__") or hasattr(type(found), "__delete__"))
    if data_descriptor:  # a data descriptor wins over the instance's own value, as in Python
        # a __slots__ member's getter is the interpreter's own
        readable = trusted or isinstance(found, types.MemberDescriptorType)
        return _trusted_getattr(owner, name) if readable else None
    try:
        own = object.__getattribute__(owner, "__dict__")
    except AttributeError:
        own = None
    if isinstance(own, dict) and name in own:
        return own[name]
    if found is not _MISSING:
        plain = not hasattr(type(found), "__get__") or isinstance(found, (types.FunctionType, classmethod,
                                                                          staticmethod))
        return _trusted_getattr(owner, name) if plain or trusted else None
    if isinstance(owner, torch.nn.Module) and isinstance(own, dict):
        for registry in ("_parameters", "_buffers", "_modules"):
            if name in (own.get(registry) or {}):
                return own[registry][name]
    return None


def _found_in(klass: type, name: str):
    """(value, defining class) of `name` in the class dictionaries along `klass`'s MRO, read
    without running a descriptor; (_MISSING, None) when no class defines it."""
    for defining in klass.__mro__:
        if name in defining.__dict__:
            return defining.__dict__[name], defining
    return _MISSING, None


def _ours_to_trust(defining) -> bool:
    """A class of torch's or of Python's own: its descriptors and getters run no user code."""
    return defining is not None and (getattr(defining, "__module__", None) or "").split(".")[0] in ("torch", "builtins")


def _class_attribute(owner: type, name: str):
    """`SomeClass.<name>` (`MyFunction.apply`, `Config.scale`): a plain value, a function or a
    class/static method, or anything torch or Python defines; None for a descriptor of the user's."""
    found, defining = _found_in(owner, name)
    if found is _MISSING:
        return None
    plain = not hasattr(type(found), "__get__") or isinstance(found, (types.FunctionType, classmethod, staticmethod))
    return _trusted_getattr(owner, name) if plain or _ours_to_trust(defining) else None


def frame_lookup(frame):
    """`lookup(name)` for the readers below: a frame's local, else its global (None if neither)."""
    return lambda name: frame.f_locals.get(name, frame.f_globals.get(name))


def chain_value(lookup, node: ast.expr):
    """The value of a name or an attribute chain (`self.encoder.weight`), names read through
    `lookup(name)`, attributes without running the user's code; None for anything else."""
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        owner = chain_value(lookup, node.value)
        return attribute_without_running_code(owner, node.attr) if owner is not None else None
    return None


def dotted_value(lookup, dotted: str):
    """As chain_value, for a dotted name written as text (`model.encoder`); None if not one."""
    first, *attributes = dotted.split(".")
    value = lookup(first) if first.isidentifier() else None
    for attribute in attributes:
        if value is None or not attribute.isidentifier():
            return None
        value = attribute_without_running_code(value, attribute)
    return value


def expression_value(lookup, node: ast.expr):
    """The value of a side-effect-free expression (constants, names, attributes, tuples, constant
    subscripts of lists, tuples, dicts, torch's module containers and plain tensors), with names
    read through `lookup(name)`; None where reading would run the user's code or is not known."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return lookup(node.id)
    if isinstance(node, ast.Attribute):
        owner = expression_value(lookup, node.value)
        return attribute_without_running_code(owner, node.attr) if owner is not None else None
    if isinstance(node, (ast.Tuple, ast.List)):
        return tuple(expression_value(lookup, element) for element in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operand = expression_value(lookup, node.operand)
        return -operand if type(operand) in (int, float) else None
    if isinstance(node, ast.Subscript):
        owner = expression_value(lookup, node.value)
        if type(owner) in (torch.Tensor, torch.nn.Parameter):
            return _tensor_item(owner, _tensor_key(lookup, node.slice))
        key = expression_value(lookup, node.slice)
        return _item(owner, key) if type(key) in (int, str) else None
    return None


def _trusted_getattr(owner, name: str):
    try:
        return getattr(owner, name)
    except Exception:  # the getter of torch or Python refused (a tensor subclass with no storage, ...)
        return None


def _item(owner, key):
    """`owner[key]` of a list, tuple or dict, or of torch's nn.Sequential / ModuleList / ModuleDict /
    ParameterList / ParameterDict whose item lookup is torch's own (a subclass that overrides it is
    not read: that would run the user's code); None otherwise."""
    if owner is None:
        return None
    if type(owner) not in (list, tuple, dict):
        base = next((kind for kind in _TORCH_CONTAINERS if isinstance(owner, kind)), None)
        if base is None or type(owner).__getitem__ is not base.__getitem__:
            return None
    try:
        return owner[key]
    except (IndexError, KeyError, TypeError):
        return None


def _tensor_key(lookup, index: ast.expr):
    """The index of `tensor[...]` when it is made of integers and slices with integer bounds (`0`,
    `i`, `:, 1`, `1:-1`); None otherwise."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    key = []
    for part in parts:
        if isinstance(part, ast.Slice):
            bounds = [None if bound is None else expression_value(lookup, bound)
                      for bound in (part.lower, part.upper, part.step)]
            if not all(bound is None or type(bound) is int for bound in bounds):
                return None
            key.append(slice(*bounds))
        else:
            value = expression_value(lookup, part)
            if type(value) is not int:
                return None
            key.append(value)
    return tuple(key)


def _tensor_item(tensor: torch.Tensor, key: tuple | None):
    """`tensor[key]`: torch's own indexing, a view; None where the key is unknown or out of range."""
    if key is None:
        return None
    try:
        return tensor[key]
    except (IndexError, RuntimeError, TypeError):
        return None


def readable_grad_fn(value: torch.Tensor):
    """The tensor's grad_fn, or None where reading it raises: a view made under no_grad whose base
    was modified since (`col = w[:, 0]` in a `no_grad` block, then `opt.step()`) raises on `.grad_fn`.
    Such a view has no graph of its own (a check that walks live tensors skips it)."""
    try:
        return value.grad_fn
    except RuntimeError:
        return None
