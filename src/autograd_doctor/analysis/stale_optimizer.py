"""AD207: an optimizer steps tensors that are no longer the model's parameters.

An optimizer holds the tensors it was given when it was built. A parameter replaced after that
(`self.scale = nn.Parameter(...)`, `model.fc = nn.Linear(...)`, `net = Net()` for a new
network) is not in it: the model trains the new tensors, which get gradients, and step()
updates the old ones, which get none. Nothing fails; the new parameters never change.

Looked at just before each step() (no closure), from what is there at run time:
- cheap first: the optimizer's parameters that require grad and have no gradient; most steps
  stop here;
- a replacement recorded by recording/parameter_swaps.py whose old tensor is one of those, and
  whose new parameters got gradients;
- or, when not one of the optimizer's parameters got a gradient: none of them belongs to a
  module bound to a name around the step() call, and a module there has parameters with
  gradients (the network bound to that name was replaced).
In both cases the parameters with gradients must be in no live optimizer (a scan of the
garbage collector's objects, done only then, a few times per run at most). The line of the
replacement is named (the recorded site, or the assignment to the module's name after the
optimizer was built); the helps write the new value into the old parameter where the layouts
match (a submodule of the same class, settings and layout: its state dict loaded into the old one,
`self.net.load_state_dict(Net(...).state_dict())`, which keeps the optimizer's state as a reset of
the parameters in place does), or build the optimizer again after the replacement.
Where the network is bound again in a frame further out than the step()'s function (a global that
`train()` reads, a local of `main()` that a closure reads: practical-pytorch#9), that frame's
assignment is found by the module's identity (`_outer_rebinding`) and the optimizer is built again
after it.

A program that "resets" its optimizer after the replacement by loading back a state dict
(`optimizer.load_state_dict(initial_state)`, a statement after the replacing one or after a call on
the way to it, in the same block) meant it to start afresh with the new parameters; a state dict
names parameters by their position, so the optimizer keeps the old tensors. That reload is the line
named, and the help builds the optimizer again in its place (a copy of its construction) where the
state loaded is the one a new optimizer has: no state per parameter left at this step, each
setting as built, one group, no learning-rate scheduler in the file (it would keep scheduling the
old optimizer); otherwise advice.
"""

from __future__ import annotations

import ast
import builtins
import gc
import re
import textwrap
from dataclasses import replace
from functools import lru_cache

import torch

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.context import enclosing_function, walk_own_scope
from autograd_doctor.analysis.source_scope import block_holding, frame_values, live_frame, stored_names
from autograd_doctor.diagnosis.model import Diagnosis, Location, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, parse_file, segment, source_text, statement_at, statement_location, statements_in,
)
from autograd_doctor.recording.frames import Site


# How many live frames beyond the recorded step() stack AD207 looks at for a module's assignment.
MAX_OUTER_FRAMES = 4


class Budget:
    """How many scans of all live objects (for the other optimizers) this run may still make."""

    def __init__(self, scans: int = 3):
        self.scans = scans


def stale_optimizer_diagnosis(optimizer, step_stack: tuple[Site, ...], swaps: list,
                              budget: Budget) -> Diagnosis | None:
    """AD207 for `optimizer`, about to step, or None."""
    if not _has_parameter_without_gradient(optimizer):
        return None  # the usual step: stop as cheaply as possible
    parameters = [p for group in optimizer.param_groups for p in group["params"]
                  if isinstance(p, torch.Tensor) and p.requires_grad]
    stale = [p for p in parameters if p.grad is None]
    if not stale:
        return None
    stale_ids = {id(p) for p in stale}
    held = {id(p) for p in parameters}
    for swap in reversed(swaps):
        old = [p for p in swap.old_parameters() if id(p) in stale_ids]
        new = swap.new_ref() if old else None
        if new is None:
            continue
        trained = _trained(new.parameters() if isinstance(new, torch.nn.Module) else [new], held)
        if trained and not held_by_another_optimizer(trained, optimizer, budget):
            return _swap_diagnosis(optimizer, step_stack, swap, old, trained)
    if len(stale) < len(parameters):
        return None  # some of its parameters train: an unused one is not this problem
    return _rebinding_diagnosis(optimizer, step_stack, stale_ids, held, budget)


def _has_parameter_without_gradient(optimizer) -> bool:
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            if parameter.grad is None and parameter.requires_grad:
                return True
    return False


def _trained(parameters, held: set[int]) -> list:
    """Those of `parameters` that got a gradient and are not the optimizer's."""
    return [p for p in parameters if p.requires_grad and p.grad is not None and id(p) not in held]


def held_by_another_optimizer(trained: list, optimizer, budget: Budget) -> bool:
    """Whether another live optimizer holds one of `trained` (True when it cannot be known:
    the budget of scans is spent)."""
    holding = optimizers_holding(trained, budget)
    return holding is None or any(other is not optimizer for other in holding)


def optimizers_holding(parameters: list, budget: Budget) -> list | None:
    """The live optimizers that hold one of `parameters` (None when it cannot be known: the
    budget of scans is spent)."""
    return optimizers_holding_ids({id(p) for p in parameters}, budget)


def held_together(first: set[int], second: set[int], budget: Budget) -> bool:
    """Whether one live optimizer holds a parameter whose id is in `first` and one whose id is in
    `second` (its step() applies what backward() left on both)."""
    holding = optimizers_holding_ids(first, budget) or []
    return any(id(p) in second for optimizer in holding for group in optimizer.param_groups for p in group["params"])


def optimizers_holding_ids(ids: set[int], budget: Budget) -> list | None:
    """The live optimizers that hold a parameter whose id is in `ids` (None when the scans are spent)."""
    if budget.scans <= 0:
        return None
    budget.scans -= 1
    holding = []
    for other in gc.get_objects():
        # type(), not isinstance(): some objects' __class__ is a property that warns or computes
        if issubclass(type(other), torch.optim.Optimizer):
            if any(id(p) in ids for group in getattr(other, "param_groups", ()) for p in group.get("params", ())):
                holding.append(other)
    return holding


def _rebinding_diagnosis(optimizer, step_stack, stale_ids: set[int], held: set[int], budget: Budget):
    """Not one of the optimizer's parameters got a gradient: is the network it was built for
    gone from the names around step(), and does the one there now train without it?"""
    modules = {}
    for site in step_stack:
        frame = live_frame(site)
        if frame is None:
            continue
        values = frame_values(frame) if frame.f_code.co_name != "<module>" else frame.f_globals
        for name, value in list(values.items()):
            if isinstance(value, torch.nn.Module) and not name.startswith("__"):
                modules.setdefault(name, (value, site))
    if not modules:
        return None
    for module, _ in modules.values():
        if any(id(p) in stale_ids for p in module.parameters()):
            return None  # the optimizer's parameters are still a model's: they just got no gradient
    for name, (module, site) in modules.items():
        trained = _trained(module.parameters(), held)
        if trained:
            if held_by_another_optimizer(trained, optimizer, budget):
                return None
            return _named_module_diagnosis(optimizer, step_stack, name, module, site, trained)
    return None


def _swap_diagnosis(optimizer, step_stack, swap, old: list, trained: list) -> Diagnosis:
    site = swap.site
    module = swap.module_ref()
    owner = type(module).__name__ if module is not None else "the module"
    kind = "parameter" if swap.is_parameter else "submodule"
    replaced = location_of(site, role="replaced", note=f"replaces {owner}.{swap.name} with a new {kind}; the "
                           f"optimizer still holds the old {'tensor' if swap.is_parameter else 'parameters'}")
    related = []
    if len(swap.stack) > 1 and site.function != "<module>":  # the call into the method that replaced it
        related.append(location_of(swap.stack[1], role="call", note="called from here"))
    construction = optimizer_construction(optimizer, step_stack)
    reload = reload_after_replacement(swap.stack, step_stack)
    if reload is not None:
        # The program meant to start the optimizer afresh for the new parameters: the reload is the
        # line to change, the replacement is where the new tensors came from.
        primary = statement_location(reload[0], reload[1], role="reload", note=(
            "loads a state dict into the optimizer after the replacement: a state dict names parameters "
            "by their position, so the optimizer keeps the old tensors and does not take the new ones"))
        related.insert(0, replaced)
    else:
        primary = replaced
    related += _step_locations(optimizer, step_stack, construction)
    helps = []
    copy_help = _copy_help(swap, site) if swap.is_parameter else _load_help(swap, site)
    if copy_help is not None:
        helps.append(copy_help)
    if reload is not None:
        helps.append(_reload_help(optimizer, construction, reload, _module_names(step_stack, trained)))
    else:
        rebuild = _rebuild_help(optimizer, construction, swap.stack, _module_names(step_stack, trained))
        if rebuild is not None:
            helps.append(rebuild)
            if copy_help is None and (rebuild.location.file, rebuild.location.line) != (replaced.file, replaced.line):
                # Nothing applies at the replacing line, and the replacement ran in a function called
                # from the one that built the optimizer: the line to change is that call, where the
                # optimizer is built again; the replacing line is where the new tensors came from.
                primary = replace(rebuild.location, role="call", note=(
                    f"the call that replaces {owner}.{swap.name}, after the optimizer was built from the "
                    "parameters of the time"))
                related = [r for r in related if not (r.role == "call" and r.file == primary.file
                                                      and r.line == primary.line)]
                related.insert(0, replaced)
    helps.append(_add_group_help(optimizer, construction, f"{owner}.{swap.name}"))
    new_parameters = (f"the new parameter ({shapes_of(trained)}) got a gradient but is" if swap.is_parameter else
                      f"the new submodule's {count_of(len(trained), 'parameter')} ({shapes_of(trained)}) got gradients "
                      f"but {'is' if len(trained) == 1 else 'are'}")
    notes = [f"{type(optimizer).__name__} holds {count_of(len(old), 'tensor')} that {owner}.{swap.name} held before "
             f"this replacement ({shapes_of(old)}): {'it' if len(old) == 1 else 'they'} got no gradient, so step() "
             "changes nothing there",
             f"{new_parameters} in no optimizer, so {'it never changes' if len(trained) == 1 else 'they never change'}"]
    return _diagnosis(primary, related, notes, helps)


def _named_module_diagnosis(optimizer, step_stack, name: str, module, site: Site, trained: list) -> Diagnosis:
    construction = optimizer_construction(optimizer, step_stack)
    built = construction
    rebinding = _rebinding_statement(site, name, construction)
    note = f"binds {name} to a new {type(module).__name__}; the optimizer still holds the old one's parameters"
    if rebinding is not None:
        primary = statement_location(site.filename, rebinding, role="replaced", note=note)
    elif construction is not None:
        primary = statement_location(construction[0], construction[1], role="optimizer",
                                     note="builds the optimizer from the parameters of the time")
        construction = None
    else:
        primary = location_of(step_stack[0], role="step", note="step() updates parameters that got no gradient")
    related = _step_locations(optimizer, step_stack, construction) if primary.role != "step" else []
    helps = []
    if rebinding is not None:
        rebuild = _rebuild_help(optimizer, construction, (), {name}, after=(site.filename, rebinding))
        if rebuild is not None:
            helps.append(rebuild)
    elif primary.role == "optimizer":
        outer = _outer_rebinding(step_stack, name, module, primary)
        if outer is not None:
            outer_site, statement = outer
            related.insert(0, statement_location(outer_site.filename, statement, role="replaced", note=(
                f"binds {name} to the {type(module).__name__} that trains, after the optimizer was built")))
            rebuild = _rebuild_help(optimizer, built, (), {name},
                                    after=(outer_site.filename, statement))
            if rebuild is not None:
                helps.append(rebuild)
    helps.append(_add_group_help(optimizer, construction, name))
    notes = [f"not one of the {count_of(sum(1 for g in optimizer.param_groups for _ in g['params']), 'parameter')} "
             f"{type(optimizer).__name__} holds got a gradient, and none of them belongs to a module named around "
             "this step() call: they are the parameters of a network no longer in use",
             f"{name}'s {count_of(len(trained), 'parameter')} ({shapes_of(trained)}) got gradients but "
             f"{'is' if len(trained) == 1 else 'are'} in no optimizer, so "
             f"{'it never changes' if len(trained) == 1 else 'they never change'}"]
    return _diagnosis(primary, related, notes, helps)


def _outer_rebinding(step_stack, name: str, module, primary: Location) -> tuple[Site, ast.stmt] | None:
    """(site, statement): the module is bound to `name` in a frame further out than the step()
    call's function (a global the training function reads), in the scope where the optimizer was
    built, by an assignment after that construction and before the call on the way to step():
    `rnn = RNN(...)` written again below `train()`, which reads `rnn` and `optimizer`. Evidence:
    that frame's `name` holds the very module whose parameters got gradients."""
    for site, frame in _outer_frames(step_stack):
        if site.filename != primary.file:
            continue
        values = frame_values(frame) if frame.f_code.co_name != "<module>" else frame.f_globals
        if values.get(name) is not module:
            continue
        tree = parse_file(site.filename)
        if tree is None:
            return None
        built = statement_at(site.filename, primary.line)
        scope = enclosing_function(tree, site.lineno)
        if built is None or enclosing_function(tree, built.lineno) is not scope:
            return None
        candidates = [node for node in walk_own_scope(scope) if isinstance(node, ast.Assign)
                      and built.end_lineno < node.lineno < site.lineno
                      and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
        return (site, max(candidates, key=lambda node: node.lineno)) if candidates else None
    return None


def _outer_frames(step_stack, further: int = MAX_OUTER_FRAMES):
    """(site, frame) of the step's recorded callers, then of up to `further` live frames beyond
    the outermost one recorded (the stack recorded at each step is short; this walk runs only
    when AD207 is being reported)."""
    frame = None
    for site in step_stack[1:]:
        frame = live_frame(site)
        if frame is not None:
            yield site, frame
    frame = live_frame(step_stack[-1]) if step_stack else None
    frame = frame.f_back if frame is not None else None
    while frame is not None and further > 0:
        further -= 1
        yield Site(frame.f_code, frame.f_lasti), frame
        frame = frame.f_back


def _diagnosis(primary: Location, related: list, notes: list, helps: list) -> Diagnosis:
    return Diagnosis(code=codes.STALE_OPTIMIZER_PARAMETERS, title=codes.title(codes.STALE_OPTIMIZER_PARAMETERS),
                     severity="warning", primary=primary, related=[r for r in related if r is not None],
                     notes=notes, help=helps)


def _step_locations(optimizer, step_stack, construction) -> list:
    locations = []
    if construction is not None:
        locations.append(statement_location(construction[0], construction[1], role="optimizer",
                                            note=f"the {type(optimizer).__name__} is built here, before the "
                                                 "replacement, from the parameters of the time"))
    if step_stack:
        locations.append(location_of(step_stack[0], role="step",
                                     note="step() updates the old tensors, which got no gradient"))
    return locations


def optimizer_construction(optimizer, step_stack) -> tuple[str, ast.stmt] | None:
    """(file, statement) that built the optimizer: the assignment to the name or attribute
    step() is called on, in the function of the step() call or in its file's top level."""
    if not step_stack:
        return None
    site = step_stack[0]
    statement = statement_at(site.filename, site.lineno)
    receiver = _step_receiver(statement)
    tree = parse_file(site.filename)
    if receiver is None or tree is None:
        return None
    target = ast.dump(receiver)
    found = [node for node in _call_assignments(tree) if _same_target(node.targets[0], target, receiver)]
    if len(found) != 1:
        return None  # several optimizers built under that name: which one is unknown
    return site.filename, found[0]


@lru_cache(maxsize=64)
def _call_assignments(tree: ast.Module) -> tuple:
    """Every `NAME = call(...)` / `a.b = call(...)` of the file (one target), read once a file: an
    assignment is a statement, so a walk of the statements finds each one that `ast.walk` finds
    without visiting the expressions (a first step() looked for its optimizer's construction
    through every node of the file, about 2,000 in a 200-line file, at each optimizer)."""
    return tuple(node for node in statements_in(tree) if isinstance(node, ast.Assign) and len(node.targets) == 1
                 and isinstance(node.value, ast.Call))


def _step_receiver(statement: ast.stmt | None) -> ast.AST | None:
    for node in ast.walk(statement) if statement is not None else ():
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step"
                and isinstance(node.func.value, (ast.Name, ast.Attribute))):
            return node.func.value
    return None


def _same_target(target: ast.AST, dumped: str, receiver: ast.AST) -> bool:
    if type(target) is not type(receiver):
        return False  # neither test below can hold: decided without dumping the target
    if ast.dump(target).replace("ctx=Store()", "ctx=Load()") == dumped:
        return True
    # `self.optimizer = ...` in __init__, `self.optimizer.step()` elsewhere in the class
    return (isinstance(target, ast.Attribute) and isinstance(receiver, ast.Attribute)
            and target.attr == receiver.attr and ast.unparse(target.value) == ast.unparse(receiver.value) == "self")


def _rebinding_statement(site: Site, name: str, construction) -> ast.stmt | None:
    """The assignment to `name` after the optimizer's construction, before the step()
    line, in the same function: the line that replaced the network."""
    if construction is None or construction[0] != site.filename:
        return None
    tree = parse_file(site.filename)
    scope = enclosing_function(tree, site.lineno) if tree is not None else None
    if scope is None or enclosing_function(tree, construction[1].lineno) is not scope:
        return None
    candidates = [node for node in ast.walk(scope) if isinstance(node, ast.Assign)
                  and construction[1].end_lineno < node.lineno < site.lineno
                  and any(isinstance(t, ast.Name) and t.id == name for t in node.targets)]
    return max(candidates, key=lambda node: node.lineno) if candidates else None


def _copy_help(swap, site: Site | None) -> Suggestion | None:
    """`self.w = nn.Parameter(value)` -> `self.w.copy_(value)` (under no_grad): the optimizer's
    tensor gets the new value. Only for a parameter of the same shape, dtype, device and
    requires_grad, made by a plain `nn.Parameter(value)` call."""
    if site is None or not swap.is_parameter or not swap.same_layout:
        return None
    statement = statement_at(site.filename, site.lineno)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Attribute) and isinstance(statement.value, ast.Call)):
        return None
    call = statement.value
    function = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
    if function != "Parameter" or len(call.args) != 1 or call.keywords:
        return None
    target = segment(site.filename, statement.targets[0])
    value = segment(site.filename, call.args[0])
    if target is None or value is None:
        return None
    copy = f"{target}.copy_({value})"
    if swap.grad_enabled:
        if swap.torch_name is None:
            return None
        copy = f"with {swap.torch_name}.no_grad():\n" + textwrap.indent(copy, "    ")
    return Suggestion("write the new value into the parameter the optimizer already holds, instead of replacing it",
                      copy, statement_location(site.filename, statement))


def _load_help(swap, site: Site | None) -> Suggestion | None:
    """`self.net = Net(...)` -> `self.net.load_state_dict(Net(...).state_dict())`: the tensors the
    optimizer holds get the new submodule's values (and the optimizer keeps its settings and its
    state). Only where that copy reproduces the new submodule (recording/parameter_swaps.py,
    `mode_call`), for an assignment of a call to one attribute."""
    if site is None or swap.is_parameter or swap.mode_call is None:
        return None
    statement = statement_at(site.filename, site.lineno)
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Attribute) and isinstance(statement.value, ast.Call)):
        return None
    target = segment(site.filename, statement.targets[0])
    value = segment(site.filename, statement.value)
    if target is None or value is None or "\n" in value:
        return None
    load = f"{target}.load_state_dict({value}.state_dict())"
    if swap.mode_call:
        load += f"\n{target}.{swap.mode_call}()"
    return Suggestion("load the new submodule's values into the one the optimizer already trains, instead of "
                      "replacing it (the optimizer keeps its settings and its state)",
                      load, statement_location(site.filename, statement))


def _rebuild_help(optimizer, construction, stack, names: set, after=None) -> Suggestion | None:
    """Build the optimizer again right after the replacement: a copy of its construction
    statement, after the first line of `stack` (or `after`) in the construction's function,
    when the construction reads the parameters from one of `names`."""
    if construction is None or not names:
        return None
    filename, built = construction
    reads = {node.id for node in ast.walk(built.value) if isinstance(node, ast.Name)}
    if not reads & names:
        return None
    tree = parse_file(filename)
    scope = enclosing_function(tree, built.lineno)
    places = [after] if after is not None else [
        (site.filename, statement_at(site.filename, site.lineno)) for site in stack]
    for place_file, statement in places:
        if (place_file == filename and statement is not None and statement.lineno > built.end_lineno
                and enclosing_function(tree, statement.lineno) is scope):
            original = segment(filename, statement)
            rebuilt = segment(filename, built)
            if original is None or rebuilt is None or "\n" in original or "\n" in rebuilt:
                return None
            return Suggestion("or build the optimizer again after the replacement, so that it holds the new "
                              "parameters", f"{original}\n{rebuilt}", statement_location(filename, statement))
    return None


def reload_after_replacement(swap_stack, step_stack) -> tuple[str, ast.stmt] | None:
    """(file, statement) of `<optimizer>.load_state_dict(...)`, the optimizer's own receiver as
    step() is called on it, written after the replacing statement or a call on the way to it, in the
    same block (it ran after the replacement whenever the program went on to step)."""
    receiver = _step_receiver(statement_at(step_stack[0].filename, step_stack[0].lineno)) if step_stack else None
    if receiver is None:
        return None
    wanted = ast.unparse(receiver)
    for site in swap_stack:
        tree = parse_file(site.filename)
        statement = statement_at(site.filename, site.lineno)
        block = block_holding(tree, statement) if tree is not None and statement is not None else None
        if block is None:
            continue
        for later in block[block.index(statement) + 1:]:
            call = later.value if isinstance(later, ast.Expr) else None
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "load_state_dict" and ast.unparse(call.func.value) == wanted):
                return site.filename, later
    return None


def _reload_help(optimizer, construction, reload, names: set) -> Suggestion:
    """The optimizer built again where the program reloads its state, when that state is the one
    a new optimizer has: nothing per parameter (saved before any step, or an optimizer without
    state) and each setting as built (no scheduler changed it), one group."""
    advice = Suggestion("build the optimizer again after the replacement, from the module's parameters of now, "
                        "instead of loading a state dict into it (a state dict cannot give it new tensors)")
    filename, statement = reload
    if construction is None or len(optimizer.param_groups) != 1 or optimizer.state:
        return advice
    if any(key in group and group[key] != value for group in optimizer.param_groups
           for key, value in optimizer.defaults.items() if key != "params"):
        return advice
    built_file, built = construction
    if built_file != filename or re.search(r"lr_scheduler|Scheduler\b|Scheduler\(", source_text(filename)):
        return advice  # a scheduler holds the old optimizer: the rebuilt one would not be scheduled
    reads = {node.id for node in ast.walk(built.value) if isinstance(node, ast.Name)}
    if not reads & (names | {"self"}) or (isinstance(built.targets[0], ast.Attribute) and "self" not in reads):
        return advice
    tree = parse_file(filename)
    if tree is None or enclosing_function(tree, built.lineno) is not enclosing_function(tree, statement.lineno):
        # Built in another method of the class (`self.optimizer = ...` in __init__): only names the
        # reload's method has too (`self`, the file's top-level names).
        top_level = {name for node in tree.body if isinstance(node, (ast.Assign, ast.Import, ast.ImportFrom,
                                                                     ast.FunctionDef, ast.ClassDef))
                     for name in _bound_names(node)} if tree is not None else set()
        if not (isinstance(built.targets[0], ast.Attribute) and reads <= top_level | {"self"} | set(dir(builtins))):
            return advice
    rebuilt = segment(filename, built)
    if rebuilt is None or "\n" in rebuilt:
        return advice
    return Suggestion("build the optimizer again here, from the parameters of now: a new optimizer starts "
                      "from the state this line reloads (nothing per parameter, the same settings) and holds "
                      "the new tensors", rebuilt, statement_location(filename, statement))


def _bound_names(node: ast.stmt) -> set:
    if isinstance(node, ast.Assign):
        return {name for target in node.targets for name in stored_names(target)}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    return {node.name}


def _add_group_help(optimizer, construction, what: str) -> Suggestion:
    name = ast.unparse(construction[1].targets[0]) if construction is not None else "optimizer"
    return Suggestion(f"or give the optimizer the new parameters of {what} after the replacement: "
                      f"`{name}.add_param_group({{\"params\": ...}})` (its other settings as for the first group)")


def _module_names(step_stack, trained: list) -> set:
    """Names, around the step() call, of the modules that hold `trained`."""
    ids = {id(p) for p in trained}
    names = set()
    for site in step_stack:
        frame = live_frame(site)
        if frame is None:
            continue
        for name, value in list(frame_values(frame).items()):
            if isinstance(value, torch.nn.Module) and any(id(p) in ids for p in value.parameters()):
                names.add(name)
    return names


def count_of(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def shapes_of(tensors: list) -> str:
    shown = ", ".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in tensors[:3])
    return shown + (", ..." if len(tensors) > 3 else "")
