"""AD240: an optimizer steps a module whose `forward` runs with gradients off (a grad-off decorator):
its parameters require grad, are in the optimizer, and never get a gradient.

A vision tower, an encoder or a feature extractor written for frozen use carries
`@torch.no_grad()` (or `@torch.inference_mode()`) on its
`forward`. When the user later unfreezes it (`requires_grad = True`) and hands its parameters to
the optimizer, nothing fails: its outputs carry no graph, the rest of the model trains, and the
module's `.grad` stays None, so its weights never change.

Evidence, all at run time, looked at only at each optimizer's first two step() calls, and only
when the program ran a function decorated with a grad-off decorator (recording/switches.py records
the decorator's entries: file, line and function name):
- a module bound around step() (the step's frames' locals and globals, `self`'s attributes), or
  one inside it, whose class's `forward` is that decorated function (matched by its code's file
  and first line, not by name);
- the module's parameters that require grad are held by this optimizer, and none of them has a
  gradient at either step, while other parameters of the optimizer have one (it trains).
A module also trained through another method (its parameters get a gradient) and a frozen one
(`requires_grad = False`, or left out of the optimizer) are not reported, nor one whose parameters
changed between the two steps although no gradient reached them: something other than the
optimizer updates them (a MoCo or BYOL momentum encoder written through `.data`, an EMA copy), so
the program means them to be updated that way. A few values of each parameter are read at the
first step and compared at the second (only for modules that are already candidates).

The decorator line is named; the help deletes it (only in the user's files).
"""

from __future__ import annotations

import ast
import inspect
import weakref
from dataclasses import dataclass

from autograd_doctor.analysis.step_surroundings import FirstSteps, modules_around
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of
from autograd_doctor.recording.gradient_states import grad_of

# step() calls of one optimizer looked at.
STEPS_LOOKED_AT = 2
# Modules bound around step() looked at (each with its submodules).
MAX_MODULES = 64
# Values read per parameter, and parameters per module, to see an update made without a gradient.
VALUES_SAMPLED = 8
MAX_SAMPLED_PARAMETERS = 32


class DecoratedForwardParameters:
    """AD240, before each of an optimizer's first two steps; reported once per module class."""

    def __init__(self):
        self._steps = FirstSteps(STEPS_LOOKED_AT)
        self._pending: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # optimizer -> {id(module)}
        self._reported: set = set()

    def at_step(self, optimizer, stack) -> Diagnosis | None:
        seen = self._steps.take(optimizer)
        if seen is None:
            return None
        entries = _decorated_entries()
        if not entries and not _block_entries():
            return None
        held = {}
        any_grad = False
        for group in getattr(optimizer, "param_groups", ()):
            for p in group.get("params", ()):
                held[id(p)] = p
                any_grad = any_grad or grad_of(p) is not None
        if not held or not any_grad:
            return None  # an optimizer without any gradient is another problem (AD214)
        found = []
        for module, entry in list(_decorated_modules(stack, entries) if entries else []) + list(_block_modules(stack)):
            trained = [p for p in module.parameters() if p.requires_grad]
            in_optimizer = [p for p in trained if id(p) in held]
            if not in_optimizer or len(in_optimizer) != len(trained):
                continue
            if any(grad_of(p) is not None for p in trained):
                continue
            found.append((module, entry, len(in_optimizer)))
        if seen == 0:
            self._pending[optimizer] = {id(module): _values_sample(module) for module, _, _ in found}
            return None
        confirmed = self._pending.get(optimizer, {})
        for module, entry, count in found:
            key = (entry.filename, entry.line)
            if id(module) not in confirmed or key in self._reported:
                continue
            if _values_sample(module) != confirmed[id(module)]:
                continue  # updated between the steps without a gradient: by the program, on purpose
            self._reported.add(key)
            if isinstance(entry, _BlockCall):
                return _block_diagnosis(module, entry, count, stack[0] if stack else None, type(optimizer).__name__)
            return _diagnosis(module, entry, count, stack[0] if stack else None, type(optimizer).__name__)
        return None


def _values_sample(module) -> tuple:
    """The first values of each of the module's parameters that require grad, as numbers (no
    tensor is kept): enough to see a momentum or EMA update, which changes every value."""
    sample = []
    for p in list(p for p in module.parameters() if p.requires_grad)[:MAX_SAMPLED_PARAMETERS]:
        try:
            sample.append(tuple(p.detach().reshape(-1)[:VALUES_SAMPLED].tolist()))
        except Exception:  # a tensor without values (meta, fake): nothing to compare
            sample.append(None)
    return tuple(sample)


@dataclass
class _BlockCall:
    """A submodule called as `self.<attribute>(...)` inside a grad-off `with` block of a method of
    the module that holds it."""

    filename: str
    line: int  # the statement that calls it
    block_line: int
    block_text: str  # `torch.no_grad()`
    owner: str  # the holding module's class
    attribute: str
    statement: ast.stmt
    torch_name: str | None  # the name torch is bound to in the method's globals


def _block_entries() -> list:
    from autograd_doctor.recording import switches

    current = switches.session()
    return [entry for kind in ("no_grad", "inference_mode") for entry in switches.mode_entries(kind)
            if not entry.decorator and entry.session == current]


def _methods_by_code(cls, cache: dict) -> dict:
    """{(file, function name): [functions]} of the methods of `cls` and its bases (once per class)."""
    found = cache.get(cls)
    if found is None:
        found = {}
        for klass in cls.__mro__:
            if klass.__module__.startswith("torch."):
                continue
            for value in vars(klass).values():
                function = inspect.unwrap(value) if callable(value) else None
                code = getattr(function, "__code__", None)
                if code is not None:
                    found.setdefault((code.co_filename, code.co_name), []).append(function)
        cache[cls] = found
    return found


def _method_holding(cls, filename: str, line: int, function: str, cache: dict):
    """(function object, FunctionDef) of the method of `cls` (or a base) whose source holds `line`."""
    from autograd_doctor.diagnosis.source import parse_file

    tree = None
    for value in _methods_by_code(cls, cache).get((filename, function), ()):
        code = value.__code__
        if code.co_firstlineno > line:
            continue
        tree = tree or parse_file(filename)
        if tree is None:
            return None, None
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == function \
                    and code.co_firstlineno <= node.lineno <= code.co_firstlineno + len(node.decorator_list) \
                    and node.lineno <= line <= (node.end_lineno or 0):
                return value, node
    return None, None


def _block_modules(stack):
    """(submodule, _BlockCall) for submodules called as `self.<attr>(...)` inside a grad-off `with`
    block that the run entered in a method of a module bound around step()."""
    import torch

    entries = _block_entries()
    if not entries:
        return
    done, cache = set(), {}
    for root in modules_around(stack, MAX_MODULES):
        for inner in root.modules():
            if id(inner) in done:
                continue
            done.add(id(inner))
            for entry in entries:
                function, node = _method_holding(type(inner), entry.filename, entry.line, entry.function, cache)
                if node is None or not node.args.args:
                    continue
                self_name = node.args.args[0].arg
                block = next((w for w in ast.walk(node) if isinstance(w, ast.With) and w.lineno == entry.line), None)
                if block is None:
                    continue
                torch_name = next((name for name, value in getattr(function, "__globals__", {}).items()
                                   if value is torch), None)
                for statement in _statements(block.body):
                    for call in ast.walk(statement):
                        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                                and isinstance(call.func.value, ast.Name) and call.func.value.id == self_name):
                            continue
                        sub = inner._modules.get(call.func.attr)
                        if isinstance(sub, torch.nn.Module):
                            yield sub, _BlockCall(entry.filename, statement.lineno, entry.line,
                                                  f"torch.{entry.kind}()", type(inner).__name__, call.func.attr,
                                                  statement, torch_name)


def _statements(body):
    """The simple statements of a block, those inside its nested blocks too (the innermost statement
    that holds a call)."""
    for statement in body:
        inner = [getattr(statement, field, None) for field in ("body", "orelse", "finalbody")]
        if any(isinstance(part, list) and part for part in inner):
            for part in inner:
                if isinstance(part, list):
                    yield from _statements(part)
        else:
            yield statement


def _block_diagnosis(module, call: _BlockCall, count: int, step_site, optimizer_class: str) -> Diagnosis | None:
    from autograd_doctor.diagnosis.source import segment, statement_location

    name = type(module).__name__
    primary = statement_location(call.filename, call.statement, role="call")
    if primary is None:
        return None
    primary.note = (f"self.{call.attribute} ({name}) runs inside `with {call.block_text}:` (line {call.block_line}): "
                    "its output carries no graph")
    helps = []
    text = segment(call.filename, call.statement)
    if call.torch_name is not None and text is not None and isinstance(call.statement, (ast.Assign, ast.AnnAssign,
                                                                                        ast.AugAssign, ast.Expr)):
        helps.append(Suggestion(
            f"compute this statement with gradients on: self.{call.attribute}'s parameters require grad and "
            f"{optimizer_class} holds them, so it is meant to train (the block can keep the frozen modules' work)",
            replacement=f"with {call.torch_name}.enable_grad():\n    " + text.replace("\n", "\n    "),
            location=primary))
    helps.append(Suggestion(f"or move the call of self.{call.attribute} after the `with {call.block_text}:` block"))
    related = [location_of(step_site, role="step",
                           note=f"{optimizer_class}.step() holds {count} parameter(s) of {call.owner}.{call.attribute} "
                                "that never got a gradient")] if step_site is not None else []
    notes = [f"{call.owner}.{call.attribute}'s {count} parameter(s) require grad and are in the optimizer, but it is "
             f"called inside a `with {call.block_text}:` block: nothing computed there is recorded, their .grad stays "
             "None and step() skips them (no error)",
             "the rest of the model trains normally, so the loss still goes down"]
    return Diagnosis(code=codes.DECORATED_FORWARD_NOT_TRAINED, title=codes.title(codes.DECORATED_FORWARD_NOT_TRAINED),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _decorated_entries() -> list:
    from autograd_doctor.recording import switches

    current = switches.session()
    return [entry for kind in ("no_grad", "inference_mode") for entry in switches.mode_entries(kind)
            if entry.decorator and entry.session == current]


def _decorated_modules(stack, entries):
    """(module, entry) for the modules bound around step() whose class's forward is a decorated entry."""
    keys = {(e.filename, e.line, e.function): e for e in entries}
    done = set()
    for root in modules_around(stack, MAX_MODULES):
        for inner in root.modules():
            if id(inner) in done:
                continue
            done.add(id(inner))
            forward = getattr(type(inner), "forward", None)
            code = getattr(inspect.unwrap(forward), "__code__", None) if forward is not None else None
            if code is None:
                continue
            entry = keys.get((code.co_filename, code.co_firstlineno, code.co_name))
            if entry is not None:
                yield inner, entry


def _diagnosis(module, entry, count: int, step_site, optimizer_class: str) -> Diagnosis | None:
    from autograd_doctor.analysis.errors.context import line_location
    from autograd_doctor.analysis.errors.grad_api import _decorator_deletion
    from autograd_doctor.diagnosis.source import source_line

    decorator = source_line(entry.filename, entry.line).split("  #")[0].strip()
    if not decorator.startswith("@"):
        return None  # wrapped by calling the decorator elsewhere: no line of its own to name
    name = type(module).__name__
    primary = line_location(entry.filename, entry.line, role="decorator",
                            note=f"{name}.forward() runs with gradients off: its outputs carry no graph")
    if primary is None:
        return None
    message = (f"delete this {decorator} line: {name}'s parameters require grad and {optimizer_class} holds "
               "them, so it is meant to train (keep the decorator only on a module used frozen)")
    helps = [_decorator_deletion(entry.filename, entry.line, message) or Suggestion(message, location=primary)]
    related = [location_of(step_site, role="step",
                           note=f"{optimizer_class}.step() holds {count} parameter(s) of {name} that never got "
                                "a gradient")] if step_site is not None else []
    notes = [f"{name}'s {count} parameter(s) require grad and are in the optimizer, but its forward is decorated "
             f"with {decorator}: nothing computed inside it is recorded, their .grad stays None and step() "
             "skips them (no error)",
             "the rest of the model trains normally, so the loss still goes down"]
    return Diagnosis(code=codes.DECORATED_FORWARD_NOT_TRAINED, title=codes.title(codes.DECORATED_FORWARD_NOT_TRAINED),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["DecoratedForwardParameters"]
