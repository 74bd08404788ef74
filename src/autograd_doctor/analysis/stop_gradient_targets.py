"""AD227: a prediction compared with a target that the same network computed, without a
stop-gradient on the target (SimSiam's `D(p1, z2)` with `z2` not detached, a latent predictor's
`mse(predictor(z_t), z_next)`). The gradient then also moves the target towards the prediction:
both sides meet halfway, and the network can lower the loss by making every output the same
(representation collapse). Nothing is raised.

Looked at once per backward() line, with AD206's reading of the loss (analysis/number_terms.py):
a call of one of torch's distances or similarities (`F.cosine_similarity`, `F.mse_loss`, a loss
module such as `nn.MSELoss()`, or a function of the program that calls one on its first two
arguments), whose two compared arguments are names holding tensors with a graph, where the
learned parameters the target depends on are a strict part of the prediction's (the prediction
adds a predictor on top of the target's network), and one optimizer holds both. Two views of
the same network (SimCLR, a consistency term) depend on the same parameters and are not reported.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.number_terms import loss_terms, read_value
from autograd_doctor.analysis.source_scope import leaves_below
from autograd_doctor.analysis.stale_optimizer import Budget, held_together
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, function_definition, location_of, replace_nodes_text, segment, statement_at,
    statement_location,
)
from autograd_doctor.recording.frames import Site, in_installed_package, is_internal_file

DISTANCES = {"cosine_similarity", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "pairwise_distance"}
DISTANCE_MODULES = (torch.nn.CosineSimilarity, torch.nn.MSELoss, torch.nn.L1Loss, torch.nn.SmoothL1Loss,
                    torch.nn.HuberLoss, torch.nn.PairwiseDistance)


def stop_gradient_diagnosis(site: Site | None) -> Diagnosis | None:
    """AD227 for the loss backpropagated at `site`, or None."""
    found = loss_terms(site)
    if found is None:
        return None
    terms, reading = found
    pairs = []  # (statement, target argument node, its name)
    for term, holder in terms:
        statement = holder
        for call in (node for node in ast.walk(term) if isinstance(node, ast.Call)):
            if not _compares(call.func, reading):
                continue
            first, second = call_argument(call, 0, "input"), call_argument(call, 1, "target")
            target = _target_of(first, second, reading)
            if target is not None:
                pairs.append((statement, target))
    if not pairs:
        return None
    statement = pairs[0][0]
    targets = [target for holder, target in pairs if holder is statement]
    return _diagnosis(site, reading.filename, statement, targets)


def _compares(function: ast.AST, reading) -> bool:
    """A distance or similarity of torch, a loss module of one, or a function of the program
    whose body calls one."""
    if not isinstance(function, (ast.Name, ast.Attribute)):
        return False
    value = read_value(function, reading)
    if isinstance(value, DISTANCE_MODULES):
        return True
    name = function.attr if isinstance(function, ast.Attribute) else function.id
    if name in DISTANCES and (getattr(value, "__module__", None) or "").split(".")[0] == "torch":
        return True
    code = getattr(value, "__code__", None)
    if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
        return False
    definition = function_definition(code)
    if definition is None or len(definition.body) > 3:
        return False  # a short wrapper only: a longer function may compare something else
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in DISTANCES
               for node in ast.walk(definition))


def _target_of(first: ast.AST | None, second: ast.AST | None, reading) -> ast.AST | None:
    """Of two compared names holding tensors with a graph, the one whose learned parameters are
    a strict part of the other's, when one optimizer holds both sides; else None."""
    if not isinstance(first, ast.Name) or not isinstance(second, ast.Name):
        return None
    values = [read_value(first, reading), read_value(second, reading)]
    if not all(isinstance(value, torch.Tensor) and value.grad_fn is not None for value in values):
        return None
    walks = [leaves_below([value.grad_fn]) for value in values]
    if not all(finished for _, finished in walks):
        return None
    first_leaves, second_leaves = walks[0][0], walks[1][0]
    if second_leaves and second_leaves < first_leaves:
        predicted, targeted, node = first_leaves, second_leaves, second
    elif first_leaves and first_leaves < second_leaves:
        predicted, targeted, node = second_leaves, first_leaves, first
    else:
        return None
    # One optimizer must hold a parameter only the prediction depends on (the predictor) and one
    # the target depends on (the network under both).
    return node if held_together(predicted - targeted, targeted, Budget(scans=1)) else None


def _compared_note(names: list[str]) -> str:
    if len(names) == 1:
        return f"{names[0]} is compared with a prediction computed from the same network, and is not detached"
    return (f"{', '.join(names[:-1])} and {names[-1]} are compared with predictions computed from the same "
            "network, and are not detached")


def _diagnosis(site: Site | None, filename: str, statement: ast.stmt | None, targets: list) -> Diagnosis | None:
    names = [target.id for target in targets]
    note = ("the target is computed by the same network as the prediction, which adds a predictor on top: "
            "without a stop-gradient, backward() moves the target towards the prediction too, and the network "
            "can lower the loss by giving every input the same output (collapse)")
    helps = []
    if statement is None and site is not None:  # the term is on the backward() line itself
        statement, filename = statement_at(site.filename, site.lineno), site.filename
    if statement is None:
        return None
    primary = statement_location(filename, statement, role="target",
                                 note=_compared_note(list(dict.fromkeys(names))))
    replacement = replace_nodes_text(filename, statement, [(target, f"{segment(filename, target)}.detach()")
                                                           for target in targets])
    if replacement is not None:
        helps.append(Suggestion("stop the gradient on the target: " + ", ".join(f"{name}.detach()" for name in
                                                                                dict.fromkeys(names)),
                                replacement, statement_location(filename, statement)))
    related = [location_of(site, role="backward", note="backpropagates it")]
    return Diagnosis(code=codes.UNDETACHED_SIAMESE_TARGET, title=codes.title(codes.UNDETACHED_SIAMESE_TARGET),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=[note], help=helps)
