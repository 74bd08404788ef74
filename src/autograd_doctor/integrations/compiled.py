"""torch.compile: explain an autograd error that surfaces while compiling.

Under `torch.compile`, an in-place write to a tensor autograd saved does not fail at
`backward()`: AOTAutograd traces the backward while compiling, so the first call of
the compiled function raises `torch._dynamo.exc.BackendCompilerFailed` wrapping
PyTorch's RuntimeError, with no line of your code in it. To explain it, the original
(uncompiled) function runs once more, eagerly, under `autograd_doctor.watch()`, on
copies of its tensor arguments, forward and backward; the report of that run is
attached to your exception as a note. Your exception is otherwise unchanged.

The eager run leaves your state as it was: tensor arguments are copied, gradients
are computed with `torch.autograd.grad` (no `.grad` is touched), the random number
generators are restored, and so are the buffers of an `nn.Module` (e.g. BatchNorm's
running statistics). Other side effects of your function happen once more.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys

import torch

from autograd_doctor.doctor import attach, diagnoses_of, internal_error, watch
from autograd_doctor.recording.frames import frame_locals
from autograd_doctor.recording.own_frames import hide_our_frames
from autograd_doctor.diagnosis.model import Diagnosis


def compile(model, **options):
    """`torch.compile(model, **options)`, whose autograd errors at compile time are explained.

    Returns what `torch.compile` returns (for a module, the same `OptimizedModule`
    with its parameters and state dict), so it is a drop-in replacement.

    Example::

        >>> import torch, autograd_doctor.compiled
        >>> def step(x, w):
        ...     h = torch.sigmoid(x @ w)
        ...     h[0] = 0.0          # sigmoid saved h for backward
        ...     return h.sum()
        >>> compiled = autograd_doctor.compiled.compile(step, backend="aot_eager")
        >>> try:
        ...     compiled(torch.randn(2, 2), torch.randn(2, 2, requires_grad=True))
        ... except RuntimeError as error:
        ...     print(type(error).__name__, autograd_doctor.diagnoses_of(error)[0].code)
        BackendCompilerFailed AD101
    """
    compiled = torch.compile(model, **options)
    if isinstance(compiled, torch.nn.Module):
        # An OptimizedModule calls its `forward` attribute (the compiled call of `model`):
        # wrapping that keeps the module, its parameters and its state dict as they are.
        compiled.forward = explaining_failures(compiled.forward, model)
        return compiled
    return explaining_failures(compiled, model)


def explaining_failures(compiled_call, eager_call):
    """`compiled_call`, with compile-time autograd errors explained by running `eager_call`."""

    @functools.wraps(compiled_call)
    def call_explaining_failures(*args, **kwargs):
        try:
            return compiled_call(*args, **kwargs)
        except BaseException as error:
            if is_compile_failure(error):
                explain_compile_failure(error, eager_call, args, kwargs)
            hide_our_frames(error)  # this wrapper's frame is not the user's business
            raise

    return call_explaining_failures


def explain_from_traceback(error: BaseException) -> list[Diagnosis]:
    """Explain a compile failure of a function compiled with plain `torch.compile`.

    The failure's traceback still holds the frame of the compiled call, with the original
    function and its arguments: they are run eagerly as by `explain_compile_failure`. Does
    nothing (returns []) for other errors, for failures already explained, and where this
    torch's frames do not look as expected.
    """
    if not is_compile_failure(error) or diagnoses_of(error):
        return []
    try:
        call = _compiled_call_in(error.__traceback__)
    except Exception:
        internal_error()
        return []
    if call is None:
        return []
    function, args, kwargs = call
    return explain_compile_failure(error, function, args, kwargs)


def _compiled_call_in(traceback):
    """(function, args, kwargs) of the outermost call into torch.compile's wrapper."""
    while traceback is not None:
        code = traceback.tb_frame.f_code
        if code.co_name == "compile_wrapper" and code.co_filename.endswith(os.path.join("_dynamo", "eval_frame.py")):
            scope = frame_locals(traceback.tb_frame)
            function, args, kwargs = scope.get("fn"), scope.get("args"), scope.get("kwargs")
            if callable(function) and isinstance(args, tuple) and isinstance(kwargs, dict):
                return function, args, kwargs
        traceback = traceback.tb_next
    return None


def is_compile_failure(error: BaseException) -> bool:
    """A backend compiler failure (as raised by torch.compile) caused by a RuntimeError."""
    # Not `torch._dynamo`: that attribute imports the compiler (seconds); if it was never
    # imported, nothing was compiled.
    failure_type = getattr(sys.modules.get("torch._dynamo.exc"), "BackendCompilerFailed", None)
    if failure_type is None or not isinstance(error, failure_type):
        return False
    return isinstance(_root_cause(error), RuntimeError)


def _root_cause(error: BaseException) -> BaseException:
    seen = {id(error)}
    while error.__cause__ is not None and id(error.__cause__) not in seen:
        error = error.__cause__
        seen.add(id(error))
    return error


def explain_compile_failure(error: BaseException, function, args: tuple = (), kwargs: dict | None = None
                            ) -> list[Diagnosis]:
    """Run `function(*args, **kwargs)` eagerly under the doctor, forward and backward, and
    attach what it finds to `error` (the compile failure). Returns the diagnoses attached;
    if the doctor fails itself, `error` is left unchanged."""
    try:
        eager_error = run_eagerly(function, args, kwargs or {})
        found = diagnoses_of(eager_error) if eager_error is not None else []
        name = getattr(function, "__qualname__", None) or type(function).__name__
        for diagnosis in found:
            diagnosis.notes.insert(0, f"torch.compile failed while tracing the backward of `{name}`; "
                                      "autograd-doctor ran it again without compiling to find the line")
            attach(error, diagnosis)
        return found
    except Exception:
        internal_error()
        return []


def run_eagerly(function, args: tuple, kwargs: dict) -> BaseException | None:
    """Forward and backward of `function` under watch(), on copies; the exception it raised."""
    args, kwargs = _copy_tensors(args), _copy_tensors(kwargs)
    with torch.random.fork_rng(), _buffers_restored(function), _eager_everywhere(), _full_watch():
        try:
            outputs = function(*args, **kwargs)
            _gradients_of(outputs)
        except Exception as eager_error:
            return eager_error
    return None


def _eager_everywhere():
    """Ignore torch.compile inside the eager run: what the function calls may be compiled
    too (Lightning compiles both `forward` and `training_step`)."""
    set_stance = getattr(getattr(torch, "compiler", None), "set_stance", None)
    if set_stance is None:
        return contextlib.nullcontext()
    return set_stance("force_eager")


def _full_watch() -> watch:
    """watch() recording every save, so the report also names the line that saved the tensor
    (one run, on a failure: its cost does not matter); plain watch() where there is no such mode."""
    try:
        return watch(mode="full")
    except TypeError:
        return watch()


def _copy_tensors(value):
    """`value` with each tensor in it replaced by an independent copy (same requires_grad)."""
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_() if value.requires_grad else copy
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_copy_tensors(item) for item in value)
    if isinstance(value, dict):
        return type(value)((key, _copy_tensors(item)) for key, item in value.items())
    return value


@contextlib.contextmanager
def _buffers_restored(function):
    module = function if isinstance(function, torch.nn.Module) else getattr(function, "__self__", None)
    if not isinstance(module, torch.nn.Module):
        yield
        return
    saved = [(buffer, buffer.detach().clone()) for buffer in module.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)


def _tensors_in(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in _tensors_in(item)]
    if isinstance(value, dict):
        return [tensor for item in value.values() for tensor in _tensors_in(item)]
    return []


def _gradients_of(outputs) -> None:
    """Backward from every output that needs a gradient, into the graph's leaves, without
    accumulating into any `.grad` (the user's parameters are leaves of this graph too)."""
    roots = [tensor for tensor in _tensors_in(outputs) if tensor.grad_fn is not None]
    leaves = _leaves_of(roots)
    if roots and leaves:
        torch.autograd.grad(roots, leaves, grad_outputs=[torch.ones_like(root) for root in roots],
                            allow_unused=True)


def _leaves_of(roots: list[torch.Tensor]) -> list[torch.Tensor]:
    leaves, seen, frontier = [], set(), [root.grad_fn for root in roots]
    while frontier:
        node = frontier.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)  # AccumulateGrad: the leaf it accumulates into
        if isinstance(variable, torch.Tensor):
            leaves.append(variable)
        frontier.extend(child for child, _ in node.next_functions)
    return leaves


__all__ = ["compile", "explaining_failures", "explain_compile_failure", "explain_from_traceback",
           "is_compile_failure", "run_eagerly"]
