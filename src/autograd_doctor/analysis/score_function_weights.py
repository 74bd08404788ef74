"""AD226: a REINFORCE (score-function) term `(reward - baseline) * log_probs` whose weight is not
detached: the critic that computed the baseline gets the policy-gradient term's gradient too.

The score-function estimator is `weight * log_prob(action)` with the weight (return minus a
baseline, an advantage) held constant: only the log-probability is differentiated. When the
weight still carries the critic's graph, backward() also sends `log_prob * dloss` into the
critic, which then learns to make the product small instead of predicting the return. Nothing
is raised; training is unstable or slow.

Looked at once per backward() line, on its graph: a multiplication one of whose factors is a
categorical log-probability of the action taken (reached from the factor through sums, views,
gathers, stacks and subtractions only, a gather or an index among them: `Categorical.log_prob`,
`log_softmax(...)[range(n), actions]`; the whole distribution's log-probabilities times learned
soft targets are a cross-entropy) and whose other
factor carries gradient to a learned layer's weight (a parameter of two or more dimensions) that
the log-probability does not depend on, when one optimizer holds both (a critic with its own
optimizer, cleared before its own loss, is not harmed). An entropy term (`probs * log_probs`, both from the same
policy) or a scalar temperature (`alpha * log_probs`) is not reported. The help detaches the
names in the weight that carry that gradient, read from the loss's source.
"""

from __future__ import annotations

import ast
import re

import torch

from autograd_doctor.analysis.number_terms import loss_terms, read_value
from autograd_doctor.analysis.source_scope import backward_roots, graph_nodes, leaves_below
from autograd_doctor.analysis.stale_optimizer import Budget, held_together
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, method_receiver, replace_node_text, segment, statement_location

# Nodes a log-probability passes through on its way to the product (a sum over steps, a
# gather of the action taken, a stack of the steps' values, the normalisation's subtraction).
PASSING = {"SumBackward", "MeanBackward", "StackBackward", "CatBackward", "SqueezeBackward", "UnsqueezeBackward",
           "GatherBackward", "IndexBackward", "SelectBackward", "SliceBackward", "ViewBackward",
           "UnsafeViewBackward", "ReshapeAliasBackward", "ExpandBackward", "CloneBackward", "NegBackward",
           "SubBackward", "AddBackward", "TBackward", "PermuteBackward", "TransposeBackward", "MaskedFillBackward",
           "AliasBackward", "SplitBackward", "UnbindBackward", "IndexSelectBackward"}
NORMALISERS = {"LogSoftmaxBackward", "LogsumexpBackward"}
# The nodes that take the log-probability of the action taken out of the whole distribution
# (`Categorical.log_prob` gathers, `log_probs[range(n), actions]` indexes). A product of the whole
# distribution's log-probabilities with another distribution is a cross-entropy (learned soft
# targets, distillation), not a score-function term.
CHOOSING = {"GatherBackward", "IndexBackward", "SelectBackward", "IndexSelectBackward"}
MAX_LOG_STEPS = 64
MULTIPLY = {"MulBackward0"}


def _kind(node) -> str:
    return re.sub(r"\d+$", "", type(node).__name__)


def _is_log_probability(node, of_chosen_entries: bool = False) -> bool:
    """Whether `node` is a categorical log-probability; with `of_chosen_entries`, one taken at
    chosen entries (an action's), reached from the normaliser through a gather or an index."""
    seen, queue = set(), [(node, False)]
    while queue and len(seen) < MAX_LOG_STEPS:
        current, chosen = queue.pop()
        if current is None or (id(current), chosen) in seen:
            continue
        seen.add((id(current), chosen))
        kind = _kind(current)
        if kind in NORMALISERS:
            if chosen or not of_chosen_entries:
                return True
            continue
        if kind == "LogBackward":  # the log of a softmax's probabilities: `Categorical(probs=...)`
            found, chosen_below = _softmax_probability(current.next_functions[0][0])
            if found and (chosen or chosen_below or not of_chosen_entries):
                return True
            continue
        if kind in PASSING:
            chosen_below = chosen or kind in CHOOSING
            queue.extend((child, chosen_below) for child, _ in current.next_functions)
    return False


# What a distribution built from probabilities does to them before their log: `Categorical(probs=p)`
# divides by their sum and clamps them away from 0 and 1.
PROBABILITY_PASSING = {"ClampBackward", "DivBackward", "ExpandBackward", "ViewBackward", "UnsqueezeBackward",
                       "SqueezeBackward", "CloneBackward"}


def _softmax_probability(node) -> tuple[bool, bool]:
    """(whether `node` is a softmax's output, possibly normalised by its sum, clamped or indexed;
    whether a gather or an index of chosen entries is on the way: `torch.log(probs.gather(1, a))`)."""
    seen, queue = set(), [(node, False)]
    while queue and len(seen) < MAX_LOG_STEPS:
        current, chosen = queue.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        kind = _kind(current)
        if kind == "SoftmaxBackward":
            return True, chosen
        if kind in PROBABILITY_PASSING or kind in CHOOSING:
            # the numerator, the tensor clamped or indexed
            queue.append((current.next_functions[0][0], chosen or kind in CHOOSING))
    return False, False


def unbaselined_weight_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD226 for the backward() call that just ran, or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    if not roots:
        return None
    walked, _ = graph_nodes(roots)
    for node in walked:
        if type(node).__name__ not in MULTIPLY:
            continue
        factors = [child for child, _ in node.next_functions]
        if len(factors) != 2 or any(factor is None for factor in factors):
            continue
        for log_factor, weight in (factors, factors[::-1]):
            if not _is_log_probability(log_factor, of_chosen_entries=True) or _is_log_probability(weight):
                continue
            extra, policy = _critic_weights(weight, log_factor)
            # One optimizer holding the critic's weights and what the log-probability depends on
            # applies the critic's polluted gradient; a critic with its own optimizer, cleared
            # before its own loss (the actor's backward() first), is not harmed.
            if extra and held_together(extra, policy, Budget(scans=1)):
                return _diagnosis(call, weight, extra)
    return None


def _critic_weights(weight, log_factor) -> tuple[set[int], set[int]]:
    """(ids of the layer weights, two or more dimensions, requiring grad, that the weight factor
    reaches and the log-probability does not; ids of the leaves the log-probability reaches)."""
    weight_walk, finished = graph_nodes([weight])
    log_leaves, log_finished = leaves_below([log_factor])
    if not (finished and log_finished):
        return set(), log_leaves  # an unfinished walk is no evidence that the log-probability misses them
    return {id(node.variable) for node in weight_walk
            if getattr(node, "variable", None) is not None and id(node.variable) not in log_leaves
            and node.variable.requires_grad and node.variable.dim() >= 2}, log_leaves


def _weight_in_source(call, weight, critic: set) -> tuple[ast.stmt, str, list] | None:
    """(the statement, its file, the names to detach) of the product in the loss's source whose
    one factor holds tensors with gradient computed in `weight`'s graph, or reaching the critic's
    weights (`critic`, ids). The products are looked for in the loss's terms, then in what the
    function appended to a list the terms read (`policy_loss.append(-log_prob * advantage)`
    per sample, then `torch.stack(policy_loss).sum()`): the frame holds the last sample's names."""
    site = call.site if call is not None else None
    found = loss_terms(site)
    if found is None:
        return None
    terms, reading = found
    below = {id(node) for node in graph_nodes([weight])[0]}

    def carries(value) -> bool:
        if not isinstance(value, torch.Tensor) or value.grad_fn is None:
            return False
        return id(value.grad_fn) in below or bool(leaves_below([value.grad_fn])[0] & critic)

    for term, holder in [*terms, *_appended_terms(terms, reading, site.lineno)]:
        for product in (n for n in ast.walk(term) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)):
            for factor in (product.left, product.right):
                names = [n for n in ast.walk(factor) if isinstance(n, (ast.Name, ast.Attribute))
                         and isinstance(getattr(n, "ctx", None), ast.Load)]
                carrying = [n for n in names if carries(read_value(n, reading))]
                if carrying:
                    return holder, reading.filename, carrying
    return None


def _appended_terms(terms: list, reading, before: int) -> list:
    """(the appended value, the `NAME.append(value)` statement) for each list NAME a term reads,
    appended in the function around the backward() before its line."""
    lists = {node.id for term, _ in terms for node in ast.walk(term)
             if isinstance(node, ast.Name) and isinstance(reading.values.get(node.id), list)}
    if not lists or reading.scope is None:
        return []
    return [(statement.value.args[0], statement) for statement in ast.walk(reading.scope)
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr == "append"
            and isinstance(statement.value.func.value, ast.Name) and statement.value.func.value.id in lists
            and len(statement.value.args) == 1 and statement.lineno < before]


def _diagnosis(call, weight, critic: set) -> Diagnosis | None:
    site = call.site if call is not None else None
    note = ("the score-function (REINFORCE) estimator differentiates only the log-probability: its weight, "
            "a return minus a baseline, must be a constant. Here the weight carries the baseline's graph, so "
            "backward() also trains the critic with log_prob * the loss's gradient, pushing it away from "
            "predicting the return")
    found = _weight_in_source(call, weight, critic)
    helps = []
    if found is not None and found[0] is not None:
        statement, filename, carrying = found
        names = sorted({segment(filename, node) for node in carrying})
        primary = statement_location(filename, statement, role="weight",
                                     note=f"{', '.join(names)} carries the critic's graph into this product "
                                          "with a log-probability")
        replacement = None
        if len(carrying) == 1:
            node = carrying[0]
            replacement = replace_node_text(filename, statement, node, f"{method_receiver(node, segment(filename, node))}.detach()")
        if replacement is not None:
            helps.append(Suggestion(f"detach the baseline in the policy-gradient term: {names[0]}.detach() "
                                    "(the critic keeps its own loss)", replacement, statement_location(filename, statement)))
        related = [location_of(site, role="backward", note="backpropagates it")]
    else:
        primary, related = location_of(site, role="backward", note="backpropagates a policy-gradient term "
                                                                   "whose weight carries the critic's graph"), []
        if primary is None:
            return None
    if not helps:
        helps.append(Suggestion("detach the weight of the log-probability (`(returns - values.detach()) * "
                                "log_probs`): the critic is trained by its own loss"))
    return Diagnosis(code=codes.UNDETACHED_SCORE_FUNCTION_WEIGHT,
                     title=codes.title(codes.UNDETACHED_SCORE_FUNCTION_WEIGHT), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=[note], help=helps)
