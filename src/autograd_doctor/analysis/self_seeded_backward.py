"""AD320: a one-element loss backpropagated with itself as the gradient, `loss.backward(loss)`.

The seed of backward() multiplies every gradient: `loss.backward(loss)` computes the gradients of
`loss ** 2 / 2`, not of `loss`, so each step is scaled by the loss value (large while the loss is
large, vanishing near zero) and the training follows another objective. Nothing fails: a seed of
the loss's own shape is legal.

Looked at as each backward() starts, only when a seed is passed (`gradient=` of Tensor.backward,
`grad_tensors` of torch.autograd.backward): a root of one element that requires grad, seeded with
a tensor of its own memory (the loss itself, `loss.detach()`, `loss.data`), whose value is not 1
(with 1 the seed changes nothing). A seed of more than one element with a root of the same values
(`y.backward(y)`, the gradient of `(y ** 2).sum() / 2`) is a known idiom and is not looked at.

The line named is the backward() call; the help drops the seed there.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.source_scope import backward_roots
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment, statement_at
from autograd_doctor.recording.calls import AUTOGRAD_BACKWARD, TENSOR_BACKWARD

# Positions of the seed: Tensor.backward(self, gradient, ...), torch.autograd.backward(tensors, grad_tensors, ...).
SEED_ARGUMENT = {TENSOR_BACKWARD: (1, "gradient"), AUTOGRAD_BACKWARD: (1, "grad_tensors")}


def self_seeded_diagnosis(call, func, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD320 for the backward() call about to run, or None."""
    if func not in SEED_ARGUMENT:
        return None
    position, keyword = SEED_ARGUMENT[func]
    seeds = args[position] if len(args) > position else kwargs.get(keyword)
    if seeds is None:
        return None
    roots = backward_roots(args, kwargs)
    if isinstance(seeds, torch.Tensor):
        seeds = [seeds]
    if not isinstance(seeds, (list, tuple)) or len(seeds) != len(roots):
        return None
    if not any(_seeded_with_itself(root, seed) for root, seed in zip(roots, seeds)):
        return None
    return _diagnosis(call.site if call is not None else None)


def _seeded_with_itself(root: torch.Tensor, seed) -> bool:
    if not isinstance(seed, torch.Tensor) or root.numel() != 1 or seed.numel() != 1 or not root.requires_grad:
        return False
    if seed is not root and (seed.device != root.device or seed.data_ptr() != root.data_ptr()):
        return False  # another tensor: a weight the program computed
    with torch.no_grad():
        return bool(seed.reshape(()) != 1)


def _diagnosis(site) -> Diagnosis | None:
    primary = location_of(site, role="backward", note="the loss is its own gradient seed")
    if primary is None:
        return None
    notes = ["backward(gradient) multiplies every gradient by the seed: seeded with the loss itself, it computes "
             "the gradients of loss ** 2 / 2, so each step is scaled by the current loss value (large while the "
             "loss is large, vanishing near zero) and the training follows another objective; nothing fails"]
    helps = []
    change = _unseeded_call(site)
    if change is not None:
        text, location = change
        helps.append(Suggestion("call backward() without the seed: a one-element loss is seeded with 1, the "
                                "gradients of the loss itself", text, location))
    helps.append(Suggestion("or, for a loss of several elements meant to be weighted, pass the weights (not the loss) "
                            "as the seed"))
    return Diagnosis(code=codes.SELF_SEEDED_BACKWARD, title=codes.title(codes.SELF_SEEDED_BACKWARD),
                     severity="warning", primary=primary, notes=notes, help=helps)


def _unseeded_call(site):
    """(the statement's text with the backward() call's seed dropped, its location), or None."""
    statement = statement_at(site.filename, site.lineno)
    if statement is None:
        return None
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call) and node.lineno == site.lineno
             and isinstance(node.func, ast.Attribute) and node.func.attr == "backward"]
    if len(calls) != 1:
        return None
    call = calls[0]
    receiver = segment(site.filename, call.func.value)
    if receiver is None:
        return None
    if receiver in ("torch.autograd", "autograd"):
        if len(call.args) != 2 or call.keywords:
            return None
        new = f"{receiver}.backward({segment(site.filename, call.args[0])})"
    else:
        keywords = [k for k in call.keywords if k.arg != "gradient"]
        if len(call.args) > 1 or (call.args and len(keywords) != len(call.keywords)) or any(k.arg is None for k in keywords):
            return None  # retain_graph etc. given by position: not rewritten
        kept = ", ".join(segment(site.filename, k) for k in keywords)
        new = f"{receiver}.backward({kept})"
    text = replace_node_text(site.filename, statement, call, new)
    if text is None:
        return None
    return text, location_of(site)
