"""AD301's cause when a module made a tensor while a loop of the same block had turned its
parameters' requires_grad off, and a later loop turns it back on before the tensor is used.

Alternating training (a GAN's generator and discriminator, an actor and a critic) switches
requires_grad per phase: `for p in generator.parameters(): p.requires_grad = False` before the
discriminator's update, `= True` before the generator's. A tensor the generator makes during the
first phase (`sr = generator(lr)`, meant for the discriminator's fake sample) has no grad history,
and unfreezing the generator afterwards does not give it one: the generator's loss computed from it
later has no grad_fn (SRGAN-PyTorch#37). The parameters require grad again when backward() fails,
so the cut is not where the user looks.

The freezing loop is named. The help moves the statement that made the tensor to just before the
freezing loop, where the module's parameters still require grad, when nothing between the two
reads or writes what the statement reads or binds (the same values, now recorded with their graph);
otherwise it is advice.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.live_values import chain_value
from autograd_doctor.analysis.source_scope import block_holding, loaded_names, stored_names
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import call_name, parse_file, segment, source_line, statement_location


@dataclass
class FrozenWhenCalled:
    filename: str
    module_text: str  # `generator`
    made: ast.stmt  # `sr = generator(lr)`
    target: str  # `sr`
    freeze: ast.stmt  # the loop (or requires_grad_(False) call) in force at the call
    unfreeze: ast.stmt  # the later one that turns it back on
    block: list


def _switch(statement: ast.stmt, module_text: str, filename: str) -> bool | None:
    """The value `statement` gives requires_grad of the module's parameters:
    `for p in M.parameters(): p.requires_grad = V`, or `M.requires_grad_(V)`; None when it does not."""
    if isinstance(statement, ast.For) and isinstance(statement.target, ast.Name) \
            and isinstance(statement.iter, ast.Call) and isinstance(statement.iter.func, ast.Attribute) \
            and statement.iter.func.attr == "parameters" and segment(filename, statement.iter.func.value) == module_text:
        for inner in statement.body:
            if isinstance(inner, ast.Assign) and isinstance(inner.value, ast.Constant) \
                    and isinstance(inner.value.value, bool) \
                    and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)
                            and t.value.id == statement.target.id for t in inner.targets):
                return inner.value.value
        return None
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and call_name(statement.value) == "requires_grad_" and isinstance(statement.value.func, ast.Attribute) \
            and segment(filename, statement.value.func.value) == module_text:
        args = statement.value.args
        if not args:
            return True
        if isinstance(args[0], ast.Constant) and isinstance(args[0].value, bool):
            return args[0].value
    return None


def _module_of(node: ast.expr, frame_locals: dict):
    """The live object `node` (a name, or attributes of one) stands for in the frame; None if unknown."""
    return chain_value(frame_locals.get, node)


def frozen_when_called(filename: str, made: ast.stmt, frame_locals: dict | None, backward_line: int):
    """A FrozenWhenCalled for `made` (the statement where the cut was found), or None."""
    if frame_locals is None or not isinstance(made, ast.Assign) or len(made.targets) != 1 \
            or not isinstance(made.targets[0], ast.Name) or not isinstance(made.value, ast.Call):
        return None
    module = _module_of(made.value.func, frame_locals)
    if not isinstance(module, torch.nn.Module) or not any(p.requires_grad for p in module.parameters()):
        return None
    tree = parse_file(filename)
    block = block_holding(tree, made) if tree is not None else None
    if block is None:
        return None
    module_text = segment(filename, made.value.func)
    index = block.index(made)
    freeze = None
    for earlier in block[:index]:
        value = _switch(earlier, module_text, filename)
        if value is not None:
            freeze = earlier if value is False else None
    unfreeze = next((later for later in block[index + 1:] if later.lineno < backward_line
                     and _switch(later, module_text, filename) is True), None)
    if freeze is None or unfreeze is None:
        return None
    return FrozenWhenCalled(filename, module_text, made, made.targets[0].id, freeze, unfreeze, block)


def _moved_before_freeze(found: FrozenWhenCalled) -> str | None:
    """The lines from the freezing loop to the statement that made the tensor, that statement first;
    None where moving it could change what runs (a statement between reads or binds what it reads
    or binds)."""
    between = found.block[found.block.index(found.freeze):found.block.index(found.made)]
    reads, binds = set(loaded_names(found.made.value)), {found.target}
    for statement in between:
        written = set()
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                written.add(node.id)
        for target in getattr(statement, "targets", ()):
            written |= stored_names(target)
        if written & (reads | binds) or set(loaded_names(statement)) & binds:
            return None
    filename, column = found.filename, found.freeze.col_offset
    lines = [source_line(filename, n) for n in range(found.freeze.lineno, found.made.end_lineno + 1)]
    first = found.freeze.lineno
    moved = lines[found.made.lineno - first:]
    kept = lines[:found.made.lineno - first]
    return "\n".join((line[column:] if line[:column].strip() == "" else line.lstrip()).rstrip()
                     for line in moved + kept)


def frozen_when_called_parts(found: FrozenWhenCalled, name: str):
    """(primary, related, notes, helps) of the AD301 diagnosis."""
    filename, module_text, target = found.filename, found.module_text, found.target
    primary = statement_location(filename, found.freeze, role="cut",
                                 note=f"{module_text}'s parameters stop requiring grad here")
    related = [statement_location(filename, found.made, role="made",
                                  note=f"{target} is made while they do not: it has no grad history"),
               statement_location(filename, found.unfreeze, role="unfreeze",
                                  note=f"{module_text} requires grad again here, after {target} was made")]
    notes = [f"{name} has no grad_fn: it is computed from {target}, which {module_text} made while the loop at line "
             f"{found.freeze.lineno} had turned its parameters' requires_grad off; turning it back on later does not "
             f"give {target} a graph"]
    advice = Suggestion(f"make {target} where {module_text}'s parameters require grad: before the loop that freezes "
                        f"them, or again after they are unfrozen (a discriminator's fake sample can be "
                        f"{target}.detach() of the same tensor)")
    replacement = _moved_before_freeze(found)
    if replacement is None:
        return primary, related, notes, [advice]
    location = statement_location(filename, found.freeze)
    location = Location(location.file, location.line, location.column, end_line=found.made.end_lineno)
    move = Suggestion(f"make {target} before the loop that freezes {module_text}, so that it is recorded with its "
                      f"graph; the statements in between neither read nor change what it uses",
                      replacement=replacement, location=location)
    return primary, related, notes, [move, advice]
