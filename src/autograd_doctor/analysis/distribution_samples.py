"""A draw with `sample()` from a torch.distributions distribution that has `rsample()`, inside a
module the loss's path goes through: the cut that AD301 finds at the statement calling the module.

`Distribution.sample()` runs under `torch.no_grad()`: the draw carries no gradient to the
distribution's parameters, so whatever the program computes from the draws (a covariance
re-estimated from them, a portfolio, an action) is cut from the network that predicted those
parameters. When that is the only path, the loss has no grad_fn and backward() raises.
`rsample()` draws the same values through the reparameterisation trick, with gradients.

Looked at only where AD301 already found the statement whose inputs carry gradients and whose
result does not (run-time evidence of the cut), and that statement calls a module: the forward
methods of that module and of its submodules of the user's own classes are read for
`d.sample(...)` where `d` is assigned, in the same function, from a distribution class whose
`has_rsample` is true.
"""

from __future__ import annotations

import ast

import torch

from autograd_doctor.analysis.source_scope import user_class_definitions
from autograd_doctor.diagnosis.source import parse_file

# Submodules read per module called (a network of many layers: only the user's own classes count).
MAX_MODULES = 32


def reparameterisable_class(cls) -> bool:
    """A torch.distributions class that always has rsample(): its class says `has_rsample = True`.
    On Independent or TransformedDistribution `has_rsample` is a property (the answer is the
    wrapped distribution's), which the class alone cannot decide: not assumed."""
    return isinstance(cls, type) and issubclass(cls, torch.distributions.Distribution) \
        and getattr(cls, "has_rsample", False) is True


def _reparameterisable(name: str) -> bool:
    return reparameterisable_class(getattr(torch.distributions, name, None))


def _class_definition(module: torch.nn.Module) -> tuple[str, ast.ClassDef] | None:
    filename, classes = user_class_definitions(module)
    return (filename, classes[0]) if classes else None


def _sample_calls(function: ast.FunctionDef) -> list[tuple[ast.stmt, ast.Call]]:
    """(statement, call) for each `d.sample(...)` in `function` whose `d` is assigned from a
    reparameterisable distribution's constructor in the same function."""
    distributions = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name is not None and _reparameterisable(name):
                distributions.add(node.targets[0].id)
    found = []
    for statement in ast.walk(function):
        if not isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)):
            continue
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sample"):
                continue
            receiver = node.func.value
            # `d.sample()` of a distribution assigned above, or `Normal(mu, sigma).sample()` built in place.
            if isinstance(receiver, ast.Name) and receiver.id in distributions \
                    or isinstance(receiver, ast.Call) and _constructed_reparameterisable(receiver) \
                    and not _fixed_arguments(receiver):
                found.append((statement, node))
    return found


# Factories whose result carries no gradient: `Normal(torch.zeros(n), torch.ones(n))` draws noise.
FIXED_FACTORIES = ("zeros", "ones", "zeros_like", "ones_like", "tensor", "full", "full_like")


def _fixed_arguments(call: ast.Call) -> bool:
    """Whether every argument of a distribution built in place is a constant or a tensor factory's
    result: a draw of fixed noise (`Normal(0, 1).sample()`, as a reparameterisation writes by
    hand), which is no cut."""
    arguments = list(call.args) + [keyword.value for keyword in call.keywords]
    return all(isinstance(argument, ast.Constant)
               or isinstance(argument, ast.UnaryOp) and isinstance(argument.operand, ast.Constant)
               or isinstance(argument, ast.Call) and isinstance(argument.func, ast.Attribute)
               and argument.func.attr in FIXED_FACTORIES
               for argument in arguments)


def _methods_reached(filename: str, forward: ast.FunctionDef, class_name: str) -> list[ast.FunctionDef]:
    """`forward` and the methods of its class that it calls as `self.name(...)`, and those they
    call in turn, in the order reached: a draw written in a helper (`self.sample_parameters()`)
    runs in the forward as much as one written there."""
    tree = parse_file(filename)
    definition = next((node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
                       and node.name == class_name), None) if tree is not None else None
    if definition is None:
        return [forward]
    methods = {node.name: node for node in definition.body if isinstance(node, ast.FunctionDef)}
    reached, pending = [], [forward]
    while pending:
        function = pending.pop(0)
        if function in reached:
            continue
        reached.append(function)
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "self" \
                    and node.func.attr in methods:
                pending.append(methods[node.func.attr])
    return reached


def called_forwards(statement: ast.stmt, frame_locals: dict | None):
    """(file, forward, module class) for each module that `statement` calls by name, and each of its
    submodules, whose class is the user's own: the forward methods a cut found at the calling
    statement may hide in (one per class, at most MAX_MODULES modules per called module)."""
    if not frame_locals:
        return
    modules = []
    for node in ast.walk(statement):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            value = frame_locals.get(node.func.id)
            if isinstance(value, torch.nn.Module):
                modules.append(value)
    seen: set = set()
    for top in modules:
        for module in list(top.modules())[:MAX_MODULES]:
            if type(module) in seen:
                continue
            seen.add(type(module))
            found = _class_definition(module)
            if found is None:
                continue
            filename, definition = found
            for function in definition.body:
                if isinstance(function, ast.FunctionDef) and function.name == "forward":
                    yield filename, function, type(module).__name__


def sample_in_called_module(statement: ast.stmt, frame_locals: dict | None) \
        -> tuple[str, list[tuple[ast.stmt, ast.Call]], str] | None:
    """(file, [(statement, call), ...], module class): each reparameterisable distribution's
    `sample()` in the forward of the first module that `statement` calls (or of one of its
    submodules) that has one, or in a method of its class that the forward calls; None when
    there is none."""
    for filename, function, module_class in called_forwards(statement, frame_locals):
        calls = [found for method in _methods_reached(filename, function, module_class)
                 for found in _sample_calls(method)]
        if calls:
            return filename, calls, module_class
    return None


def distribution_carries_grad(value) -> bool | None:
    """Whether a live distribution's parameters (its tensor attributes: `loc`, `scale`, `logits`,
    a base distribution's) require grad; None for anything that is not a distribution."""
    if not isinstance(value, torch.distributions.Distribution):
        return None
    try:
        attributes = list(vars(value).values())
    except TypeError:
        return None
    found = False
    for attribute in attributes[:64]:
        if isinstance(attribute, torch.Tensor):
            found = found or attribute.requires_grad
        elif isinstance(attribute, torch.distributions.Distribution):
            found = found or bool(distribution_carries_grad(attribute))
    return found


def _constructed_reparameterisable(call: ast.Call) -> bool:
    """`torch.distributions.Normal(mu, sigma)` (or `Normal(...)`, `D.Normal(...)`): a constructor of a
    distribution class that always has rsample() (reparameterisable_class)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return bool(name) and _reparameterisable(name)


def sample_calls_cutting(value: ast.AST, frame_locals: dict | None) -> list[ast.Call]:
    """`d.sample(...)` calls in `value` whose distribution is known at run time to carry gradients
    and to have `rsample()`: `d` a live distribution of the frame whose parameters require grad and
    whose `has_rsample` is true, or `Normal(mu, sigma).sample(...)` built in place (its arguments are
    judged by the caller, which found them carrying gradients). The statement's result carries none:
    the draw is the cut, and `rsample()` the same draw with gradients."""
    found = []
    for node in ast.walk(value):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sample"):
            continue
        receiver = node.func.value
        if isinstance(receiver, ast.Name) and frame_locals is not None:
            live = frame_locals.get(receiver.id)
            if distribution_carries_grad(live) and getattr(live, "has_rsample", False) is True:
                found.append(node)
        elif isinstance(receiver, ast.Call) and _constructed_reparameterisable(receiver):
            found.append(node)
    return found
