"""Copies through `.data`, inside a module's forward, of a value that requires grad into one of the
module's parameters (`param.data.copy_(w[offset:offset + n].view(param.shape))`): the copy is not
recorded, so the loss's gradient stops at the parameter and never reaches what `w` was computed
from (a variational posterior's mean and scale, a hypernetwork's output).

Looked at only for a write the recorder already wraps, whose source requires grad while grad
mode is on and whose target does not (a `.data` alias never does): the user's line must read
`.data`, run in a method named `forward` of an nn.Module, and write the memory of one of that
module's parameters. Once per line: the event holds the parameter weakly.
"""

from __future__ import annotations

import weakref

import torch

from autograd_doctor.recording.listener import GraphCutCopy
from autograd_doctor.recording.write_log import user_stack_and_module, writes_through_data

# Lines already reported (code object id, instruction offset); bounded.
_seen_sites: set = set()
MAX_PARAMETERS_SEARCHED = 4096


def graph_cut_copy(op: str, args: tuple) -> GraphCutCopy | None:
    """The event for `args[0].copy_(args[1])` when it is such a copy, else None."""
    if not op.endswith("copy_"):
        return None
    target = args[0]
    stack, _module_class, frame = user_stack_and_module(2)
    try:
        if not stack or frame is None or frame.f_code.co_name != "forward":
            return None
        site = stack[0]
        key = (id(site.code), site.lasti)
        if key in _seen_sites or not writes_through_data(site):
            return None
        module = frame.f_locals.get("self")
        if not isinstance(module, torch.nn.Module):
            return None
        pointer, shape = target.data_ptr(), target.shape
        for index, parameter in enumerate(module.parameters()):
            if index >= MAX_PARAMETERS_SEARCHED:
                return None
            if parameter.data_ptr() == pointer and parameter.shape == shape:
                if len(_seen_sites) > 1024:
                    _seen_sites.clear()
                _seen_sites.add(key)
                return GraphCutCopy(weakref.ref(parameter), stack)
        return None
    finally:
        del frame
