"""AD159: a custom autograd.Function's backward returned a gradient with more elements than its
input, which the engine summed down to the input's shape without a word (recorded by
recording/widened_gradients.py: neither the input's shape nor any output's, so not a broadcast
forward's gradient on purpose). The gradient the input gets is a sum over an axis the backward's
arithmetic broadcast by mistake: silently wrong.

Reported after the backward() call that ran it, at the backward's one bare `.squeeze()` when
there is one (it drops every size-1 axis, the usual way two axes end up broadcast against each
other), else at the backward's return statement. The help is advice: only the author knows
which axis the arithmetic meant.
"""

from __future__ import annotations

import ast
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, statement_location
from autograd_doctor.recording import widened_gradients


def widened_gradient_diagnosis(recorder, call) -> Diagnosis | None:
    """AD159 for what the backward() call that just ran recorded, or None."""
    found = widened_gradients.take(recorder)
    if not found:
        return None
    widened = found[0]
    backward = getattr(widened.function, "backward", None)
    code = getattr(backward, "__code__", None)
    definition = _definition(code) if code is not None else None
    name = widened.function.__name__
    note = (f"{name}.backward returned a gradient of shape {list(widened.returned)} for its input {widened.index} "
            f"of shape {list(widened.expected)}; autograd accepts a gradient the input's shape expands to and sums "
            "it down, so the input got a sum over an axis the backward's arithmetic broadcast: its gradient is wrong")
    site = call.site if call is not None else None
    related = [location for location in [location_of(site, role="backward", note="ran the custom backward")]
               if location is not None]
    primary, bare = None, []
    if isinstance(definition, ast.FunctionDef):
        filename = code.co_filename
        bare = [node for node in ast.walk(definition) if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute) and node.func.attr == "squeeze"
                and not node.args and not node.keywords]
        if len(bare) == 1:
            statement = next((s for s in ast.walk(definition) if isinstance(s, ast.stmt) and not isinstance(
                s, (ast.FunctionDef, ast.For, ast.While, ast.If, ast.With)) and s.lineno <= bare[0].lineno <= s.end_lineno),
                None)
            if statement is not None:
                primary = statement_location(filename, statement, role="broadcast",
                                             note=".squeeze() drops every size-1 axis, the input's too: the "
                                                  "arithmetic after it broadcasts two axes against each other")
        if primary is None:
            returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)]
            if len(returns) == 1:
                primary = statement_location(filename, returns[0], role="gradient",
                                             note=f"returns a gradient of shape {list(widened.returned)} for an "
                                                  f"input of shape {list(widened.expected)}")
    if primary is None:
        if not related:
            return None
        primary, related = related[0], []
    advice = (f"make {name}.backward return a gradient of the input's shape {list(widened.expected)}: squeeze or "
              "reduce only the axis the forward reduced (`.squeeze(dim)`, `keepdim=True`), so that no axis "
              "broadcasts against another")
    help_ = _squeeze_the_reduced_axis(primary, bare if primary.role == "broadcast" else [], advice)
    return Diagnosis(code=codes.WIDENED_CUSTOM_GRADIENT, title=codes.title(codes.WIDENED_CUSTOM_GRADIENT),
                     severity="warning", primary=primary, related=related, notes=[note], help=[help_])


def _definition(code) -> ast.FunctionDef | None:
    """The `def` of a code object, its first line being the def's or its first decorator's
    (`@staticmethod` above a Function's backward)."""
    tree = parse_file(code.co_filename)
    return next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == code.co_name
                 and min([node.lineno, *(d.lineno for d in node.decorator_list)]) == code.co_firstlineno),
                None) if tree is not None else None


REDUCTIONS = ("sum", "mean", "amax", "amin", "prod", "logsumexp", "norm")


def _squeeze_the_reduced_axis(primary: Location, bare: list, advice: str) -> Suggestion:
    """`.squeeze()` -> `.squeeze(dim)`, `dim` the axis argument of the one reduction in the same
    statement (`x.sum(dim=dim) / n.squeeze()`): the squeeze then drops the axis the reduction
    removed and no other. Advice when the statement holds no such single reduction."""
    from autograd_doctor.diagnosis.source import replace_node_text, segment, statement_at

    if len(bare) != 1:
        return Suggestion(advice)
    statement = statement_at(primary.file, primary.line)
    axes = [argument for node in ast.walk(statement) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in REDUCTIONS
            for argument in [*node.args[:1], *(k.value for k in node.keywords if k.arg == "dim")]]
    axis = segment(primary.file, axes[0]) if len(axes) == 1 else None
    squeeze = bare[0]
    receiver = segment(primary.file, squeeze.func.value)
    replacement = replace_node_text(primary.file, statement, squeeze, f"{receiver}.squeeze({axis})") \
        if axis is not None and receiver is not None else None
    if replacement is None:
        return Suggestion(advice)
    return Suggestion(f"squeeze only the axis the reduction removed (`.squeeze({axis})`): the division then keeps "
                      "the input's other axes apart, and the backward returns a gradient of the input's shape",
                      replacement, statement_location(primary.file, statement))


def ignored_gradient_diagnosis(recorder, call) -> Diagnosis | None:
    """AD315: a custom Function's backward that never reads the gradient it is given ran, during
    the backward() call that just ran, with one that is not all ones (recorded by
    recording/widened_gradients.py). Reported at the backward's return statement (its one return,
    else its def); the help is advice: only the author knows how the incoming gradient maps onto
    each input's elements."""
    found = widened_gradients.take_ignored(recorder)
    if not found:
        return None
    ignored = found[0]
    backward = getattr(ignored.function, "backward", None)
    code = getattr(backward, "__code__", None)
    definition = _definition(code) if code is not None else None
    name = ignored.function.__name__
    shown = ", ".join(ignored.parameters)
    note = (f"{name}.backward never reads {shown}, the gradient of the loss with respect to the Function's "
            f"output(s): what it returns is the derivative of the output alone. The chain rule multiplies it by "
            f"that gradient, which was {ignored.given} here, so every input of {name} got a wrong gradient "
            f"(wrong in scale, and in sign where the gradient given is negative)")
    site = call.site if call is not None else None
    related = [location for location in [location_of(site, role="backward", note="ran the custom backward")]
               if location is not None]
    primary = None
    if isinstance(definition, ast.FunctionDef):
        returns = [node for node in ast.walk(definition) if isinstance(node, ast.Return)]
        if len(returns) == 1:
            primary = statement_location(code.co_filename, returns[0], role="gradient",
                                         note=f"returns gradients that do not use {shown}")
        else:
            primary = statement_location(code.co_filename, definition, role="defined",
                                         note=f"this backward never reads {shown}")
    if primary is None:
        return None
    advice = (f"multiply what {name}.backward returns for each input by {shown} (the chain rule), mapped onto "
              "that input's elements: elementwise for an elementwise forward, indexed or broadcast the way the "
              "forward gathered or reduced the input; torch.autograd.gradcheck on small double inputs confirms it")
    return Diagnosis(code=codes.IGNORED_INCOMING_GRADIENT, title=codes.title(codes.IGNORED_INCOMING_GRADIENT),
                     severity="warning", primary=primary, related=related, notes=[note], help=[Suggestion(advice)])
