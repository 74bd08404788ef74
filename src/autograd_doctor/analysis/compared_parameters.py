"""AD325: a parameter that the module's code reads only in comparisons gets no gradient and never
trains.

A learnable threshold written as a mask, `mask = (features > self.thres).float()`, or
`x.ge(self.cutoff)`: a comparison's result is a boolean tensor with no graph, so autograd never
reaches the parameter compared. Its `.grad` stays None, torch.optim skips it, and it keeps its
initial value while the rest of the model trains (discuss.pytorch.org 149907). Nothing fails.

Looked at only at the first two step() calls of each optimizer: among the parameters it holds,
those that require grad and have no gradient while another parameter of the optimizer has one,
declared by a module of the user's own class bound around step() (or inside one), whose class
reads `self.<name>` (outside `__init__`) only as an operand of a comparison (`<`, `>`, `<=`, `>=`,
`==`, `!=`, or `torch.gt`/`lt`/`ge`/`le`/`eq`/`ne` and the tensor methods of those names). A
parameter still without a gradient at the second step is reported. A threshold that is also used
in arithmetic (so it gets a gradient), or kept as a buffer or a frozen tensor, is not.
The line named is the comparison; the help is advice: a soft step (`torch.sigmoid(alpha * (x -
self.thres))`) or a straight-through estimator trains the threshold, and the sharpness, or which
of the two, is the model's choice, not something the program shows.
"""

from __future__ import annotations

import ast
import weakref

import torch

from autograd_doctor.analysis.second_step_checks import CheckedAtSecondStep
from autograd_doctor.analysis.source_scope import user_class_definitions
from autograd_doctor.analysis.step_surroundings import modules_around
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, statement_location
from autograd_doctor.recording.gradient_states import grad_of

MAX_MODULES = 4096
COMPARISON_CALLS = {"gt", "lt", "ge", "le", "eq", "ne", "greater", "less", "greater_equal", "less_equal"}


class ComparedParameters(CheckedAtSecondStep):
    """The check at the first two steps of each optimizer."""

    def candidates(self, optimizer, step_stack) -> list[tuple]:
        return _candidates(optimizer, step_stack)

    def judge(self, optimizer, step_stack, pending: list) -> Diagnosis | None:
        if not _some_gradient(optimizer):
            return None
        for module_ref, name, parameter_ref, reads in pending:
            module, parameter = module_ref(), parameter_ref()
            if module is None or parameter is None or grad_of(parameter) is not None:
                continue
            return _diagnosis(module, name, reads, step_stack)
        return None


def _some_gradient(optimizer) -> bool:
    return any(grad_of(p) is not None for group in optimizer.param_groups for p in group["params"])


def _candidates(optimizer, step_stack) -> list[tuple]:
    """(module, name, parameter, the comparisons that read it), weakly referenced, for each
    parameter the optimizer holds that requires grad, has no gradient while another of its
    parameters has one, and that its module's class reads only in comparisons."""
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    if not held or not _some_gradient(optimizer):
        return []
    candidates = []
    for module in modules_around(step_stack, MAX_MODULES, submodules=True):
        gradientless = [(name, p) for name, p in module.named_parameters(recurse=False)
                        if id(p) in held and p.requires_grad and grad_of(p) is None]
        if not gradientless:
            continue
        for name, parameter in gradientless:
            reads = _comparison_reads(module, name)
            if reads:
                candidates.append((weakref.ref(module), name, weakref.ref(parameter), reads))
    return candidates


def _class_methods(module: torch.nn.Module) -> tuple[str | None, list[ast.FunctionDef]]:
    """The file of the module's class and its methods other than __init__."""
    filename, classes = user_class_definitions(module)
    return filename, [item for node in classes for item in node.body
                      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name != "__init__"]


def _is_self_attribute(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.value, ast.Name)
            and node.value.id == "self")


def _compared_operands(node: ast.AST) -> list[ast.AST]:
    """The operands a comparison node compares: both sides of `a < b`, the receiver and the
    arguments of `a.gt(b)` / `torch.gt(a, b)`."""
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in COMPARISON_CALLS:
        receiver = node.func.value
        operands = list(node.args)
        if not (isinstance(receiver, ast.Name) and receiver.id == "torch"):
            operands.append(receiver)
        return operands
    return []


def _own_expressions(statement: ast.stmt) -> list[ast.AST]:
    """The parts of a statement that are not nested statements: a simple statement whole, the
    header of a compound one (an if's test, a for's iterable, a with's items)."""
    if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For,
                                  ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)):
        return [statement]
    parts = []
    for field, value in ast.iter_fields(statement):
        if field in ("body", "orelse", "finalbody", "handlers", "decorator_list", "args", "returns"):
            continue
        parts += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, ast.AST)]
    return parts


def _comparison_reads(module: torch.nn.Module, name: str) -> list[tuple[str, ast.stmt]]:
    """(file, statement) of each comparison that reads `self.<name>` in the class's methods, when
    every read of it there is a comparison's operand; [] otherwise."""
    filename, methods = _class_methods(module)
    reads, other = [], 0
    for method in methods:
        for statement in (n for n in ast.walk(method) if isinstance(n, ast.stmt)):
            own = _own_expressions(statement)
            compared = {id(operand) for part in own for node in ast.walk(part) for operand in _compared_operands(node)}
            for node in (n for part in own for n in ast.walk(part)):
                if _is_self_attribute(node, name) and isinstance(node.ctx, ast.Load):
                    if id(node) in compared:
                        reads.append((filename, statement))
                    else:
                        other += 1
    return reads if reads and not other else []


def _diagnosis(module: torch.nn.Module, name: str, reads: list, step_stack) -> Diagnosis | None:
    class_name = type(module).__name__
    filename, statement = reads[0]
    primary = statement_location(filename, statement, role="comparison",
                                 note=f"self.{name} is only compared: the result has no graph")
    related = [statement_location(f, s, role="comparison", note="compared here too") for f, s in reads[1:]]
    step = location_of(step_stack[0] if step_stack else None, role="step", note=f"skips {name}: its .grad is None")
    if step is not None:
        related.append(step)
    notes = [f"{class_name}.{name} is a parameter the optimizer holds, and {class_name}'s code reads it only in "
             "comparisons: a comparison gives a boolean tensor with no graph, so backward() never reaches it; its "
             ".grad stayed None at two steps while the optimizer's other parameters got gradients, and it keeps its "
             "initial value"]
    helps = [Suggestion(f"if self.{name} is meant to be learned, make the step differentiable: a soft step such as "
                        f"`torch.sigmoid(alpha * (x - self.{name}))` with a sharpness alpha you choose, or a "
                        f"straight-through estimator; if it is a fixed setting, keep it out of the optimizer "
                        f"(a buffer, or requires_grad=False)")]
    return Diagnosis(code=codes.COMPARED_ONLY_PARAMETER, title=codes.title(codes.COMPARED_ONLY_PARAMETER),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)
