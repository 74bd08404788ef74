"""The private parts of torch the doctor uses, checked in one place.

PyTorch may rename or drop any of them in a release. Each is listed here with what the
doctor loses without it. `check()` runs when a doctor starts: for each one missing
from the installed torch it prints one line (once per process) and the doctor carries
on without it; when one the doctor cannot work without is missing, it stays off, so the
user's program runs exactly as it would without the doctor.

The code that uses one of these reaches it through `lookup()`, which gives None when it
is missing, so a newer torch degrades the doctor instead of breaking the user's program.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class PrivateAPI:
    """One private torch name, who uses it, and what is lost without it."""

    path: str  # dotted, starting at `torch`
    used_by: str
    without_it: str
    essential: bool = False  # without it the doctor cannot work at all


PRIVATE_APIS = (
    PrivateAPI("torch._C._current_autograd_node", "doctor.py, analysis/diagnose.py",
               "a failure cannot name the backward node that needed the tensor"),
    PrivateAPI("torch._C._autograd._top_saved_tensors_default_hooks", "doctor.py",
               "code that turns saved-tensor hooks off (e.g. torch.utils.checkpoint) may clash with the doctor's"),
    PrivateAPI("torch._C._autograd._unsafe_set_version_counter", "analysis/relation.py",
               "relation() tells whether two tensors share a version counter from their storage only"),
    PrivateAPI("torch.utils.checkpoint._checkpoint_without_reentrant_generator", "recording/checkpoint_calls.py",
               "a checkpoint with use_reentrant=False and preserve_rng_state=False around random ops (dropout) is "
               "not reported (AD168); reentrant checkpoints still are"),
    PrivateAPI("torch._C._nn", "recording/patches.py",
               "in-place writes made through torch._C._nn (F.leaky_relu(x, inplace=True), ...) are not seen"),
    PrivateAPI("torch._VF", "recording/patches.py",
               "in-place writes made through torch._VF (F.dropout(x, inplace=True), ...) are not seen"),
    PrivateAPI("torch._C._VariableFunctions", "recording/patches.py",
               "in-place writes made through torch._VF (F.dropout(x, inplace=True), ...) are not seen"),
    PrivateAPI("torch.autograd.graph._engine_run_backward", "analysis/graph_snapshot.py",
               "the picture shows the failing node and its inputs, not the path from the loss"),
    PrivateAPI("torch.autograd._make_grads", "analysis/errors/requires_grad.py",
               "the error for backward() of a non-scalar cannot give the tensor's shape"),
    PrivateAPI("torch._C._functorch.is_functorch_wrapped_tensor", "cli/meaning.py, analysis/masked_nan.py",
               "--verify-fix of a program that uses torch.func.grad cannot tell the transform's own gradient "
               "calls from the program's, and may fail to record them; AD220 reads a gradient computed inside vmap "
               "(and fails there, silently)"),
    PrivateAPI("torch._C._functorch.peek_interpreter_stack", "recording/switches.py",
               "a `no_grad` block inside a function that torch.func.jvp/jacfwd transforms, whose result the "
               "transform still differentiates, is not reported (AD318)"),
    PrivateAPI("torch._C._dispatch_has_kernel_for_dispatch_key", "recording/calls.py",
               "an in-place op whose operand is a conjugate or negative view of the written tensor "
               "(`x += x.adjoint()` on a complex x) is reported as overlapping even where PyTorch reads a copy"),
    PrivateAPI("torch.jit._builtins._get_builtin_table", "recording/patches.py",
               "torch.jit.script fails, while the doctor is on, on code that calls a torch function the doctor "
               "wraps (torch.ones_like, torch.zeros, torch.relu_, ...)"),
    PrivateAPI("torch.nn.modules.module._has_any_global_hook", "recording/module_forwards.py",
               "a `torch.compile`d module warns, while the gradient-path check runs, that there are global "
               "module hooks (the doctor's)"),
    PrivateAPI("torch._C._get_torch_function_state", "recording/own_frames.py",
               "a Tensor subclass's __torch_function__ sees the doctor's own reads of its tensors (it may warn "
               "or count them as the program's)"),
    PrivateAPI("torch._C._set_torch_function_state", "recording/own_frames.py",
               "a Tensor subclass's __torch_function__ sees the doctor's own reads of its tensors (it may warn "
               "or count them as the program's)"),
    PrivateAPI("torch._C._TorchFunctionState", "recording/own_frames.py",
               "a Tensor subclass's __torch_function__ sees the doctor's own reads of its tensors (it may warn "
               "or count them as the program's)"),
    PrivateAPI("torch.autograd.graph.saved_tensors_hooks", "doctor.py",
               "the doctor cannot see what autograd saves", essential=True),
)

# Read from tensors and backward nodes, so they are checked on a real one (see `_probe_failures`).
PROBED_FEATURES = {
    "Tensor._version": "the doctor cannot tell which write bumped a saved tensor's version",
    "grad_fn._saved_<name> / grad_fn._raw_saved_<name>": "the doctor cannot find which saved slot went stale",
}

_reported: set[str] = set()


def lookup(path: str):
    """The object at a dotted path from `torch`, or None when this torch has no such name.

    Example::

        >>> lookup("torch._C._autograd") is not None
        True
        >>> lookup("torch.no_such_thing") is None
        True
    """
    parts = path.split(".")
    if parts[0] != "torch":
        raise ValueError(f"{path!r} does not start with 'torch'")
    found = torch
    for part in parts[1:]:
        found = getattr(found, part, None)
        if found is None:
            return None
    return found


def _probe_failures() -> list[str]:
    """The PROBED_FEATURES this torch lacks, checked on a two-op graph."""
    failures = []
    # Whatever grad mode the caller is in: a graph has to be recorded to be probed.
    with torch.inference_mode(False), torch.enable_grad():
        leaf = torch.ones(2, requires_grad=True)
        output = torch.sigmoid(leaf)
    try:
        output._version
    except Exception:
        failures.append("Tensor._version")
    node = output.grad_fn
    if not (hasattr(node, "_saved_result") and hasattr(node, "_raw_saved_result")):
        failures.append("grad_fn._saved_<name> / grad_fn._raw_saved_<name>")
    return failures


@functools.lru_cache(maxsize=None)
def missing() -> tuple[tuple[str, str, bool], ...]:
    """(name, what is lost, essential) for each private API this torch lacks (checked once).

    Example::

        >>> [name for name, _, _ in missing()]
        []
    """
    found = [(api.path, api.without_it, api.essential) for api in PRIVATE_APIS if lookup(api.path) is None]
    found += [(name, PROBED_FEATURES[name], True) for name in _probe_failures()]
    return tuple(found)


def check() -> bool:
    """Say (once per process) which private APIs are missing; False if the doctor must stay off.

    Example::

        >>> check()
        True
    """
    usable = True
    for name, without_it, essential in missing():
        if essential:
            usable = False
            line = (f"torch {torch.__version__} has no {name}: {without_it}, so the doctor is off "
                    "(your program runs as without it)")
        else:
            line = f"torch {torch.__version__} has no {name}: {without_it}"
        if line not in _reported:
            _reported.add(line)
            print(f"autograd-doctor: {line}", file=sys.stderr)
    return usable


__all__ = ["PrivateAPI", "PRIVATE_APIS", "PROBED_FEATURES", "lookup", "missing", "check"]
