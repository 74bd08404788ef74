"""AD156: `kl_div` / `KLDivLoss` or `nll_loss` / `NLLLoss` given probabilities, a softmax's output,
where they read log-probabilities.

`F.kl_div(input, target)` computes `target * (log(target) - input)`: it expects `input` as
log-probabilities. Given probabilities, its gradient with respect to them is `-target`, which
raises every class's probability in proportion to the target instead of moving the distribution
towards it (ProDA's self-distillation, microsoft/ProDA#20). `nll_loss` of probabilities is
`-p[target]`, a bounded score whose gradient vanishes where the model is most wrong. The program
runs and the loss goes down; nothing is raised.

Looked at once per backward() line (the graph's links stay after backward()): the graph
backpropagated holds a softmax (a `SoftmaxBackward0` node) read, through view-like nodes only, by
the node these losses make of their input (`NllLossBackward0`; kl_div's `MulBackward0` by the
target: attention's softmax, read by a matrix product, is not looked at) and the source around backward() calls
one of these losses with, as its input, a `softmax(...)` call or a name assigned one in the same
function just before. The help makes that softmax a `log_softmax` (same arguments) where the name is
read only by the loss; otherwise it takes the log at the loss's call.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.log_probability_inputs import VIEW_NODES  # nodes that only move or copy values
from autograd_doctor.analysis.loss_calls import loss_calls
from autograd_doctor.analysis.source_scope import (
    backward_roots, frame_values, graph_nodes, live_frame, user_files_around,
)
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, parse_file, replace_node_text, segment, statement_at, statement_location,
)

# The losses that read their input as log-probabilities, by function name, and their modules.
LOG_PROBABILITY_LOSSES = {"kl_div": torch.nn.KLDivLoss, "nll_loss": torch.nn.NLLLoss}


# The nodes the losses make of their input: nll_loss's own, and kl_div's product with the target.
SOFTMAX_READERS = frozenset({"NllLossBackward0", "NllLoss2DBackward0", "MulBackward0"})


def _reads_a_softmax(node) -> bool:
    for child, _ in node.next_functions:
        while child is not None and type(child).__name__ in VIEW_NODES:
            child = child.next_functions[0][0] if child.next_functions else None
        if child is not None and type(child).__name__ == "SoftmaxBackward0":
            return True
    return False


def is_softmax_call(node: ast.AST) -> bool:
    """`F.softmax(x, dim=1)`, `torch.softmax(x, 1)`, `x.softmax(-1)`, `softmax(x)`."""
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    return (isinstance(function, ast.Attribute) and function.attr == "softmax") or \
        (isinstance(function, ast.Name) and function.id == "softmax")


def _softmax_assignment(scope: ast.AST, name: str, line: int) -> ast.Assign | None:
    """The last assignment of `name` before `line` in `scope`, when it binds a softmax's output."""
    best = None
    for node in ast.walk(scope):
        if node is not scope and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.lineno < line:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)) \
                    and (best is None or node.lineno > best.lineno):
                best = node
    if isinstance(best, ast.Assign) and len(best.targets) == 1 and isinstance(best.targets[0], ast.Name) \
            and is_softmax_call(best.value):
        return best
    return None


def _reads_of(scope: ast.AST, name: str, after_line: int) -> int:
    return sum(1 for node in ast.walk(scope) if isinstance(node, ast.Name) and node.id == name
               and isinstance(node.ctx, ast.Load) and node.lineno > after_line)


def probability_input_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD156 for the backward() call that just ran, or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    if not roots:
        return None
    walked, _ = graph_nodes(roots)
    if not any(_reads_a_softmax(node) for node in walked if type(node).__name__ in SOFTMAX_READERS):
        return None
    site = call.site if call is not None else None
    frame = live_frame(site)
    values = frame_values(frame) if frame is not None else {}
    for filename in user_files_around(call):
        tree = parse_file(filename)
        for loss_call, loss in loss_calls(filename, LOG_PROBABILITY_LOSSES, values):
            found = _softmax_input(filename, tree, loss_call)
            if found is not None:
                return _diagnosis(filename, loss_call, loss, found, site)
    return None


def _softmax_input(filename: str, tree: ast.Module, loss_call: ast.Call):
    """(softmax call, its assignment or None) when the loss's input is a softmax's output."""
    argument = loss_call.args[0]
    if is_softmax_call(argument):
        return argument, None
    if isinstance(argument, ast.Name):
        scope = enclosing_function(tree, loss_call.lineno)
        assignment = _softmax_assignment(scope, argument.id, loss_call.lineno)
        if assignment is not None:
            return assignment.value, assignment
    return None


def _diagnosis(filename: str, loss_call: ast.Call, loss: str, found, backward_site) -> Diagnosis | None:
    softmax, assignment = found
    loss_statement = statement_at(filename, loss_call.lineno)
    made = assignment if assignment is not None else loss_statement
    if loss_statement is None or made is None:
        return None
    what = "KL divergence" if loss == "kl_div" else "NLL"
    note = (f"{loss} reads its input as log-probabilities; this one is a softmax's output (probabilities), so the "
            f"{what} it computes is not the one meant and its gradient does not move the distribution towards "
            "the target")
    primary = statement_location(filename, made, role="probabilities", note="a softmax's output, not log-probabilities")
    related = [location_of(backward_site, role="backward", note="backpropagates it")]
    if assignment is not None:
        related.insert(0, statement_location(filename, loss_statement, role="loss", note=f"{loss} of probabilities"))
    helps = []
    function_text = segment(filename, softmax.func)
    log_function = function_text[:-len("softmax")] + "log_softmax" if function_text else None
    name = assignment.targets[0].id if assignment is not None else None
    scope = enclosing_function(parse_file(filename), made.lineno)
    if log_function is not None and (assignment is None or _reads_of(scope, name, made.end_lineno or made.lineno) == 1):
        replacement = replace_node_text(filename, made, softmax.func, log_function)
        if replacement is not None:
            helps.append(Suggestion(f"give {loss} log-probabilities: log_softmax over the same dimension",
                                    replacement, statement_location(filename, made)))
    if not helps and assignment is not None:
        argument = loss_call.args[0]
        replacement = replace_node_text(filename, loss_statement, argument, f"torch.log({name})")
        if replacement is not None:
            helps.append(Suggestion(f"give {loss} log-probabilities: the log of {name} (log_softmax where {name} is "
                                    "made is more accurate, if nothing else reads the probabilities)",
                                    replacement, statement_location(filename, loss_statement)))
    return Diagnosis(code=codes.PROBABILITIES_AS_LOG_PROBABILITIES,
                     title=codes.title(codes.PROBABILITIES_AS_LOG_PROBABILITIES), severity="warning",
                     primary=primary, related=[r for r in related if r is not None], notes=[note], help=helps)
