"""Remember custom autograd.Function backwards that returned a gradient with more elements than
the input it is for, in a shape that is neither the input's nor any output's.

The engine accepts a gradient whose shape the input's expands to and sums it down to the input's
shape without a word (the rule that lets a Function whose forward broadcasts an input return the
output-shaped gradient). A backward whose arithmetic broadcast by mistake (a bare `.squeeze()`
that also dropped a size-1 axis, then a division that broadcast two axes against each other)
returns such a gradient too, and its sum is silently wrong.

`BackwardCFunction.apply` (what the engine calls for every custom Function's backward) is
wrapped while a doctor runs. After the user's backward returns, each returned tensor's shape is
compared with the shape the engine expects (the metadata of the node the gradient flows into,
`next_functions`) and with the shapes of the gradients the backward was given: only a gradient
of neither shape, with more elements than expected, is remembered. Only shapes and the class are
kept, no tensor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from autograd_doctor.recording.own_frames import call_as_caller, own_work_done, own_work_started
from autograd_doctor.recording.wrapped_attributes import WrappedAttributes, marked

LOG_SIZE = 8


@dataclass
class WidenedGradient:
    """A custom Function's backward returned, for input `index`, a gradient of shape `returned`
    that the engine summed down to `expected`."""

    function: type  # the autograd.Function subclass
    index: int
    returned: tuple
    expected: tuple


def _check(node, grad_outputs: tuple, result) -> None:
    results = result if isinstance(result, tuple) else (result,)
    given = {tuple(g.shape) for g in grad_outputs if isinstance(g, torch.Tensor)}
    # The k-th forward argument that is a tensor requiring grad feeds the k-th edge of the graph
    # (`next_functions` lists tensor arguments only, None for those without grad); a returned
    # value is matched to its edge through that order, and nothing is checked when it is unclear.
    wanted = [index for index, needed in enumerate(node.needs_input_grad) if needed]
    edges = [edge for edge in node.next_functions if edge[0] is not None]
    if len(wanted) != len(edges):
        return
    edge_of = dict(zip(wanted, edges))
    for index, gradient in enumerate(results):
        if not isinstance(gradient, torch.Tensor) or index not in edge_of:
            continue
        target, number = edge_of[index]
        metadata = getattr(target, "_input_metadata", None)
        if metadata is None or number >= len(metadata):
            continue
        expected, returned = tuple(metadata[number].shape), tuple(gradient.shape)
        if returned == expected or returned in given or gradient.numel() <= math.prod(expected):
            continue  # the input's shape, a broadcast output's, or an error PyTorch raises itself
        function = getattr(node, "_forward_cls", None)
        if function is None:
            continue
        for recorder in list(_wrapped.recorders):
            log = recorder.state.setdefault("widened_gradients", [])
            if len(log) < LOG_SIZE and not any(w.function is function and w.index == index for w in log):
                log.append(WidenedGradient(function, index, returned, expected))


def _recording_apply(original):
    def apply(self, *args):
        result = call_as_caller(original, (self, *args), {})
        started = own_work_started()  # the shapes read below are the doctor's reads, not the program's
        try:
            _check(self, args, result)
        except Exception:
            pass
        finally:
            own_work_done(started)
        return result
    return marked(apply, original)


def _targets() -> list:
    from torch.autograd.function import BackwardCFunction
    return [(BackwardCFunction, "apply", _recording_apply)]


_wrapped = WrappedAttributes(_targets)

# Remember widened gradients into a recorder's `state` until `deactivate(recorder)`.
activate, deactivate = _wrapped.activate, _wrapped.deactivate


def take(recorder) -> list[WidenedGradient]:
    """The widened gradients remembered since the last call, forgotten once taken."""
    found = recorder.state.get("widened_gradients") or []
    recorder.state["widened_gradients"] = []
    return found
