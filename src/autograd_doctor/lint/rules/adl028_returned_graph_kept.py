"""ADL028: a value with a graph, returned by a same-file function of a training
step, kept by the caller across the iterations of its loop: every iteration's
graph stays alive."""

from __future__ import annotations

import ast

from autograd_doctor.lint.returned_graphs import (FileIndex, Interpreter, _origins, runs_backward_itself,
                                                  trains_and_returns)
from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL028", name="returned-graph-kept",
    summary="A value returned with its graph by a training step (the loss in a dict for logging, the predictions) is kept by the caller across its loop: every iteration's graph stays alive.",
    what_it_does="""In a loop, finds a call of a function or method of the same file whose
returned value (or the part of it the loop keeps: an entry of a returned dict,
a position of a returned tuple) carries a graph, kept by the loop in a
container that lives across its iterations: `history.append(out)`,
`self.outputs.append(out["log"])`, `store[step] = preds`, or a sum into a name,
`total_loss += loss` (a sum keeps every graph it adds), or into an entry of a
container, `totals[name] += term` (in a loop over the returned dictionary's
`.items()`, inside the loop that calls the function), with the container
bound before the loop (or an attribute of `self`) and not re-bound or cleared
in it (a sum that starts again inside the loop is not reported).  Each link
needs evidence:

* the value carries a graph: the function computes it from a module with
  parameters (a layer of `self` built from `nn.<Layer>(...)` or a class of the
  file, a name the file calls `.parameters()` on, `self(x)` in a module), from
  an argument the caller computed so, or it is the loss the function
  backpropagates; `.item()`, `.detach()`, `float()`, comparisons, `.shape` and
  anything computed under `torch.no_grad()` carry none;
* the graph is a training graph: the function runs a backward pass, or the
  loop backpropagates a part of the same call's result (`out["loss"].backward()`,
  `(loss / k).backward()` of `loss, out = step(...)`);
* the call is made in the same loop that keeps the value.

The finding is at the caller's keeping line, with the function's `return` as
related location.""",
    why_bad="""A tensor with a `grad_fn` keeps its whole graph alive: the activations
saved for the backward, the intermediate results, up to the inputs.  Kept in a
list that lives across the loop, every iteration's graph is kept: memory grows
with the number of steps until the loop ends or the device runs out of memory
(a backward frees the saved tensors of the part it went through, but its nodes
stay, and a part it did not go through, an entropy or a metric computed from
the output, keeps its saved tensors).  Nothing raises.  A framework that detaches the loss it backpropagates (Lightning
detaches the returned `"loss"`) does not detach the other values a step returns
or logs.""",
    example="""class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return {"loss": loss}

    def fit(self, batches):
        history = []
        for x, y in batches:
            history.append(self.train_step(x, y))""",
    use_instead="""class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}

    def fit(self, batches):
        history = []
        for x, y in batches:
            history.append(self.train_step(x, y))""",
    fix_safety="""No automatic fix: whether the kept value should be a number (`.item()`) or a
tensor without a graph (`.detach()`), and whether to cut it in the function or
in the caller, depends on what reads it later.""",
    known_problems="""Only functions and methods of the same file are followed (a method called on
another object when a single class of the file defines it), a few calls deep;
modules are recognised from their construction or a `.parameters()` call in
the file, so a model handed in from another file whose `.parameters()` the file
never reads is unknown and the finding is not made.  A value kept in a
container that another function or a framework keeps (Lightning's own list of
step outputs) is not seen: the keeping must be in the file.  A value detached
on one branch only still counts as carrying its graph.""",
)

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def check_file(checker) -> None:
    """Only in a file that runs backward passes and has a function that both
    backpropagates and returns a value; then every function with a loop is read."""
    if not checker.file.trains or not trains_and_returns(checker):
        return
    index = FileIndex(checker)
    interpreter = Interpreter(checker, index)
    for body, cls in index.callers:
        if _has_loop(body):
            interpreter.run_caller(body, cls)
    already = {f.line for f in checker.findings if f.code == "ADL023"}
    reported = set()
    for record in interpreter.records:
        for node, container, kept, value in record.keeps:
            if node.lineno in already or id(node) in reported or not _lives_across(container, record.loop, node):
                continue
            if _gathers_one_result(checker.tree, container, record.loop):
                continue
            origin = _training_origin(value, record, checker.file.backward_functions)
            if origin is not None:
                reported.add(id(node))
                _report(checker, node, container, kept, value, origin, record)


def _has_loop(body) -> bool:
    todo = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return True
        if not isinstance(node, _DEFINITIONS):
            todo.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))
    return False


def _lives_across(container, loop, keeping=None) -> bool:
    """The container is a name bound outside ``loop`` (not re-bound nor cleared in it,
    the sum ``keeping`` that adds to it aside) or an attribute of `self` (not re-bound
    in it)."""
    own_store = keeping.target if isinstance(keeping, ast.AugAssign) else None
    if isinstance(container, ast.Name):
        name = container.id
    elif isinstance(container, ast.Attribute) and isinstance(container.value, ast.Name) \
            and container.value.id == "self":
        name = None
    else:
        return False
    todo = list(loop.body)
    while todo:
        node = todo.pop()
        if isinstance(node, _DEFINITIONS):
            continue
        todo.extend(ast.iter_child_nodes(node))
        if name is not None:
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)) \
                    and node is not own_store:
                return False
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "clear" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == name:
                return False  # `saved.clear()` after the backward that needs them
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Del) \
                    and isinstance(node.value, ast.Name) and node.value.id == name:
                return False  # `del saved[:]`
        elif isinstance(node, ast.Attribute) and node.attr == container.attr \
                and isinstance(node.ctx, (ast.Store, ast.Del)):
            return False
    if isinstance(loop, (ast.For, ast.AsyncFor)) and name is not None and any(
            isinstance(n, ast.Name) and n.id == name for n in ast.walk(loop.target)):
        return False
    return True


_GATHERS = frozenset({"cat", "concat", "concatenate", "stack", "vstack", "hstack"})


def _gathers_one_result(tree, container, loop) -> bool:
    """The loop maps over the slices of one tensor in hand and the list it fills is
    joined into one result right after: `for i in range(n)`, `n` being `t.size(k)` /
    `t.shape[k]` / `t.size()[k]` (or a name bound once in the function to one), the
    list a name bound in the same statement list just before the loop, and every read
    of it after the loop the first argument of `torch.cat` / `torch.stack` (and their
    kin).  Such a list holds the parts of one value for one tensor's slices (the
    unbatched form of one batched call), not one graph per step of a loop over data:
    nothing in it outlives the joined result, which a caller keeping it across its
    own loop makes a finding of its own.  A loop over a loader, a `range` with a step
    or a quotient (batches of a data set in memory), a list kept or read otherwise,
    stays reported (set AI, LibFewShot's episode loop)."""
    if not isinstance(container, ast.Name) or not isinstance(loop, ast.For):
        return False
    rng = loop.iter
    if not (isinstance(rng, ast.Call) and isinstance(rng.func, ast.Name) and rng.func.id == "range"
            and len(rng.args) == 1 and not rng.keywords):
        return False
    function = _enclosing_function(tree, loop)
    if function is None:
        return False
    name = container.id
    block = _block_of(function, loop)
    if block is None:
        return False
    before = block[:block.index(loop)]
    if not any(isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
               and s.targets[0].id == name and isinstance(s.value, ast.List) and not s.value.elts
               for s in before):
        return False
    if not _is_size(rng.args[0], function):
        return False
    gathered = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _GATHERS \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" and node.args:
            gathered.add(id(node.args[0]))
    reads = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == name
             and n.lineno > loop.end_lineno]
    return bool(reads) and all(id(n) in gathered for n in reads)


def _enclosing_function(tree, target):
    found = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.lineno < target.lineno <= node.end_lineno:
            if found is None or node.lineno > found.lineno:
                found = node
    return found


def _block_of(function, target):
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is target for s in block):
                return block
    return None


def _size_expression(node) -> bool:
    """`t.size(k)`, `t.shape[k]`, `t.size()[k]` with a constant `k`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size" \
            and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, int):
        return True
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, int):
        inner = node.value
        if isinstance(inner, ast.Attribute) and inner.attr == "shape":
            return True
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "size" \
                and not inner.args:
            return True
    return False


def _is_size(node, function) -> bool:
    if _size_expression(node):
        return True
    if not isinstance(node, ast.Name):
        return False
    bindings = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == node.id
                and isinstance(n.ctx, ast.Store)]
    if len(bindings) != 1:
        return False
    for stmt in ast.walk(function):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is bindings[0]:
            return _size_expression(stmt.value)
    return False


def _training_origin(value, record, backward_functions):
    """A call in this loop whose return gives the kept graph, of a function that
    backpropagates or whose result this loop backpropagates a part of."""
    loop = record.loop
    backpropagated = {origin: call for origin, call in record.backward_origins}
    for origin in sorted(_origins(value), key=lambda o: o[-1].lineno):
        if len(origin) != 3:
            continue
        definition, _, call = origin
        if not loop.lineno <= call.lineno <= loop.end_lineno:
            continue
        if origin in backpropagated:
            return origin, backpropagated[origin]
        if definition.name in backward_functions and runs_backward_itself(definition):
            return origin, None
    return None


def _report(checker, node, container, kept, value, found, record) -> None:
    (definition, returned, call), backward = found
    path, part = value.graph_part()
    held = part.what or checker.text(kept)
    where = "".join(f"[{k!r}]" for k in path)
    kept_text = checker.text(kept) if kept is not node else "the value stored"
    if backward is not None:
        training = (f"`{checker.text(backward)}` on line {backward.lineno} backpropagates part of the same "
                    f"result, so it is a training graph")
    else:
        training = f"`{definition.name}()` runs a backward pass, so it is a training graph"
    holds = f"`{held}`" + (f" (at `{kept_text}{where}`)" if where else "")
    verb = f"sums `{kept_text}`" if isinstance(node, ast.AugAssign) else f"keeps `{kept_text}`"
    checker.report(
        "ADL028", node,
        f"`{checker.text(container)}` {verb} on every iteration of this loop, and it holds "
        f"{holds} with its graph, returned by `{definition.name}()` (line {returned.lineno}) called on line "
        f"{call.lineno}; {training}: every iteration's graph stays alive and memory grows with the "
        f"iteration count; keep `.item()` (a scalar for logging) or `.detach()` of it",
        related=[(returned.lineno, checker.col(returned.lineno, returned.col_offset), 0,
                  f"`{definition.name}()` returns `{held}` with its graph here")])
