"""ADL017: a tensor with a graph kept on a module (a buffer, an attribute that
a later `copy.deepcopy` of the module copies, or a state carried from call to
call)."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.repository_callers import called_only_without_gradients
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.names import self_attribute

RULE = Rule(
    code="ADL017", name="graph-tensor-kept-on-module",
    summary="A module keeps a tensor that carries a graph: a buffer updated without `detach()`, a state carried from call to call, or an attribute a later `deepcopy` of the module copies.",
    what_it_does="""In a method of an `nn.Module` subclass, with gradients on, finds
`self.<name> = <graph tensor>` (computed from a parameterised layer of the
module or from a leaf that requires grad), and reports it when

* `<name>` is a buffer of the class (`self.register_buffer("<name>", ...)`):
  running statistics updated from activations; in `forward`, also a
  statistic of the forward's input alone (and `running_mean`/`running_var` of
  a class derived from a batch norm) when a call in the same file passes the
  module a graph tensor (`self.bn(self.conv(x))`, a hand-written batch norm),
  or
* the same file deep-copies an instance of the class (`copy.deepcopy(model)`,
  as EMA and "best model" snapshots do); the finding is at the `deepcopy`, or
* the value is computed from the attribute's own previous value, in a file
  that runs backward passes (`out, self.hidden = self.rnn(x, self.hidden)`: a
  recurrent state carried from call to call), and nothing else in the file
  gives the attribute a new value (a loop that resets `model.hidden` before
  each sequence, a method of the class other than `__init__`).  The value may
  be a local name every binding of which is computed from the attribute (`h =
  self.h`, then `h = relu(self.h_h(h))` in a loop, then `self.h = h`), and a
  method that resets the attribute counts as no reset when its every call is a
  statement of a function's own body (or of `__init__`) before a loop of that
  function that backpropagates without calling it (`model.reset()` once, then
  the batches).

Also an item of a container kept on the module re-bound, with a graph, from
the container's own items (`self.states[i] = cell(x, self.states[i])`,
`self.h[i], self.c[i] = cell(x, (self.h[i], self.c[i]))`, a layer of a
`ModuleList` filled by `append` with layers that all have parameters), in a
file that trains, when nothing in the file but the class's `__init__` does
anything else with the container than reading one item or taking its `len()`
(no reset, detach, clearing or call handed it): one finding per method,
naming every such container.

Also the in-place update of a buffer of the class from such a value
(`self.<buffer>.lerp_(value, m)`, `.add_(value)`, `.copy_(value)`, the tail of
`self.<buffer>.mul_(m).add_(value)`), under the same conditions: the update
makes the buffer a graph tensor as the assignment does.

Also a tensor computed once, in `__init__`, from a parameter of the module by an
op that saves tensors for its backward (`self.length_scale =
torch.exp(self.log_length_scale)`, `self.std = self.log_std.exp()`; the parameter not made with
`requires_grad=False`), when
nothing else in the file gives the attribute a new value and a loop in a
method of the class backpropagates, on every iteration and without
`retain_graph`, a loss computed by a method that reads it (`loss =
self.negative_log_likelihood()`, `self(x)` when `forward` reads it, through
other methods of the class): the second backward goes through the op whose
saved tensors the first freed.  An op that saves nothing (`.t()`, a view)
backpropagates again without error and is not reported.  Likewise the output
of one of the module's own layers with parameters, stored in `__init__`
(`self.class_embeddings = self.text_proj(descriptions)`, or through a method of
the class that calls the layer and returns what it computed), nothing before it
in `__init__` freezing anything or turning gradients off, when `forward` reads
it and a loop backpropagates, on every iteration, a loss computed from a call
of the module (in a method of the class, or in a function of the file that
builds the module or is handed it by every call).

A new leaf stored on the module (`self.grid = nn.Parameter(F.interpolate(
self.grid.data, ...))`, a grid rescaled between training phases) carries no
graph and is not reported.""",
    why_bad="""The module now holds the graph of the forward pass that made the tensor.
A buffer used in the next forward links the new graph to the old, freed one:
`RuntimeError: Trying to backward through the graph a second time`.  And
`copy.deepcopy` of the module raises `Only Tensors created explicitly by the
user (graph leaves) support the deepcopy protocol`.""",
    example="""class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("running", torch.zeros(3))

    def forward(self, x):
        h = self.fc(x)
        self.running = 0.9 * self.running + 0.1 * h.mean(0)
        return h - self.running""",
    use_instead="""class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("running", torch.zeros(3))

    def forward(self, x):
        h = self.fc(x)
        self.running = 0.9 * self.running + 0.1 * h.mean(0).detach()
        return h - self.running""",
    fix_safety="No automatic fix: whether the statistic should carry gradients is a choice.",
    known_problems="""Only assignments to `self.<name>` in the class's own methods are
seen (also in a method registered as a forward hook, whose `output` is the
hooked layer's output; and to the running statistics of a batch norm it holds,
`self.bn.running_mean`), and only deep copies of names bound to the class in
the same file or of a layer of `self` built from it.  A
store inside `if flag:` that is false at the default of the method's
parameter `flag` (`if use_cache:` with `use_cache=False`: a key/value cache
that generation switches on under `no_grad`) is not reported: nothing shows
that it runs with gradients.  Nor is a buffer re-bound in a method other than
`forward` that turns no gradient on itself and whose every mention in the
repository is a call made without gradients (`with torch.no_grad():
model.update_embeddings(x, y)` after each step).""",
)


def on_call(checker, node, q) -> None:
    """`copy.deepcopy(model)` (or `copy.deepcopy(self.encoder)`, a layer this class
    built) of a same-file module whose methods store graph tensors."""
    if q != "copy.deepcopy" or not node.args:
        return
    copied = node.args[0]
    if isinstance(copied, ast.Name):
        spec = checker.modules.name_specs.get(copied.id)
    else:
        spec = checker.modules.self_attribute_spec(copied, checker.scope.owner_class)
    if spec is not None and checker.modules.graph_attributes.get(spec.kind):
        checker.scope.note("ADL017", ("deepcopy", node, checker.text(copied), spec.kind))


def on_attribute_assign(checker, target, value, stmt) -> None:
    """`self.<buffer> = value` where the value carries this forward's graph; and
    `out, self.hidden = self.rnn(x, self.hidden)`: an attribute re-bound, with a
    graph, from its own previous value (the state the previous call left)."""
    cls = checker.scope.module_class
    if cls and target.attr in NORM_BUFFERS and isinstance(target.value, ast.Attribute):
        _layer_buffer(checker, target, value, stmt, cls)
        return
    if not cls:
        return
    if not checker.keeps_graph_on_module(target, value):
        _forward_argument_buffer(checker, target, value, stmt, cls)
        return
    if target.attr in checker.modules.buffers.get(cls, ()):
        checker.scope.note("ADL017", ("buffer", stmt, target.attr, cls))
    elif checker.file.trains and (_reads_self_attribute(value, target.attr)
                                  or _descends_from_attribute(checker.scope, value, target.attr)) \
            and not _detached_before(checker, stmt, target.attr):
        checker.notes["ADL017 carried"].append((stmt, target.attr, cls, checker.scope.name))


def on_item_assign(checker, target, value, stmt) -> None:
    """`self.states[i] = cell(x, self.states[i])`, `self.h[i], self.c[i] = cell(x, (self.h[i],
    self.c[i]))`: an item of a container kept on the module re-bound, with a graph, from the
    container's own items (the states the previous call left).  Reported in ``check_file``
    when nothing else in the file touches the container (``_items_carried_only``)."""
    cls = checker.scope.module_class
    container = target.value
    if not cls or not checker.file.trains or not self_attribute(container) \
            or not checker.keeps_graph_on_module(container, value):
        return
    attr = container.attr
    if _reads_self_attribute(value, attr) or _descends_from_attribute(checker.scope, value, attr):
        checker.notes["ADL017 carried items"].append((stmt, attr, cls, checker.scope.name))


# In-place methods that write (part of) their arguments' values into the receiver:
# `self.running.lerp_(batch_mean, m)`, `self.running.mul_(m).add_(batch_mean, alpha=1 - m)`.
BLENDING_METHODS = frozenset({"lerp_", "add_", "sub_", "copy_", "addcmul_", "addcdiv_"})


def on_method_call(checker, call, func) -> None:
    """`self.<buffer>.lerp_(value, m)` (or `.add_`, `.copy_`, the tail of
    `self.<buffer>.mul_(m).add_(value)`) in a module's method, where the value
    carries a graph: the in-place update makes the buffer a graph tensor, as
    `self.<buffer> = ...` does.  A value with this forward's graph from a layer of
    the module is noted at once; one computed from the forward's input waits, as
    the assignment does, for a call in the file that passes the module a graph
    tensor."""
    if func.attr not in BLENDING_METHODS:
        return
    buffer = func.value
    while isinstance(buffer, ast.Call) and isinstance(buffer.func, ast.Attribute) \
            and buffer.func.attr.endswith("_"):
        buffer = buffer.func.value  # `self.running.mul_(m).add_(value)`: the buffer is written
    cls = checker.scope.module_class
    scope = checker.scope
    if not cls or not (isinstance(buffer, ast.Attribute) and isinstance(buffer.value, ast.Name)
                       and buffer.value.id == "self") \
            or buffer.attr not in checker.modules.buffers.get(cls, ()) \
            or scope.grad_off or checker.opt_in_depth:
        return
    values = [a for a in call.args if not isinstance(a, ast.Constant) and not checker.is_grad_leaf(a)]
    if any(checker.is_graph(v) for v in values):
        scope.note("ADL017", ("buffer in place", call, buffer.attr, cls))
    elif scope.name == "forward" and scope.owner_class == cls \
            and any(checker.result_carries_graph(v) for v in values):
        checker.notes["ADL017 forward argument"].append((call, buffer.attr, cls))


# The running statistics of the normalisation layers: buffers that only ever hold data.
NORM_BUFFERS = frozenset({"running_mean", "running_var"})
NORM_LAYERS = frozenset({"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
                         "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})


def _layer_buffer(checker, target, value, stmt, cls) -> None:
    """`self.bn.running_mean = (1 - m) * self.bn.running_mean + m * y.mean(1)`: a
    batch norm's running statistic, kept by a layer this module holds, given a
    tensor with this forward's graph (a quantisation-aware layer that folds the
    batch norm into its convolution)."""
    spec = checker.modules.self_attribute_spec(target.value, checker.scope.owner_class)
    if spec is None or spec.kind not in NORM_LAYERS or checker.scope.grad_off or checker.opt_in_depth \
            or value is None or not checker.is_graph(value) or checker.is_grad_leaf(value):
        return
    checker.scope.note("ADL017", ("layer buffer", stmt, f"{target.value.attr}.{target.attr}", cls))


def _forward_argument_buffer(checker, target, value, stmt, cls) -> None:
    """`self.running_mean = m * input.mean([0, 2, 3]) + (1 - m) * self.running_mean`
    in a module's `forward`, where the statistic's graph can come only from the
    forward's arguments: a buffer of the class (registered in it, or the running
    statistics of the batch norm it derives from).  Reported at the end of the file
    if some call in the file passes that module a graph tensor (`self.bn(self.conv(x))`,
    graph_callers.py): a hand-written batch norm fed by a convolution; a running
    normaliser of raw observations gets no such call and stays silent."""
    scope = checker.scope
    if scope.name != "forward" or scope.owner_class != cls or value is None \
            or not (isinstance(target.value, ast.Name) and target.value.id == "self") \
            or scope.grad_off or checker.opt_in_depth or checker.is_grad_leaf(value):
        return
    buffer = target.attr in checker.modules.buffers.get(cls, ()) or (
        target.attr in NORM_BUFFERS and any(base.rsplit(".", 1)[-1] in NORM_LAYERS
                                            for base in scope.class_bases))
    if buffer and checker.result_carries_graph(value):
        checker.notes["ADL017 forward argument"].append((stmt, target.attr, cls))


def _detached_before(checker, stmt, attr: str) -> bool:
    """The method re-binds `self.<attr>` to a value with no graph before ``stmt``, on
    every path: the last statement of its body before the one holding ``stmt`` that
    binds `self.<attr>` is `self.<attr> = <cut>` (`self.hidden.detach()`,
    `tuple(h.detach() for h in self.hidden)`, a same-file function that detaches),
    or an `if self.<attr> is not None:` (`is None:`) whose branch for a state detaches
    it, the other branch leaving it `None` or giving it a first value.  The state the
    previous call left then reaches this call without its graph."""
    function = checker.scope.function_node
    if function is None:
        return False
    name = function.name
    last = None
    for top in function.body:
        if top.lineno <= stmt.lineno <= (top.end_lineno or top.lineno):
            break
        if _binds_self_attribute(top, attr):
            last = top
    if last is None:
        return False
    if not isinstance(last, ast.If):
        return _detaching_assignment(checker, last, attr, name)
    test = last.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and _is_self_attribute(test.left, attr) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return False
    state_branch = last.body if isinstance(test.ops[0], ast.IsNot) else last.orelse
    first_branch = last.orelse if isinstance(test.ops[0], ast.IsNot) else last.body
    detaching = [s for s in state_branch if _binds_self_attribute(s, attr)]
    return bool(detaching) and _detaching_assignment(checker, detaching[-1], attr, name) \
        and all(isinstance(s, ast.Assign) for s in first_branch if _binds_self_attribute(s, attr))


def _detaching_assignment(checker, stmt, attr: str, function: str) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
        and _is_self_attribute(stmt.targets[0], attr) and checker.cuts_graph(stmt.value, function)


def _binds_self_attribute(stmt, attr: str) -> bool:
    """``stmt`` (or a statement inside it) binds `self.<attr>`."""
    return any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and _is_self_attribute(n, attr)
               for n in ast.walk(stmt))


def _is_self_attribute(node, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == "self"


def _descends_from_attribute(scope, value, attr: str) -> bool:
    """``value`` is a local name every value of which so far in the method is computed
    from `self.<attr>`: its first binding reads `self.<attr>` (or such a name), each
    later one reads the name itself, `self.<attr>` or such a name (`h = self.h`,
    then `h = relu(self.h_h(h + emb))` in a loop; then `self.h = h`)."""
    if not isinstance(value, ast.Name):
        return False
    return _derived(scope, value.id, attr, {})


def _derived(scope, name: str, attr: str, known: dict) -> bool:
    """(``known``: name -> result, shared by one question; a name being decided
    counts as not derived, so a cycle adds no evidence.)"""
    if name in known:
        return known[name]
    known[name] = False
    bindings = scope.bind_values.get(name) or ()
    if not bindings or any(v is None for _, v, _ in bindings):
        return False

    def reads(v, itself: bool) -> bool:
        if _reads_self_attribute(v, attr):
            return True
        names = {n.id for n in ast.walk(v) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return (itself and name in names) or any(_derived(scope, n, attr, known) for n in names - {name})

    known[name] = reads(bindings[0][1], False) and all(reads(v, True) for _, v, _ in bindings[1:])
    return known[name]


def _reads_self_attribute(value, attr: str) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name)
               and n.value.id == "self" for n in ast.walk(value))


def check_file(checker) -> None:
    """An attribute carried from call to call with its graph, in a file that trains,
    reported when nothing else in the file gives it a new value: a training loop
    that resets it (`model.hidden = model.init_hidden()` before each sequence, the
    LSTM tutorial's way) or a method of the class other than `__init__` and the one
    that carries it could do that at the right time, which the file cannot tell."""
    _check_taken_once(checker)
    _check_layer_output_taken_once(checker)
    fed = checker.graph_callers.reached() if checker.notes["ADL017 forward argument"] else ()
    for stmt, attr, cls in checker.notes["ADL017 forward argument"]:
        if f"{cls}.forward" in fed and isinstance(stmt, ast.Call):
            checker.report("ADL017", stmt, _in_place_message(attr, "computed from this forward's input, "
                                                             "which a call in this file passes with its graph"))
        elif f"{cls}.forward" in fed:
            checker.report("ADL017", stmt,
                           f"buffer `self.{attr}` is given a tensor computed from this forward's input, "
                           f"which a call in this file passes with its graph: each call's statistic links "
                           f"to the one before, so the graphs of every step stay alive (memory grows with "
                           f"the step count) and a backward through the statistic fails ('Trying to "
                           f"backward through the graph a second time'); update it under "
                           f"`torch.no_grad()` or from `.detach()`ed values")
    _check_carried_items(checker)
    carried = checker.notes["ADL017 carried"]
    if not carried:
        return
    assigned = _attribute_assignments(checker.tree, {attr for _, attr, _, _ in carried})
    reported = set()
    for stmt, attr, cls, method in carried:
        if id(stmt) in reported:
            continue  # `(self.h, self.c) = state`: one finding for the statement, the first attribute
        if all(owner == (cls, "__init__") or owner == (cls, method)
               or (owner[0] == cls and _reset_once_before_loops(checker.tree, owner[1]))
               for owner in assigned.get(attr, ())):
            reported.add(id(stmt))
            checker.report("ADL017", stmt,
                           f"`self.{attr}` is given a tensor that carries this call's graph, computed from "
                           f"the `self.{attr}` the previous call left: the next call links its graph to this "
                           f"one, which the first backward() frees, so the second backward() fails ('Trying "
                           f"to backward through the graph a second time'); store `.detach()`ed values, or "
                           f"reset `self.{attr}` before each sequence")


def _check_carried_items(checker) -> None:
    """Items of containers on the module carried from call to call with their graph
    (``on_item_assign``), when the file does nothing else with the container: one
    finding per method, at its first such statement, naming every container."""
    carried = checker.notes["ADL017 carried items"]
    if not carried:
        return
    carrying = {id(stmt) for stmt, _, _, _ in carried}
    by_method: dict = {}
    for stmt, attr, cls, method in carried:
        by_method.setdefault((cls, method), []).append((stmt, attr))
    for (cls, _), items in by_method.items():
        kept = [(stmt, attr) for stmt, attr in items if _items_carried_only(checker.tree, attr, cls, carrying)]
        if not kept:
            continue
        stmt = min((stmt for stmt, _ in kept), key=lambda s: (s.lineno, s.col_offset))
        attrs = list(dict.fromkeys(attr for _, attr in kept))
        first, others = attrs[0], ", ".join(f"`self.{a}`" for a in attrs[1:])
        checker.report("ADL017", stmt,
                       f"`self.{first}[...]`{f' (and the items of {others})' if others else ''} is given a "
                       f"tensor that carries this call's graph, computed from the items the previous call "
                       f"left, and nothing resets `self.{first}`: the next call links its graph to this one, "
                       f"which the first backward() frees, so the second backward() fails ('Trying to "
                       f"backward through the graph a second time'); store `.detach()`ed values, or reset "
                       f"`self.{first}` before each sequence")


def _items_carried_only(tree, attr: str, cls: str, carrying: set) -> bool:
    """Every mention of `<anything>.<attr>` in the file, outside `__init__` of ``cls``,
    reads one item (`self.states[i]`), is `len(self.states)`, or is the target of a
    carrying statement (``carrying``): no method, loop or caller resets, detaches,
    clears or replaces the container or one of its items, and no call is handed it
    (what such a call does is unknown)."""
    allowed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
                    allowed.update(id(n) for n in ast.walk(item))
        elif isinstance(node, (ast.Assign, ast.AugAssign)) and id(node) in carrying:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                allowed.update(id(n.value) for n in ast.walk(target) if isinstance(n, ast.Subscript)
                               and isinstance(n.value, ast.Attribute) and n.value.attr == attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Attribute) and node.value.attr == attr:
            allowed.add(id(node.value))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
                and len(node.args) == 1 and isinstance(node.args[0], ast.Attribute):
            allowed.add(id(node.args[0]))
    return all(id(node) in allowed for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr == attr)


def _reset_once_before_loops(tree, method: str | None) -> bool:
    """Every call of ``method`` in the file (`model.reset()`; there is one at least,
    and the name is mentioned nowhere else) is a statement of a function outside
    any loop of it, and a loop later in that function runs `backward()` without
    calling it (or the call is in `__init__`): the reset runs once before the iterations, not between them (the
    LSTM tutorial's reset before each sequence is inside the loop, and stays a
    reset)."""
    if not method or method.startswith("__"):
        return False
    calls, mentions = [], 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == method:
            mentions += 1
        elif isinstance(node, ast.Name) and node.id == method:
            mentions += 1
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for stmt in function.body:  # a statement of the function's own body: in no loop, no branch
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
                    and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == method \
                    and not stmt.value.args and not stmt.value.keywords:
                calls.append((function, stmt))
    if not calls or len(calls) != mentions:  # a mention that is no such call: unknown
        return False
    for function, stmt in calls:
        if function.name == "__init__":
            continue  # `self.reset()` when the module is built
        later = [s for s in function.body if s.lineno > stmt.lineno and isinstance(s, (ast.For, ast.While))]
        if not any(_loop_backpropagates(loop, method) for loop in later):
            return False
    return True


def _loop_backpropagates(loop, method: str) -> bool:
    backward = reset = False
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            backward |= node.func.attr == "backward"
            reset |= node.func.attr == method
    return backward and not reset


def _attribute_assignments(tree, attrs: set) -> dict:
    """attr -> {(class, method)} of every assignment `<anything>.<attr> = ...` in the
    file (``(None, None)`` outside a class's methods)."""
    found: dict = {}

    def visit(node, cls, method):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name, None)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, cls if method is None else None, child.name if method is None else method)
            else:
                if isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                    targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                    for t in targets:
                        for n in ast.walk(t):
                            if isinstance(n, ast.Attribute) and n.attr in attrs and isinstance(n.ctx, ast.Store):
                                found.setdefault(n.attr, set()).add((cls, method))
                visit(child, cls, method)

    visit(tree, None, None)
    return found


def _in_place_message(attr: str, source: str) -> str:
    return (f"buffer `self.{attr}` is updated in place from a tensor {source}: the buffer becomes a "
            f"graph tensor and each call's update links to the one before, so the graphs of every step "
            f"stay alive (memory grows with the step count); update it under `torch.no_grad()` or from "
            f"`.detach()`ed values")


def check_scope(checker, scope) -> None:
    for kind, node, name, cls in scope.noted("ADL017"):
        if kind in ("buffer", "buffer in place") and _method_called_only_without_gradients(checker, scope):
            continue
        if kind == "buffer in place":
            checker.report("ADL017", node, _in_place_message(name, "that carries this forward's graph"))
        elif kind == "deepcopy":
            attr, line = checker.modules.graph_attributes[cls][0]
            checker.report("ADL017", node,
                           f"`copy.deepcopy({name})` copies a `{cls}` whose method stores `self.{attr}`, "
                           f"a tensor with a grad_fn (line {line}): after a forward pass deepcopy raises "
                           f"'Only Tensors created explicitly by the user (graph leaves) support the "
                           f"deepcopy protocol'; store `.detach()` instead")
        elif kind == "layer buffer":
            checker.report("ADL017", node,
                           f"buffer `self.{name}` is given a tensor that carries this forward's graph: each "
                           f"call's statistic links to the one before, so the graphs of every step stay alive "
                           f"(memory grows with the step count), a backward through the statistic fails "
                           f"('Trying to backward through the graph a second time') and `deepcopy` of the "
                           f"module raises; store `.detach()`ed values")
        else:
            checker.report("ADL017", node,
                           f"buffer `self.{name}` is given a tensor that carries this forward's graph; the "
                           f"next forward links to it and backward() fails ('Trying to backward through "
                           f"the graph a second time'); store `.detach()`ed values")


def _method_called_only_without_gradients(checker, scope) -> bool:
    """The buffer is updated in a method of the module other than `forward` (an
    entry point `nn.Module.__call__` runs with the caller's gradients), the method
    turns no gradient on itself, and every mention of its name in the repository is
    a call made without gradients (``repository_callers.py``: under `with
    torch.no_grad():`, in a function decorated so, or in one its own file only calls
    so; at least one call): the value it stores has no graph (set AU, DUQ's
    `update_embeddings(x, y)`, called after each step under `torch.no_grad()`)."""
    function = scope.function_node
    if function is None or scope.owner_class is None or scope.name == "forward":
        return False
    text = checker.text(function)
    if "enable_grad" in text or "set_grad_enabled" in text:
        return False
    return called_only_without_gradients(scope.name, checker.filename, checker.tree)


# calls whose result holds no graph: a value read through them is released
_RELEASING = frozenset({"detach", "item", "tolist", "numpy", "float", "int", "print", "repr", "str"})


def _check_taken_once(checker) -> None:
    """A module's `__init__` stores a tensor computed from one of its own parameters
    by an op that saves tensors for its backward (`self.length_scale =
    torch.exp(self.log_length_scale)`; MiniGP, r492), nothing else in the file gives
    the attribute a new value, and a loop backpropagates, on every iteration and
    without `retain_graph`, a loss computed by a method of the same object that
    reads the attribute: the first backward frees the op's saved tensors, so the
    second raises 'Trying to backward through the graph a second time' (and the
    optimizer's updates of the parameter never reach the stored value)."""
    # the attribute is computed from a `nn.Parameter(...)` made in the same `__init__`:
    # a text test spares files without one the walk of every class
    if not checker.file.trains or "Parameter(" not in checker.source:
        return
    table = N.saves_table()
    for cls in ast.walk(checker.tree):
        if not isinstance(cls, ast.ClassDef) or not any(ast.unparse(b).split(".")[-1] == "Module"
                                                        for b in cls.bases):
            continue
        methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        init = methods.get("__init__")
        if init is None or any("no_grad" in ast.unparse(d) or "inference_mode" in ast.unparse(d)
                               for d in init.decorator_list):
            continue
        parameters, taken = set(), []
        for stmt in init.body:  # the statements of `__init__` itself, not under a `with` or an `if`
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and self_attribute(stmt.targets[0]) is not None):
                continue
            attr, value = stmt.targets[0].attr, stmt.value
            if isinstance(value, ast.Call) and (checker.qualname(value.func) or "").endswith("nn.Parameter"):
                frozen = any(k.arg == "requires_grad" and not (isinstance(k.value, ast.Constant) and k.value.value)
                             for k in value.keywords) or len(value.args) > 1
                if not frozen and f".{attr}.requires_grad" not in checker.source:
                    parameters.add(attr)  # a parameter that requires grad (nothing in the file freezes it)
                continue
            if not isinstance(value, ast.Call):
                continue
            read = [n.attr for n in ast.walk(value) if self_attribute(n) is not None]
            if not read or any(r not in parameters for r in read) or any(
                    isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _RELEASING
                    for n in ast.walk(value)):
                continue
            if isinstance(value.func, ast.Attribute) and self_attribute(value.func.value) in parameters:
                key = f"torch.Tensor.{value.func.attr}"  # `self.log_scale.exp()`
            elif value.args and self_attribute(value.args[0]) in parameters:
                key = checker.qualname(value.func) or ""
            else:
                continue
            entry = table.get(key)
            if entry is None or not (entry.get("output") or entry.get("inputs")):
                continue  # an op that saves nothing backpropagates again without error
            taken.append((stmt, attr, read[0], key))
        if not taken:
            continue
        assigned = _attribute_assignments(checker.tree, {attr for _, attr, _, _ in taken})
        for stmt, attr, parameter, key in taken:
            if any(owner != (cls.name, "__init__") for owner in assigned.get(attr, ())) \
                    or "setattr(" in checker.source:
                continue
            readers = _readers(methods, attr)
            if not readers:
                continue
            found = _backward_loop(checker, cls, methods, readers)
            if found is None:
                continue
            backward, loop, call = found
            checker.report(
                "ADL017", stmt,
                f"`self.{attr}` is computed once, in `__init__`, from the parameter `self.{parameter}` by "
                f"`{key.replace('torch.Tensor.', 'Tensor.')}`, which saves tensors for its backward; "
                f"`{checker.text(backward)}` on line {backward.lineno} goes through it (`{checker.text(call)}`) on "
                f"every iteration of the loop on line {loop.lineno}: the first backward frees what it saved, so "
                f"the second raises 'Trying to backward through the graph a second time', and the optimizer's "
                f"updates of `self.{parameter}` never reach `self.{attr}`; compute it where it is used (in the "
                f"method, or a `@property`)",
                related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                          "backpropagated on every iteration here"),
                         (call.lineno, checker.col(call.lineno, call.col_offset), 0,
                          f"reads `self.{attr}` through this call")])


def _check_layer_output_taken_once(checker) -> None:
    """A module's `__init__` stores the output of one of its own layers, called there
    (`self.class_embeddings = self.text_proj(descriptions)`) or through a method of
    the class that calls one and returns what it computed
    (`self.label_representation = self.build_label_representation(tag2id)`; r701),
    with gradients on and no `detach()`; nothing else in the file gives the attribute
    a new value; and a loop backpropagates, on every iteration and without
    `retain_graph`, a loss computed from a call of the module whose `forward` reads
    the attribute (in a method of the class, or in a function of the file that
    builds the module or is handed it by every call): the first backward frees what
    the layer saved, so the second raises 'Trying to backward through the graph a
    second time'.  A layer is one with parameters (`nn.Linear`, an `nn.Sequential`
    holding one, a same-file module that builds one) that nothing in the file
    freezes (no line naming it mentions `requires_grad`)."""
    if not checker.file.trains or "self." not in checker.source or "set_grad_enabled(False)" in checker.source:
        return
    classes = {n.name: n for n in checker.tree.body if isinstance(n, ast.ClassDef)}
    for cls in classes.values():
        if not _module_class(cls):
            continue
        methods = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        init = methods.get("__init__")
        if init is None or "forward" not in methods or any(
                "no_grad" in ast.unparse(d) or "inference_mode" in ast.unparse(d) for d in init.decorator_list):
            continue
        layers, taken = set(), []
        for stmt in init.body:  # `__init__`'s own statements, not under a `with` or an `if`
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and self_attribute(stmt.targets[0]) is not None and isinstance(stmt.value, ast.Call)):
                continue
            attr, value = stmt.targets[0].attr, stmt.value
            if _parameterised_constructor(value, classes):
                if not any(attr in line and "requires_grad" in line for line in checker.source.splitlines()):
                    layers.add(attr)
                continue
            called = self_attribute(value.func)
            if any("requires_grad" in ast.unparse(before) or "no_grad" in ast.unparse(before)
                   for before in init.body[:init.body.index(stmt)]):
                break  # something frozen (or gradients turned off) before the call: no graph is known
            if called in layers:
                taken.append((stmt, attr, f"the layer `self.{called}`"))
            elif called in methods and called not in ("__init__", "forward") and \
                    _returns_layer_output(methods[called], layers):
                taken.append((stmt, attr, f"`self.{called}(...)`, which calls a layer of the module"))
        if not taken:
            continue
        assigned = _attribute_assignments(checker.tree, {attr for _, attr, _ in taken})
        for stmt, attr, source in taken:
            if any(owner != (cls.name, "__init__") for owner in assigned.get(attr, ())) \
                    or "setattr(" in checker.source:
                continue
            readers = _readers(methods, attr)
            if "forward" not in readers:
                continue
            found = _backward_loop(checker, cls, methods, readers) or _instance_backward_loop(checker, cls)
            if found is None:
                continue
            backward, loop, call = found
            checker.report(
                "ADL017", stmt,
                f"`self.{attr}` is computed once, in `__init__`, by {source}, with its graph; every "
                f"forward reads it, and `{checker.text(backward)}` on line {backward.lineno} goes through it "
                f"(`{checker.text(call)}`) on every iteration of the loop on line {loop.lineno}: the first "
                f"backward frees what the layer saved, so the second raises 'Trying to backward through the "
                f"graph a second time' (and the layer's updates never reach `self.{attr}`); compute it in "
                f"`forward`, or store it with `.detach()` if it is meant to stay fixed",
                related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                          "backpropagated on every iteration here"),
                         (call.lineno, checker.col(call.lineno, call.col_offset), 0,
                          f"runs the forward that reads `self.{attr}`")])


def _module_class(cls) -> bool:
    return any(ast.unparse(b).split(".")[-1] == "Module" for b in cls.bases)


def _parameterised_constructor(value, classes: dict) -> bool:
    """``value`` builds a layer with parameters: an `nn` layer that has them, an
    `nn.Sequential` holding one, or a same-file `nn.Module` whose `__init__` builds
    one (or an `nn.Parameter`)."""
    if not isinstance(value, ast.Call):
        return False
    name = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", None)
    if name in N.PARAMETERISED_MODULES:
        return True
    if name == "Sequential":
        return any(_parameterised_constructor(a, classes) for a in value.args)
    cls = classes.get(name) if isinstance(value.func, ast.Name) else None
    if cls is None or not _module_class(cls):
        return False
    init = next((f for f in cls.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    return init is not None and any(
        isinstance(n, ast.Call) and (
            (n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None))
            in N.PARAMETERISED_MODULES | {"Parameter"})
        for n in ast.walk(init))


def _returns_layer_output(method, layers: set) -> bool:
    """``method`` (not decorated with `no_grad`) calls one of ``layers`` with gradients
    on and returns a value computed from what it called (the names bound from the
    call, through further bindings, appending and stacking)."""
    if any("no_grad" in ast.unparse(d) or "inference_mode" in ast.unparse(d) for d in method.decorator_list):
        return False
    tainted = set()
    statements = sorted(_statements(method), key=lambda s: (s.lineno, s.col_offset))
    for _ in range(2):  # twice: a list appended in a loop and stacked after it
        for stmt in statements:
            value = getattr(stmt, "value", None)
            if value is None:
                continue
            reads = any(isinstance(n, ast.Call) and self_attribute(n.func) in layers or
                        isinstance(n, ast.Name) and n.id in tainted for n in ast.walk(value))
            if not reads or any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                and n.func.attr in _RELEASING for n in ast.walk(value)):
                continue
            if isinstance(stmt, ast.Return):
                return True
            if isinstance(stmt, ast.Expr) and isinstance(value, ast.Call) and \
                    isinstance(value.func, ast.Attribute) and value.func.attr in ("append", "extend") and \
                    isinstance(value.func.value, ast.Name):
                tainted.add(value.func.value.id)  # `tag_embeddings.append(pooler_output)`
            for target in getattr(stmt, "targets", [getattr(stmt, "target", None)]):
                if target is not None:
                    tainted |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return False


def _instance_backward_loop(checker, cls):
    """``(backward, loop, call)``: a loop in a function of the file whose body calls an
    instance of ``cls`` -- a name the function binds only to `cls(...)`, with gradients
    on, or a parameter that every call of the function fills with one
    (``FileFacts.module_parameters``) -- and backpropagates, without `retain_graph`,
    a name computed from that call's result in the same iteration; or None."""
    no_grad = {id(n) for w in ast.walk(checker.tree) if isinstance(w, (ast.With, ast.AsyncWith)) and any(
        "no_grad" in ast.unparse(i.context_expr) or "inference_mode" in ast.unparse(i.context_expr)
        for i in w.items) for n in ast.walk(w)}
    for function in ast.walk(checker.tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        instances = set()
        owner = next((c.name for c in ast.walk(checker.tree) if isinstance(c, ast.ClassDef)
                      and function in c.body), None)
        for parameter, ctor in checker.file.module_parameters.get((owner, function.name), {}).items():
            if isinstance(ctor, ast.Call) and isinstance(ctor.func, ast.Name) and ctor.func.id == cls.name \
                    and id(ctor) not in no_grad:
                instances.add(parameter)
        bindings = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        bindings.setdefault(target.id, []).append(node)
        for name, nodes in bindings.items():
            if all(isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Name)
                   and n.value.func.id == cls.name and id(n) not in no_grad for n in nodes):
                instances.add(name)
        if not instances:
            continue
        for loop in ast.walk(function):
            if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) or id(loop) in no_grad:
                continue
            found = _backward_of_instance_output(loop, instances, no_grad)
            if found is not None:
                return found[0], loop, found[1]
    return None


def _backward_of_instance_output(loop, instances: set, no_grad: set):
    """``(backward, call)`` in ``loop``'s own body: `y = model(x)` (``model`` in
    ``instances``), names computed from `y`, then `<name>.backward()` without
    arguments; or None."""
    body = sorted((s for s in ast.walk(loop) if isinstance(s, ast.stmt) and s is not loop
                   and not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                   and id(s) not in no_grad), key=lambda s: (s.lineno, s.col_offset))
    tainted, call = set(), None
    for stmt in body:
        if isinstance(stmt, ast.Assign):
            calls = [n for n in ast.walk(stmt.value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                     and n.func.id in instances]
            reads = calls or any(isinstance(n, ast.Name) and n.id in tainted for n in ast.walk(stmt.value))
            if reads and not any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                                 and n.func.attr in _RELEASING for n in ast.walk(stmt.value)):
                call = call or (calls[0] if calls else None)
                for target in stmt.targets:
                    tainted |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            backward = stmt.value
            if isinstance(backward.func, ast.Attribute) and backward.func.attr == "backward" and \
                    isinstance(backward.func.value, ast.Name) and backward.func.value.id in tainted and \
                    not backward.args and not backward.keywords and call is not None:
                return backward, call
    return None


def _value_reads(stmt, attr: str) -> bool:
    """``stmt`` (an assignment or a `return`) computes its value from `self.<attr>`, not
    through a call that releases the graph, and not under `no_grad`."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)) or stmt.value is None:
        return False
    todo = [stmt.value]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if callee in _RELEASING:
                continue
        if self_attribute(node) == attr:
            return True
        todo.extend(ast.iter_child_nodes(node))
    return False


def _statements(function):
    """The statements of ``function``, not under a `with` that turns gradients off and
    not in nested definitions."""
    todo = list(function.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(
                "no_grad" in ast.unparse(i.context_expr) or "inference_mode" in ast.unparse(i.context_expr)
                for i in stmt.items):
            continue
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                todo.extend(s for s in inner if isinstance(s, ast.stmt))
        for handler in getattr(stmt, "handlers", ()):
            todo.extend(handler.body)


def _readers(methods: dict, attr: str) -> set:
    """Methods of the class (not `__init__`, not decorated with `no_grad`) whose value
    is computed from `self.<attr>`, directly or through a call of another such method
    (`self.kernel(X, X)` in an assignment)."""
    def plain(f):
        return not any("no_grad" in ast.unparse(d) or "inference_mode" in ast.unparse(d) for d in f.decorator_list)
    readers = {name for name, f in methods.items() if name != "__init__" and plain(f)
               and any(_value_reads(s, attr) for s in _statements(f))}
    changed = True
    while changed:
        changed = False
        for name, f in methods.items():
            if name in readers or name == "__init__" or not plain(f):
                continue
            if any(_value_calls(s, readers) for s in _statements(f)):
                readers.add(name)
                changed = True
    return readers


def _value_calls(stmt, readers: set):
    """The call `self.<reader>(...)` (or `self(...)`, when `forward` reads) in the
    value of ``stmt`` (an assignment or a `return`), not through a releasing call;
    else None."""
    if not isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)) or stmt.value is None:
        return None
    todo = [stmt.value]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if callee in _RELEASING:
                continue
            if isinstance(node.func, ast.Attribute) and self_attribute(node.func) in readers:
                return node
            if isinstance(node.func, ast.Name) and node.func.id == "self" and "forward" in readers:
                return node  # `self(x)` runs `forward`
        todo.extend(ast.iter_child_nodes(node))
    return None


def _backward_loop(checker, cls, methods: dict, readers: set):
    """``(backward, loop, call)``: a loop in a method of the class whose body binds a
    name from a call of a reader (`loss = self.negative_log_likelihood()`) and calls
    `<name>.backward()` without `retain_graph`, the name not bound again between the
    two; or None.  (`self` is the same object on every iteration.)"""
    for function in methods.values():
        for loop in ast.walk(function):
            if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
                continue
            body = [s for s in ast.walk(loop) if isinstance(s, ast.stmt) and s is not loop]
            for stmt in body:
                if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name)):
                    continue
                call = _value_calls(stmt, readers)
                if call is None or not any(s is stmt for s in _statements(function)):
                    continue
                name = stmt.targets[0].id
                for node in body:
                    backward = node.value if isinstance(node, ast.Expr) else None
                    if not (isinstance(backward, ast.Call) and isinstance(backward.func, ast.Attribute)
                            and backward.func.attr == "backward" and isinstance(backward.func.value, ast.Name)
                            and backward.func.value.id == name and not backward.keywords
                            and not backward.args and backward.lineno > stmt.lineno):
                        continue
                    if any(isinstance(s, (ast.Assign, ast.AugAssign)) and stmt.lineno < s.lineno < backward.lineno
                           and any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(s)
                                   if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)) for s in body):
                        continue
                    return backward, loop, call
    return None
