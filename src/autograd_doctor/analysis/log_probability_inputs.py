"""AD225: `nll_loss` / `NLLLoss` or `ctc_loss` / `CTCLoss` given a layer's raw scores instead of
log-probabilities.

Both losses read their input as log-probabilities (the output of `log_softmax`) and do not
normalise it themselves: given raw scores, NLL is `-score[target]`, which a network lowers
without bound by growing one score, and CTC's backward, which assumes normalised input, gives
gradients of no loss the model computes. The program runs and the loss goes down. Nothing is
raised.

Looked at once per backward() line (the graph's links stay after backward()): a `NllLoss` or
`CtcLoss` node whose input comes, through view-like nodes only, straight from a layer's matrix
product or convolution (a Linear's `addmm`, a Conv's `convolution`), with no `log_softmax`,
`log`, or any other op between. Log-probabilities computed in another way (`x -
x.logsumexp(...)`, `torch.log(probs)`) are not reported. The source is read for the call of the
loss (its function, or an instance of the loss module bound where backward() is called); when
exactly one is found, the help wraps its input in `torch.log_softmax` over the classes' dimension.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.loss_calls import loss_calls
from autograd_doctor.analysis.source_scope import backward_roots, graph_nodes, live_frame, user_files_around
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, replace_node_text, segment, statement_at, statement_location,
)
from autograd_doctor.recording.frames import frame_locals

# The loss nodes, by the loss's name, with the dimension of the classes in their input.
LOSS_NODES = {"NllLossBackward0": ("nll_loss", 1), "NllLoss2DBackward0": ("nll_loss", 1),
              "CtcLossBackward0": ("ctc_loss", -1)}
LOSS_MODULES = {"nll_loss": torch.nn.NLLLoss, "ctc_loss": torch.nn.CTCLoss}
# Nodes that only move or copy values.
VIEW_NODES = {"ViewBackward0", "UnsafeViewBackward0", "TransposeBackward0", "PermuteBackward0", "SqueezeBackward0",
              "SqueezeBackward1", "UnsqueezeBackward0", "ReshapeAliasBackward0", "CloneBackward0", "ToCopyBackward0",
              "TBackward0", "SqueezeBackward2"}
# A layer's output: the raw scores of a Linear or a convolution.
LAYER_NODES = {"AddmmBackward0", "MmBackward0", "BmmBackward0", "ConvolutionBackward0", "LinearBackward0"}


def raw_score_losses(roots: list) -> list[str]:
    """The names of the log-probability losses in the graph below `roots` whose input is a layer's raw output."""
    found = []
    walked, _ = graph_nodes(roots)
    for node in walked:
        known = LOSS_NODES.get(type(node).__name__)
        if known is None or not node.next_functions or node.next_functions[0][0] is None:
            continue
        producer = node.next_functions[0][0]
        while type(producer).__name__ in VIEW_NODES:
            inputs = [child for child, _ in producer.next_functions if child is not None]
            if len(inputs) != 1:
                break
            producer = inputs[0]
        if type(producer).__name__ in LAYER_NODES and known[0] not in found:
            found.append(known[0])
    return found


def raw_score_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD225 for the backward() call that just ran, or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    losses = raw_score_losses(roots) if roots else []
    if not losses:
        return None
    loss = losses[0]
    site = call.site if call is not None else None
    frame = live_frame(site)
    values = {**frame.f_globals, **frame_locals(frame)} if frame is not None else {}
    calls = [found for filename in user_files_around(call) for found in _loss_calls(filename, loss, values)]
    return _diagnosis(loss, calls[0] if len(calls) == 1 else None, site)


def _loss_calls(filename: str, loss: str, values: dict) -> list[tuple[str, ast.stmt, ast.AST]]:
    """(file, statement, input argument) of each call of the loss in the file: `F.nll_loss(x, y)`,
    or a call of a name that holds the loss module (`criterion(x, y)`) where backward() runs."""
    found = []
    for node, _ in loss_calls(filename, {loss: LOSS_MODULES[loss]}, values):
        statement = statement_at(filename, node.lineno)
        if statement is not None:
            found.append((filename, statement, node.args[0]))
    return found


def _diagnosis(loss: str, found, backward_site) -> Diagnosis | None:
    what = "NLL" if loss == "nll_loss" else "CTC"
    dimension = 1 if loss == "nll_loss" else -1
    note = (f"{what} reads its input as log-probabilities and does not normalise it: given a layer's raw "
            "scores, " + ("it is -score[target], lowered without bound by growing one score"
                          if loss == "nll_loss" else "its gradients are those of no loss the model computes"))
    helps = []
    if found is not None:
        filename, statement, argument = found
        text = segment(filename, argument)
        primary = statement_location(filename, statement, role="raw scores", note=note)
        related = [location_of(backward_site, role="backward", note="backpropagates it")]
        replacement = replace_node_text(filename, statement, argument, f"torch.log_softmax({text}, dim={dimension})") \
            if text is not None else None
        if replacement is not None:
            helps.append(Suggestion(f"give {loss} log-probabilities: log_softmax over the classes' dimension",
                                    replacement, statement_location(filename, statement)))
    else:
        primary, related = location_of(backward_site, role="backward", note=f"backpropagates {what} of raw scores"), []
        if primary is None:
            return None
    if loss == "nll_loss":
        helps.append(Suggestion(f"{'or ' if helps else ''}use F.cross_entropy on the raw scores: it applies "
                                "log_softmax itself"))
    elif not helps:
        helps.append(Suggestion("apply log_softmax over the classes' dimension to the scores before CTC"))
    return Diagnosis(code=codes.RAW_SCORES_AS_LOG_PROBABILITIES, title=codes.title(codes.RAW_SCORES_AS_LOG_PROBABILITIES),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=[note] if found is None else [], help=helps)
