"""The error catalogue: a diagnosis for autograd errors PyTorch raises that the recorder
does not explain itself (docs/errors.md lists them).

`diagnose_exception(error)` matches PyTorch's message against each family's patterns and
asks that family's module to build the diagnosis from the exception's traceback (its frames
are still alive), the user's source, and the little the doctor remembers at run time (where
`inference_mode` / `no_grad` blocks were entered, see `recording/switches.py`).
"""

from __future__ import annotations

import re

from autograd_doctor.analysis.errors import (
    amp, checkpointing, custom_function, ddp, func_support, function_io, grad_api, inference, inplace_activation, numerics, optimizer,
    requires_grad, sparse, tensor_methods, transforms, unrecorded_writes, views, parameter_assignments, hook_returns,
    library_copies, reshaped_leaves, out_overlap,
)
from autograd_doctor.analysis.errors.context import ErrorContext
from autograd_doctor.diagnosis.model import Diagnosis

FAMILIES = (views, inference, requires_grad, custom_function, grad_api, numerics, checkpointing, ddp, optimizer,
            inplace_activation, tensor_methods, transforms, func_support, function_io, amp, sparse, unrecorded_writes,
            parameter_assignments, hook_returns, library_copies, reshaped_leaves, out_overlap)

# (compiled pattern, builder) in the order they are tried.
MATCHERS = [(re.compile(pattern), build) for family in FAMILIES for pattern, build in family.MATCHERS]

# Builders that add a more specific cause next to a diagnosis the recorder already attached
# (a cut gradient path: AD301 says the path is cut, these say which decorator or argument).
ADDS_TO_EXISTING = {grad_api.cut_path}


def diagnose_exception(error: BaseException, already: list[Diagnosis] = ()) -> list[Diagnosis]:
    """Catalogue diagnoses for `error` (empty when its message is not catalogued).

    `already` holds what the doctor attached before; a family that only adds a detail to an
    existing diagnosis (e.g. a cut gradient path) looks at it.
    """
    return [diagnosis for diagnosis, _leads in catalogue_diagnoses(error, already)]


def catalogue_diagnoses(error: BaseException, already: list[Diagnosis] = ()) -> list[tuple[Diagnosis, bool]]:
    """diagnose_exception's diagnoses, each with whether it should be shown before those in
    `already` (`leads`): a refinement that names the line to change, where the diagnosis it
    refines names only the line that raised."""
    context = ErrorContext.of(error)
    for pattern, build in MATCHERS:
        if pattern.search(context.message):
            if already and build not in ADDS_TO_EXISTING:
                return []
            diagnosis = build(context, list(already))
            if diagnosis is None:
                return []
            return [(diagnosis, bool(already) and build in ADDS_TO_EXISTING and leads(diagnosis, already))]
    return []


def leads(refinement: Diagnosis, already: list[Diagnosis]) -> bool:
    """Whether a refinement goes before the diagnoses it adds to: it has another code and another
    primary line than each of them (it names a line they do not), and its first help is a change
    at a line (the evidence found the statement to change: AD307's decorator entry recorded in this
    run for the function on the loss's path; a replacement, or the deletion of a statement). A
    refinement that only repeats the raising line, or gives advice, stays after them."""
    primary = refinement.primary
    if primary is None or not refinement.help:
        return False
    first = refinement.help[0]
    if not (first.replacement or first.deletes_statement) or first.location is None:
        return False
    return all(d.code != refinement.code and (d.primary is None or (d.primary.file, d.primary.line)
                                              != (primary.file, primary.line)) for d in already)
