"""AD172: a parameter two modules share (weight tying) unfrozen through one of its names.

A language model's output projection tied to its input embedding (`lm_head.weight =
embed_tokens.weight`, `tie_word_embeddings`) holds one tensor under two names. A script that
freezes the model and then unfreezes `lm_head` sets `requires_grad` on that tensor: the embedding,
never unfrozen by its own name, trains too. Nothing fails.

Looked at only at the first step() of each optimizer, and only when the program replaced a
module's parameter (recording/parameter_swaps.py records `head.weight = embedding.weight`; most
programs replace none, and the check costs nothing there):
- the new parameter is one the optimizer holds, requires grad and got a gradient;
- a module bound in the frame of step() holds it under exactly two names;
- the file of step() sets `requires_grad` to True through a path that covers one name (`for p in
  model.lm_head.parameters(): p.requires_grad = True`, `model.lm_head.requires_grad_(True)`,
  `model.lm_head.weight.requires_grad = True`), never through one that covers the other, and,
  before that, to False through a path that covers the other (the whole model, or that module);
- the freezing, the unfreezing and the optimizer's construction are statements of one block, in
  that order: the optimizer exists, so that block ran, and both settings with it (a freeze in a
  branch that did not run froze nothing).
The line named is the tie; where the tie is under an `if` on an argument of `__init__` that the
construction passes by keyword (`tie_word_embeddings=True`), the construction. The help gives the
unfrozen name a copy of its own right after the unfreezing statement and keeps the other frozen
(what loading the model untied gives).
"""

from __future__ import annotations

import ast
import weakref

import torch
from torch import nn

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import block_holding, live_frame
from autograd_doctor.analysis.stale_optimizer import optimizer_construction
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, parse_file, segment, source_text, statement_at, statement_location, walk_covering,
)
from autograd_doctor.recording.frames import frame_locals

MAX_ROOT_MODULES = 8


class TiedParameters:
    """The optimizers already looked at, and the ties already reported."""

    def __init__(self):
        self._checked = weakref.WeakKeyDictionary()
        self._reported: set = set()  # (module type, unfrozen name, frozen name)

    def at_step(self, optimizer, stack, swaps: list) -> Diagnosis | None:
        try:
            if optimizer in self._checked:
                return None
            self._checked[optimizer] = True
        except TypeError:
            return None
        if not stack or not swaps:
            return None
        held = {id(p) for group in optimizer.param_groups for p in group["params"]}
        tied = []
        for swap in swaps:
            new = swap.new_ref() if swap.is_parameter else None
            if (isinstance(new, torch.Tensor) and id(new) in held and new.requires_grad and new.grad is not None
                    and all(new is not other for other, _ in tied)):
                tied.append((new, swap))
        if not tied:
            return None
        frame = live_frame(stack[0])
        if frame is None:
            return None
        roots = [(name, value) for name, value in frame_locals(frame).items()
                 if isinstance(value, nn.Module) and not name.startswith("__")][:MAX_ROOT_MODULES]
        del frame
        for parameter, swap in tied:
            for root_name, root in roots:
                names = [name for name, p in root.named_parameters(remove_duplicate=False) if p is parameter]
                if len(names) != 2:
                    continue
                diagnosis = self._partly_unfrozen(optimizer, stack[0], swap, root_name, root, names, parameter)
                if diagnosis is not None:
                    return diagnosis
        return None

    def _partly_unfrozen(self, optimizer, site, swap, root_name: str, root, names: list, parameter):
        tree = parse_file(site.filename)
        if tree is None:
            return None
        settings = _requires_grad_settings(tree, root_name)
        unfrozen = [name for name in names if any(flag and _covers(path, name) for _, path, flag in settings)]
        if len(unfrozen) != 1:
            return None  # neither, or both by their own names: the program says what it trains
        trained = unfrozen[0]
        other = names[1 - names.index(trained)]
        unfreezing = max((s for s, path, flag in settings if flag and _covers(path, trained)),
                         key=lambda s: s.lineno)
        freezing = [s for s, path, flag in settings if not flag and _covers(path, other)
                    and s.lineno < unfreezing.lineno]
        construction = optimizer_construction(optimizer, (site,))
        if not freezing or construction is None or construction[0] != site.filename:
            return None
        # Evidence that both ran: the freezing, the unfreezing and the optimizer's construction are
        # statements of one block, in that order (the optimizer exists, so that block ran). A
        # freeze in a branch that did not run froze nothing.
        block = block_holding(tree, construction[1])
        freezing = [s for s in freezing if block is not None and s in block]
        if not freezing or unfreezing not in block or construction[1].lineno <= unfreezing.end_lineno:
            return None
        key = (type(root), trained, other)
        if key in self._reported:
            return None
        self._reported.add(key)
        return _diagnosis(optimizer, site, swap, root_name, root, trained, other, unfreezing, freezing[-1],
                          parameter)


def _requires_grad_settings(tree: ast.Module, root_name: str) -> list:
    """(statement, path under `root_name`, flag) for each statement of the file that sets
    `requires_grad` through a path from `root_name`: a loop over `.parameters()`, a
    `requires_grad_()` call, an assignment to `.requires_grad`."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call) \
                and isinstance(node.iter.func, ast.Attribute) and node.iter.func.attr == "parameters" \
                and not node.iter.args:
            path = _path(node.iter.func.value, root_name)
            flags = {_flag_set(statement, node.target.id) for statement in node.body}
            flags.discard(None)
            if path is not None and len(flags) == 1:
                found.append((node, path, flags.pop()))
        elif isinstance(node, (ast.Expr, ast.Assign)):
            for receiver, flag in _direct_settings(node):
                path = _path(receiver, root_name)
                if path is not None:
                    found.append((node, path, flag))
    return found


def _flag_set(statement: ast.stmt, variable: str) -> bool | None:
    """The flag `statement` sets on the loop variable (`p.requires_grad = True`,
    `p.requires_grad_(False)`), or None."""
    for receiver, flag in _direct_settings(statement):
        if isinstance(receiver, ast.Name) and receiver.id == variable:
            return flag
    return None


def _direct_settings(statement: ast.stmt) -> list:
    """(receiver, flag) for `receiver.requires_grad = <bool>` or `receiver.requires_grad_(<bool>)`."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == "requires_grad" \
                and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, bool):
            return [(target.value, statement.value.value)]
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        call = statement.value
        if isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_" and not call.keywords:
            if not call.args:
                return [(call.func.value, True)]
            if len(call.args) == 1 and isinstance(call.args[0], ast.Constant) \
                    and isinstance(call.args[0].value, bool):
                return [(call.func.value, call.args[0].value)]
    return []


def _path(node: ast.AST, root_name: str) -> str | None:
    """`model.lm_head.weight` -> "lm_head.weight" for root `model`; `model` -> ""; else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id != root_name:
        return None
    return ".".join(reversed(parts))


def _covers(path: str, name: str) -> bool:
    return path == "" or name == path or name.startswith(path + ".")


def _diagnosis(optimizer, site, swap, root_name, root, trained, other, unfreezing, freezing,
               parameter) -> Diagnosis | None:
    tie = location_of(swap.site, role="tied", note=(
        f"{root_name}.{trained} and {root_name}.{other} become one tensor here"))
    if tie is None:
        return None
    primary, related = tie, []
    construction_call = _flag_construction(swap)
    if construction_call is not None:
        call_file, call_statement, keyword = construction_call
        primary = statement_location(call_file, call_statement, role="built", note=(
            f"builds {type(root).__name__} with {keyword}: {trained} is tied to {other}, the same tensor"))
        related.append(tie)
    related.append(statement_location(site.filename, freezing, role="frozen",
                                      note=f"freezes {root_name}.{other} (with the rest)"))
    related.append(statement_location(site.filename, unfreezing, role="unfrozen", note=(
        f"unfreezes {root_name}.{trained}, which is {root_name}.{other}: both train")))
    step = location_of(site, role="step", note=f"{type(optimizer).__name__}.step() updates {root_name}.{other} too")
    if step is not None:
        related.append(step)
    shape = f"{str(parameter.dtype).replace('torch.', '')}{list(parameter.shape)}"
    notes = [f"{root_name}.{trained} and {root_name}.{other} are one tensor ({shape}); requires_grad belongs to "
             f"the tensor, so unfreezing {trained} unfroze {other}, which no line unfreezes by its own name: it "
             "got a gradient at the first step and the optimizer updates it",
             "named_parameters() lists the tensor once, under the first name; a tied model cannot train one "
             "name and keep the other frozen"]
    helps = []
    untie = _untie_help(site, unfreezing, root_name, trained, other)
    if untie is not None:
        helps.append(untie)
    helps.append(Suggestion(f"or load or build the model untied (for a Hugging Face model: "
                            f"`tie_word_embeddings=False`), so that {trained} has weights of its own"))
    helps.append(Suggestion(f"or, if both names are meant to train as one tensor, unfreeze {other} by its own name "
                            "too, so that the code says what is trained"))
    return Diagnosis(code=codes.TIED_PARAMETER_PARTLY_UNFROZEN, title=codes.title(codes.TIED_PARAMETER_PARTLY_UNFROZEN),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _flag_construction(swap):
    """(file, statement, `flag=value`) when the tie is under an `if` on an argument of the
    `__init__` that made it and the construction one frame up passes that argument by keyword."""
    if len(swap.stack) < 2 or swap.site.function != "__init__":
        return None
    tree = parse_file(swap.site.filename)
    if tree is None:
        return None
    function = enclosing_function(tree, swap.site.lineno)
    if not isinstance(function, ast.FunctionDef):
        return None
    arguments = {argument.arg for argument in function.args.args + function.args.kwonlyargs}
    flags = {node.test.id for node in walk_covering(function, swap.site.lineno)
             if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id in arguments
             and any(child.lineno <= swap.site.lineno <= (child.end_lineno or child.lineno) for child in node.body)}
    if len(flags) != 1:
        return None
    flag = flags.pop()
    caller = swap.stack[1]
    statement = statement_at(caller.filename, caller.lineno)
    if statement is None:
        return None
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == flag:
                    text = segment(caller.filename, keyword)
                    if text is not None:
                        return caller.filename, statement, text
    return None


def _untie_help(site, unfreezing: ast.stmt, root_name: str, trained: str, other: str) -> Suggestion | None:
    """The unfreezing statement, then `trained` given a copy of its own and `other` frozen again
    (the optimizer, built after it in the same block, then holds the copy)."""
    tree = parse_file(site.filename)
    if tree is None:
        return None
    lines = source_text(site.filename).splitlines()[unfreezing.lineno - 1:unfreezing.end_lineno]
    indent = len(lines[0]) - len(lines[0].lstrip())
    if any(line.strip() and len(line) - len(line.lstrip()) < indent for line in lines):
        return None
    original = [line[indent:] for line in lines]
    parameter_class = f"{_nn_name(tree)}.Parameter"
    untie = [f"{root_name}.{trained} = {parameter_class}({root_name}.{trained}.detach().clone())",
             f"{root_name}.{other}.requires_grad_(False)"]
    return Suggestion(f"give {trained} its own copy of the values after unfreezing it, and keep {other} frozen "
                      "(what loading the model untied gives)", "\n".join(original + untie),
                      statement_location(site.filename, unfreezing))


def _nn_name(tree: ast.Module) -> str:
    """The file's name for torch.nn (`nn` for `from torch import nn` or `import torch.nn as nn`),
    else `torch.nn` (a help's `torch.` is bound to the file's name for torch afterwards)."""
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "torch" and node.level == 0:
            for alias in node.names:
                if alias.name == "nn":
                    return alias.asname or "nn"
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "torch.nn" and alias.asname:
                    return alias.asname
    return "torch.nn"
