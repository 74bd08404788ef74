"""AD165: second derivatives taken with one vector-Jacobian product of a whole first derivative.

A physics-informed loss needs u_xx and u_yy of a network u(g) of points g = (x, y): the first
derivative is `u_g = torch.autograd.grad(u, g, torch.ones_like(u), create_graph=True)[0]`, one
column per coordinate. Asking for the second derivatives in one more call,
`torch.autograd.grad(u_g, g, grad_outputs=torch.ones_like(u_g), ...)`, differentiates the sum of
u_g's columns: column j of the result is the sum over i of d(u_g[:, i]) / d g[:, j], a row sum of
the Hessian, mixed partials included. Reading its column 0 as u_xx and column 1 as u_yy gives a
Laplacian with twice u_xy added. Nothing fails; the network fits another equation.

Looked at after each `torch.autograd.grad` call, from what is there at run time:
- a call whose result requires grad (create_graph) and whose `inputs` is one tensor: its result is
  remembered, with the input, by weak reference (a few at a time; nothing is kept alive);
- a later call whose `outputs` is such a remembered first derivative, taken again with respect to
  the same input, whose input has several columns (the last axis, two or more coordinates per
  point), and whose `grad_outputs` are all ones (one comparison, only for such a call) is a
  candidate; it is reported once per call line when the source reads the result column by
  column (`d2[:, 0]`, `d2[:, [1]]`, `d2[..., 0]`, in the statement itself or later in the same
  function): the columns are taken as the diagonal second derivatives they are not.
The help replaces the call with one vector-Jacobian product per column, keeping the diagonal
entry of each (`torch.cat([grad(u_g[..., [c]], g, ...)[0][..., [c]] for c in ...], dim=-1)`),
when the call's outputs and inputs are plain names and `torch` is bound in the file.
"""

from __future__ import annotations

import ast
import weakref

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.source_scope import live_frame
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, call_name, location_of, parse_file, replace_node_text, segment, statement_at, statement_location,
)

# How many first derivatives are remembered at once (the newest kept).
MAX_REMEMBERED = 32
# The keywords of torch.autograd.grad that the per-column calls keep as written.
KEPT_KEYWORDS = ("retain_graph", "create_graph", "allow_unused", "materialize_grads")
COLUMN = "column"  # the comprehension's variable in the help


def _single_tensor(value) -> torch.Tensor | None:
    """`value` when it is a tensor, or the tensor of a one-element list or tuple."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (list, tuple)) and len(value) == 1 and isinstance(value[0], torch.Tensor):
        return value[0]
    return None


def _grad_arguments(args: tuple, kwargs: dict) -> tuple:
    """(outputs, inputs, grad_outputs) of a torch.autograd.grad call, each a single tensor or None."""
    names = ("outputs", "inputs", "grad_outputs")
    values = [args[i] if len(args) > i else kwargs.get(name) for i, name in enumerate(names)]
    return tuple(_single_tensor(value) for value in values)


class MixedSecondDerivatives:
    """Remembers first derivatives (weakly) and looks at the calls that differentiate them again."""

    def __init__(self):
        self._first_derivatives: list[tuple[weakref.ref, weakref.ref, object]] = []
        self._lines_reported: set = set()

    def after_grad(self, call, args: tuple, kwargs: dict, result) -> Diagnosis | None:
        """AD165 for the torch.autograd.grad call that just ran, or None; remembers its result
        when it is a first derivative that can be differentiated again."""
        if kwargs.get("is_grads_batched"):
            return None
        outputs, inputs, grad_outputs = _grad_arguments(args, kwargs)
        diagnosis = None
        if outputs is not None and inputs is not None and call is not None and call.site is not None:
            first_site = self._first_derivative_site(outputs, inputs)
            if first_site is not None and call.site not in self._lines_reported \
                    and _mixes_columns(outputs, inputs, grad_outputs):
                diagnosis = _diagnosis(call.site, first_site)
                if diagnosis is not None:
                    self._lines_reported.add(call.site)
        gradient = _single_tensor(result)
        if inputs is not None and gradient is not None and gradient.requires_grad and call is not None:
            self._remember(gradient, inputs, call.site)
        return diagnosis

    def _first_derivative_site(self, outputs: torch.Tensor, inputs: torch.Tensor):
        for gradient_ref, input_ref, site in self._first_derivatives:
            if gradient_ref() is outputs and input_ref() is inputs:
                return site
        return None

    def _remember(self, gradient: torch.Tensor, inputs: torch.Tensor, site) -> None:
        self._first_derivatives = [entry for entry in self._first_derivatives
                                   if entry[0]() is not None and entry[1]() is not None]
        self._first_derivatives.append((weakref.ref(gradient), weakref.ref(inputs), site))
        del self._first_derivatives[:-MAX_REMEMBERED]


def _mixes_columns(outputs: torch.Tensor, inputs: torch.Tensor, grad_outputs: torch.Tensor | None) -> bool:
    """Whether a vector-Jacobian product of `outputs` (a first derivative with respect to
    `inputs`) with `grad_outputs` sums the Hessian's rows over several coordinates."""
    if outputs.shape != inputs.shape or inputs.dim() < 2 or inputs.shape[-1] < 2:
        return False
    if grad_outputs is None or grad_outputs.shape != outputs.shape:
        return False
    with torch.no_grad():
        return bool((grad_outputs == 1).all())


def _grad_call(statement: ast.stmt) -> ast.Call | None:
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call) and call_name(node) == "grad"
             and len(node.args) + len(node.keywords) >= 2]
    return calls[0] if len(calls) == 1 else None


def _column_subscript(node: ast.AST) -> bool:
    """`x[:, 0]`, `x[:, [1]]`, `x[..., 0]`, `x[:, 0:1]`: a constant picked on the last axis
    after full slices (or an ellipsis)."""
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple) or len(node.slice.elts) < 2:
        return False
    *leading, last = node.slice.elts
    if not all((isinstance(e, ast.Slice) and e.lower is None and e.upper is None and e.step is None)
               or (isinstance(e, ast.Constant) and e.value is Ellipsis) for e in leading):
        return False
    if isinstance(last, ast.Constant) and isinstance(last.value, int):
        return True
    if isinstance(last, ast.List) and len(last.elts) == 1 and isinstance(last.elts[0], ast.Constant):
        return isinstance(last.elts[0].value, int)
    return isinstance(last, ast.Slice) and isinstance(last.lower, ast.Constant) and isinstance(last.upper, ast.Constant)


def _first_result(statement: ast.stmt, call: ast.Call) -> ast.Subscript | None:
    """The `grad(...)[0]` node of the statement."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Subscript) and node.value is call and isinstance(node.slice, ast.Constant) \
                and node.slice.value == 0:
            return node
    return None


def _columns_read(filename: str, statement: ast.stmt, first: ast.Subscript) -> bool:
    """Whether the result is read column by column: a column picked from `grad(...)[0]` in the
    statement, or from the name it is assigned to later in the same function."""
    if any(_column_subscript(node) and node.value is first for node in ast.walk(statement)):
        return True
    if not (isinstance(statement, ast.Assign) and statement.value is first and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)):
        return False
    name = statement.targets[0].id
    tree = parse_file(filename)
    if tree is None:
        return False
    function = enclosing_function(tree, statement.lineno)
    return any(_column_subscript(node) and isinstance(node.value, ast.Name) and node.value.id == name
               and node.lineno > statement.end_lineno for node in ast.walk(function))


def _per_column_call(filename: str, call: ast.Call, site) -> str | None:
    """The per-column replacement of `grad(...)[0]`, or None when it cannot be written surely."""
    outputs, inputs = call_argument(call, 0, "outputs"), call_argument(call, 1, "inputs")
    if len(call.args) > 3 or outputs is None or inputs is None:
        return None
    if isinstance(outputs, (ast.List, ast.Tuple)) and len(outputs.elts) == 1:
        outputs = outputs.elts[0]
    if isinstance(inputs, (ast.List, ast.Tuple)) and len(inputs.elts) == 1:
        inputs = inputs.elts[0]
    if not all(isinstance(node, (ast.Name, ast.Attribute)) for node in (outputs, inputs)):
        return None  # an expression would be evaluated once per column
    function_text = segment(filename, call.func)
    outputs_text, inputs_text = segment(filename, outputs), segment(filename, inputs)
    if function_text is None or outputs_text is None or inputs_text is None:
        return None
    if any(COLUMN in text for text in (outputs_text, inputs_text, function_text)):
        return None
    frame = live_frame(site)
    if frame is None or frame.f_globals.get("torch") is not torch:
        return None
    keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
    if any(k.arg is None for k in call.keywords) or set(keywords) - {"outputs", "inputs", "grad_outputs", *KEPT_KEYWORDS}:
        return None
    kept = [f"{name}={segment(filename, value)}" for name, value in keywords.items() if name in KEPT_KEYWORDS]
    creates_graph = isinstance(keywords.get("create_graph"), ast.Constant) and keywords["create_graph"].value is True
    if not creates_graph and "retain_graph" not in keywords:
        kept.append("retain_graph=True")  # the columns share one graph
    column = f"{outputs_text}[..., [{COLUMN}]]"
    arguments = ", ".join([column, inputs_text, f"grad_outputs=torch.ones_like({column})", *kept])
    return (f"torch.cat([{function_text}({arguments})[0][..., [{COLUMN}]] "
            f"for {COLUMN} in range({outputs_text}.shape[-1])], dim=-1)")


def _diagnosis(site, first_site) -> Diagnosis | None:
    statement = statement_at(site.filename, site.lineno)
    call = _grad_call(statement) if statement is not None else None
    first = _first_result(statement, call) if call is not None else None
    if first is None or not _columns_read(site.filename, statement, first):
        return None  # no evidence that the columns are taken as diagonal second derivatives
    note = ("differentiates the sum of the first derivative's columns: column j of the result is the sum over i "
            "of d(grad_i)/d(input_j), mixed partials included, not the second derivative along j")
    primary = statement_location(site.filename, statement, role="mixed partials", note=note)
    related = []
    first_location = location_of(first_site, role="first derivative",
                                 note="one column per coordinate of the input")
    if first_location is not None:
        related.append(first_location)
    helps = []
    new = _per_column_call(site.filename, call, site)
    replacement = replace_node_text(site.filename, statement, first, new) if new is not None else None
    if replacement is not None:
        helps.append(Suggestion("differentiate each column of the first derivative on its own and keep its diagonal "
                                "entry: column j is then the second derivative along coordinate j",
                                replacement, statement_location(site.filename, statement)))
    else:
        helps.append(Suggestion("differentiate each column of the first derivative on its own: "
                                "d2_j = torch.autograd.grad(first[:, [j]], inputs, torch.ones_like(first[:, [j]]), "
                                "create_graph=True)[0][:, [j]]"))
    return Diagnosis(code=codes.MIXED_SECOND_DERIVATIVES, title=codes.title(codes.MIXED_SECOND_DERIVATIVES),
                     severity="warning", primary=primary, related=related, help=helps)
