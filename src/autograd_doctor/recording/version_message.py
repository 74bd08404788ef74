"""PyTorch's own message for a saved tensor modified in place, word for word.

In the full mode our saved-tensor hooks switch PyTorch's version check off, so `unpack`
does the check and raises the error itself. The user must get the message PyTorch would
have raised (people search for it, and the README promises it is kept): its wording, the
"which is output N of X" clause and the hint, which differ between torch releases and
with anomaly mode on or off. So the wording is learned from PyTorch itself: a tiny graph
is made to fail the same way (once per anomaly setting, in a fresh thread, where no
saved-tensor hooks or torch function modes are active), and the parts PyTorch fills in
(type, sizes, node, versions) are checked to be where they are expected. If they are not,
the message has PyTorch's usual wording without the hint.

PyTorch (SavedVariable::unpack) names, after the sizes, the tensor's node: for a saved
input its current `grad_fn` (none for a leaf), for a saved output the node that saved it,
with the output number the tensor had when it was saved.
"""

from __future__ import annotations

import re
import threading
import warnings

import torch

from autograd_doctor.recording.calls import AUTOGRAD_GRAD

_PREFIX = "one of the variables needed for gradient computation has been modified by an inplace operation: "
_FALLBACK = (_PREFIX, "", "name")
# anomaly mode on/off -> (prefix, hint, how the node is named: "name" or "stripped")
_wordings: dict[bool, tuple[str, str, str]] = {}
_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")


def _node_name(node, naming: str) -> str:
    name = node.name()
    return _BACKWARD_SUFFIX.sub("", name) if naming == "stripped" else name


def _middle(type_name: str, shape: list, node_name: str | None, output_nr: int, found: int, saved: int) -> str:
    which = f", which is output {output_nr} of {node_name}," if node_name is not None else ""
    return f"[{type_name} {shape}]{which} is at version {found}; expected version {saved} instead."


def _probe_message() -> tuple[str | None, str | None]:
    """(PyTorch's message for a known stale save, the saving node's name()), from a fresh thread."""
    found: list = [None, None]

    def fail_once():
        leaf = torch.empty(1)
        leaf.requires_grad = True
        output = leaf.exp()  # ExpBackward0 saves its output
        found[1] = output.grad_fn.name()
        torch.autograd.graph.increment_version(output)
        try:
            AUTOGRAD_GRAD(output, leaf, torch.ones(1))
        except RuntimeError as error:
            found[0] = str(error)

    def run():
        try:
            if torch.is_anomaly_enabled():
                with warnings.catch_warnings(record=True):  # anomaly mode's "Error detected in ..."
                    fail_once()
            else:
                fail_once()
        except Exception:
            pass

    thread = threading.Thread(target=run, name="autograd-doctor-wording")
    thread.start()
    thread.join()
    return found[0], found[1]


def _learn_wording() -> tuple[str, str, str]:
    message, node_name = _probe_message()
    if not message or not node_name or not message.startswith(_PREFIX):
        return _FALLBACK
    for naming in ("name", "stripped"):
        printed = node_name if naming == "name" else _BACKWARD_SUFFIX.sub("", node_name)
        middle = _middle("torch.FloatTensor", [1], printed, 0, 1, 0)
        if message[len(_PREFIX):].startswith(middle):
            return _PREFIX, message[len(_PREFIX) + len(middle):], naming
    return _FALLBACK


def stale_saved_message(alias, saved_version: int, node, output_nr: int) -> str:
    """PyTorch's message for `alias`, saved at `saved_version` and now at a newer version;
    `node` is the one PyTorch names (see the module docstring), or None."""
    anomaly = torch.is_anomaly_enabled()
    wording = _wordings.get(anomaly)
    if wording is None:
        try:
            wording = _learn_wording()
        except Exception:
            wording = _FALLBACK
        _wordings[anomaly] = wording
    prefix, hint, naming = wording
    try:
        type_name = alias.type()
    except Exception:
        type_name = str(alias.dtype)
    node_name = _node_name(node, naming) if node is not None else None
    return prefix + _middle(type_name, list(alias.shape), node_name, output_nr, alias._version, saved_version) + hint


__all__ = ["stale_saved_message"]
