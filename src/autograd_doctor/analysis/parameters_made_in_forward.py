"""AD207 for a parameter made inside `forward()`: `self.rel_h = nn.Parameter(torch.randn(...))`
there draws a new parameter at every call. The optimizer, built from `model.parameters()` before
the first call, holds none of them, and the one the loss uses is new at every step: it gets a
gradient and never trains; what the model adds from it is fresh noise each time. Nothing fails.

Looked at just before each step(), only when recording/parameter_swaps.py recorded a replacement
of a module's parameter whose site is in a function named `forward` (a replacement needs the name
to hold another parameter already: from the second call on; a lazy `if self.w is None:` made once
is never one): the newest parameter made there got a gradient and no live optimizer holds it.
Reported once per line. Named at the assignment in forward(); the help is advice (make it once, in
`__init__`), since the change moves a line into another method.
"""

from __future__ import annotations

import ast

from autograd_doctor.analysis.stale_optimizer import Budget, held_by_another_optimizer, shapes_of
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, segment, statement_at, statement_location


class ParametersMadeInForward:
    """Per run: the (file, line) of each forward() assignment already reported."""

    def __init__(self) -> None:
        self._reported: set = set()

    def at_step(self, optimizer, step_stack, swaps: list, budget: Budget) -> Diagnosis | None:
        found = []  # (swap, its new parameter), all in the forward() of the first one found
        for swap in swaps:
            site = swap.site
            if site is None or not swap.is_parameter or site.code.co_name != "forward" \
                    or (found and site.code is not found[0][0].site.code):
                continue
            new = swap.new_ref()
            if (site.code.co_filename, site.lineno) in self._reported or new is None or not new.requires_grad \
                    or new.grad is None or any(new is other for _, other in found) \
                    or any(p is new for group in optimizer.param_groups for p in group["params"]) \
                    or any(site.lineno == other.site.lineno for other, _ in found):  # one per line, not per call
                continue
            found.append((swap, new))
        if not found or held_by_another_optimizer([new for _, new in found], optimizer, budget):
            return None
        found.sort(key=lambda item: item[0].site.lineno)
        self._reported.update((swap.site.code.co_filename, swap.site.lineno) for swap, _ in found)
        return _diagnosis(found, step_stack)


def _diagnosis(found: list, step_stack) -> Diagnosis:
    """Named at the first assignment in forward(); the others made there are related lines."""
    swap, parameter = found[0]
    module = swap.module_ref()
    owner = type(module).__name__ if module is not None else "the module"
    filename = swap.site.code.co_filename
    statement = statement_at(filename, swap.site.lineno)
    note = "forward() makes a new parameter here at every call"
    primary = statement_location(filename, statement, role="made", note=note) if statement is not None \
        else location_of(swap.site, role="made", note=note)
    related = [location_of(other.site, role="made", note="and here") for other, _ in found[1:]]
    if step_stack:
        related.append(location_of(step_stack[0], role="step",
                                   note="step() updates only the parameters the optimizer holds"))
    names = ", ".join(f"{owner}.{other.name} ({shapes_of([new])})" for other, new in found)
    made_from = _computed_value(filename, statement)
    if made_from is None:
        notes = [f"{names} {'is' if len(found) == 1 else 'are'} made anew at every call of forward(): the optimizer, "
                 "built before, holds none of them, and the ones the loss uses are new at every step, so they get "
                 "gradients and never train (their values are whatever the line draws)"]
        text = segment(filename, statement) if statement is not None else None
        helps = [Suggestion("make them once, in __init__" + (f" (`{text.strip()}` there)" if text and "\n" not in text
                                                            else "") +
                            ", so that model.parameters() and the optimizer hold them and forward() uses the same "
                            "tensors at every call")]
    else:
        # `nn.Parameter(W.squeeze(0))` of a value forward() computes: the Parameter is a new leaf
        # that shares W's memory but not its graph, so the gradient stops there.
        notes = [f"{names} {'is' if len(found) == 1 else 'are'} made anew at every call of forward() from "
                 f"`{made_from}`: a Parameter of it is a new leaf, so no gradient reaches the tensors it was computed "
                 "from, and the optimizer, built before, holds none of the new ones"]
        helps = [Suggestion(f"use `{made_from}` itself where the module reads it, as a plain tensor (not a "
                            "Parameter), so that its gradient flows back to what computed it: hand it to the layer "
                            "as an argument, or keep it under a name that is not a registered parameter; a value "
                            "the optimizer should train itself is made once, in __init__")]
        swapped_call = _swap_then_call(filename, statement, made_from)
        if swapped_call is not None:
            location, replacement, module_text = swapped_call
            helps.insert(0, Suggestion(
                f"call {module_text} with `{made_from}` in place of its parameter for this call only "
                "(torch.func.functional_call): the same forward values, and the gradient reaches what computed "
                f"`{made_from}`", replacement, location))
    return Diagnosis(code=codes.STALE_OPTIMIZER_PARAMETERS, title=codes.title(codes.STALE_OPTIMIZER_PARAMETERS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


# Calls that make a parameter's first values: a Parameter of their result holds drawn or constant
# values, not a value computed from the model's tensors.
_FACTORIES = frozenset({
    "randn", "rand", "randint", "zeros", "ones", "empty", "full", "eye", "arange", "linspace", "tensor",
    "Tensor", "FloatTensor", "randn_like", "rand_like", "zeros_like", "ones_like", "empty_like", "full_like",
    "normal", "uniform_", "normal_", "zero_", "fill_",
})


def _computed_value(filename: str, statement) -> str | None:
    """The text of `value` in `... = nn.Parameter(value)` when `value` is not made by a factory
    (`torch.randn(...)`, `torch.zeros(...)`, ...) nor a constant: a value computed from others."""
    value = getattr(statement, "value", None)
    if not (isinstance(value, ast.Call) and _name(value.func) == "Parameter" and value.args):
        return None
    argument = value.args[0]
    if isinstance(argument, ast.Constant) or (isinstance(argument, ast.Call) and _name(argument.func) in _FACTORIES):
        return None
    text = segment(filename, argument)
    return text if text and "\n" not in text else None


def _name(function) -> str | None:
    if isinstance(function, ast.Attribute):
        return function.attr
    return function.id if isinstance(function, ast.Name) else None


def _swap_then_call(filename: str, statement, made_from: str):
    """`A.w = nn.Parameter(X)` followed, in the same block, by a statement that calls `A(...)` with
    positional arguments, and later by a statement that puts a tensor back as `A.w`: (the location of
    the first two statements, the second one with the call written
    `torch.func.functional_call(A, {"w": X}, (...,))` and the assignment dropped, the text of A).
    None for any other shape."""
    from autograd_doctor.diagnosis.source import parse_file

    targets = getattr(statement, "targets", None)
    if not (isinstance(statement, ast.Assign) and len(targets) == 1 and isinstance(targets[0], ast.Attribute)):
        return None
    owner_text = segment(filename, targets[0].value)
    tree = parse_file(filename)
    block = next((body for node in ast.walk(tree) if tree is not None
                  for body in (getattr(node, "body", None),) if isinstance(body, list) and statement in body), None)
    if block is None or block.index(statement) + 1 >= len(block):
        return None
    following = block[block.index(statement) + 1]
    calls = [node for node in ast.walk(following) if isinstance(node, ast.Call)
             and segment(filename, node.func) == owner_text]
    if owner_text is None or len(calls) != 1 or calls[0].keywords or \
            any(isinstance(argument, ast.Starred) for argument in calls[0].args):
        return None
    # Only a swap for this call: a later statement of the block puts a tensor back under the same name
    # (`self.conv.weight = original`). Without it the new value is meant to stay (EvolveGCN's
    # evolving weight), and a functional call would change what later calls see.
    target_text = segment(filename, targets[0])
    later = block[block.index(following) + 1:]
    if not any(isinstance(other, ast.Assign) and len(other.targets) == 1
               and segment(filename, other.targets[0]) == target_text for other in later):
        return None
    call = calls[0]
    arguments = ", ".join(segment(filename, argument) for argument in call.args)
    functional = (f"torch.func.functional_call({owner_text}, {{{targets[0].attr!r}: {made_from}}}, "
                  f"({arguments}{',' if len(call.args) == 1 else ''}))")
    from autograd_doctor.diagnosis.source import replace_node_text
    replacement = replace_node_text(filename, following, call, functional)
    if replacement is None or "\n" in replacement:
        return None
    location = statement_location(filename, statement)
    location.end_line, location.end_column = following.end_lineno, following.end_col_offset
    return location, replacement, owner_text
