"""AD160: `F.cross_entropy` / `nn.CrossEntropyLoss` (or a `log_softmax`) given a softmax's
output: the scores are normalised twice.

`cross_entropy` takes raw scores (logits) and applies `log_softmax` itself. Given probabilities,
the output of an `nn.Softmax` layer ending the classifier or of `F.softmax`, it computes the
cross-entropy of `softmax(p)`: every input lies in [0, 1], the loss is bounded and nearly flat,
and its gradient is a small fraction of the intended one (an auxiliary-classifier GAN's class
head barely trained, nocotan/pytorch-lightning-gans#9). Nothing is raised.

Looked at once per backward() line, on its graph (its links stay after backward()): a
`LogSoftmaxBackward0` whose input is, through shape-only nodes, a `SoftmaxBackward0` over the same
dimension. The line to change is read from the source of the files around backward() (those of
the modules bound there included): the one `nn.Softmax(...)` layer built there, or the one
`softmax(...)` whose result a `cross_entropy` call takes. The help drops that softmax: a layer
that is an argument of `nn.Sequential(...)` is removed from it, one assigned on its own becomes
`nn.Identity()`, a functional softmax read only by the loss gives the loss its input. Where the
loss reads part of the softmax's own axis (a slice of a softmax over two heads' concatenated
scores, pytorch-adapt's SymNets loss in docs/real-code.md's twenty-second set), dropping the softmax
would normalise over that part alone: the help names `nll_loss` of the log of the probabilities.
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.probability_inputs import is_softmax_call
from autograd_doctor.analysis.source_scope import backward_roots, graph_nodes, user_files_around
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    call_argument, location_of, parse_file, replace_node_text, segment, statement_location,
)

# Nodes that only reshape, move or pick elements: the softmax's output reaches the log_softmax
# through them unchanged in value.
SHAPE_ONLY = {"ViewBackward", "UnsafeViewBackward", "ReshapeAliasBackward", "PermuteBackward", "TransposeBackward",
              "TBackward", "SqueezeBackward", "UnsqueezeBackward", "CloneBackward", "ToCopyBackward",
              "SelectBackward", "SliceBackward", "ExpandBackward", "ContiguousBackward"}
CROSS_ENTROPY_NAMES = {"cross_entropy", "CrossEntropyLoss"}
MAX_NODES = 4096


def _kind(node) -> str:
    return re.sub(r"\d+$", "", type(node).__name__)


def _dim(node) -> int | None:
    """The saved softmax dimension (the engine keeps -1 as 2**64 - 1; the saved tensors, which
    would give the number of dimensions, are freed once backward() ran)."""
    dim = getattr(node, "_saved_dim", None)
    if dim is None:
        return None
    return dim - 2 ** 64 if dim >= 2 ** 63 else dim


def _same_dim(softmax, log_softmax) -> bool:
    """Whether two saved dimensions are the same axis, as far as they tell: a negative one counts
    from the end, which only the freed tensors could map to an index, so it is taken as the same."""
    first, second = _dim(softmax), _dim(log_softmax)
    return first is None or second is None or first < 0 or second < 0 or first == second


def normalised_twice(roots: list) -> bool:
    """Whether the graph under `roots` holds a log_softmax of a softmax's output (over the same
    dimension where no reshape lies between them)."""
    return _double_normalisation(roots) is not None


def _double_normalisation(roots: list) -> str | None:
    """None, or how the log_softmax meets the softmax's output: "part" where the first node above
    the softmax keeps only part of the softmax's own axis (`p[:, :k]`, `p.narrow(1, ...)`: the
    probabilities of a wider softmax), "whole" otherwise."""
    walked, _ = graph_nodes(roots, max_nodes=MAX_NODES)
    for node in walked:
        if _kind(node) != "LogSoftmaxBackward":
            continue
        below, above, reshaped = node.next_functions[0][0] if node.next_functions else None, None, False
        for _ in range(8):
            if below is None or _kind(below) not in SHAPE_ONLY:
                break
            reshaped, above = True, below
            below = below.next_functions[0][0] if below.next_functions else None
        if below is not None and _kind(below) == "SoftmaxBackward" and (reshaped or _same_dim(below, node)):
            return "part" if above is not None and _keeps_part_of_axis(above, below) else "whole"
    return None


def _keeps_part_of_axis(picker, softmax) -> bool:
    """Whether `picker`, the node right above `softmax`, is a slice or select that keeps only part
    of the softmax's axis. Only where the saved sizes tell (they are ints and outlive backward());
    otherwise False, and the help stays the one for a whole softmax."""
    kind = _kind(picker)
    sizes = getattr(picker, "_saved_self_sym_sizes", None)
    dim, softmax_dim = getattr(picker, "_saved_dim", None), _dim(softmax)
    if kind not in ("SliceBackward", "SelectBackward") or not sizes or dim is None or softmax_dim is None:
        return False
    axis = softmax_dim + len(sizes) if softmax_dim < 0 else softmax_dim
    if axis != dim or not 0 <= dim < len(sizes):
        return False
    length = int(sizes[dim])
    if kind == "SelectBackward":
        return length > 1
    start, end, step = (getattr(picker, f"_saved_{name}", None) for name in ("start", "end", "step"))
    if step is None:
        return False
    return len(range(*slice(start, end, step).indices(length))) < length


def double_softmax_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD160 for the backward() call that just ran, or None."""
    roots = [root.grad_fn for root in backward_roots(args, kwargs) if root.grad_fn is not None]
    how = _double_normalisation(roots) if roots else None
    if how is None:
        return None
    sites = {}
    for filename in user_files_around(call):
        for found in _softmax_layers(filename) + _softmax_loss_inputs(filename):
            sites.setdefault((found[1], found[2].lineno), found)  # one per statement
    only = next(iter(sites.values())) if len(sites) == 1 else None
    return _diagnosis(only, call.site if call is not None else None, part=how == "part")


def _is_softmax_layer(node: ast.AST) -> bool:
    """`nn.Softmax(...)`, `torch.nn.Softmax(...)`, `Softmax(...)`."""
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    return (isinstance(function, ast.Attribute) and function.attr == "Softmax") or \
        (isinstance(function, ast.Name) and function.id == "Softmax")


def _statements(tree: ast.AST):
    return (node for node in ast.walk(tree) if isinstance(node, ast.stmt))


def _softmax_layers(filename: str) -> list[tuple]:
    """("layer", file, statement, the nn.Softmax call, the nn.Sequential call holding it or None)."""
    tree = parse_file(filename)
    found = []
    for statement in _statements(tree) if tree is not None else ():
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.While,
                                  ast.With, ast.Try)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call) and any(_is_softmax_layer(argument) for argument in node.args) \
                    and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "Sequential":
                layer = next(argument for argument in node.args if _is_softmax_layer(argument))
                found.append(("layer", filename, statement, layer, node))
            elif _is_softmax_layer(node) and isinstance(statement, ast.Assign) and statement.value is node:
                found.append(("layer", filename, statement, node, None))
    return found


def _softmax_loss_inputs(filename: str) -> list[tuple]:
    """("input", file, statement, the softmax call, the loss call): a cross_entropy call (or a
    call of a name bound to `nn.CrossEntropyLoss(...)`) whose input is a softmax call, or a name
    bound to one just before in the same function and read only by that call."""
    tree = parse_file(filename)
    if tree is None:
        return []
    losses = CROSS_ENTROPY_NAMES | _loss_module_names(tree)
    found = []
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        statements = [node for node in ast.walk(function) if isinstance(node, ast.stmt) and node is not function]
        for statement in statements:
            for loss in (node for node in ast.walk(statement) if isinstance(node, ast.Call)):
                if (getattr(loss.func, "attr", None) or getattr(loss.func, "id", None)) not in losses:
                    continue
                argument = call_argument(loss, 0, "input")
                if is_softmax_call(argument):
                    found.append(("input", filename, statement, argument, loss))
                elif isinstance(argument, ast.Name):
                    bound = _bound_softmax(statements, argument.id, statement.lineno)
                    if bound is not None:
                        found.append(("input", filename, bound, bound.value, loss))
    return found


def _loss_module_names(tree: ast.AST) -> set[str]:
    """Names (or `self.` attributes) the file binds to an `nn.CrossEntropyLoss(...)`."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                (getattr(node.value.func, "attr", None) or getattr(node.value.func, "id", None)) == "CrossEntropyLoss":
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                elif isinstance(target, ast.Attribute):
                    names.add(target.attr)
    return names


def _bound_softmax(statements: list, name: str, line: int) -> ast.Assign | None:
    """The last `name = softmax(...)` before `line`, when `name` is read once after it."""
    bindings = [s for s in statements if isinstance(s, ast.Assign) and s.lineno < line and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    if not bindings:
        return None
    bound = max(bindings, key=lambda s: s.lineno)
    reads = {id(node) for s in statements for node in ast.walk(s) if isinstance(node, ast.Name) and node.id == name
             and isinstance(node.ctx, ast.Load) and node.lineno > bound.lineno}  # a compound statement walks its body too
    reads = len(reads)
    return bound if is_softmax_call(bound.value) and reads == 1 else None


def _dropped(found) -> tuple[str, str] | None:
    """(what the help says, the statement's new text) for the softmax `found` names."""
    kind, filename, statement, softmax, holder = found
    if kind == "layer" and holder is not None:
        kept = [segment(filename, argument) for argument in holder.args if argument is not softmax]
        if None in kept or not kept:
            return None
        keywords = [segment(filename, keyword) for keyword in holder.keywords]
        rebuilt = f"{segment(filename, holder.func)}({', '.join(kept + keywords)})"
        return "remove the nn.Softmax layer: cross_entropy applies log_softmax to the scores itself", \
            replace_node_text(filename, statement, holder, rebuilt)
    if kind == "layer":
        function = segment(filename, softmax.func) or "nn.Softmax"
        return "make the layer an identity: cross_entropy applies log_softmax to the scores itself", \
            replace_node_text(filename, statement, softmax, function[:-len("Softmax")] + "Identity()")
    argument = softmax.func.value if isinstance(softmax.func, ast.Attribute) and softmax.func.attr == "softmax" \
        and not (isinstance(softmax.func.value, ast.Name) and softmax.func.value.id in ("F", "torch", "functional")) \
        and not (isinstance(softmax.func.value, ast.Attribute) and softmax.func.value.attr == "functional") \
        else call_argument(softmax, 0, "input")
    text = segment(filename, argument) if argument is not None else None
    if text is None:
        return None
    return f"give cross_entropy the scores themselves ({text}): it applies log_softmax to them", \
        replace_node_text(filename, statement, softmax, text)


def _diagnosis(found, backward_site, part: bool = False) -> Diagnosis | None:
    """`part`: the loss reads part of the softmax's axis, so dropping the softmax would normalise
    over that part alone, another loss than the one on the joint probabilities: no such help."""
    note = ("cross_entropy applies log_softmax to its input: given a softmax's output (values in [0, 1]), it "
            "normalises them a second time, so the loss is nearly flat and its gradient a small fraction of the "
            "one meant; where the probabilities are also read elsewhere (a prediction's confidence), apply the "
            "softmax there")
    backward = location_of(backward_site, role="backward", note="backpropagates it")
    helps = []
    if found is not None:
        filename, statement = found[1], found[2]
        primary = statement_location(filename, statement, role="softmax",
                                     note="a softmax whose output reaches cross_entropy (log_softmax)")
        dropped = None if part else _dropped(found)
        if dropped is not None and dropped[1] is not None:
            helps.append(Suggestion(dropped[0], dropped[1], statement_location(filename, statement)))
        related = [backward] if backward is not None else []
    else:
        primary, related = backward, []
        if primary is None:
            return None
    if not helps and part:
        helps.append(Suggestion("the loss reads part of a softmax's axis (probabilities normalised together with "
                                "values it does not read): give nll_loss torch.log of those probabilities; dropping "
                                "the softmax would normalise over that part alone, another loss"))
    if not helps:
        helps.append(Suggestion("give cross_entropy the raw scores (drop the softmax before it), or use nll_loss of "
                                "torch.log of the probabilities"))
    return Diagnosis(code=codes.SOFTMAX_BEFORE_CROSS_ENTROPY, title=codes.title(codes.SOFTMAX_BEFORE_CROSS_ENTROPY),
                     severity="warning", primary=primary, related=related, notes=[note], help=helps)
