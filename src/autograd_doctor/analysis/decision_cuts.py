"""A hard decision inside a helper of the program cuts its result from the graph (for AD206).

`mask = pred.argmax(1).float()` or `flagged = (scores > 0.5).float()`: indices and comparisons
are integer-valued, so they have no graph, and what the helper computes from them carries no
gradient whatever follows. A loss term computed by such a helper from a tensor that requires grad
changes the loss's value and trains nothing.

Read from the helper's source only, after backward(), once per backward() line (AD206's reading):
its body is followed statement by statement, each name marked as carrying a gradient or not,
starting from its parameters (carrying when the call's argument requires grad). Only straight-line
bodies are read (a branch or a loop: unknown), and only these steps are understood: torch's
functions and tensor methods (carrying when what they read carries), the program's own functions
of the same kind, sizes and shapes, and the decisions (argmax, argmin, argsort, integer and
boolean casts, comparisons), which carry nothing. Anything else is unknown, and unknown is silent.

Where the tensor decided on is a probability whose decision has a differentiable expected value,
the decision's counterpart is given: over two classes of a softmax, `p.argmax(d)` is the indicator
of class 1, whose expected value is the probability of class 1 (`p[:, 1]` for d = 1); for a
sigmoid's probability, `p > 0.5` has the expected value `p`.
"""

from __future__ import annotations

import ast
import types
from dataclasses import dataclass

import torch

from autograd_doctor.diagnosis.source import function_definition

# How many helpers deep the program's own functions are followed.
MAX_DEPTH = 3
# Tensor methods (and torch functions) whose result has no graph: indices, casts to integers or
# booleans, comparisons as methods, sizes.
DECISIONS = frozenset({"argmax", "argmin", "argsort", "long", "int", "bool", "short", "byte", "char",
                       "nonzero", "eq", "ne", "gt", "ge", "lt", "le"})
SIZES = frozenset({"size", "dim", "numel", "shape", "ndim", "dtype", "device"})
# Attributes of a tensor that are the tensor itself, rearranged.
REARRANGED = frozenset({"T", "mT", "H", "real"})


@dataclass
class Decision:
    """A decision on a tensor that carries a gradient: the expression (`pred.argmax(1)`,
    `scores > 0.5`), the tensor decided on, and the statement holding it."""

    node: ast.AST
    receiver: ast.AST
    statement: ast.stmt


@dataclass
class _State:
    carries: bool | None  # None: unknown
    decisions: tuple = ()  # the Decisions that took the gradient away on the way to this value


def decision_cut(definition: ast.FunctionDef, function, call: ast.Call, argument_carries) -> Decision | None:
    """The decision that cuts what `function` (the program's, defined by `definition`) returns
    from the graph when it is called by `call`, where `argument_carries(node)` says whether an
    argument of the call requires grad. None when the result may carry a gradient, nothing
    given to it carries one, or the body cannot be read for sure."""
    parameters = _parameter_states(definition, call, argument_carries)
    if parameters is None or not any(state.carries for state in parameters.values()):
        return None
    result = _function_result(definition, getattr(function, "__globals__", {}), parameters,
                              function.__code__.co_filename, 0)
    if result is None or result.carries is not False or not result.decisions:
        return None
    return result.decisions[0]


def decided_parameter(definition: ast.FunctionDef, decision: Decision) -> str | None:
    """The parameter the decision reads as it was given (`pred` of `pred.argmax(1)`, not rebound
    before the decision's statement), or None."""
    receiver = decision.receiver
    if not isinstance(receiver, ast.Name):
        return None
    names = [argument.arg for argument in definition.args.args]
    if receiver.id not in names:
        return None
    for node in ast.walk(definition):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.lineno < decision.statement.lineno \
                and any(isinstance(target, ast.Name) and target.id == receiver.id
                        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            return None
    return receiver.id


def expected_value_text(decision: Decision, tensor, receiver_text: str) -> str | None:
    """The differentiable counterpart of the decision on `tensor` (the value decided on), as
    text, or None when there is none to give for sure."""
    if not isinstance(tensor, torch.Tensor) or tensor.grad_fn is None:
        return None
    node = decision.node
    if isinstance(node, ast.Compare):
        threshold = node.comparators[0] if len(node.comparators) == 1 else None
        above = len(node.ops) == 1 and isinstance(node.ops[0], (ast.Gt, ast.GtE))
        if above and isinstance(threshold, ast.Constant) and threshold.value == 0.5 \
                and _before_shape_changes(tensor.grad_fn).name() == "SigmoidBackward0":
            return receiver_text
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "argmax"):
        return None
    dim = node.args[0] if len(node.args) == 1 else next((k.value for k in node.keywords if k.arg == "dim"), None)
    keepdim = next((k.value for k in node.keywords if k.arg == "keepdim"), None)
    decided_dim = _int_constant(dim)
    if len(node.args) > 1 or decided_dim is None \
            or any(k.arg not in ("dim", "keepdim") for k in node.keywords) \
            or (keepdim is not None and not (isinstance(keepdim, ast.Constant) and keepdim.value in (True, False))):
        return None
    if tensor.grad_fn.name() != "SoftmaxBackward0" or not tensor.dim():
        return None
    softmax_dim = getattr(tensor.grad_fn, "_saved_dim", None)
    if not isinstance(softmax_dim, int):
        return None
    if softmax_dim >= 2 ** 63:
        softmax_dim -= 2 ** 64  # a negative dim is saved as an unsigned integer
    if softmax_dim % tensor.dim() != decided_dim % tensor.dim() or tensor.shape[decided_dim] != 2:
        return None  # not the softmax's classes, or not two of them
    index = "1:2" if keepdim is not None and keepdim.value else "1"
    prefix = "..., " if decided_dim < 0 and decided_dim == -1 else ":, " * decided_dim if decided_dim >= 0 else None
    if prefix is None:
        return None
    return f"{receiver_text}[{prefix}{index}]"


# Nodes of operations that only select or rearrange elements: a sigmoid's probabilities stay
# probabilities through them, element by element.
SHAPE_ONLY = frozenset({"SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2", "UnsqueezeBackward0",
                        "ViewBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0", "SelectBackward0",
                        "SliceBackward0", "TBackward0", "TransposeBackward0", "PermuteBackward0",
                        "CloneBackward0", "ExpandBackward0", "FlattenBackward0"})


def _before_shape_changes(grad_fn):
    """The node that made the values `grad_fn`'s chain of shape-only operations starts from."""
    while grad_fn is not None and grad_fn.name() in SHAPE_ONLY and grad_fn.next_functions \
            and grad_fn.next_functions[0][0] is not None:
        grad_fn = grad_fn.next_functions[0][0]
    return grad_fn


def _int_constant(node: ast.AST | None) -> int | None:
    """The integer written as `1` or `-1`, or None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _int_constant(node.operand)
        return -value if value is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _parameter_states(definition: ast.FunctionDef, call: ast.Call, argument_carries) -> dict | None:
    arguments = definition.args
    if arguments.vararg or arguments.kwarg or arguments.posonlyargs or arguments.kwonlyargs \
            or any(isinstance(argument, ast.Starred) for argument in call.args) \
            or any(keyword.arg is None for keyword in call.keywords):
        return None
    names = [argument.arg for argument in arguments.args]
    given = dict(zip(names, call.args))
    given.update({keyword.arg: keyword.value for keyword in call.keywords})
    if len(call.args) > len(names) or not set(given) <= set(names):
        return None
    defaulted = names[len(names) - len(arguments.defaults):] if arguments.defaults else []
    states = {}
    for name in names:
        if name in given:
            states[name] = _State(bool(argument_carries(given[name])))
        elif name in defaulted:
            states[name] = _State(False)  # a default is a constant of the definition
        else:
            return None
    return states


def _function_result(definition: ast.FunctionDef, global_values: dict, names: dict, filename: str,
                     depth: int) -> _State | None:
    """What the straight-line body returns, given the states of its parameters; None: unknown."""
    body = list(definition.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    names = dict(names)
    for statement in body:
        if isinstance(statement, ast.Return):
            if statement.value is None:
                return None
            return _evaluate(statement.value, statement, names, global_values, filename, depth)
        if isinstance(statement, ast.Assign):
            state = _evaluate(statement.value, statement, names, global_values, filename, depth)
            if state.carries is None:
                return None
            for target in statement.targets:
                targets = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                if not all(isinstance(name, ast.Name) for name in targets):
                    return None
                names.update({name.id: state for name in targets})
            continue
        if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name) \
                and statement.target.id in names:
            before = names[statement.target.id]
            added = _evaluate(statement.value, statement, names, global_values, filename, depth)
            if added.carries is None:
                return None
            names[statement.target.id] = _State(before.carries or added.carries, before.decisions + added.decisions)
            continue
        return None  # a branch, a loop, a call for its effect: not read
    return None


def _evaluate(node: ast.AST, statement: ast.stmt, names: dict, global_values: dict, filename: str,
              depth: int) -> _State:
    """Whether `node` carries a gradient, with the decisions that took a gradient away from it."""
    def unknown():
        return _State(None)

    def combine(parts: list) -> _State:
        states = [_evaluate(part, statement, names, global_values, filename, depth) for part in parts]
        if any(state.carries is None for state in states):
            return unknown()
        return _State(any(state.carries for state in states), tuple(d for s in states for d in s.decisions))

    if isinstance(node, ast.Constant):
        return _State(False)
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        value = global_values.get(node.id, _MISSING)
        if isinstance(value, torch.Tensor):
            return _State(value.requires_grad)
        if isinstance(value, (int, float, str, types.ModuleType)) and not isinstance(value, bool) or value is None:
            return _State(False)
        return unknown()
    if isinstance(node, ast.Compare):
        state = combine([node.left, *node.comparators])
        if state.carries:
            return _State(False, (Decision(node, node.left, statement),))
        return state
    if isinstance(node, (ast.BinOp,)):
        return combine([node.left, node.right])
    if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        return combine([node.operand])
    if isinstance(node, (ast.Tuple, ast.List)):
        return combine(list(node.elts))
    if isinstance(node, ast.Subscript):
        return combine([node.value])  # an index carries no gradient
    if isinstance(node, ast.Attribute):
        if node.attr in SIZES:
            return _State(False)
        if node.attr in REARRANGED:
            return combine([node.value])
        return unknown()
    if isinstance(node, ast.Call):
        return _call(node, statement, names, global_values, filename, depth, combine)
    return unknown()


def _call(node: ast.Call, statement: ast.stmt, names: dict, global_values: dict, filename: str, depth: int,
          combine) -> _State:
    arguments = [*node.args, *(keyword.value for keyword in node.keywords)]
    if any(isinstance(argument, ast.Starred) for argument in node.args) or any(k.arg is None for k in node.keywords) \
            or any(k.arg == "requires_grad" for k in node.keywords):
        return _State(None)
    function = node.func
    if isinstance(function, ast.Attribute) and _is_torch(function.value, global_values):
        # torch.argmax(x, 1), torch.sqrt(x), F.conv2d(x, w): carrying when what it reads carries.
        state = combine(arguments)
        if function.attr in DECISIONS and state.carries and arguments:
            return _State(False, (Decision(node, arguments[0], statement),))
        return state
    if isinstance(function, ast.Attribute):
        # A method of a tensor the body computed: `x.view(...)`, `x.argmax(1)`.
        receiver = combine([function.value])
        if receiver.carries is None:
            return receiver
        if function.attr in SIZES:
            return _State(False)
        if function.attr in DECISIONS and receiver.carries:
            return _State(False, (Decision(node, function.value, statement),))
        given = combine(arguments)
        if given.carries is None:
            return given
        return _State(receiver.carries or given.carries, receiver.decisions + given.decisions)
    if isinstance(function, ast.Name) and function.id not in names and depth < MAX_DEPTH:
        helper = global_values.get(function.id)
        code = getattr(helper, "__code__", None)
        if code is None or code.co_filename != filename:
            return _State(None)
        definition = function_definition(code)
        if not isinstance(definition, ast.FunctionDef):
            return _State(None)
        parameters = _parameter_states(definition, node, lambda argument: combine([argument]).carries)
        if parameters is None or any(combine([argument]).carries is None for argument in arguments):
            return _State(None)
        inner = _function_result(definition, getattr(helper, "__globals__", {}), parameters, filename, depth + 1)
        if inner is None:
            return _State(None)
        given = combine(arguments)
        if given.carries and not inner.carries:
            return _State(None)  # a decision in a helper of the helper: not followed (unknown)
        return _State(inner.carries, given.decisions)
    return _State(None)


def _is_torch(node: ast.AST, global_values: dict) -> bool:
    """`torch`, `torch.nn.functional`, `F`: a name (or attribute chain) bound to a torch module."""
    while isinstance(node, ast.Attribute):
        node = node.value
    if not isinstance(node, ast.Name):
        return False
    value = global_values.get(node.id)
    return isinstance(value, types.ModuleType) and value.__name__.split(".")[0] == "torch"


_MISSING = object()
