"""AD243: `torch.autograd.grad(..., allow_unused=True)` returns None for an adapted copy of a
parameter whose gradient the same line computed when it was given the parameter itself.

MAML-style inner loops pass the network its adapted ("fast") weights, `w' = w - lr * g`, as a
`params` dict, and take the next inner gradient with respect to them. A layer whose forward
ignores `params` and reads `self.weight` (HowToTrainYourMAMLPytorch's legacy layer norm) never
uses `w'`: with allow_unused=True its gradient comes back None, the inner loop keeps `w'` as it is,
the layer is never adapted, and the meta-gradient misses that path. Nothing fails.

Judged after each successful autograd.grad call, from what ran: the line's earlier call got a
gradient for the parameter P itself (a leaf); this call returns None for an input computed from P
by an update (a chain of subtractions and additions whose first operand leads back to P), and its
outputs' graph feeds P itself into a forward operation (not an update, not the backward of a
backward that create_graph leaves). That is the forward reading P, not the value it was given; a
layer skipped at this call (stochastic depth) reads neither and is not reported. The module that owns P is looked up among the
modules bound where autograd.grad is called, and its forward's statements that read
`self.<name>` are named (the line to change); the autograd.grad call is a label. Advice only: how
the layer should pick its weights from `params` is the user's design. Only weak references and
ids are kept.
"""

from __future__ import annotations

import ast
import inspect
import weakref

import torch

from autograd_doctor.analysis.source_scope import frame_values, live_frame
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, statement_location

# Update nodes followed from an adapted input back to its parameter, and leaves kept per line.
MAX_CHAIN = 64
MAX_LEAVES = 4096
# Nodes walked to find where the parameter itself is read.
MAX_NODES = 200_000
UPDATE_NODES = {"SubBackward0", "AddBackward0", "SubBackward1", "AddBackward1"}


def _inputs(args: tuple, kwargs: dict) -> list:
    inputs = args[1] if len(args) > 1 else kwargs.get("inputs")
    if isinstance(inputs, torch.Tensor):
        return [inputs]
    try:
        return list(inputs)
    except TypeError:
        return []


def _updated_from(tensor) -> torch.Tensor | None:
    """The leaf `tensor` was computed from by a chain of updates (`w - lr * g`), or None."""
    node = getattr(tensor, "grad_fn", None)
    for _ in range(MAX_CHAIN):
        if node is None:
            return None
        name = node.name()
        if name == "torch::autograd::AccumulateGrad":
            return getattr(node, "variable", None)
        if name not in UPDATE_NODES or not node.next_functions:
            return None
        node = node.next_functions[0][0]
    return None


def _read_directly(args: tuple, kwargs: dict, parameter, after: int) -> bool:
    """Whether the outputs' graph feeds `parameter` itself into a forward operation (a node that
    is neither an update nor the backward of a backward, as a gradient taken with create_graph
    leaves), made after `after` (the newest node of the line's previous call: a gradient taken with
    create_graph feeds the parameter into ordinary operations too): the forward read the parameter,
    not its adapted value."""
    outputs = args[0] if args else kwargs.get("outputs")
    outputs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs or ())
    stack = [t.grad_fn for t in outputs if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    seen = set()
    while stack and len(seen) < MAX_NODES:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for following, _index in node.next_functions:
            if following is None:
                continue
            if getattr(following, "variable", None) is parameter:
                name = node.name()
                if name not in UPDATE_NODES and "BackwardBackward" not in name and node._sequence_nr() > after:
                    return True
            else:
                stack.append(following)
    return False


class UnusedAdaptedInputs:
    def __init__(self):
        self.used: dict = {}  # Site -> {id(leaf): weak leaf} whose gradient a call of the line returned
        self.reported: set = set()
        self.newest: dict = {}  # Site -> the newest node's sequence number when its previous call ended

    def after_grad(self, call, args: tuple, kwargs: dict, result) -> Diagnosis | None:
        site = call.site if call is not None else None
        if site is None or site in self.reported or not isinstance(result, (tuple, list)):
            return None
        inputs = _inputs(args, kwargs)
        if len(inputs) != len(result):
            return None
        used = self.used.setdefault(site, {})
        after = self.newest.get(site, -1)
        self.newest[site] = max([g.grad_fn._sequence_nr() for g in result if isinstance(g, torch.Tensor)
                                 and g.grad_fn is not None] + [call.newest_node or -1])
        missing = []
        for tensor, gradient in zip(inputs, result):
            if not isinstance(tensor, torch.Tensor):
                continue
            if gradient is not None:
                if tensor.is_leaf and len(used) < MAX_LEAVES:
                    try:
                        used[id(tensor)] = weakref.ref(tensor)
                    except TypeError:
                        pass
                continue
            if tensor.is_leaf:
                continue
            parameter = _updated_from(tensor)
            known = used.get(id(parameter)) if parameter is not None else None
            if known is not None and known() is parameter and _read_directly(args, kwargs, parameter, after):
                missing.append(parameter)
        if not missing:
            return None
        self.reported.add(site)
        return _diagnosis(site, missing)


def _owner(frame, parameter) -> tuple[str, torch.nn.Module, str] | None:
    """(the module's path, the module, the parameter's attribute name) among the modules bound in
    the frame, the shortest path first."""
    for name, value in frame_values(frame).items():
        if not isinstance(value, torch.nn.Module):
            continue
        for path, module in value.named_modules(prefix=name):
            for attribute, held in module.named_parameters(recurse=False):
                if held is parameter:
                    return path, module, attribute
    return None


def _reads_in_forward(module, attribute: str) -> tuple[str, list] | None:
    """(the forward's file, its statements that read `self.<attribute>`)."""
    try:
        forward = type(module).forward
        filename = inspect.getsourcefile(forward)
        _lines, first = inspect.getsourcelines(forward)
    except (TypeError, OSError):
        return None
    tree = parse_file(filename) if filename else None
    if tree is None:
        return None
    function = next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == "forward" and node.lineno <= first + 1 and node.end_lineno >= first), None)
    if function is None:
        return None
    reads = [statement for statement in ast.walk(function) if isinstance(statement, ast.stmt)
             and not isinstance(statement, (ast.FunctionDef, ast.If, ast.For, ast.While, ast.With, ast.Try))
             and any(isinstance(node, ast.Attribute) and node.attr == attribute and isinstance(node.value, ast.Name)
                     and node.value.id == "self" for node in ast.walk(statement))]
    return (filename, sorted(reads, key=lambda s: s.lineno)) if reads else None


def _params_branch(module, filename: str, statement: ast.stmt) -> tuple[str, str] | None:
    """(the weights' argument, the statement rewritten with a branch on it) when the forward is one
    `return EXPR` that reads the module's own parameters as `self.<name>`, has an argument P that
    defaults to None (the weights it is given), and another forward of the same file with such an
    argument reads them as `P["<name>"]` (the file's naming of the adapted weights):
    `if P is None: return EXPR` then `return EXPR` with `P["<name>"]` for each `self.<name>`."""
    tree = parse_file(filename)
    if tree is None or not isinstance(statement, ast.Return) or statement.value is None \
            or statement.lineno != statement.end_lineno:
        return None
    functions = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and node.name == "forward"]
    own = next((f for f in functions if f.body and f.body[-1] is statement or statement in f.body), None)
    if own is None or len(own.body) != 1:
        return None

    def given_argument(function) -> str | None:
        arguments = function.args.args
        defaults = dict(zip([a.arg for a in arguments][len(arguments) - len(function.args.defaults):],
                            function.args.defaults))
        found = [name for name, value in defaults.items() if isinstance(value, ast.Constant) and value.value is None]
        return found[0] if len(found) == 1 else None

    given = given_argument(own)
    if given is None:
        return None
    named = any(f is not own and given_argument(f) == given and any(
        isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == given
        and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) for node in ast.walk(f))
        for f in functions)
    if not named:
        return None
    parameters = {name for name, _ in module.named_parameters(recurse=False)}
    reads = [node for node in ast.walk(statement.value) if isinstance(node, ast.Attribute)
             and isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in parameters]
    if not reads:
        return None
    from autograd_doctor.diagnosis.source import source_line

    line = source_line(filename, statement.lineno)
    expression = line[statement.value.col_offset:statement.value.end_col_offset]
    start = statement.value.col_offset
    rewritten = expression
    for node in sorted(reads, key=lambda n: n.col_offset, reverse=True):
        rewritten = (rewritten[:node.col_offset - start] + f'{given}["{node.attr}"]'
                     + rewritten[node.end_col_offset - start:])
    return given, f"if {given} is None:\n    return {expression}\nreturn {rewritten}"


def _diagnosis(site, missing: list) -> Diagnosis | None:
    frame = live_frame(site)
    owner = _owner(frame, missing[0]) if frame is not None else None
    described = f"`{owner[0]}.{owner[2]}`" if owner is not None else "a parameter"
    grad_call = location_of(site, role="grad",
                            note=f"returns None for the adapted value of {described} (allow_unused=True): the "
                                 "forward did not use it")
    notes = [f"the gradient for {described} itself came back from this line at an earlier call, when the "
             "parameter was the input; the adapted value computed from it (an update `w - lr * g`) is unused, so the "
             "forward reads the parameter, not the weights it is given: that layer is never adapted and the "
             "meta-gradient misses its inner-loop path (no error)"]
    primary, related, reads = grad_call, [], None
    if owner is not None:
        reads = _reads_in_forward(owner[1], owner[2])
        if reads is not None:
            filename, statements = reads
            primary = statement_location(filename, statements[0], role="reads",
                                         note=f"{type(owner[1]).__name__}.forward reads self.{owner[2]} whatever "
                                              "weights it is given")
            related = [grad_call] + [statement_location(filename, s, role="reads") for s in statements[1:3]]
    helps = []
    if owner is not None and reads is not None:
        branch = _params_branch(owner[1], reads[0], reads[1][0])
        if branch is not None:
            given, text = branch
            helps.append(Suggestion(
                f"use the weights {type(owner[1]).__name__}.forward is given when {given} is not None, named as the "
                f"other layers of the file read theirs ({given}[\"{owner[2]}\"]); its own parameters stay the "
                "default", text, statement_location(reads[0], reads[1][0])))
    helps += [Suggestion(f"make {type(owner[1]).__name__ if owner else 'the layer'}.forward use the weights it is given "
                        f"(params[\"{owner[2] if owner else 'weight'}\"] when params is not None), as the layers whose "
                        "adapted weights get gradients do")]
    return Diagnosis(code=codes.ADAPTED_WEIGHT_UNUSED, title=codes.title(codes.ADAPTED_WEIGHT_UNUSED),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


__all__ = ["UnusedAdaptedInputs"]
