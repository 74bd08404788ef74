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
of neither shape, with more elements than expected, is remembered, unless it is the input's shape
behind the batch axes of a given gradient (per-sample gradients of a weight shared across the
batch, which the engine's sum adds up: torchphysics' DeepONet `linear`, docs/real-code.md's
twenty-second set). Only shapes and the class are kept, no tensor.

The same wrapper also remembers backwards that never read the gradient they are given (AD315):
a backward whose incoming-gradient parameters appear nowhere in its body returns the derivative
of the Function's output alone, not the chain rule's product. Only when the gradient it was given
at run time is not all ones (then the product would differ) and what it returned is not all zeros
(a Function that blocks gradients on purpose returns zeros) is the class remembered. The body is
read once per backward (its code object's names), so the values are compared only for such a
backward.
"""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
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


@dataclass
class IgnoredGradient:
    """A custom Function's backward never read the gradient it was given (`parameters`), and ran
    with one that is not all ones (`given`, e.g. -1.0 when it is a constant) while returning a
    nonzero gradient."""

    function: type  # the autograd.Function subclass
    parameters: tuple  # the backward's incoming-gradient parameter names
    given: str  # what the incoming gradient was, in words


_UNREAD: dict = {}  # backward code object -> the incoming-gradient parameters it never reads (or ())


def _unread_gradient_parameters(backward) -> tuple:
    """The incoming-gradient parameters of a backward (all but ctx) when its body reads none of
    them; () when it reads one, or when its source cannot be read (nothing is claimed then)."""
    code = getattr(backward, "__code__", None)
    if code is None:
        return ()
    if code in _UNREAD:
        return _UNREAD[code]
    found: tuple = ()
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(backward)))
        definition = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
        arguments = definition.args
        names = [a.arg for a in [*arguments.posonlyargs, *arguments.args][1:]]
        if arguments.vararg is not None:
            names.append(arguments.vararg.arg)
        if names and not arguments.kwarg:
            read = {node.id for node in ast.walk(definition) if isinstance(node, ast.Name)
                    and isinstance(node.ctx, ast.Load)}
            found = tuple(names) if not read.intersection(names) else ()
    except Exception:
        found = ()
    _UNREAD[code] = found
    return found


def _given_in_words(grad_outputs: tuple) -> str | None:
    """None when every incoming gradient is all ones (the chain rule's product equals what the
    backward returned); else a short description of one that is not."""
    for gradient in grad_outputs:
        if not isinstance(gradient, torch.Tensor) or gradient.numel() == 0:
            continue
        if bool((gradient == 1).all()):
            continue
        first = gradient.reshape(-1)[0]
        if gradient.numel() == 1 or bool((gradient == first).all()):
            return f"{first.item():g}" + ("" if gradient.numel() == 1 else " for every element")
        return f"a {list(gradient.shape)} tensor of values other than 1"
    return None


def _check_ignored(node, grad_outputs: tuple, result) -> None:
    function = getattr(node, "_forward_cls", None)
    backward = getattr(function, "backward", None)
    if function is None or backward is None:
        return
    parameters = _unread_gradient_parameters(backward)
    if not parameters:
        return
    # The recorders that have not remembered this Function yet: the values below are compared
    # (a read of every element) only until each has.
    logs = [recorder.state.setdefault("ignored_gradients", []) for recorder in list(_wrapped.recorders)]
    logs = [log for log in logs if len(log) < LOG_SIZE and not any(i.function is function for i in log)]
    if not logs:
        return
    results = result if isinstance(result, tuple) else (result,)
    if not any(isinstance(r, torch.Tensor) and bool((r != 0).any()) for r in results):
        return  # None or zeros: the Function passes no gradient back, on purpose or not
    given = _given_in_words(grad_outputs)
    if given is None:
        return
    for log in logs:
        log.append(IgnoredGradient(function, parameters, given))


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
        if _per_sample_over_batch_axes(returned, expected, given):
            continue  # a weight shared across the batch: the engine's sum over those axes is the batch sum
        function = getattr(node, "_forward_cls", None)
        if function is None:
            continue
        for recorder in list(_wrapped.recorders):
            log = recorder.state.setdefault("widened_gradients", [])
            if len(log) < LOG_SIZE and not any(w.function is function and w.index == index for w in log):
                log.append(WidenedGradient(function, index, returned, expected))


def _per_sample_over_batch_axes(returned: tuple, expected: tuple, given: set) -> bool:
    """Whether `returned` is the input's shape behind leading axes that are the leading (batch)
    axes of a gradient the backward was given, short of its last axis: per-sample gradients of a
    weight the forward applied to every sample (`grad_output.transpose(-1, -2) @ input` for a
    weight a batched matmul broadcast), which the engine's sum down adds up over the batch, as
    the batched matmul's own backward does. A gradient broadcast over the output's last axis too
    (`[B, n, n]` for a `[n]` input given `[B, n]`) is not such a shape."""
    extra = len(returned) - len(expected)
    if extra <= 0 or returned[extra:] != expected:
        return False
    return any(len(shape) > extra and shape[:extra] == returned[:extra] for shape in given)


def _recording_apply(original):
    def apply(self, *args):
        result = call_as_caller(original, (self, *args), {})
        started = own_work_started()  # the shapes read below are the doctor's reads, not the program's
        try:
            _check(self, args, result)
            _check_ignored(self, args, result)
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


def take_ignored(recorder) -> list[IgnoredGradient]:
    """The backwards remembered for ignoring their incoming gradient, forgotten once taken."""
    found = recorder.state.get("ignored_gradients") or []
    recorder.state["ignored_gradients"] = []
    return found


def take(recorder) -> list[WidenedGradient]:
    """The widened gradients remembered since the last call, forgotten once taken."""
    found = recorder.state.get("widened_gradients") or []
    recorder.state["widened_gradients"] = []
    return found
