"""AD219: a value that feeds a learned layer was made by an op whose derivative is zero: a
sample drawn with `torch.normal(mu, std)` / `torch.bernoulli(p)` / `torch.poisson(rate)`, or a
value rounded with `round` / `floor` / `ceil` / `trunc` / `sign`.

These ops accept tensors that require grad and give a result with a grad_fn, but their backward
sends zeros: `mu`, `std`, `p`, whatever computed them and every layer before get no gradient
through this path. Nothing fails; a VAE's encoder learns from the KL term alone, a quantised
network's earlier layers stop learning, an actor behind a critic gets no signal from it.

Looked at once per backward() line (the graph's links stay after backward()): a walk from the
loss notes, on each path, whether it went through a learned op (a node with a parameter or a
leaf among its inputs, directly or through one view of it). Reported:
- a sample that feeds a learned op and was drawn from something trained (an nn.Parameter, or a
  leaf that a live optimizer holds, lies below the draw): a sample given to a learned layer is
  meant to pass the gradient (when it is only given to its own distribution's `log_prob`, as in
  REINFORCE, no learned op lies between and it is silent); noisy collocation points drawn around
  points that require grad only to be differentiated against (neurodiffeq's generators) have
  nothing trained below the draw: the zeros it sends are nobody's loss, and it is silent;
- a rounding when some leaf below it gets no gradient by any other path from the loss (the
  fraction `coords - coords.floor()` of a bilinear interpolation, or a scale computed from
  `floor(log2(amax))` next to `x * scale`, leave the leaves their gradient).
The source is read for the call (the files of the frames around backward() and of the user's
module classes bound there); the help reparameterises `torch.normal`, and makes a rounding or a
Bernoulli draw straight-through (the forward values stay bitwise those of the original). A
rounding that no learned op reads (a rounded prediction compared with its target: only the loss's
own arithmetic lies above it) gets advice only: taking the loss on the unrounded value (what
DiffSinger's fix of its duration loss does) and passing the gradient straight through train
differently, and neither is provably what the loss means.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.source_scope import backward_roots, graph_nodes, leaves_below, user_files_around
from autograd_doctor.analysis.stale_optimizer import Budget, optimizers_holding
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, location_of, method_receiver, parse_file, replace_node_text, segment, statement_at,
    statement_location,
)

MAX_NODES = 20_000
# The backward nodes of ops with a zero derivative, by the op name a user writes.
SAMPLING_NODES = {"NormalBackward1": "normal", "NormalBackward2": "normal", "NormalBackward3": "normal",
                  "BernoulliBackward0": "bernoulli", "BernoulliBackward1": "bernoulli",
                  "PoissonBackward0": "poisson"}
ROUNDING_NODES = {"RoundBackward0": "round", "RoundBackward1": "round", "FloorBackward0": "floor",
                  "CeilBackward0": "ceil", "TruncBackward0": "trunc", "SignBackward0": "sign"}


def _is_leaf_input(node) -> bool:
    """Whether `node` is a leaf's AccumulateGrad, or a view-like node of one (one input only:
    a Linear's transposed weight)."""
    if getattr(node, "variable", None) is not None:
        return True
    inputs = [child for child, _ in node.next_functions if child is not None]
    return len(inputs) == 1 and getattr(inputs[0], "variable", None) is not None


def _learned(node) -> bool:
    """A node that takes a parameter (or another leaf that requires grad) as an input: a learned op."""
    return any(child is not None and _is_leaf_input(child) for child, _ in node.next_functions)


def zero_derivative_nodes(roots: list, roundings_under_learned: set | None = None) -> list:
    """The zero-derivative nodes of the graph below `roots` that matter: a sample that feeds a
    learned op on some path from the loss; a rounding below which some leaf gets no gradient by
    any other path. `roundings_under_learned`, when given, receives the roundings that feed a
    learned op on some path (a quantised activation), as opposed to roundings that only the
    loss's own arithmetic reads (a rounded prediction compared with a target)."""
    samples, roundings = [], []
    seen: set = set()
    stack = [(node, False) for node in roots]
    while stack and len(seen) < MAX_NODES:
        node, after_learned = stack.pop()
        if (node, after_learned) in seen:
            continue
        seen.add((node, after_learned))
        kind = type(node).__name__
        if kind in SAMPLING_NODES:
            if after_learned and node not in samples:
                samples.append(node)
            continue  # nothing below gets a gradient through it
        if kind in ROUNDING_NODES:
            if node not in roundings:
                roundings.append(node)
            if after_learned and roundings_under_learned is not None:
                roundings_under_learned.add(node)
            continue
        below_learned = after_learned or _learned(node)
        stack.extend((child, below_learned) for child, _ in node.next_functions if child is not None)
    if stack:
        return []  # the graph is larger than the walk: unknown
    samples = [node for node in samples if _drawn_from_trained(node)]
    if not roundings:
        return samples
    zero = {node for node, _ in seen if type(node).__name__ in SAMPLING_NODES or type(node).__name__ in ROUNDING_NODES}
    trained, finished = leaves_below(roots, MAX_NODES, avoid=zero)
    if not finished:
        return samples
    blocking = []
    for node in roundings:
        below, finished = leaves_below([child for child, _ in node.next_functions if child is not None], MAX_NODES)
        if finished and below - trained:
            blocking.append(node)  # a leaf below gets its gradient through this rounding only
    return samples + blocking


def _drawn_from_trained(sample) -> bool:
    """Whether something trained lies below the draw `sample`: an nn.Parameter, or a leaf that a
    live optimizer holds. Unknown (the graph below is larger than the walk, the scan spent) is no."""
    walked, finished = graph_nodes([child for child, _ in sample.next_functions if child is not None], MAX_NODES)
    leaves = [node.variable for node in walked if getattr(node, "variable", None) is not None]
    if any(isinstance(leaf, torch.nn.Parameter) for leaf in leaves):
        return True
    return finished and bool(leaves) and bool(optimizers_holding(leaves, Budget(scans=1)))


def zero_gradient_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD219 for the backward() call that just ran, or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    if not roots:
        return None
    roundings_under_learned: set = set()
    nodes = zero_derivative_nodes(roots, roundings_under_learned)
    if not nodes:
        return None
    node = nodes[0]
    kind = type(node).__name__
    op = SAMPLING_NODES.get(kind) or ROUNDING_NODES[kind]
    # A rounding that no learned op reads is part of the loss itself (a rounded prediction
    # compared with its target): passing the gradient straight through and taking the loss on
    # the unrounded value are both fixes users apply, and they train differently; neither is
    # provably what the loss means, so only advice is offered.
    in_loss_only = kind in ROUNDING_NODES and node not in roundings_under_learned
    sites = [found for filename in user_files_around(call) for found in _calls_of(filename, op)]
    site = call.site if call is not None else None
    if len(sites) != 1:
        return _diagnosis(op, kind, None, site)
    return _diagnosis(op, kind, sites[0], site, in_loss_only)


def _calls_of(filename: str, op: str) -> list[tuple[str, ast.stmt, ast.Call]]:
    """(file, statement, call) of each `torch.<op>(tensor...)` or `<tensor>.<op>()` in the file."""
    tree = parse_file(filename)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op):
            continue
        is_torch = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
        if is_torch and not (node.args or node.keywords):
            continue
        if not is_torch and op == "normal":
            continue  # `dist.normal(...)`, `init.normal_`: not torch.normal
        if not is_torch and (node.args or (isinstance(node.func.value, ast.Name)
                                           and node.func.value.id in ("np", "numpy", "math", "F"))):
            continue  # a tensor method takes no positional argument here: `np.round(x)` is NumPy's
        statement = statement_at(filename, node.lineno)
        if statement is not None:
            found.append((filename, statement, node))
    return found


def _replacement_call(filename: str, op: str, kind: str, call: ast.Call) -> str | None:
    """The expression that computes the same values with a gradient, or None."""
    is_torch = isinstance(call.func.value, ast.Name) and call.func.value.id == "torch"
    if op == "normal":
        mean, std = call_argument(call, 0, "mean"), call_argument(call, 1, "std")
        extra = [k.arg for k in call.keywords if k.arg not in ("mean", "std")]
        if mean is None or std is None or extra or len(call.args) > 2:
            return None  # a size=, a generator=: the draw would differ
        mean_text, std_text = segment(filename, mean), segment(filename, std)
        if mean_text is None or std_text is None:
            return None
        # torch.normal(mean, std) draws N(0, 1) in mean's shape, then scales and shifts: the
        # same draw, so the same values.
        noise_of = std_text if kind == "NormalBackward2" else mean_text
        return f"{_term(mean, mean_text)} + {_term(std, std_text)} * torch.randn_like({noise_of})"
    if op in ("bernoulli", *ROUNDING_NODES.values()):
        source = call_argument(call, 0, "input") if is_torch else call.func.value
        if source is None or (is_torch and len(call.args) + len(call.keywords) > 1 and op != "round"):
            return None
        if op == "round" and (len(call.args) + len(call.keywords) > (1 if is_torch else 0)):
            return None  # decimals=
        source_text, call_text = segment(filename, source), segment(filename, call)
        if source_text is None or call_text is None:
            return None
        operand = method_receiver(source, source_text)
        # Straight-through: the forward value is the op's (adding an exact zero), the backward
        # passes the gradient through as if the op were the identity.
        return f"{call_text}.detach() + ({operand} - {operand}.detach())"
    return None


def _term(node: ast.AST, text: str) -> str:
    """`text` ready to be an operand of `+` and `*`: parenthesised unless it is a name, attribute,
    call, subscript or constant."""
    return method_receiver(node, text) if not isinstance(node, ast.Constant) else text


def _diagnosis(op: str, kind: str, found, backward_site, in_loss_only: bool = False) -> Diagnosis | None:
    sampling = kind in SAMPLING_NODES
    what = f"torch.{op}" if sampling or op != "round" else "round"
    if sampling:
        note = (f"{what} draws a sample: its backward sends zeros, so the tensors it was given, and everything "
                "that computed them, get no gradient through the layers that use the sample")
    else:
        note = (f"{op}() is flat almost everywhere: its backward sends zeros, so what computed its input gets no "
                "gradient through it")
    backward = location_of(backward_site, role="backward",
                           note="backpropagates through it; the gradient stops there")
    helps = []
    if found is not None:
        filename, statement, call = found
        primary = statement_location(filename, statement, role="zero gradient", note=note)
        new = _replacement_call(filename, op, kind, call) if not in_loss_only else None
        if new is not None and getattr(statement, "value", None) is not call:
            new = f"({new})"  # inside a larger expression: `(a + b * eps) / 8`, not `a + b * eps / 8`
        replacement = replace_node_text(filename, statement, call, new) if new is not None else None
        if replacement is not None and op == "normal":
            helps.append(Suggestion("draw the noise apart and scale it (the reparameterisation trick): the same "
                                    "sample, with gradients for the mean and the standard deviation",
                                    replacement, statement_location(filename, statement)))
        elif replacement is not None:
            helps.append(Suggestion(f"keep the {'sample' if sampling else 'rounded value'} in the forward pass "
                                    "and pass the gradient straight through (a straight-through estimator)",
                                    replacement, statement_location(filename, statement)))
        related = [backward] if backward is not None else []
    else:
        primary, related = backward, []
        if primary is None:
            return None
        primary.note = f"backpropagates through {what}(), whose backward sends zeros"
    alternative = {
        "normal": "draw with torch.distributions.Normal(mu, std).rsample(), which has a gradient",
        "bernoulli": "use torch.distributions.RelaxedBernoulli(temperature, probs=p).rsample(), or a "
                     "score-function estimator (log_prob times the reward)",
        "poisson": "a Poisson sample has no reparameterisation: train what computed its rate with a "
                   "score-function estimator (log_prob times the reward)",
    }.get(op, "keep the rounded value and pass the gradient straight through: "
              "r = x.round().detach() + (x - x.detach())" if op == "round" else
              f"keep the value and pass the gradient straight through: r = x.{op}().detach() + (x - x.detach())")
    if in_loss_only:
        alternative = (f"only the loss reads the {op}() result: take the loss on the value before {op}() "
                       f"(round only where a whole number is needed), or, if the loss must see the rounded "
                       f"value, pass the gradient straight through: r = x.{op}().detach() + (x - x.detach())")
    if sampling or not helps:  # a rounding's alternative is the straight-through help itself
        helps.append(Suggestion(f"or {alternative}" if helps else alternative))
    notes = [note] if found is None else []
    return Diagnosis(code=codes.ZERO_DERIVATIVE_OP, title=codes.title(codes.ZERO_DERIVATIVE_OP),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)

