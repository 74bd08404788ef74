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

A loss used as a target is another form: a head that predicts the loss of each sample or pixel
(a loss-prediction module, a learned uncertainty) is regressed onto the per-element loss of the
same forward pass (`mse(uncer, F.cross_entropy(logits, y, reduction="none"))`). The target's
graph starts at a loss function's node; without `.detach()`, the auxiliary loss also moves the
task's own predictions towards whatever loss the head predicts (ENSTA-U2IS-AI/LDU#10). The two
sides share the network's trunk, and one optimizer holds both.

A bootstrapped target is the third form: Q-learning's or TD's `r + gamma * Q(s')` compared with
`Q(s)`, both from the network being trained (no target network, no detach). Both sides depend on
the same parameters; what tells it from a consistency term is the target's own graph: a sum of a
value without a graph (the reward) and a product with one (the discounted next value), under at
most a few reshapes. Without the stop-gradient, backward() also moves Q(s') towards Q(s): a
residual gradient, not the update the algorithm means.
"""

from __future__ import annotations

import ast
import re

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
            found_target = _target_of(first, second, reading)
            if found_target is not None:
                pairs.append((statement, *found_target))
    if not pairs:
        return None
    statement, _, form = pairs[0]
    targets = [target for holder, target, _ in pairs if holder is statement]
    return _diagnosis(site, reading.filename, statement, targets, form)


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


def _target_of(first: ast.AST | None, second: ast.AST | None, reading) -> tuple[ast.AST, str] | None:
    """Of two compared names holding tensors with a graph, (the target, its form: "loss",
    "bootstrapped" or "predicted"): the one that is a loss function's value while the other is
    not, on a shared network; or, on the same parameters, the one that is `r + gamma * Q(s')`; or
    the one whose learned parameters are a strict part of the other's; when one optimizer holds
    both sides. Else None."""
    names = [_reshaped_name(first), _reshaped_name(second)]
    if None in names:
        return None
    values = [read_value(name, reading) for name in names]
    if not all(isinstance(value, torch.Tensor) and value.grad_fn is not None for value in values):
        return None
    walks = [leaves_below([value.grad_fn]) for value in values]
    if not all(finished for _, finished in walks):
        return None
    first_leaves, second_leaves = walks[0][0], walks[1][0]
    losses = [node for node, value in zip((first, second), values) if _is_loss_value(value)]
    if len(losses) == 1 and first_leaves & second_leaves \
            and held_together(first_leaves, second_leaves, Budget(scans=1)):
        return losses[0], "loss"
    if first_leaves and first_leaves == second_leaves:
        bootstrapped = [node for node, value in zip((first, second), values) if _bootstrapped(value)]
        if len(bootstrapped) == 1 and held_together(first_leaves, first_leaves, Budget(scans=1)):
            return bootstrapped[0], "bootstrapped"
        return None
    if second_leaves and second_leaves < first_leaves:
        predicted, targeted, node = first_leaves, second_leaves, second
    elif first_leaves and first_leaves < second_leaves:
        predicted, targeted, node = second_leaves, first_leaves, first
    else:
        return None
    # One optimizer must hold a parameter only the prediction depends on (the predictor) and one
    # the target depends on (the network under both).
    return (node, "predicted") if held_together(predicted - targeted, targeted, Budget(scans=1)) else None


_RESHAPE_METHODS = {"unsqueeze", "squeeze", "view", "reshape", "flatten", "view_as", "reshape_as"}


def _reshaped_name(node: ast.AST | None) -> ast.Name | None:
    """The name compared, also under reshapes (`chosen.unsqueeze(1)`): its graph's parameters are
    the compared value's."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RESHAPE_METHODS:
        node = node.func.value
    return node if isinstance(node, ast.Name) else None


# Nodes that only reshape or pick: a target written `(r + gamma * q_next).unsqueeze(1)`.
_RESHAPES = {"UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "ViewBackward0",
             "ReshapeAliasBackward0", "ExpandBackward0", "TBackward0", "PermuteBackward0", "CloneBackward0"}


# A loss function's own node (the first node of its value's graph): `NllLossBackward0`,
# `NllLoss2DBackward0`, `MseLossBackward0`, `BinaryCrossEntropyWithLogitsBackward0`, ...
_LOSS_NODE = re.compile(r"(Loss\w*|CrossEntropy\w*|KlDiv)Backward\d*$")


def _is_loss_value(value: torch.Tensor) -> bool:
    """Whether the value is a loss function's output (under a few reshapes)."""
    node = value.grad_fn
    for _ in range(4):
        if node is None or type(node).__name__ not in _RESHAPES:
            break
        node = node.next_functions[0][0] if node.next_functions else None
    return node is not None and _LOSS_NODE.search(type(node).__name__) is not None


def _bootstrapped(value: torch.Tensor) -> bool:
    """`r + gamma * q_next` (under a few reshapes): a sum whose one side carries no graph (the
    reward) and whose other is a product carrying one (the discounted next value)."""
    node = value.grad_fn
    for _ in range(4):
        if node is None or type(node).__name__ not in _RESHAPES:
            break
        node = node.next_functions[0][0] if node.next_functions else None
    if node is None or type(node).__name__ != "AddBackward0":
        return False
    inputs = [next_node for next_node, _ in node.next_functions]
    with_graph = [next_node for next_node in inputs if next_node is not None]
    return len(inputs) == 2 and len(with_graph) == 1 and type(with_graph[0]).__name__ in {"MulBackward0", "MulBackward1"}


def _compared_note(names: list[str], form: str) -> str:
    what = {"bootstrapped": "a bootstrapped target (reward + discount x the network's next value)",
            "loss": "a loss of the same forward pass"}.get(form)
    if len(names) == 1:
        if what:
            return f"{names[0]} is {what}, compared with the same network's prediction, and is not detached"
        return f"{names[0]} is compared with a prediction computed from the same network, and is not detached"
    return (f"{', '.join(names[:-1])} and {names[-1]} are compared with predictions computed from the same "
            "network, and are not detached")


def _diagnosis(site: Site | None, filename: str, statement: ast.stmt | None, targets: list,
               form: str = "predicted") -> Diagnosis | None:
    names = [segment(filename, target) or "the target" for target in targets]
    note = ("the target is computed by the same network as the prediction, which adds a predictor on top: "
            "without a stop-gradient, backward() moves the target towards the prediction too, and the network "
            "can lower the loss by giving every input the same output (collapse)")
    if form == "bootstrapped":
        note = ("the target r + gamma * Q(s') is computed by the network being trained, with gradients on (no "
                "target network, no detach): backward() then also moves Q(s') towards Q(s), a residual gradient "
                "instead of the TD / Q-learning update, which holds the target fixed")
    elif form == "loss":
        note = ("the target is the value of a loss computed by the same network (a head that predicts its own "
                "loss): without a stop-gradient, backward() also moves the task's predictions so that their loss "
                "matches what the head predicts, instead of training the head to predict the loss")
    helps = []
    if statement is None and site is not None:  # the term is on the backward() line itself
        statement, filename = statement_at(site.filename, site.lineno), site.filename
    if statement is None:
        return None
    primary = statement_location(filename, statement, role="target",
                                 note=_compared_note(list(dict.fromkeys(names)), form))
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
