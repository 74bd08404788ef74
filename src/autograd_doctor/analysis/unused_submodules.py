"""AD164: a submodule built in its module's `__init__` that no code of its file ever reads.

A layer built beside a twin of the same shapes (`out_v` beside `out_e`, `key_proj` beside
`query_proj`) and then never called, because the twin is called where it belonged: the optimizer
holds its parameters, they never get a gradient and never change, and the twin does both jobs.
Nothing fails.

Looked at only at the first two step() calls of each optimizer, and only when some of its
parameters that require grad have no gradient while others have one:
- at the first: the ids of the gradientless parameters are noted (no tensor is kept);
- at the second: among the modules bound in the frame around step() (its locals, a few at most),
  a submodule whose parameters all got no gradient at both steps, whose parent is of the user's
  own class, and whose attribute name is read nowhere in the file of that class nor in the file
  of step() (no `.name` load, no `"name"` string for getattr): a head used only in evaluation or
  on some steps is read somewhere, and is silent;
- and a twin: a sibling of the same type and parameter shapes that the class calls at two lines or
  more (one call may have been meant for the unused module). A head left over with no twin (an
  auxiliary head no loss uses any more) is silent. Reported once per class and attribute.
The line named is the construction (`self.out_v = ...`); the twin's calls are shown. Which of
those calls meant the unused module is not known at run time: the help is advice.
"""

from __future__ import annotations

import ast
import weakref

import torch
from torch import nn

from autograd_doctor.analysis.errors.context import line_location
from autograd_doctor.analysis.source_scope import live_frame, user_class_file
from autograd_doctor.analysis.step_surroundings import FirstSteps
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, statement_location
from autograd_doctor.recording.frames import frame_locals

MAX_ROOT_MODULES = 8
MAX_SUBMODULES = 2000


class UnusedSubmodules:
    """Per optimizer: the steps looked at and the gradientless parameters of its first step."""

    def __init__(self):
        self._first_missing = weakref.WeakKeyDictionary()  # optimizer -> ids without gradient at step 1
        self._steps = FirstSteps(2)
        self._reported: set = set()  # (class, attribute)

    def at_step(self, optimizer, stack) -> Diagnosis | None:
        if not stack:
            return None
        seen = self._steps.take(optimizer)
        if seen is None:
            return None
        parameters = [p for group in getattr(optimizer, "param_groups", ()) for p in group.get("params", ())
                      if isinstance(p, torch.Tensor) and p.requires_grad]
        missing = {id(p) for p in parameters if p.grad is None}
        if not missing or len(missing) == len(parameters):
            return None
        if seen == 0:
            self._first_missing[optimizer] = missing
            return None
        missing &= self._first_missing.pop(optimizer, set())
        if not missing:
            return None
        return self._unused_submodule(optimizer, stack, missing)

    def _unused_submodule(self, optimizer, stack, missing: set) -> Diagnosis | None:
        site = stack[0]
        frame = live_frame(site)
        if frame is None:
            return None
        roots = [value for value in frame_locals(frame).values() if isinstance(value, nn.Module)][:MAX_ROOT_MODULES]
        del frame
        visited = 0
        for root in roots:
            for parent in root.modules():
                visited += 1
                if visited > MAX_SUBMODULES:
                    return None
                class_file = user_class_file(parent)
                if class_file is None:
                    continue
                for attribute, child in parent.named_children():
                    key = (type(parent), attribute)
                    if key in self._reported:
                        continue
                    own = [p for p in child.parameters() if p.requires_grad]
                    if not own or any(id(p) not in missing for p in own):
                        continue
                    if _read_anywhere(attribute, {class_file, site.filename}):
                        continue
                    diagnosis = _diagnosis(optimizer, site, parent, attribute, child, class_file)
                    if diagnosis is not None:
                        self._reported.add(key)
                        return diagnosis
        return None


def _read_anywhere(attribute: str, filenames: set) -> bool:
    """Whether any of the files reads `.attribute` or names it in a string (getattr, a dict of names)."""
    for filename in filenames:
        tree = parse_file(filename)
        if tree is None:
            return True  # unknown: say nothing
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.ctx, ast.Load):
                return True
            if isinstance(node, ast.Constant) and node.value == attribute:
                return True
    return False


def _class_node(tree: ast.Module, cls: type) -> ast.ClassDef | None:
    line = getattr(getattr(cls.__init__, "__code__", None), "co_firstlineno", None)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            if line is None or node.lineno <= line <= (node.end_lineno or node.lineno):
                return node
    return None


def _construction(class_node: ast.ClassDef, attribute: str) -> ast.stmt | None:
    for node in ast.walk(class_node):
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == attribute and isinstance(t.value, ast.Name)
                and t.value.id == "self" for t in node.targets):
            return node
    return None


def _calls_of(class_node: ast.ClassDef, attribute: str) -> list[int]:
    return sorted({node.lineno for node in ast.walk(class_node)
                   if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                   and node.func.attr == attribute})


def _shapes(module: nn.Module) -> list:
    return [tuple(p.shape) for p in module.parameters()]


def _diagnosis(optimizer, site, parent, attribute: str, child, class_file: str) -> Diagnosis | None:
    tree = parse_file(class_file)
    class_node = _class_node(tree, type(parent)) if tree is not None else None
    construction = _construction(class_node, attribute) if class_node is not None else None
    if construction is None:
        return None
    class_name = type(parent).__name__
    count = sum(p.numel() for p in child.parameters())
    primary = statement_location(class_file, construction, role="built",
                                 note=f"{attribute} is built here and read nowhere: its parameters never get a "
                                      "gradient")
    related = []
    # The evidence that a call of the twin took the unused module's place: a sibling of the same
    # type and shapes called at two lines or more. A head left over without one (an auxiliary head
    # no loss uses any more) is not this mistake, and is silent.
    twins = [(name, _calls_of(class_node, name)) for name, sibling in parent.named_children()
             if name != attribute and type(sibling) is type(child) and _shapes(sibling) == _shapes(child)]
    twins = [(name, lines) for name, lines in twins if len(lines) >= 2]
    if not twins:
        return None
    notes = [f"{class_name}.{attribute} ({type(child).__name__}, {count} values) is held by "
             f"{type(optimizer).__name__}, but no line of this file reads `.{attribute}`: it is never called, and "
             "at the first two step() calls none of its parameters had a gradient"]
    for twin, lines in twins[:2]:
        for line in lines[:4]:
            location = line_location(class_file, line, role="twin",
                                     note=f"{twin}, built like {attribute}, is called here")
            if location is not None:
                related.append(location)
        notes.append(f"{twin}, of the same type and shapes, is called at {len(lines)} line(s) of {class_name} "
                     f"({', '.join(str(n) for n in lines)}): if one of them meant {attribute}, call "
                      f"{attribute} there")
    step = location_of(site, role="step", note=f"{type(optimizer).__name__}.step(): {attribute} has no gradient")
    if step is not None:
        related.append(step)
    helps = [Suggestion(f"call self.{attribute} where the model means it (a call of its twin may be the one that "
                        f"should be self.{attribute}), or remove it if it is not needed")]
    return Diagnosis(code=codes.UNUSED_SUBMODULE, title=codes.title(codes.UNUSED_SUBMODULE), severity="warning",
                     primary=primary, related=related, notes=notes, help=helps)
