"""AD158 and AD175: a loss weights values by weights computed from those same values, and the
weights are not detached.

AD158: an average of values weighted by a softmax of those same values
(`w = F.softmax(log_w, -1)`, `loss = -(w * log_w).sum(-1).mean()`).

The importance-weighted estimators (IWAE, self-normalised importance sampling) hold the
normalised weights constant: their gradient is `sum_k w_k * grad(log_w_k)`. Without the
`.detach()`, autograd also differentiates the weights and adds `sum_k grad(w_k) * log_w_k`, so
every gradient is off; nothing raises, the loss value is the same.

Looked at once per backward() line, on its graph (its links stay after backward()): from the
loss, through reductions, signs, scalings and additions only, a multiplication whose one factor
is a softmax of the other factor's very node. A softmax-weighted product inside the network (an
attention pooling whose result feeds more layers) is not reached that way and is not reported.
The line to change is read from the source of the files around backward(): the one assignment
`w = <softmax of x>` whose name is multiplied by `x` in the same function; the help detaches it.

AD175: a target's log-probability weighted by its own probability, the exp of that very tensor
(`p = logp.exp()`, `loss = -(p * logp)`, Dynamic Fine-Tuning's stop-gradient weight). The term
-p*log(p) of one class's probability is largest at p = 1/e: differentiated through the weight, its
gradient is the intended one times 1 + log(p), which lowers the target's probability wherever
p < 1/e. Looked at on the graph before backward() frees it (the target's index is a saved tensor):
from the loss, through the same reducing nodes, a multiplication whose one factor is an `exp` of
the other factor's very node, that node being one class per row (`gather` with one index along its
dimension, or indexing with a tensor for every dimension) of a `log_softmax`. An entropy (the whole
distribution) and a focal loss (`(1 - p) ** gamma`, not an exp of the value itself) are not that.
The line to change is the one assignment `p = <exp of logp>` whose name is multiplied by `logp`
in a function of the files around backward(); the help detaches it.
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.source_scope import backward_roots, user_files_around
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (location_of, method_receiver, parse_file, replace_node_text, segment,
                                              statement_location)

# Nodes the loss may pass through, from its root, down to the weighted product: reductions,
# signs, views, and sums or scalings of terms.
REDUCING = {"MeanBackward", "SumBackward", "NegBackward", "AddBackward", "SubBackward", "MulBackward",
            "DivBackward", "SqueezeBackward", "UnsqueezeBackward", "ViewBackward", "UnsafeViewBackward",
            "ReshapeAliasBackward", "CloneBackward"}
SOFTMAX = {"SoftmaxBackward"}
MAX_NODES = 256


def _kind(node) -> str:
    return re.sub(r"\d+$", "", type(node).__name__)


def _self_weighted_product(roots: list):
    """The MulBackward0 node, reached from the roots through REDUCING nodes, whose factors are a
    softmax node and that softmax's own input node; None when there is none. An entropy written
    `logsumexp(x) - (softmax(x) * x).sum()` has that product too, next to a log-sum-exp of the
    same values: its gradient is the entropy's, meant in full, and it is not reported."""
    seen, queue, found = set(), list(roots), []
    logsumexp_inputs: set[int] = set()
    while queue and len(seen) < MAX_NODES:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        kind = _kind(node)
        if kind == "LogsumexpBackward" and node.next_functions:
            logsumexp_inputs.add(id(node.next_functions[0][0]))
        if kind not in REDUCING:
            continue
        children = [child for child, _ in node.next_functions]
        if kind == "MulBackward" and len(children) == 2 and all(child is not None for child in children):
            for weight, values in (children, children[::-1]):
                if _kind(weight) in SOFTMAX and weight.next_functions and weight.next_functions[0][0] is values:
                    found.append((node, values))
        queue.extend(children)
    return next((node for node, values in found if id(values) not in logsumexp_inputs), None)


def self_weight_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD158 for the backward() call that just ran, or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    if not roots or _self_weighted_product(roots) is None:
        return None
    sites = list({(filename, statement.lineno): (filename, statement, softmax) for filename in user_files_around(call)
                  for filename, statement, softmax in _weight_assignments(filename)}.values())
    return _diagnosis(sites[0] if len(sites) == 1 else None, call.site if call is not None else None)


# Nodes between a target's log-probability and its `gather`/index, and between that and the
# log_softmax: shape changes and copies only.
RESHAPING = {"SqueezeBackward", "UnsqueezeBackward", "ViewBackward", "UnsafeViewBackward", "ReshapeAliasBackward",
             "CloneBackward", "ToCopyBackward", "SliceBackward", "SelectBackward"}
EXP = {"ExpBackward"}
LOG_SOFTMAX = {"LogSoftmaxBackward"}


def _through_reshaping(node):
    while node is not None and _kind(node) in RESHAPING and node.next_functions:
        node = node.next_functions[0][0]
    return node


def _one_class_per_row(node) -> bool:
    """Whether `node` (below its reshapes) picks one entry per row of a log_softmax: a gather with
    one index along its dimension, or indexing with a tensor for every dimension (its saved
    index tensors are read: called before backward() frees them)."""
    picked = _through_reshaping(node)
    if picked is None or not picked.next_functions:
        return False
    kind = _kind(picked)
    try:
        if kind == "GatherBackward":
            dim, index = picked._saved_dim, picked._saved_index
            dim = dim - 2 ** 64 if dim >= 2 ** 63 else dim
            if not index.dim() or index.shape[dim] != 1:
                return False
        elif kind == "IndexBackward":
            indices = picked._saved_indices
            if len(indices) < 2 or any(index is None for index in indices):
                return False
        else:
            return False
    except (RuntimeError, IndexError, AttributeError):  # freed, or another layout: unknown, silent
        return False
    return _kind(_through_reshaping(picked.next_functions[0][0])) in LOG_SOFTMAX


def _target_probability_product(roots: list):
    """The MulBackward0 node, reached from the roots through REDUCING nodes, whose factors are an
    exp node and that exp's own input node, a target's log-probability; None when there is none."""
    seen, queue = set(), list(roots)
    while queue and len(seen) < MAX_NODES:
        node = queue.pop(0)
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        kind = _kind(node)
        if kind not in REDUCING:
            continue
        children = [child for child, _ in node.next_functions]
        if kind == "MulBackward" and len(children) == 2 and all(child is not None for child in children):
            for weight, values in (children, children[::-1]):
                if _kind(weight) in EXP and weight.next_functions and weight.next_functions[0][0] is values \
                        and _one_class_per_row(values):
                    return node
        queue.extend(children)
    return None


def target_weight_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD175 for the backward() call about to run (its graph not yet freed), or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    if not roots or _target_probability_product(roots) is None:
        return None
    sites = list({(filename, statement.lineno): (filename, statement, exp) for filename in user_files_around(call)
                  for filename, statement, exp in _weight_assignments(filename, _exp_of)}.values())
    return _target_weight_diagnosis(sites[0] if len(sites) == 1 else None, call.site if call is not None else None)


def _exp_of(value: ast.AST) -> ast.AST | None:
    """`x` of `torch.exp(x)`, `x.exp()`."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute) or value.func.attr != "exp":
        return None
    owner = value.func.value
    if isinstance(owner, ast.Name) and owner.id == "torch":
        return value.args[0] if len(value.args) == 1 and not value.keywords else None
    return owner if not value.args and not value.keywords else None


def _target_weight_diagnosis(found, backward_site) -> Diagnosis | None:
    note = ("the weight is the target's own probability p = exp(log p), and -p * log(p) is largest at p = 1/e: "
            "differentiated through the weight, each example's gradient is the intended one times 1 + log(p), "
            "which lowers the target's probability wherever p < 1/e (held constant, the gradient is p times "
            "cross-entropy's)")
    backward = location_of(backward_site, role="backward", note="backpropagates the weighted log-probabilities")
    return _weight_diagnosis(
        codes.TARGET_PROBABILITY_WEIGHT, note, found, backward, role="weight",
        keeps="keeps the graph of the log-probability it weights",
        detached=lambda weight, value: (f"detach the weight (`{weight} = {value}.detach()`): the loss keeps its value "
                                        "and its gradient raises every target's probability"),
        advice="detach the probability that weights the log-probability (`p = logp.exp().detach()`)")


def _weight_diagnosis(code: str, note: str, found, backward, role: str, keeps: str, detached, advice: str
                      ) -> Diagnosis | None:
    """The diagnosis of a weight assigned from a call that keeps its graph (`found`: file, the
    assignment, the call): the assignment named, the help detaching the call's value there; without
    the assignment, backward() named and the help in words."""
    helps = []
    if found is not None:
        filename, statement, call = found
        weight = statement.targets[0].id
        primary = statement_location(filename, statement, role=role, note=f"{weight} {keeps}")
        text = segment(filename, call)
        value = method_receiver(call, text) if text is not None else None
        replacement = replace_node_text(filename, statement, call, f"{value}.detach()") if value is not None else None
        if replacement is not None:
            helps.append(Suggestion(detached(weight, value), replacement, statement_location(filename, statement)))
        related = [backward] if backward is not None else []
    else:
        primary, related = backward, []
        if primary is None:
            return None
    if not helps:
        helps.append(Suggestion(advice))
    return Diagnosis(code=code, title=codes.title(code), severity="warning", primary=primary, related=related,
                     notes=[note], help=helps)


def _softmax_of(value: ast.AST) -> ast.AST | None:
    """`x` of `F.softmax(x, ...)`, `torch.softmax(x, ...)`, `x.softmax(...)`, `torch.nn.functional.softmax(x)`."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute) or value.func.attr != "softmax":
        return None
    owner = value.func.value
    if isinstance(owner, ast.Name) and owner.id in ("F", "torch", "functional") or \
            isinstance(owner, ast.Attribute) and owner.attr == "functional":
        return value.args[0] if value.args else None
    return owner


def _weight_assignments(filename: str, weight_of=None) -> list[tuple[str, ast.Assign, ast.Call]]:
    """(file, `w = softmax(x)` statement, the softmax call) where the function around it also
    multiplies the name `w` by the name `x` (`weight_of` reads `x` from the call: a softmax's
    input by default, an exp's for AD175)."""
    weight_of = weight_of or _softmax_of
    tree = parse_file(filename)
    found = []
    for function in ast.walk(tree) if tree is not None else ():
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        body = [node for statement in function.body for node in ast.walk(statement)]
        for statement in (node for node in body if isinstance(node, ast.Assign)):
            source = weight_of(statement.value)
            if len(statement.targets) != 1 or not isinstance(statement.targets[0], ast.Name) \
                    or not isinstance(source, ast.Name):
                continue
            weight, values = statement.targets[0].id, source.id
            if any(isinstance(product, ast.BinOp) and isinstance(product.op, ast.Mult)
                   and {_name(product.left), _name(product.right)} == {weight, values}
                   for product in body):
                found.append((filename, statement, statement.value))
    return found


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _diagnosis(found, backward_site) -> Diagnosis | None:
    note = ("the weights are a softmax of the values they average: an importance-weighted estimate holds them "
            "constant (its gradient is the sum of w_k * grad(log_w_k)); kept in the graph, backward() also "
            "differentiates the weights and adds the sum of grad(w_k) * log_w_k, so every gradient below is off")
    backward = location_of(backward_site, role="backward", note="backpropagates the weighted average")
    return _weight_diagnosis(
        codes.SELF_WEIGHTED_AVERAGE, note, found, backward, role="weights",
        keeps="keeps the graph of the values it weights",
        detached=lambda weight, value: (f"detach the weights (`{weight} = {value}.detach()`): the loss keeps its "
                                        "value and its gradient becomes the importance-weighted estimator's"),
        advice=("detach the softmax weights of the average (`w = F.softmax(log_w, -1).detach()`), or write the "
                "bound as torch.logsumexp(log_w, -1), whose gradient is the detached one"))
