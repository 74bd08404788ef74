"""The calls of a loss in a user's file: `F.kl_div(x, t)` by its function's name, or `criterion(x, t)`
where the frame around backward() binds `criterion` to the loss's module. AD156 and AD225 each look
for the loss the graph backpropagated through in the source around backward()."""

from __future__ import annotations

import ast
import types

import torch

from autograd_doctor.analysis.number_terms import Reading, read_value
from autograd_doctor.diagnosis.source import calls_with_arguments, parse_file, source_text


def loss_calls(filename: str, losses: dict[str, type], values: dict) -> list[tuple[ast.Call, str]]:
    """(call, loss name) of each call in the file of a loss of `losses` (name: module class), in
    the file's walk order; a call's callee is read from `values` (nothing is called)."""
    text = source_text(filename)
    if not any(name in text for name in losses) and not _holds_a_loss(values, tuple(losses.values())):
        return []  # no call by the function's name can be in the file, and no frame holds the module
    reading = Reading(values, parse_file(filename))
    found = []
    for node in calls_with_arguments(filename):
        function = node.func
        if not isinstance(function, (ast.Name, ast.Attribute)):
            continue
        name = function.attr if isinstance(function, ast.Attribute) else function.id
        if name not in losses:
            module = read_value(function, reading)
            name = next((loss for loss, kind in losses.items() if isinstance(module, kind)), None)
        if name is not None:
            found.append((node, name))
    return found


def _holds_a_loss(values: dict, kinds: tuple) -> bool:
    """Whether a frame's value is a loss module of `kinds`, holds one among its modules
    (`model.criterion`), or is an object with one as an attribute (a trainer's `self.criterion`)."""
    for value in list(values.values()):
        if _is_or_holds(value, kinds):
            return True
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, dict) and not isinstance(value, (type, types.ModuleType)) and \
                any(_is_or_holds(attribute, kinds) for attribute in list(attributes.values())):
            return True
    return False


def _is_or_holds(value, kinds: tuple) -> bool:
    return isinstance(value, kinds) or (
        isinstance(value, torch.nn.Module) and any(isinstance(module, kinds) for module in value.modules()))
