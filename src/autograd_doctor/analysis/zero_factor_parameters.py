"""AD161: two parameters of one module both start at zero and get exactly-zero gradients: the
factors of a product (a LoRA / DoRA adapter's `lora_A` and `lora_B`) that never train.

A low-rank adapter adds `x @ A^T @ B^T` (or `A @ B`) to a frozen weight. The gradient of each
factor is the other factor times the output's gradient, so the usual initialisation sets one
factor at random and the other to zero: the product starts at zero and both factors get
gradients. Created both with `torch.zeros`, both gradients are exactly zero at every step and
the adapter never moves (circle-hit/SAPT#11, catid/dora#1). Nothing is raised and no `.grad` is
None; the loss just stays where the frozen model puts it.

Looked at only at the first two step() calls of each optimizer: among the parameters it holds,
those that are all zero with a gradient that is all zero (not None), grouped by the module of
the user's model (bound around step()) that declares them; a module with two or more of them at
the first step, still all zero with zero gradients at the second, is reported. A single
zero-initialised factor (LoRA's B, a ControlNet's zero convolution) gets a gradient and is not.
The line named is where the module's class creates the first of them; the help is advice (which
factor to draw at random, and from which distribution, is the model's choice).
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


def _stuck(parameter: torch.Tensor) -> bool:
    """All zero, with a gradient that is all zero."""
    gradient = grad_of(parameter)
    if gradient is None or parameter.numel() == 0:
        return False
    with torch.no_grad():
        return not bool(parameter.detach().any()) and not bool(gradient.any())


class ZeroFactorParameters(CheckedAtSecondStep):
    """The check at the first two steps of each optimizer."""

    def candidates(self, optimizer, step_stack) -> list[tuple]:
        return _candidates(optimizer, step_stack)

    def judge(self, optimizer, step_stack, pending: list) -> Diagnosis | None:
        for module_ref, names, parameter_refs in pending:
            module, parameters = module_ref(), [ref() for ref in parameter_refs]
            if module is None or any(p is None or not _stuck(p) for p in parameters):
                continue
            return _diagnosis(module, names, step_stack)
        return None


def _candidates(optimizer, step_stack) -> list[tuple]:
    """(module, names of its stuck parameters, those parameters), weakly referenced, for each
    module that declares two or more parameters the optimizer holds that are stuck at zero."""
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    if not held:
        return []
    candidates = []
    for module in modules_around(step_stack, MAX_MODULES, submodules=True):
        trained = [(name, p) for name, p in module.named_parameters(recurse=False) if id(p) in held and p.requires_grad]
        if len(trained) < 2:
            continue  # a single zero factor trains (its gradient is the other's): no value read, no device sync
        stuck = [(name, p) for name, p in trained if _stuck(p)]
        if len(stuck) >= 2:
            candidates.append((weakref.ref(module), [name for name, _ in stuck],
                               [weakref.ref(p) for _, p in stuck]))
    return candidates


def _creations(module: torch.nn.Module, names: list[str]) -> list[tuple[str, ast.stmt]]:
    """(file, statement) where the module's class assigns `self.<name>`, for each name found."""
    filename, classes = user_class_definitions(module)
    found = []
    for name in names:
        for node in (n for c in classes for n in ast.walk(c)):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Attribute) and t.attr == name and isinstance(t.value, ast.Name)
                    and t.value.id == "self" for t in node.targets):
                found.append((filename, node))
                break
    return found


def _diagnosis(module: torch.nn.Module, names: list[str], step_stack) -> Diagnosis | None:
    spelled = ", ".join(names)
    note = (f"{type(module).__name__}'s {spelled} are all zero and their gradients are exactly zero: the gradient of "
            "each factor of a product is the other factor times the output's gradient, so factors that all start at "
            "zero stay at zero, and the update they make (their product) is zero at every step")
    step = location_of(step_stack[0] if step_stack else None, role="step", note="applies zero gradients to them")
    creations = _creations(module, names)
    if creations:
        filename, statement = creations[0]
        primary = statement_location(filename, statement, role="zero factor", note=f"{names[0]} starts at zero")
        related = [statement_location(f, s, role="zero factor", note="starts at zero too") for f, s in creations[1:]]
        related += [step] if step is not None else []
    else:
        primary, related = step, []
        if primary is None:
            return None
    helps = [Suggestion(f"start one factor from random values and keep the other at zero (LoRA draws the factor "
                        f"applied to the input first, e.g. `{names[0]}`, with a standard deviation of 1/sqrt(rank), "
                        "or kaiming-uniform, and sets the other to zero): the product still starts at zero, so the "
                        "pretrained model is unchanged, and both factors get gradients")]
    return Diagnosis(code=codes.ZERO_FACTOR_PARAMETERS, title=codes.title(codes.ZERO_FACTOR_PARAMETERS),
                     severity="warning", primary=primary, related=related, notes=[note], help=helps)
