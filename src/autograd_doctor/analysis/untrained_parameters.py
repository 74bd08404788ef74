"""AD213: parameters get gradients at every backward(), but no optimizer holds them.

A loss with learnable parameters (center loss, an ArcFace head, learnable weights of a
multi-task loss) is often built next to the model and left out of the optimizer
(`SGD(model.parameters())`): its parameters get gradients and never change. Nothing fails.

Looked at only at the first two step() calls of each optimizer, from what is there at run time:
- at the first: the `nn.Parameter`s, and the modules of the user's own classes that declare
  one (in training mode), bound to names around the step() call (the function's locals and
  globals, and the attributes of its `self`), whose parameters got a gradient while none of them
  is in this optimizer or in any other live optimizer (one scan of the garbage collector's
  objects, only when there is such a candidate). A module also needs evidence that it is
  trained with the model, not beside it on purpose: in the function around step(), it is called
  on a value computed from a module this optimizer steps (`centers(features, y)` after
  `features = model(x)`); a teacher or a target network is called on the data. A parameter needs
  a statement there that computes from it and from the model together (`scale * model(x)`). A fingerprint of each candidate's
  values (two float sums and the version counter; no tensor is kept) is noted;
- at the second: a candidate whose parameters got gradients again and whose fingerprint did not
  change (no update of any kind, `.data` writes included) is reported.
The line named is the optimizer's construction; the help adds the parameters to it with
`add_param_group` right after it (or after the candidate is made, when that comes later).
A dict bound around step() that is shaped as a parameter group (`{"params": [...], "lr": ...}`),
whose parameters all got gradients and none of which any optimizer holds, is a candidate too: a
group built and left out of the list the optimizer was built from; the help adds the group itself.
So is a plain leaf tensor that requires grad, where the optimizer holds such hand-made weights
(`w1 = torch.randn(...).requires_grad_()`), used with them by a statement around step() or in a
function of the same file, and not an input the file differentiates with respect to
(`torch.autograd.grad(u, x)`); where the optimizer is built from a list literal bound just before
(`params = [w1, w2]`), that list is named and the help adds the tensor to it.
So is a module of the user's own class bound around step() that wraps the module the optimizer
was built from (`MetaSGD(policy)` holding `policy` and learned learning rates, with
`Adam(policy.parameters())`): the optimizer holds exactly the wrapped module's parameters, and
the wrapper's other parameters got gradients and are in no optimizer. The help builds the
optimizer from the wrapper's parameters, which hold the wrapped module's.
So is an attribute of a module of the user's class, held by a module this optimizer trains,
that is not a Parameter but the output of one operation chain on an nn.Parameter that nothing
else keeps (`self.a = Parameter(x).squeeze()`, `nn.Parameter(g).view(1, -1, 1)`): the module
registers the attribute's value, not the Parameter behind it. It is named where the attribute is
stored; where that statement is `Parameter(...)` followed by method calls, the help moves the
calls inside the `Parameter(...)`, which then stores a Parameter of the same values.
"""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.second_step_checks import CheckedAtSecondStep
from autograd_doctor.analysis.live_values import readable_grad_fn
from autograd_doctor.analysis.source_scope import frame_locals, live_frame, user_class_file
from autograd_doctor.analysis.stale_optimizer import (
    Budget, count_of, held_by_another_optimizer, optimizer_construction, shapes_of,
)
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import location_of, parse_file, segment, statement_location
from autograd_doctor.recording.gradient_states import grad_of


@dataclass
class Candidate:
    """A module or parameter seen with gradients and in no optimizer at an optimizer's first step."""

    name: str  # as the code around step() spells it: `criterion`, `self.log_vars`
    is_module: bool
    parameters: list  # weak references
    fingerprints: list
    kind: str  # the module's class name, or "nn.Parameter", or UNREGISTERED
    made_at: tuple | None = None  # UNREGISTERED: (file, line) of the statement that stores it
    settings: tuple = ()  # LEFT_OUT_GROUP: the ("lr", "0.05") pairs the group names, for the note
    wrapped: str = ""  # WRAPPER: the name around step() of the module the optimizer was built from


# An nn.Parameter kept in a dict or a plain object that a trained module holds (`self.g.edata['w'] =
# nn.Parameter(...)`): the module does not register it, so `model.parameters()` leaves it out.
UNREGISTERED = "unregistered nn.Parameter"
# Modules kept in a plain list, tuple or dict that a trained module holds (`self.hids = []` then
# `self.hids.append(nn.Linear(...))`): only attributes, nn.ModuleList and nn.ModuleDict register a
# submodule, so their parameters are in no `parameters()` either.
UNREGISTERED_MODULES = "modules in a plain container"
# A parameter group built for the optimizer and never given to it (`params = {"lr": 5e-2, "params":
# [...]}` filled in a loop, and the `parameters.append(params)` left out): its parameters are in no
# optimizer, although the dict says how they were meant to train.
LEFT_OUT_GROUP = "parameter group"
# A module of the user's class that wraps the module the optimizer was built from and declares
# parameters of its own beside it (Meta-SGD's learned learning rates around the policy).
WRAPPER = "wrapper module"
# A module attribute computed from an nn.Parameter that nothing keeps (`self.a = Parameter(x).squeeze()`):
# the attribute is the operation's output, a non-leaf tensor, and the Parameter behind it is registered
# nowhere, so `parameters()` never yields it although every backward() gives it a gradient.
DERIVED_ATTRIBUTE = "attribute computed from an nn.Parameter"
# How many single-input graph nodes to follow from the attribute to the Parameter behind it.
_DERIVED_HOPS = 4


class UntrainedParameters(CheckedAtSecondStep):
    """Per run: how far each optimizer has got (first step seen, or done), the candidates noted
    at its first step, and the budget of source scans."""

    def __init__(self) -> None:
        super().__init__()
        self._scans = Budget()

    def candidates(self, optimizer, step_stack) -> list:
        return _candidates(optimizer, step_stack, self._scans)

    def judge(self, optimizer, step_stack, pending: list) -> Diagnosis | None:
        for candidate in pending:
            parameters = [ref() for ref in candidate.parameters]
            if any(p is None or p.grad is None for p in parameters):
                continue
            if [_fingerprint(p) for p in parameters] != candidate.fingerprints:
                continue  # updated some other way (a hand-written step, another optimizer)
            if candidate.kind == UNREGISTERED:
                return _unregistered_diagnosis(step_stack, candidate, parameters)
            if candidate.kind == UNREGISTERED_MODULES:
                return _container_diagnosis(step_stack, candidate, parameters)
            if candidate.kind == DERIVED_ATTRIBUTE:
                return _derived_attribute_diagnosis(step_stack, candidate, parameters)
            if candidate.kind == LEFT_OUT_GROUP:
                return _left_out_group_diagnosis(optimizer, step_stack, candidate, parameters)
            if candidate.kind == WRAPPER:
                diagnosis = _wrapper_diagnosis(optimizer, step_stack, candidate, parameters)
                if diagnosis is not None:
                    return diagnosis
                continue
            return _diagnosis(optimizer, step_stack, candidate, parameters)
        return None


def _fingerprint(parameter: torch.Tensor) -> tuple:
    with torch.no_grad():
        values = parameter.detach()
        return (parameter._version, torch.sum(values, dtype=torch.float64).item(),
                torch.sum(values.abs(), dtype=torch.float64).item())


def _named_values(frame) -> dict:
    """Name (as the code spells it) -> value, around step(): locals, then globals, then the
    attributes of `self`."""
    # Locals first: a module known by two names is looked up under the one the function uses.
    values = dict(frame_locals(frame))
    for name, value in frame.f_globals.items():
        if not name.startswith("__"):
            values.setdefault(name, value)
    owner = values.get("self")
    for name, value in list(getattr(owner, "__dict__", {}).items()):
        values[f"self.{name}"] = value
    if isinstance(owner, torch.nn.Module):
        for name, value in owner._modules.items():
            values[f"self.{name}"] = value
        for name, value in owner._parameters.items():
            values[f"self.{name}"] = value
    return values


def _candidates(optimizer, step_stack, scans: Budget) -> list[Candidate]:
    frame = live_frame(step_stack[0]) if step_stack else None
    if frame is None:
        return []
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    values = _named_values(frame)
    return _named_candidates(optimizer, step_stack, scans, held, values) \
        + _wrapper_candidates(values, held, optimizer, scans)


def _wrapper_candidates(values: dict, held: set, optimizer, scans: Budget) -> list[Candidate]:
    """A module of the user's class, bound around step(), with a submodule whose parameters are
    exactly what this optimizer holds, and parameters of its own beside that submodule that all
    got gradients and that no live optimizer holds: the optimizer was built from the wrapped
    module where the wrapper was meant (learned learning rates left out)."""
    found = []
    names_of = {}
    for name, value in values.items():
        if isinstance(value, torch.nn.Module) and _plain_or_own(name):
            names_of.setdefault(id(value), name)
    for name, wrapper in values.items():
        if not isinstance(wrapper, torch.nn.Module) or not _plain_or_own(name) or not wrapper.training \
                or user_class_file(wrapper) is None:
            continue
        wrapped = next((child for child in wrapper.children()
                        if {id(p) for p in child.parameters()} == held and id(child) in names_of), None)
        if wrapped is None or names_of[id(wrapped)] == name:
            continue
        others = [p for p in wrapper.parameters() if id(p) not in held and p.requires_grad]
        if not others or any(grad_of(p) is None for p in others):
            continue
        if held_by_another_optimizer(others, optimizer, scans):
            continue
        found.append(Candidate(name, True, [weakref.ref(p) for p in others], [_fingerprint(p) for p in others],
                               WRAPPER, wrapped=names_of[id(wrapped)]))
    return found[:1]


def _plain_or_own(name: str) -> bool:
    """A plain name (`meta`) or an attribute of the step's own `self` (`self.model_with_loss`)."""
    return "." not in name or (name.startswith("self.") and name.count(".") == 1)


def _named_candidates(optimizer, step_stack, scans: Budget, held: set, values: dict) -> list[Candidate]:
    stepped = {name for name, value in values.items()
               if (isinstance(value, torch.nn.Module) and any(id(p) in held for p in value.parameters()))
               or (isinstance(value, torch.Tensor) and id(value) in held)}
    found: list[tuple[str, object, list]] = []
    seen: set[int] = set()
    # Weights made by hand (`w = torch.randn(...).requires_grad_()`) in the optimizer: a leaf made
    # the same way and left out of the list it was built from is a candidate too.
    hand_made = any(type(p) is torch.Tensor for group in optimizer.param_groups for p in group["params"])
    for name, value in values.items():
        if isinstance(value, torch.nn.Parameter):
            parameters = [value]
        elif isinstance(value, torch.nn.Module) and value.training and (_declares_parameters(value)
                                                                        or _user_head(value)):
            parameters = list(value.parameters())
        elif hand_made and type(value) is torch.Tensor and value.is_leaf and value.requires_grad and "." not in name:
            parameters = [value]
        else:
            continue
        if id(value) in seen or not parameters or any(id(p) in held for p in parameters):
            continue
        trained = [p for p in parameters if p.requires_grad and grad_of(p) is not None]
        if trained:
            seen.add(id(value))
            found.append((name, value, trained))
    hidden = _unregistered_in_trained_modules(values, held, seen)
    containers = _container_candidates(_modules_in_plain_containers(values, held, seen), optimizer, scans)
    containers += _left_out_group_candidates(values, held, seen, optimizer, scans)
    containers += _derived_attribute_candidates(values, held, seen, optimizer, scans)
    if not found and not hidden:
        return containers
    if not found:
        return _hidden_candidates(hidden, optimizer, scans) + containers
    function_source = _scope_source(step_stack[0])
    if function_source is None:
        return _hidden_candidates(hidden, optimizer, scans) + containers
    derived = _derived_names(function_source, stepped)
    file_tree = parse_file(step_stack[0].filename)
    found = [(name, value, trained) for name, value, trained in found
             if (_called_on(function_source, name, derived | stepped)
                 and (_declares_parameters(value) or _only_called_on(function_source, name, derived | stepped))
                 if isinstance(value, torch.nn.Module)
                 else _used_with(function_source, name, derived | stepped)
                 if isinstance(value, torch.nn.Parameter)
                 else _hand_made_weight(file_tree, function_source, name, derived, stepped))]
    if not found:
        # The bare candidates were beside the model on purpose; what a trained module holds, or a
        # group built for the optimizer, does not depend on them.
        return _hidden_candidates(hidden, optimizer, scans) + containers
    every = [p for _, _, trained in found for p in trained]
    if held_by_another_optimizer(every, optimizer, scans):
        return []  # another optimizer trains them (or the scans are spent: unknown)
    return _hidden_candidates(hidden, optimizer, scans) + containers + [Candidate(name, isinstance(value, torch.nn.Module), [weakref.ref(p) for p in trained],
                      [_fingerprint(p) for p in trained],
                      type(value).__name__ if isinstance(value, torch.nn.Module)
                      else "nn.Parameter" if isinstance(value, torch.nn.Parameter) else "tensor")
            for name, value, trained in found]


def _hand_made_weight(tree: ast.AST | None, scope: ast.AST, name: str, derived: set, stepped: set) -> bool:
    """Whether a plain leaf tensor that requires grad is used as a weight of the model the optimizer
    trains: a statement computes from it and from the stepped tensors together, around step() or
    in a function of the same file (`h = x @ w1` in one statement, `h + out @ v1` in a loop of the
    network's function); and it is not an input the program differentiates with respect to
    (`torch.autograd.grad(u, x)`: a physics-informed network's collocation points)."""
    if tree is None or _differentiated_input(tree, name):
        return False
    if _used_with(scope, name, derived | stepped):
        return True
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and function is not scope \
                and _mentions(function, {name}) \
                and _used_with(function, name, _derived_names(function, stepped) | stepped):
            return True
    return False


def _differentiated_input(tree: ast.AST, name: str) -> bool:
    """Whether the file passes `name` as the inputs of a `grad(...)` call (`torch.autograd.grad(u, x)`,
    `grad(outputs=u, inputs=[x, t])`)."""
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "grad"):
            continue
        inputs = [node.args[1]] if len(node.args) > 1 else []
        inputs += [keyword.value for keyword in node.keywords if keyword.arg == "inputs"]
        if any(_mentions(value, {name}) for value in inputs):
            return True
    return False


def _left_out_group_candidates(values: dict, held: set, seen: set, optimizer, scans: Budget) -> list[Candidate]:
    """A dict bound to a name around step() that is shaped as a parameter group (its "params" a list
    or tuple of nn.Parameters), none of whose parameters this optimizer holds, whose parameters
    that require grad all got gradients, and that no other live optimizer holds either."""
    found = []
    for name, value in values.items():
        if not isinstance(value, dict) or not isinstance(value.get("params"), (list, tuple)) or "." in name:
            continue
        group = [p for p in value["params"] if isinstance(p, torch.nn.Parameter) and p.requires_grad]
        # `seen` is not asked: a loop variable left bound to one of the group's parameters (`for
        # name, param in model.named_parameters()`) is a bare candidate of its own, filtered later.
        if not group or any(id(p) in held for p in group) or any(grad_of(p) is None for p in group):
            continue
        if held_by_another_optimizer(group, optimizer, scans):
            continue
        seen.update(id(p) for p in group)
        settings = tuple(sorted((str(key), repr(setting)) for key, setting in value.items()
                                if key != "params" and isinstance(setting, (int, float, bool, str))))
        found.append(Candidate(name, False, [weakref.ref(p) for p in group], [_fingerprint(p) for p in group],
                               LEFT_OUT_GROUP, settings=settings))
    return found[:2]


def _unregistered_in_trained_modules(values: dict, held: set, seen: set) -> list[tuple[str, torch.Tensor, object]]:
    """(path, parameter, module) for each nn.Parameter with a gradient that a module this optimizer
    trains keeps in a dict, list or plain object attribute (`model.g.edata['w']`), not as its own
    attribute: unregistered, it is in no `parameters()` and, unless added by hand, in no optimizer."""
    found = []
    for name, module in values.items():
        if not isinstance(module, torch.nn.Module) or user_class_file(module) is None \
                or not any(id(p) in held for p in module.parameters()):
            continue
        for attribute, inner in list(vars(module).items()):
            if attribute.startswith("_") or isinstance(inner, (torch.nn.Module, torch.Tensor)):
                continue
            for path, parameter in _parameters_inside(inner, f"{name}.{attribute}", 2):
                if id(parameter) in held or id(parameter) in seen or parameter.grad is None \
                        or not parameter.requires_grad:
                    continue
                seen.add(id(parameter))
                found.append((path, parameter, module))
    return found[:8]


def _derived_attribute_candidates(values: dict, held: set, seen: set, optimizer, scans: Budget) -> list[Candidate]:
    """A candidate per attribute of a module of the user's class, inside a module this optimizer
    trains, that is a non-leaf tensor computed by a chain of one-input operations from an
    nn.Parameter with a gradient that no module registers and no live optimizer holds."""
    found = []
    for name, top in values.items():
        if not isinstance(top, torch.nn.Module) or not _plain_or_own(name) \
                or not any(id(p) in held for p in top.parameters()):
            continue
        for prefix, module in list(top.named_modules())[:64]:
            if user_class_file(module) is None:
                continue
            registered = {id(p) for p in module.parameters()}
            for attribute, value in list(vars(module).items()):
                if attribute.startswith("_") or not isinstance(value, torch.Tensor) \
                        or isinstance(value, torch.nn.Parameter):
                    continue
                grad_fn = readable_grad_fn(value)  # a no_grad view whose base changed raises on .grad_fn
                parameter = _parameter_behind(grad_fn) if grad_fn is not None else None
                if parameter is None or id(parameter) in held or id(parameter) in seen \
                        or id(parameter) in registered or grad_of(parameter) is None:
                    continue
                if held_by_another_optimizer([parameter], optimizer, scans):
                    continue
                seen.add(id(parameter))
                path = ".".join(part for part in (name, prefix, attribute) if part)
                found.append(Candidate(path, False, [weakref.ref(parameter)], [_fingerprint(parameter)],
                                       DERIVED_ATTRIBUTE, _derived_statement(module, attribute)))
    return found[:4]


def _derived_statement(module, attribute: str) -> tuple | None:
    """(file, line) of the `self.<attribute> = ...` statement of the module's class that stores an
    operation on a `Parameter(...)` (`Parameter(x).squeeze()`), where the class has such a statement
    beside others (`if a is not None: self.a = Parameter(...)`, else the squeezed one); else the
    first statement that stores the attribute."""
    filename = user_class_file(module)
    tree = parse_file(filename) if filename else None
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == type(module).__name__:
            for statement in sorted((statement for statement in ast.walk(node) if isinstance(statement, ast.Assign)
                                     and len(statement.targets) == 1
                                     and _spelled(statement.targets[0]) == f"self.{attribute}"),
                                    key=lambda statement: statement.lineno):
                if _calls_moved_inside(filename, statement) is not None:
                    return filename, statement.lineno
    return _container_statement(module, attribute)


def _parameter_behind(node) -> torch.nn.Parameter | None:
    """The nn.Parameter at the end of a chain of graph nodes with one input each (`.squeeze()`,
    `.view(...)`, `.double()`), or None: an attribute computed from several tensors is not a
    Parameter stored the wrong way."""
    for _ in range(_DERIVED_HOPS):
        inputs = [function for function, _ in node.next_functions if function is not None]
        if len(inputs) != 1:
            return None
        node = inputs[0]
        variable = getattr(node, "variable", None)  # an AccumulateGrad node: the leaf it fills
        if variable is not None:
            return variable if isinstance(variable, torch.nn.Parameter) else None
    return None


def _modules_in_plain_containers(values: dict, held: set, seen: set) -> list[tuple[str, list, object, str]]:
    """(path, parameters, owner, attribute) for each plain list, tuple or dict attribute of a module
    this optimizer trains that keeps modules whose parameters got gradients and are in no optimizer
    (`model.hids`, holding `[nn.Linear, nn.Tanh]` pairs): the owner does not register them."""
    found = []
    for name, module in values.items():
        if not isinstance(module, torch.nn.Module) or user_class_file(module) is None \
                or not any(id(p) in held for p in module.parameters()):
            continue
        for attribute, inner in list(vars(module).items()):
            if attribute.startswith("_") or not isinstance(inner, (list, tuple, dict)):
                continue
            parameters = []
            for inner_module in _modules_inside(inner, 2):
                for parameter in inner_module.parameters():
                    if id(parameter) in held or id(parameter) in seen or parameter.grad is None \
                            or not parameter.requires_grad or any(parameter is p for p in parameters):
                        continue
                    parameters.append(parameter)
            if parameters:
                seen.update(id(p) for p in parameters)
                found.append((f"{name}.{attribute}", parameters, module, attribute))
    return found[:4]


def _modules_inside(value, depth: int):
    """The nn.Modules in a list, tuple or dict, `depth` levels down (`[[nn.Linear, nn.Tanh], ...]`)."""
    if isinstance(value, torch.nn.Module):
        yield value
        return
    if depth <= 0:
        return
    if isinstance(value, dict):
        items = list(value.values())[:64]
    elif isinstance(value, (list, tuple)):
        items = list(value[:64])
    else:
        return
    for inner in items:
        yield from _modules_inside(inner, depth - 1)


def _container_candidates(containers: list, optimizer, scans: Budget) -> list[Candidate]:
    return [Candidate(path, True, [weakref.ref(p) for p in parameters], [_fingerprint(p) for p in parameters],
                      UNREGISTERED_MODULES, _container_statement(owner, attribute))
            for path, parameters, owner, attribute in containers
            if not held_by_another_optimizer(parameters, optimizer, scans)]


def _container_statement(module, attribute: str) -> tuple | None:
    """(file, line) of `self.<attribute> = ...` in the module's class (its first such statement)."""
    filename = user_class_file(module)
    tree = parse_file(filename) if filename else None
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == type(module).__name__):
            continue
        statements = sorted((statement for statement in ast.walk(node) if isinstance(statement, ast.Assign)
                             and len(statement.targets) == 1 and _spelled(statement.targets[0]) == f"self.{attribute}"),
                            key=lambda statement: statement.lineno)
        if statements:
            return filename, statements[0].lineno
    return None


def _parameters_inside(value, path: str, depth: int):
    """(path, nn.Parameter) in a dict, list, tuple or plain object, `depth` levels down."""
    if isinstance(value, torch.nn.Parameter):
        yield path, value
        return
    if depth <= 0 or isinstance(value, (torch.nn.Module, torch.Tensor, type)) or callable(value):
        return
    if isinstance(value, dict):
        items = [(f"{path}[{key!r}]", inner) for key, inner in list(value.items())[:64]]
    elif isinstance(value, (list, tuple)):
        items = [(f"{path}[{index}]", inner) for index, inner in enumerate(value[:64])]
    elif hasattr(value, "__dict__") and type(value).__module__ not in ("builtins",):
        items = [(f"{path}.{key}", inner) for key, inner in list(vars(value).items())[:64]
                 if not key.startswith("_")]
    else:
        return
    for inner_path, inner in items:
        yield from _parameters_inside(inner, inner_path, depth - 1)


def _hidden_candidates(hidden: list, optimizer, scans: Budget) -> list[Candidate]:
    hidden = [(path, parameter, module) for path, parameter, module in hidden
              if not held_by_another_optimizer([parameter], optimizer, scans)]
    return [Candidate(path, False, [weakref.ref(parameter)], [_fingerprint(parameter)], UNREGISTERED,
                      _storing_statement(module, path))
            for path, parameter, module in hidden]


def _storing_statement(module, path: str) -> tuple | None:
    """(file, line) of the statement in the module's class that stores an `nn.Parameter(...)` at
    `path` (spelled from `self`): `self.g.edata['w'] = nn.Parameter(...)`."""
    filename = user_class_file(module)
    tree = parse_file(filename) if filename else None
    if tree is None:
        return None
    suffix = path[path.index("."):] if "." in path else None
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == type(module).__name__):
            continue
        for statement in ast.walk(node):
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.value, ast.Call) \
                    and getattr(statement.value.func, "attr", getattr(statement.value.func, "id", None)) == "Parameter":
                target = segment(filename, statement.targets[0])
                if target is not None and suffix is not None and target.replace(" ", "") == "self" + suffix.replace(" ", "").replace('"', "'"):
                    return filename, statement.lineno
    return None


def _unregistered_diagnosis(step_stack, candidate: Candidate, parameters: list) -> Diagnosis:
    """AD213 for an nn.Parameter kept in a container of a trained module: named where it is stored,
    the help binds it to the module too, which registers it (and `parameters()` hands it to the
    optimizer, in the order of the statements)."""
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    notes = [f"{candidate.name} ({shapes_of(parameters)}) is an nn.Parameter kept in a dict or an object that the "
             "module holds, not as an attribute of the module: the module does not register it, so its "
             "parameters() and the optimizer built from them leave it out; it gets gradients at every backward() "
             "and never changes"]
    helps, primary = [], step
    found = _assignment_at(candidate.made_at)
    if found is not None:
        filename, tree, statement = found
        primary = statement_location(filename, statement, role="stored",
                                     note="an nn.Parameter stored where the module does not register it")
        target, value = segment(filename, statement.targets[0]), segment(filename, statement.value)
        name = _attribute_for(statement.targets[0])
        if target is not None and value is not None and name is not None and "\n" not in value:
            helps.append(Suggestion(f"make it an attribute of the module too (self.{name}), which registers it: "
                                    f"then {target} and the module hold the same Parameter, and the optimizer "
                                    "built from parameters() trains it",
                                    f"self.{name} = {value}\n{target} = self.{name}",
                                    statement_location(filename, statement)))
    helps.append(Suggestion(f"or register it with `self.register_parameter(name, ...)`, or give the optimizer "
                            f"[{candidate.name}] too"))
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step] if primary is not step else [],
                     notes=notes, help=helps)


def _container_diagnosis(step_stack, candidate: Candidate, parameters: list) -> Diagnosis:
    """AD213 for modules kept in a plain list, tuple or dict of a trained module: named where the
    container is made; the help makes it an nn.ModuleList / nn.ModuleDict where the container holds
    the modules themselves (a container of lists of modules gets advice)."""
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    container = None
    helps, primary = [], step
    found = _assignment_at(candidate.made_at)
    if found is not None:
        filename, tree, statement = found
        container = _container_kind(statement.value)
        primary = statement_location(filename, statement, role="stored",
                                     note=f"a plain {container or 'container'}: the module does not register "
                                          "the modules kept in it")
        registered = _registered_container(filename, statement, _class_around(tree, statement.lineno))
        if registered is not None:
            helps.append(registered)
    notes = [f"{candidate.name} keeps modules whose {count_of(len(parameters), 'parameter')} ({shapes_of(parameters)}) "
             "got gradients at both of the first two steps and did not change: a module registers a submodule "
             "assigned as its attribute, or kept in nn.ModuleList / nn.ModuleDict, not one kept in a plain "
             f"{container or 'list, tuple or dict'}; its parameters() and the optimizer built from them leave these out"]
    helps.append(Suggestion(f"{'or, ' if helps else ''}keep the modules in nn.ModuleList (nn.ModuleDict for a dict; "
                            "a layer made of several modules as one nn.Sequential), so that parameters(), the "
                            "optimizer, train()/eval() and .to() see them"))
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step] if primary is not step else [],
                     notes=notes, help=helps)


def _derived_attribute_diagnosis(step_stack, candidate: Candidate, parameters: list) -> Diagnosis:
    """AD213 for a module attribute computed from an nn.Parameter made on the same line: named where
    the attribute is stored; the help moves the method calls after `Parameter(...)` inside it."""
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    helps, primary = [], step
    found = _assignment_at(candidate.made_at)
    if found is not None:
        filename, tree, statement = found
        primary = statement_location(filename, statement, role="stored",
                                     note="stores the result of an operation on an nn.Parameter, not the Parameter")
        inside = _calls_moved_inside(filename, statement)
        if inside is not None:
            helps.append(Suggestion("apply the operation to the value before wrapping it, so that the attribute is "
                                    "the Parameter itself: the module registers it and the optimizer built from "
                                    "parameters() trains it", inside, statement_location(filename, statement)))
    notes = [f"{candidate.name} is the output of an operation on an nn.Parameter ({shapes_of(parameters)}), not the "
             "Parameter: a module registers only a Parameter assigned as its attribute, so this one is in no "
             "parameters() and in no optimizer; it gets a gradient at every backward() and never changes"]
    helps.append(Suggestion(f"{'or ' if helps else ''}store the nn.Parameter as the attribute and apply the operation "
                            "where the attribute is used (in forward)"))
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step] if primary is not step else [],
                     notes=notes, help=helps)


def _calls_moved_inside(filename: str, statement: ast.Assign) -> str | None:
    """`target = Parameter(value.m(...))` for `target = Parameter(value).m(...)`: the method calls
    after a `Parameter(...)` with one positional argument moved onto that argument, or None when
    the statement is not written so."""
    node, calls = statement.value, 0
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not _parameter_call(node):
        node, calls = node.func.value, calls + 1
    if calls == 0 or not _parameter_call(node) or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        return None
    target, value = segment(filename, statement.targets[0]), segment(filename, statement.value)
    wrapper, argument = segment(filename, node), segment(filename, node.args[0])
    function = segment(filename, node.func)
    if None in (target, value, wrapper, argument, function) or "\n" in value or not value.startswith(wrapper):
        return None
    if not isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        argument = f"({argument})"
    keywords = [segment(filename, keyword) for keyword in node.keywords]
    if None in keywords:
        return None
    rest = "".join(f", {keyword}" for keyword in keywords)
    return f"{target} = {function}({argument}{value[len(wrapper):]}{rest})"


def _parameter_call(node: ast.AST) -> bool:
    """`Parameter(...)`, `nn.Parameter(...)`, `torch.nn.Parameter(...)`."""
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == "Parameter")
        or (isinstance(node.func, ast.Attribute) and node.func.attr == "Parameter"))


def _container_kind(value: ast.AST) -> str | None:
    if isinstance(value, (ast.List, ast.ListComp)) or (isinstance(value, ast.Call) and _spelled(value.func) == "list"):
        return "list"
    if isinstance(value, (ast.Dict, ast.DictComp)) or (isinstance(value, ast.Call) and _spelled(value.func) == "dict"):
        return "dict"
    if isinstance(value, ast.Tuple):
        return "tuple"
    return None


def _assignment_at(made_at) -> tuple[str, ast.AST, ast.Assign] | None:
    """The file, its tree and the assignment statement at `made_at` ((file, line) where a candidate
    was stored), or None."""
    if made_at is None:
        return None
    filename, line = made_at
    tree = parse_file(filename)
    statement = next((node for node in ast.walk(tree) if isinstance(node, ast.Assign) and node.lineno == line),
                     None) if tree is not None else None
    return (filename, tree, statement) if statement is not None else None


def _class_around(tree: ast.AST, line: int) -> ast.ClassDef | None:
    """The innermost class whose body covers `line`."""
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _registered_container(filename: str, statement: ast.Assign, class_node: ast.ClassDef | None) -> Suggestion | None:
    """`self.layers = nn.ModuleList(...)` for `self.layers = [...]` / `[]` / `{...}`, where every entry
    the running module's container holds is a module (an entry that is a list of modules would make
    nn.ModuleList fail): only then is the change the same program with its modules registered."""
    value_text, target = segment(filename, statement.value), segment(filename, statement.targets[0])
    kind = _container_kind(statement.value)
    if value_text is None or target is None or kind not in ("list", "dict") or "\n" in value_text \
            or class_node is None or not _entries_are_modules(statement, class_node):
        return None
    nn_name = _nn_spelling(filename)
    wrapper = "ModuleList" if kind == "list" else "ModuleDict"
    empty = value_text.replace(" ", "") in ("[]", "{}", "list()", "dict()")
    new_value = f"{nn_name}.{wrapper}()" if empty else f"{nn_name}.{wrapper}({value_text})"
    return Suggestion(f"keep them in {nn_name}.{wrapper}, which registers every module put in it: then "
                      f"parameters() and the optimizer built from it train them",
                      f"{target} = {new_value}", statement_location(filename, statement))


def _entries_are_modules(statement: ast.Assign, class_node: ast.ClassDef) -> bool:
    """Whether what the class puts in the container looks like modules, not lists of them: no list,
    tuple or dict literal is stored in it (`self.hids.append([nn.Linear(...), nn.Tanh()])`)."""
    value = statement.value
    if isinstance(value, (ast.List, ast.Tuple)) and any(isinstance(e, (ast.List, ast.Tuple, ast.Dict)) for e in value.elts):
        return False
    if isinstance(value, ast.ListComp) and isinstance(value.elt, (ast.List, ast.Tuple, ast.Dict)):
        return False
    target = _spelled(statement.targets[0])
    for node in ast.walk(class_node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend", "insert") \
                and _spelled(node.func.value) == target:
            if any(isinstance(arg, (ast.List, ast.Tuple, ast.Dict)) for arg in node.args):
                return False
    return True


def _nn_spelling(filename: str) -> str:
    """How the file spells torch.nn: `nn` after `import torch.nn as nn` / `from torch import nn`."""
    tree = parse_file(filename)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Import) and any(a.name == "torch.nn" and a.asname == "nn" for a in node.names):
            return "nn"
        if isinstance(node, ast.ImportFrom) and node.module == "torch" and any(a.name == "nn" and a.asname is None
                                                                              for a in node.names):
            return "nn"
    return "torch.nn"


def _attribute_for(target: ast.AST) -> str | None:
    """A module attribute name for the Parameter stored at `target`: the dict key or the attribute
    it is stored under (`edata['w']` -> `w`), made distinct from the common names of a module."""
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
            and isinstance(target.slice.value, str) and target.slice.value.isidentifier():
        base = target.slice.value
    elif isinstance(target, ast.Attribute):
        base = target.attr
    else:
        return None
    return base if base not in dir(torch.nn.Module) else f"{base}_parameter"


def _declares_parameters(module: torch.nn.Module) -> bool:
    """A module of the user's own class that declares an `nn.Parameter` itself (centers, a
    margin head's weight, task weights): a tensor written to be learned. Networks made of
    library layers (a discriminator, a reward model, a VGG) are left out: a program may use one
    it does not train, and in eval mode it is fixed (a perceptual loss's VGG) on purpose."""
    return bool(module._parameters) and user_class_file(module) is not None


def _user_head(module: torch.nn.Module) -> bool:
    """A module of the user's own class built of library layers only (a task's classification
    head: `ClfHead` holding a Dropout and a Linear). Such a module is a candidate only where every
    call of it in the function around step() reads a value computed from the model the optimizer
    steps (`clf_head(model(x))`): a network called on the data or the targets as well (a
    perceptual loss's feature extractor, a teacher) is beside the model on purpose."""
    return not module._parameters and user_class_file(module) is not None \
        and any(True for _ in module.parameters())


def _only_called_on(scope: ast.AST, name: str, derived: set) -> bool:
    """Whether every call of `name` (or `name.forward`) in `scope` has an argument computed from
    the stepped model."""
    calls = 0
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr == "forward" \
            else node.func
        if _spelled(callee) != name:
            continue
        calls += 1
        if not any(_mentions(argument, derived) for argument in [*node.args, *(k.value for k in node.keywords)]):
            return False
    return calls > 0


def _scope_source(site) -> ast.AST | None:
    """The function around the step() call, or the file's top level."""
    tree = parse_file(site.filename)
    if tree is None:
        return None
    return enclosing_function(tree, site.lineno)


def _spelled(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def _mentions(node: ast.AST, names: set) -> bool:
    return any(_spelled(child) in names for child in ast.walk(node))


def _derived_names(scope: ast.AST, stepped: set) -> set:
    """Names assigned, in `scope`, from an expression that reads a stepped module or a name
    already derived from one (twice over, for loops that read a name before its assignment)."""
    derived: set = set()
    assignments = sorted((node for node in ast.walk(scope) if isinstance(node, (ast.Assign, ast.AugAssign,
                                                                                ast.AnnAssign))),
                         key=lambda node: node.lineno)
    for _ in range(2):
        for node in assignments:
            if node.value is not None and _mentions(node.value, stepped | derived):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    derived |= {_spelled(t) for t in ast.walk(target) if _spelled(t) is not None}
    return derived


def _called_on(scope: ast.AST, name: str, derived: set) -> bool:
    """Whether `scope` calls `name` (or `name.forward`) with an argument computed from the
    stepped model."""
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.value if isinstance(node.func, ast.Attribute) and node.func.attr == "forward" \
            else node.func
        if _spelled(callee) == name and any(_mentions(argument, derived)
                                            for argument in [*node.args, *(k.value for k in node.keywords)]):
            return True
    return False


def _used_with(scope: ast.AST, name: str, model_values: set) -> bool:
    """Whether a statement of `scope` computes something from `name` and from the stepped model
    together (`scale * model(x)`, `torch.exp(-log_var) * task_loss + log_var`)."""
    for node in ast.walk(scope):
        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign,
                                                                   ast.Expr, ast.Return)) else None
        if value is not None and _mentions(value, {name}) and _mentions(value, model_values):
            return True
    return False


def _diagnosis(optimizer, step_stack, candidate: Candidate, parameters: list) -> Diagnosis:
    construction = optimizer_construction(optimizer, step_stack)
    what = f"{candidate.name}'s {count_of(len(parameters), 'parameter')}" if candidate.is_module \
        else candidate.name
    notes = [f"{what} ({shapes_of(parameters)}) got gradients at both of {type(optimizer).__name__}'s first "
             f"two steps and did not change between them: no live optimizer holds "
             f"{'them' if len(parameters) > 1 or candidate.is_module else 'it'}"]
    if candidate.is_module:
        notes.append(f"{candidate.name} ({candidate.kind}) is called on values computed from the model this "
                     "optimizer trains, so its parameters are part of what the loss trains")
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    if construction is None:
        return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                         severity="warning", primary=step, related=[], notes=notes,
                         help=[Suggestion(f"if {candidate.name} is meant to train with the model: give the "
                                          f"optimizer {_parameters_expression(candidate)} too, with "
                                          "`add_param_group` after it is built (or build it with them)")])
    filename, built = construction
    primary = statement_location(filename, built, role="optimizer",
                                 note=f"builds the optimizer without {candidate.name}'s parameters")
    helps = []
    listed = _list_literal_help(filename, built, candidate, step_stack) if not candidate.is_module else None
    if listed is not None:
        statement, help_ = listed
        related = [primary, step]
        primary = statement_location(filename, statement, role="list",
                                     note=f"the list the optimizer is built from, without {candidate.name}")
        helps.append(help_)
        helps.append(Suggestion(f"or, if {candidate.name} is meant to stay fixed: make it not require grad "
                                f"(`{candidate.name}.requires_grad_(False)`)"))
        return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                         severity="warning", primary=primary, related=related, notes=notes, help=helps)
    added = _add_group_help(filename, built, candidate, step_stack)
    if added is not None:
        helps.append(added)
    helps.append(Suggestion(f"{'or, ' if helps else ''}if {candidate.name} is meant to stay fixed: make "
                            f"{'its parameters' if candidate.is_module else 'it'} not require grad "
                            f"(`{candidate.name}.requires_grad_(False)`)"))
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step], notes=notes, help=helps)


def _left_out_group_diagnosis(optimizer, step_stack, candidate: Candidate, parameters: list) -> Diagnosis:
    """AD213 for a parameter group built and never given to the optimizer: named where the optimizer
    is built, the help gives it the group itself (with the settings the group names)."""
    settings = ", ".join(f"{key}={value}" for key, value in candidate.settings)
    notes = [f"{candidate.name} is a parameter group ({shapes_of(parameters)}{'; ' + settings if settings else ''}) "
             f"that no optimizer was given: its parameters got gradients at both of {type(optimizer).__name__}'s "
             "first two steps and did not change between them"]
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    construction = optimizer_construction(optimizer, step_stack)
    if construction is None:
        return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                         severity="warning", primary=step, related=[], notes=notes,
                         help=[Suggestion(f"give the optimizer the group: `optimizer.add_param_group({candidate.name})`"
                                          " after it is built, or add it to the groups it is built from")])
    filename, built = construction
    primary = statement_location(filename, built, role="optimizer",
                                 note=f"builds the optimizer without the parameter group {candidate.name}")
    added = _add_group_help(filename, built, candidate, step_stack)
    helps = [added] if added is not None else [Suggestion(
        f"add {candidate.name} to the groups the optimizer is built from")]
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step], notes=notes, help=helps)


def _wrapper_diagnosis(optimizer, step_stack, candidate: Candidate, parameters: list) -> Diagnosis | None:
    """AD213 for a wrapper whose own parameters were left out: named where the optimizer is built
    from the wrapped module; the help builds it from the wrapper's parameters instead, which are
    the wrapped module's and the wrapper's own (one group, the same settings). Only where the
    construction reads `<wrapped>.parameters()` once, as its first argument."""
    if candidate.name.startswith("self."):
        return _own_wrapper_diagnosis(optimizer, step_stack, candidate, parameters)
    construction = optimizer_construction(optimizer, step_stack)
    if construction is None:
        return None
    filename, built = construction
    call = built.value if isinstance(built, ast.Assign) else None
    if not isinstance(call, ast.Call) or not call.args:
        return None
    argument = call.args[0]
    if not (isinstance(argument, ast.Call) and not argument.args and not argument.keywords
            and isinstance(argument.func, ast.Attribute) and argument.func.attr == "parameters"
            and _spelled(argument.func.value) == candidate.wrapped):
        return None
    text, argument_text = segment(filename, built), segment(filename, argument)
    if text is None or argument_text is None or "\n" in text or text.count(argument_text) != 1:
        return None
    notes = [f"{type(optimizer).__name__} was built from {candidate.wrapped}.parameters(); {candidate.name} wraps "
             f"{candidate.wrapped} and has {count_of(len(parameters), 'parameter')} of its own "
             f"({shapes_of(parameters)}) that got gradients at both of the first two steps and did not change "
             "between them: no live optimizer holds them"]
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    primary = statement_location(filename, built, role="optimizer",
                                 note=f"builds the optimizer from {candidate.wrapped} alone")
    helps = [Suggestion(f"build the optimizer from {candidate.name}.parameters(): they are {candidate.wrapped}'s "
                        f"and {candidate.name}'s own, so both train",
                        text.replace(argument_text, f"{candidate.name}.parameters()"),
                        statement_location(filename, built)),
             Suggestion(f"or, if {candidate.name}'s own parameters are meant to stay fixed: make them not "
                        "require grad")]
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step], notes=notes, help=helps)


def _own_wrapper_diagnosis(optimizer, step_stack, candidate: Candidate, parameters: list) -> Diagnosis | None:
    """AD213 for a wrapper kept on the trainer (`self.model_with_loss = ModelWithLoss(model, self.loss)`,
    FairMOT's), whose parameters beside the wrapped model are exactly one submodule's (the loss with
    learned task weights): named where the class around step() makes the wrapper; the help gives the
    optimizer that submodule's parameters right there (`self.optimizer.add_param_group(...)`), in the
    method that also binds the optimizer. Only where each of those is one assignment of one line."""
    frame = live_frame(step_stack[0]) if step_stack else None
    if frame is None:
        return None
    values = _named_values(frame)
    wrapper = values.get(candidate.name)
    if not isinstance(wrapper, torch.nn.Module) or wrapper._parameters:
        return None
    left_out = {id(p) for p in parameters}
    holders = [(name, child) for name, child in wrapper.named_children()
               if {id(p) for p in child.parameters()} == left_out]
    if len(holders) != 1:
        return None
    child_name = holders[0][0]
    filename = step_stack[0].filename
    tree = parse_file(filename)
    step_statement = _statement_at(tree, step_stack[0].lineno)
    receiver = _step_receiver_text(filename, step_statement)
    if tree is None or receiver is None or not (receiver.startswith("self.") and receiver.count(".") == 1):
        return None
    owner = _class_around(tree, step_stack[0].lineno)
    if owner is None:
        return None
    made = [node for node in ast.walk(owner) if isinstance(node, ast.Assign) and len(node.targets) == 1
            and _spelled(node.targets[0]) == candidate.name]
    if len(made) != 1:
        return None
    built = made[0]
    method = next((node for node in owner.body if isinstance(node, ast.FunctionDef)
                   and node.lineno <= built.lineno <= node.end_lineno), None)
    bound = [node for node in ast.walk(method) if isinstance(node, ast.Assign) and len(node.targets) == 1
             and _spelled(node.targets[0]) == receiver and node.lineno < built.lineno] if method else []
    text = segment(filename, built)
    if len(bound) != 1 or text is None or "\n" in text:
        return None
    group = f"{candidate.name}.{child_name}.parameters()"
    line = f'{receiver}.add_param_group({{"params": {group}}})'
    primary = statement_location(filename, built, role="made",
                                 note=f"{candidate.name} wraps {candidate.wrapped} and its {child_name}, whose "
                                      f"parameters no optimizer holds")
    step = location_of(step_stack[0], role="step", note="step() updates only the parameters the optimizer holds")
    notes = [f"{receiver} holds {candidate.wrapped}'s parameters; {candidate.name}.{child_name} has "
             f"{count_of(len(parameters), 'parameter')} ({shapes_of(parameters)}) that got gradients at both of the "
             "first two steps and did not change between them: no live optimizer holds them"]
    helps = [Suggestion(f"if {candidate.name}.{child_name} is meant to train: give the optimizer its parameters "
                        "where the wrapper is made (their settings as for the first group)", f"{text}\n{line}",
                        statement_location(filename, built)),
             Suggestion(f"or, if they are meant to stay fixed: make them not require grad")]
    return Diagnosis(code=codes.UNTRAINED_PARAMETERS, title=codes.title(codes.UNTRAINED_PARAMETERS),
                     severity="warning", primary=primary, related=[step], notes=notes, help=helps)


def _statement_at(tree, line: int):
    found = None
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.stmt) and node.lineno <= line <= node.end_lineno and not isinstance(
                node, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def _step_receiver_text(filename: str, statement) -> str | None:
    for node in ast.walk(statement) if statement is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            return _spelled(node.func.value)
    return None


def _list_literal_help(filename: str, built: ast.stmt, candidate: Candidate,
                       step_stack) -> tuple[ast.stmt, Suggestion] | None:
    """(the statement, the help) where the optimizer is built from a name bound once, before it and in
    the same function, to a list literal (`params = [w1, w2]` then `Adam(params)`) that nothing
    appends to: the help adds the candidate to that list."""
    call = built.value if isinstance(built, ast.Assign) else None
    if not isinstance(call, ast.Call) or not call.args or not isinstance(call.args[0], ast.Name):
        return None
    list_name = call.args[0].id
    tree = parse_file(filename)
    if tree is None:
        return None
    scope = enclosing_function(tree, built.lineno)
    if scope is not enclosing_function(tree, step_stack[0].lineno) \
            and not (scope is tree and "." not in candidate.name) \
            and not (candidate.name.startswith("self.") and isinstance(scope, ast.FunctionDef)):
        return None  # built in another function, where the name may mean something else
    bindings = [node for node in ast.walk(scope) if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id == list_name
                        for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))]
    changed = any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == list_name
                  for node in ast.walk(scope))
    if len(bindings) != 1 or changed or not isinstance(bindings[0], ast.Assign) \
            or not isinstance(bindings[0].value, ast.List) or bindings[0].lineno >= built.lineno:
        return None
    statement = bindings[0]
    text, value_text = segment(filename, statement), segment(filename, statement.value)
    if text is None or value_text is None or "\n" in text or text.count(value_text) != 1:
        return None
    inner = value_text[1:-1].rstrip().rstrip(",")
    new_value = f"[{inner}, {candidate.name}]" if inner.strip() else f"[{candidate.name}]"
    return statement, Suggestion(f"if {candidate.name} is meant to train with the model: put it in the list the "
                                 "optimizer is built from", text.replace(value_text, new_value),
                                 statement_location(filename, statement))


def _parameters_expression(candidate: Candidate) -> str:
    return f"{candidate.name}.parameters()" if candidate.is_module else f"[{candidate.name}]"


def _add_group_help(filename: str, built: ast.stmt, candidate: Candidate, step_stack) -> Suggestion | None:
    """`optimizer.add_param_group({"params": NAME.parameters()})` after the construction, or after
    the candidate's own assignment when that comes later in the same block; only where the
    name means the same object there as around step()."""
    tree = parse_file(filename)
    if tree is None or not isinstance(built, ast.Assign) or len(built.targets) != 1:
        return None
    scope = enclosing_function(tree, built.lineno)
    if scope is not enclosing_function(tree, step_stack[0].lineno) \
            and not (scope is tree and "." not in candidate.name) \
            and not (candidate.name.startswith("self.") and isinstance(scope, ast.FunctionDef)):
        return None  # built in another function, where the name may mean something else
    after = built
    for node in ast.walk(scope):
        if isinstance(node, ast.Assign) and node.lineno > after.end_lineno \
                and any(_spelled(t) == candidate.name for t in node.targets):
            if node.col_offset != built.col_offset:
                return None  # made later in another block: where to add it is not clear
            after = node
    text = segment(filename, after)
    receiver = segment(filename, built.targets[0])
    if text is None or receiver is None or "\n" in text:
        return None
    if candidate.kind == LEFT_OUT_GROUP:
        return Suggestion(f"give the optimizer the group {candidate.name} (with the settings it names)",
                          f"{text}\n{receiver}.add_param_group({candidate.name})", statement_location(filename, after))
    line = f'{receiver}.add_param_group({{"params": {_parameters_expression(candidate)}}})'
    return Suggestion(f"if {candidate.name} is meant to train with the model: give the optimizer its parameters "
                      "too (their settings as for the first group)", f"{text}\n{line}",
                      statement_location(filename, after))
