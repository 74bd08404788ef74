"""AD301 for torch.autograd.grad with respect to a tensor that a torch.distributions transform
built with `cache_size=1` produced (`y = flow.sample()`, `y.requires_grad_()`, then
`torch.autograd.grad(flow.log_prob(y).sum(), y)`, a score of the flow's own samples): the
transform finds `y` in its cache and returns the input it cached when it produced `y`, computed
without a graph, so the log-density does not depend on `y` and PyTorch says "element 0 of tensors
does not require grad". The transform's construction is named, and the change builds it without
the cache: the inverse is then computed from `y` itself, with its graph (pyro-ppl/pyro#2292)."""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, segment, statement_at, statement_location


def _transforms_in(value, depth: int = 0) -> list:
    """The torch.distributions transforms a value holds: itself, a TransformedDistribution's,
    a ComposeTransform's parts, a list's items (two levels at most)."""
    from torch.distributions import Transform, TransformedDistribution
    from torch.distributions.transforms import ComposeTransform

    if depth > 2:
        return []
    if isinstance(value, TransformedDistribution):
        return [t for part in value.transforms for t in _transforms_in(part, depth + 1)]
    if isinstance(value, ComposeTransform):
        return [value] + [t for part in value.parts for t in _transforms_in(part, depth + 1)]
    if isinstance(value, Transform):
        return [value]
    if isinstance(value, (list, tuple)) and len(value) <= 32:
        return [t for item in value for t in _transforms_in(item, depth + 1)]
    return []


def _caching_transform(inputs: tuple, frames: list):
    """The one transform with cache_size=1, bound in the frames, whose cached output is one of
    `inputs`; else None."""
    seen, cached = set(), []
    for frame in frames:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            for transform in _transforms_in(value):
                if id(transform) in seen:
                    continue
                seen.add(id(transform))
                pair = getattr(transform, "_cached_x_y", (None, None))
                if getattr(transform, "_cache_size", 0) == 1 and any(pair[1] is t for t in inputs):
                    cached.append(transform)
    return cached[0] if len(cached) == 1 else None


def cached_transform_diagnosis(inputs: tuple, frames: list, grad_location: Location | None) -> Diagnosis | None:
    """AD301 at the construction of the transform whose cache answered for one of `inputs` (the
    tensors torch.autograd.grad was asked about), found among the frames' values; the change
    drops `cache_size=` from the call. None when no such transform, or not one construction of
    its class with `cache_size=` in the frames' files."""
    transform = _caching_transform(tuple(inputs), frames)
    if transform is None:
        return None
    name = type(transform).__name__
    calls = []
    for filename in dict.fromkeys(frame.f_code.co_filename for frame in frames):
        tree = parse_file(filename)
        for call in (ast.walk(tree) if tree is not None else ()):
            if isinstance(call, ast.Call) and (segment(filename, call.func) or "").split(".")[-1] == name \
                    and any(k.arg == "cache_size" for k in call.keywords):
                calls.append((filename, call))
    if len(calls) != 1:
        return None
    filename, call = calls[0]
    statement = statement_at(filename, call.lineno)
    if statement is None:
        return None
    location = statement_location(filename, statement, role="cut",
                                  note=f"{name} with cache_size=1 returns, for the tensor it produced, the input "
                                       "it cached")
    kept = [segment(filename, a) for a in call.args] + [segment(filename, k) for k in call.keywords
                                                        if k.arg != "cache_size"]
    change = None
    if None not in kept:
        change = replace_node_text(filename, statement, call, f"{segment(filename, call.func)}({', '.join(kept)})")
    notes = [f"{name} cached the pair (x, y) when it produced the tensor (sample() draws it without a graph); "
             "inverting that very tensor returns the cached x, so the log-density is computed from x and does not "
             "depend on the tensor whose gradient is asked for"]
    message = ("build the transform without the cache: the inverse is then computed from the tensor itself, with "
               "its graph (the same values)")
    helps = [Suggestion(message, change, location) if change else Suggestion(message)]
    return Diagnosis(code=codes.GRADIENT_PATH_CUT, title=codes.title(codes.GRADIENT_PATH_CUT), severity="error",
                     primary=location, related=[grad_location] if grad_location is not None else [], notes=notes,
                     help=helps)
