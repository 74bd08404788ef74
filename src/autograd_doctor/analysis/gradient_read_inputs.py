"""AD301 where nothing the loss is computed from requires grad, and the program reads the
gradient of a tensor it made with a factory (`logits = torch.rand(...)`, then `logits.grad` after
`loss.backward()`): the program means that tensor to require grad (polyloss-pytorch#4, held-out set
32). The line to change is the factory call; the help adds `requires_grad=True` to it. Only where
the source shows each link: exactly one such name, bound in the backward's scope by a single
assignment to a torch factory call without `requires_grad`, read by the loss's statements (traced
through the scope's assignments), its `.grad` read after the backward line, and at run time a leaf
tensor that does not require grad."""

from __future__ import annotations

import ast
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.errors.context import enclosing_function, walk_own_scope
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import segment, statement_location

# torch factories that take `requires_grad=`.
_FACTORIES = frozenset({"rand", "randn", "randint", "zeros", "ones", "empty", "full", "tensor", "arange",
                        "linspace", "logspace", "eye", "rand_like", "randn_like", "zeros_like", "ones_like",
                        "full_like", "empty_like", "normal"})


@dataclass
class GradientReadInput:
    name: str
    assignment: ast.Assign
    help: Suggestion
    grad_read_line: int


def _factory_call(value: ast.AST) -> ast.Call | None:
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _FACTORIES \
            and isinstance(value.func.value, ast.Name) and value.func.value.id == "torch" \
            and not any(keyword.arg == "requires_grad" for keyword in value.keywords):
        return value
    return None


def gradient_read_input(filename: str, tree: ast.Module | None, statement: ast.stmt, loss_names: set[str],
                        frame_locals: dict | None) -> GradientReadInput | None:
    if tree is None or frame_locals is None:
        return None
    nodes = list(walk_own_scope(enclosing_function(tree, statement.lineno)))
    assignments: dict[str, list[ast.Assign]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Store):
                        assignments.setdefault(name.id, []).append(node)
    # The names the loss is computed from, through the scope's assignments before the backward.
    reached, pending = set(), list(loss_names)
    while pending:
        current = pending.pop()
        if current in reached:
            continue
        reached.add(current)
        for node in assignments.get(current, []):
            if node.lineno < statement.lineno:
                pending.extend(n.id for n in ast.walk(node.value) if isinstance(n, ast.Name))
    for current in reached:
        value = frame_locals.get(current)
        if isinstance(value, torch.Tensor) and value.requires_grad or isinstance(value, torch.nn.Module) \
                and any(parameter.requires_grad for parameter in value.parameters()):
            return None  # something the loss reads requires grad: the cut is elsewhere
    read_after = {}
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.value, ast.Name) \
                and node.lineno > statement.lineno:
            read_after.setdefault(node.value.id, node.lineno)
    candidates = []
    for name, line in read_after.items():
        bound = assignments.get(name, [])
        if name not in reached or len(bound) != 1 or bound[0].lineno >= statement.lineno:
            continue
        assignment = bound[0]
        call = _factory_call(assignment.value)
        if call is None or len(assignment.targets) != 1 or not isinstance(assignment.targets[0], ast.Name):
            continue
        value = frame_locals.get(name)
        if not isinstance(value, torch.Tensor) or value.requires_grad or value.grad_fn is not None \
                or not value.is_floating_point():
            continue
        candidates.append((name, assignment, call, line))
    if len(candidates) != 1:
        return None
    name, assignment, call, line = candidates[0]
    text = segment(filename, assignment)
    call_text = segment(filename, call)
    if not text or not call_text or not call_text.endswith(")") or text.count(call_text) != 1:
        return None
    inner = call_text[:-1].rstrip()
    separator = "" if inner.endswith("(") else ", "
    replacement = text.replace(call_text, f"{inner}{separator}requires_grad=True)")
    help_ = Suggestion(f"make {name} require grad where it is made: the program reads {name}.grad after "
                       f"backward() (line {line}), and nothing the loss is computed from requires grad",
                       replacement, statement_location(filename, assignment))
    return GradientReadInput(name, assignment, help_, line)
