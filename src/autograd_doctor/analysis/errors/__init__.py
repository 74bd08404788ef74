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
)
from autograd_doctor.analysis.errors.context import ErrorContext
from autograd_doctor.diagnosis.model import Diagnosis

FAMILIES = (views, inference, requires_grad, custom_function, grad_api, numerics, checkpointing, ddp, optimizer,
            inplace_activation, tensor_methods, transforms, func_support, function_io, amp, sparse, unrecorded_writes,
            parameter_assignments, hook_returns)

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
    context = ErrorContext.of(error)
    for pattern, build in MATCHERS:
        if pattern.search(context.message):
            if already and build not in ADDS_TO_EXISTING:
                return []
            diagnosis = build(context, list(already))
            return [diagnosis] if diagnosis is not None else []
    return []
