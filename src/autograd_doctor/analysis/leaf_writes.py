"""AD102's open question: a leaf that requires grad was written in place with a value that has
grad history. Is the write copying values in (`torch.no_grad()` is the change) or part of the
computation (write into a copy that is not a leaf)? The written line alone cannot tell:
`w[:] = W` copies fused weights into a layer in one program and paints a network's output onto a
trainable canvas in another. The run can, where an optimizer in the program updates the tensors
the value comes from: no_grad would stop them training, so the write is part of the computation.
Where the run does not decide it, both changes are offered and the report says so.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import FrameType

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.fixes import clone_first_fix, no_grad_fix, written_root
from autograd_doctor.analysis.naming import optimized_tensors, parameter_path, source_leaves, variable_for
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, segment, statement_location

# In-place ops that replace the leaf's values (rather than combine them with the value).
ASSIGNING_OPS = ("__setitem__", "copy_", "set_", "fill_", "zero_")

COMPUTATION = "computation"  # the run shows the write is part of what is trained
COPY_IN = "copy in"  # the run shows nothing trained comes through the value
UNDECIDED = "undecided"


@dataclass
class LeafWriteIntent:
    kind: str
    note: str
    accumulates: bool  # `+=`, `mul_`: the leaf's own value is combined with the value written
    self_derived: bool = False  # the value written is computed from the leaf alone


def _names(tensors: list[torch.Tensor], frames: list[FrameType], limit: int = 3) -> str:
    named = []
    for tensor in tensors[:limit]:
        named.append(parameter_path(tensor, frames) or variable_for(tensor, frames)
                     or f"a {tuple(tensor.shape)} tensor")
    more = len(tensors) - limit
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def _sources(values: list[torch.Tensor], leaf) -> list[torch.Tensor]:
    """The leaves the written values' gradient would reach, other than the written leaf."""
    found: dict[int, torch.Tensor] = {}
    for value in values:
        for source in (source_leaves(value) if value.grad_fn is not None else [value]):
            if source is not leaf:
                found.setdefault(id(source), source)
    return list(found.values())


def leaf_write_intent(func, args: tuple, leaf, frames: list[FrameType]) -> LeafWriteIntent | None:
    """What the run says about a refused write into a leaf, when the value written requires
    grad (None otherwise: a constant or a manual update, for which no_grad is the change)."""
    if not torch.is_grad_enabled():
        return None
    values = [value for value in args[1:] if isinstance(value, torch.Tensor) and value.requires_grad]
    if not values:
        return None
    accumulates = getattr(func, "__name__", "") not in ASSIGNING_OPS
    sources = _sources(values, leaf)
    optimized = optimized_tensors(frames)
    trained = [source for source in sources if id(source) in optimized]
    if trained:
        optimizer = optimized[id(trained[0])]
        return LeafWriteIntent(COMPUTATION, (
            f"the value written carries gradient to {_names(trained, frames)}, which {optimizer}.step() "
            "updates: the write is part of the computation, and torch.no_grad() around it would stop "
            f"{'it' if len(trained) == 1 else 'them'} from training"), accumulates)
    if not sources and all(value.grad_fn is not None for value in values):
        # `w.copy_(w / w.norm())`, a manifold parameter's `proj_()`: a projection or rescaling of
        # the leaf's own values sets them; nothing else flows into the leaf through the write.
        return LeafWriteIntent(COPY_IN, (
            "the value written is computed from the leaf alone (a projection or rescaling of its own values): "
            "the write sets the leaf's values, it does not compute with anything else"), accumulates,
            self_derived=True)
    if accumulates:
        return LeafWriteIntent(COMPUTATION, (
            "the value written has grad history and the write combines it with the leaf: the write is part "
            "of the computation, not an initialisation or a manual update"), accumulates)
    origin = f" (from {_names(sources, frames)})" if sources else ""
    if optimized:
        return LeafWriteIntent(COPY_IN, (
            f"the value written has grad history{origin}, but no optimizer in the program updates what it "
            "comes from: the write copies values in"), accumulates)
    return LeafWriteIntent(UNDECIDED, (
        f"the run cannot tell what this write is for: the value written has grad history{origin} and no "
        "optimizer in the program says whether that is trained. Copying values in (weights, an "
        "initialisation) wants torch.no_grad(); computing with the leaf wants a copy that is not a leaf"),
        accumulates)


def _rebinding_is_local(filename: str, statement: ast.stmt, root: str) -> bool:
    """Can `root = root.clone()` before the statement stand for the leaf in what follows? Yes when
    it rebinds a function's parameter (the caller's leaf stays as it was), or a name outside any
    loop that no later line reads `.grad` of (in a loop, the next pass would write into the copy
    of the copy; `root.grad` would read the copy's, not the leaf's)."""
    tree = parse_file(filename)
    if tree is None:
        return False
    scope = enclosing_function(tree, statement.lineno)
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        arguments = scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
        if any(argument.arg == root for argument in arguments):
            return True
    for node in ast.walk(scope):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)) and node.lineno <= statement.lineno \
                <= (node.end_lineno or node.lineno):
            return False
        if isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.value, ast.Name) \
                and node.value.id == root and node.lineno > statement.lineno:
            return False
    return True


def non_leaf_copy_fix(filename: str, statement: ast.stmt, message: str) -> Suggestion | None:
    """`x = x.clone()` before the write, where the written name can be rebound safely."""
    written = written_root(statement)
    if not isinstance(written, ast.Name) or not _rebinding_is_local(filename, statement, written.id):
        return None
    found = clone_first_fix(filename, statement, written, message)
    return found[0] if found else None


def leaf_write_helps(intent: LeafWriteIntent, filename: str, statement: ast.stmt, name: str | None,
                     frame=None) -> list[Suggestion]:
    """The changes for a write into a leaf of the given intent (empty for a copy-in: no_grad,
    the usual change, follows)."""
    if intent.kind == COPY_IN:
        return []
    shown = name or "the leaf"
    copy = non_leaf_copy_fix(filename, statement, (
        f"write into a copy of {shown} that is not a leaf: the copy is part of the graph, so the gradient reaches "
        f"{shown} and the value written" + ("" if intent.kind == COMPUTATION
                                            else " (if the write is part of the computation)")))
    new_name = Suggestion(
        f"compute it out of place under a new name (new = {shown}.clone(); new[...] = ..., or new = {shown} + ...) "
        f"and use the new name in the lines below; {shown} stays the leaf that is trained"
        + (" (torch.no_grad() here would drop the gradient of the value written)" if intent.kind == COMPUTATION
           else " (if the write is part of the computation)"))
    helps = [copy or new_name]
    if intent.kind == UNDECIDED:
        without_recording = no_grad_fix(filename, statement, frame)
        without_recording.message = ("if the write copies values in (weights, an initialisation), do it without "
                                     "recording it")
        helps.append(without_recording)
    return helps


def _is_argument_of_enclosing_function(filename: str, statement: ast.stmt, root: str) -> bool:
    tree = parse_file(filename)
    if tree is None:
        return False
    scope = enclosing_function(tree, statement.lineno)
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    arguments = scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs
    return any(argument.arg == root for argument in arguments)


def input_leaf_helps(leaf, parameter: str | None, frames: list[FrameType], filename: str,
                     statement: ast.stmt, name: str | None) -> tuple[str, list[Suggestion]] | None:
    """A constant written into a leaf that is an input, not something trained: the leaf arrives as
    an argument of the function that writes into it, is neither a parameter nor held by the
    program's optimizers, and nothing has been backpropagated into it yet. It requires grad so that
    gradients with respect to it can be taken (a PDE residual, a saliency map), and the write is a
    step of computing with it (`x *= 2 * np.pi` in a feature transform). torch.no_grad() around the
    write would change the caller's tensor, and any memory it shares (a NumPy array behind
    torch.as_tensor), at every call; a copy made inside the function is the change. None when the
    run does not show all of that."""
    if parameter or isinstance(leaf, torch.nn.Parameter) or leaf is None or leaf.grad is not None:
        return None
    optimized = optimized_tensors(frames)
    written = written_root(statement)
    if not optimized or id(leaf) in optimized or not isinstance(written, ast.Name) \
            or not _is_argument_of_enclosing_function(filename, statement, written.id):
        return None
    shown = name or written.id
    found = clone_first_fix(filename, statement, written, (
        f"write into a copy of {shown} made inside the function: the copy is part of the graph, so gradients "
        f"with respect to the caller's {shown} still reach it, and the caller's tensor keeps its values"))
    if not found:
        return None
    note = (f"{shown} is an input, not something trained: it requires grad, but no optimizer in the program "
            f"updates it and nothing has been backpropagated into it yet; the write computes with it. "
            f"torch.no_grad() here would change the caller's tensor (and memory it shares, such as a NumPy "
            f"array behind torch.as_tensor) at every call")
    advice = Suggestion(f"if the write is meant to change the caller's {shown} itself (an initialisation), "
                        f"do it under torch.no_grad() where that tensor is made")
    return note, [found[0], advice]



def container_entry_target(statement: ast.stmt, frame: FrameType | None) -> ast.Subscript | None:
    """`state[LOSS]` for `state[LOSS] += v` where `state` is, at run time, a dict or a list (not a
    tensor): the written leaf is the entry itself, and the container has no clone() of its own."""
    if frame is None or not isinstance(statement, ast.AugAssign) or not isinstance(statement.target, ast.Subscript):
        return None
    container = statement.target.value
    if not isinstance(container, ast.Name):
        return None
    from autograd_doctor.analysis.source_scope import frame_values

    value = frame_values(frame).get(container.id)
    return statement.target if isinstance(value, (dict, list)) else None


def container_entry_helps(intent: LeafWriteIntent | None, leaf, parameter: str | None, frames: list[FrameType],
                          filename: str, statement: ast.AugAssign, shown: str) -> list[Suggestion]:
    """`entry = entry + v` for `entry += v` into a container's entry that holds a leaf nothing
    trains (no optimizer holds it, not a parameter): an accumulator started as a leaf that requires
    grad (`torch.zeros(1, requires_grad=True)`, so that backward() works with nothing added). The
    entry then holds a new tensor that carries the gradient of what is added; the leaf stays as it
    was. Empty otherwise (a trained leaf in a container is the author's to rebind)."""
    from autograd_doctor.analysis.fixes import AUGMENTED_OPERATORS
    from autograd_doctor.diagnosis.source import segment, statement_location

    if intent is None or intent.kind != COMPUTATION or not intent.accumulates or parameter \
            or isinstance(leaf, torch.nn.Parameter) or leaf is None or id(leaf) in optimized_tensors(frames):
        return []
    operator = AUGMENTED_OPERATORS.get(type(statement.op))
    value = segment(filename, statement.value)
    if operator is None or value is None:
        return []
    if isinstance(statement.value, (ast.BinOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda)):
        value = f"({value})"
    return [Suggestion(
        f"combine out of place: {shown} then holds a new tensor that carries the gradient of the value, and the "
        f"leaf it held (which no optimizer updates) stays as it was",
        f"{shown} = {shown} {operator} {value}", statement_location(filename, statement))]


def _received(frame: FrameType, leaf) -> bool:
    """The frame's function was handed the leaf as one of its arguments (`self` included)."""
    from autograd_doctor.analysis.naming import frame_locals

    code = frame.f_code
    names = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    values = frame_locals(frame)
    return any(values.get(name) is leaf for name in names)


def owner_frame(leaf, frames: list[FrameType]) -> FrameType | None:
    """The frame where the leaf is owned, for a write made by a helper it was handed to: the
    innermost user frame above the write's whose function did not receive the leaf as an
    argument (`self.tangent = ManifoldParameter(t).proj_()` above `proj_`, above the helper that
    copies into its `dest`). None when the write's own function did not receive it."""
    if leaf is None or not frames or not _received(frames[0], leaf):
        return None
    for frame in frames[1:]:
        if not _received(frame, leaf):
            return frame
    return None


# In-place ops that scale the written tensor by a factor.
_SCALING_METHODS = ("mul_", "div_")


def _reads_gradient_of(expression: ast.AST, root: str) -> bool:
    return any(isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.value, ast.Name)
               and node.value.id == root for node in ast.walk(expression))


def _assignments_before(scope: ast.AST, statement: ast.stmt) -> dict[str, list[ast.AST]]:
    assignments: dict[str, list[ast.AST]] = {}
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.lineno < statement.lineno \
                and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    assignments.setdefault(target.id, []).append(node.value)
    return assignments


def _traced(expression: ast.AST, assignments: dict[str, list[ast.AST]], root: str) -> list[ast.AST]:
    """The expression and the values of the names it reads, through the assignments, transitively."""
    found, pending, seen = [], [expression], set()
    while pending:
        current = pending.pop()
        found.append(current)
        for node in ast.walk(current):
            if isinstance(node, ast.Name) and node.id != root and node.id not in seen:
                seen.add(node.id)
                pending.extend(assignments.get(node.id, []))
    return found


def _divides_by_gradient(scope: ast.AST, statement: ast.stmt, factor: ast.AST, root: str, divides: bool) -> bool:
    """Whether the scaling is by the inverse of something computed from `root.grad`: the write
    divides by a factor computed from it (`p.div_(p.grad.norm())`), or multiplies by a factor with a
    division by it (`clip_coef = max_norm / (torch.norm(p.grad) + eps)`), traced through the plain
    assignments of the write's function that come before it. A factor that only grows with the
    gradient (`1 - lr * p.grad.abs().mean()`) is an update rule, not a clip: not shown."""
    assignments = _assignments_before(scope, statement)

    def from_gradient(expression: ast.AST) -> bool:
        return any(_reads_gradient_of(traced, root) for traced in _traced(expression, assignments, root))

    if divides:
        return from_gradient(factor)
    return any(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and from_gradient(node.right)
               for traced in _traced(factor, assignments, root) for node in ast.walk(traced))


def gradient_scaling_helps(leaf, frame: FrameType | None, filename: str, statement: ast.stmt,
                           name: str | None) -> tuple[str, list[Suggestion]] | None:
    """A leaf scaled in place (`p.mul_(c)`, `p *= c`, `p.div_(c)`, `p /= c`) by a factor its function
    computed as the inverse of something of that leaf's own gradient (`c = max_norm / p.grad.norm()`),
    while the leaf has a gradient: the scaling clips or normalises the gradient, and the write lands on the leaf instead.
    torch.no_grad() around it would run and scale the parameter. The change is the same scaling on
    `p.grad`. None when the source or the run does not show all of that."""
    if leaf is None or leaf.grad is None or frame is None:
        return None
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, (ast.Mult, ast.Div)):
        receiver, factor = statement.target, statement.value
        divides = isinstance(statement.op, ast.Div)
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr in _SCALING_METHODS \
            and len(statement.value.args) == 1 and not statement.value.keywords:
        receiver, factor = statement.value.func.value, statement.value.args[0]
        divides = statement.value.func.attr == "div_"
    else:
        return None
    if not isinstance(receiver, ast.Name) or frame.f_locals.get(receiver.id) is not leaf:
        return None
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if scope is None or not _divides_by_gradient(scope, statement, factor, receiver.id, divides):
        return None
    root = receiver.id
    gradient = f"{root}.grad.detach()" if leaf.grad.requires_grad else f"{root}.grad"
    text = segment(filename, statement) or ""
    if not text.startswith(root):
        return None
    replacement = gradient + text[len(root):]
    shown = name or root
    note = (f"the factor divides by a value computed from {root}.grad, and {shown} has a gradient: scaling by it clips or "
            f"normalises the gradient, but the write scales {shown} itself; torch.no_grad() around it would "
            f"run and change the parameter instead of its gradient")
    helps = [Suggestion(f"scale the gradient, not the parameter (the factor comes from {root}.grad)", replacement,
                        statement_location(filename, statement))]
    without_recording = no_grad_fix(filename, statement, frame)
    without_recording.message = "if the parameter itself is meant to be scaled, do it without recording it"
    helps.append(without_recording)
    return note, helps
