"""ADL023: a backpropagated loss summed across the iterations of a training loop
with its graph: the sum keeps every iteration's graph alive."""

from __future__ import annotations

import ast
import re
import os

from autograd_doctor.lint import loop_calls
from autograd_doctor.lint import names as N
from autograd_doctor.lint.clearing import project_class
from autograd_doctor.lint.summaries import class_parameter_accumulations
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.walk import own_nodes

RULE = Rule(
    code="ADL023", name="loss-summed-with-graph",
    summary="A loss that the loop backpropagates is summed across its iterations as a tensor: the sum keeps every iteration's graph.",
    what_it_does="""In a `for`/`while` loop that backpropagates a loss (`loss.backward()`,
`(loss / k).backward()`, `scaler.scale(loss).backward()`,
`accelerator.backward(loss)`; the loss a name or a field of a model's result
object, `output.loss`; the divisor of a quotient whose dividend holds a name,
`k` in `loss / k`, is a scale, not a loss), finds a sum of that loss into a name (or an
entry of a dict with a constant key, `totals["loss"]`) bound before the loop
and never re-bound in it: `total += loss`, `total += loss * n`, `total =
total + loss`, the first-iteration idiom `total = loss if total is None else
total + loss` (the loss may be a name the loop binds to the backpropagated one,
`loss = losses`, in the sum's branch; a binding of the total in the other branch of
an `if` from the total itself, with no `.item()` or `.detach()`, goes on with
it), with gradients on; or an append of it to a list bound before
the loop (`history.append(loss)`), or to a parameter that every call of the
function in the file (a top-level function, used only by calls) fills with a
list it made (`history = []`, then `train_one_epoch(..., history)`); or a call, on every iteration, of a method
of an object built before the loop and not re-built in it (`meter =
AverageMeter()`, a class of the file or of another file of the project) that
adds the loss into an attribute of the object or appends it to one
(`meter.update(loss, n)` where `update` runs `self.sum += val * n`, in a
statement outside any `if` or loop), or an object that every call of the
function in the file hands in as a parameter, built by one constructor
(`run = Run()`, then `train(model, batches, run)`: `run.log({"loss": loss})`
where `log` runs `self.history.append(dict(row))`; the loss may sit in a dict,
list or tuple display); the value handed may also add up a list
the loop appends the loss to (`sum(losses) / len(losses)`,
`torch.stack(losses).mean()`, or a function of the file whose only statement
returns so of its parameter: `list_mean(loss_of_subnets)`).  Also finds a sum of every entry of a
dictionary one of whose entries the loop backpropagates, under the key a loop
around the sum iterates (`losses["total"].backward()`, then `for k in losses:
totals[k] += losses[k]`, or `for k, v in losses.items(): totals[k] += v`),
`totals` bound before the training loop; and, in a method of a class that
backpropagates a loss, a sum or an append of it into an attribute of `self`
(`self.running += loss`, `self.running.add_(loss.cpu() * n)`,
`self.losses.append(loss)`) when a loop of the file calls the method, or, where
none does, a loop of another file of the repository that names the class (its
import or constructor: FedML's clients, whose loop is in the simulation's API
file) (the attribute outlives the call): silent when the method binds the attribute again,
when the loop that calls it also calls a method of the class that binds it (or
writes it), and when the attribute is backpropagated.  Also, in such a
method, a call of a method of an object held on `self` that every binding of
the attribute in the class (and its bases of the file) builds with one
constructor of the file or the project (`self.losses = AverageMeter([...])`),
when that method adds its parameter into an attribute (as above) or, handed a
list or tuple display, adds each element into an item of one (`for idx, v in
enumerate(values): self._sum[idx] += v`, also in the branch of `if
isinstance(values, list)`): the value handed is the loss, or a value of the
method with a graph of its own by the interpreter of returned graphs
(`coarse_loss` of `self.completion(data)`, beside `_loss.backward()`); silent
when the method or the loop calls a method of the meter's class that binds the
attribute again (`reset()`).  Also finds a sum, into a name bound to a number
before the loop and summed only there, of a value that is not the loss but
carries a graph of its own by the interpreter of returned graphs: a metric of the
model's output computed by a function of the file (`dice += dice_coeff(
torch.sigmoid(output), target)`), on every iteration of a loop that
backpropagates.  A loss moved or cast
before the sum (`loss.cpu()`, `loss.to(device)`, `loss.float()`) is the loss
with its graph.  Also finds, each as its own finding, the
sum of a part of that loss: a name that the loss's expression is built from
in the same loop body (`loss = bpr_loss + reg * reg_loss`, then `total_bpr
+= bpr_loss`), bound once in the loop before the loss, with a graph of its
own (the linter knows it carries one, or it is a tensor computed from a
model's output, `recon = F.mse_loss(model(x), x)`).  Silent when the sum takes
`loss.item()`, `float(loss)` or `loss.detach()`, when the loss name is
re-bound between the backward and the sum (or, for an entry of a dictionary,
the entry replaced by a number there: `losses[k] = v.item()` on every
iteration of a loop over the dictionary's own keys or items), when the sum is made under
`torch.no_grad()`, when the sum starts again inside the loop (or, for a loop
that only picks the networks it calls, `for i in range(n): ... cohort[i](x)`,
before it in the body of the loop around it: a sum over one batch's
networks, or, for a counted accumulation window, `for n_i in range(rounds):`
that takes no step, when the loop around it binds the total to a constant
(or a factory tensor without a graph, `torch.tensor(0.0)`) before the window and steps, after it, an optimizer it clears: a sum over
one step's micro-batches), when the backward's own statement binds the loss
name again before the sum (`(g,) = torch.autograd.grad(g, x,
create_graph=True)`, then `kept.append(g)`: what is kept is the gradient), when the sum
and the backward are in different branches of an `if`, and when the sum is
itself backpropagated (gradient accumulation through the sum) or detached in
place.""",
    why_bad="""`loss` carries its graph (the backward proves it), so `total + loss` is a
tensor whose `grad_fn` links to the previous iteration's sum and to this
iteration's graph: the sum holds the autograd history of every iteration of
the loop, and memory grows with the iteration count until the loop ends (or
the process runs out of memory on a long epoch).  PyTorch's FAQ names this
first: "Don't accumulate history across your training loop".  Nothing
raises, and a backward through the sum later fails ('Trying to backward
through the graph a second time').""",
    example="""running_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss""",
    use_instead="""running_loss = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss.item()""",
    fix_safety="""Unsafe (only with `--unsafe-fixes`): `loss` in the sum becomes
`loss.detach()`; the sum keeps its values and its type (a tensor) but no
graph, which changes the program only where code outside this function
differentiates the sum.""",
    known_problems="""Only a sum into a plain name, in the function that runs the loop, of a
loss name that the same loop backpropagates (or of a part of it: an operand of
its binding with a graph of its own, or the tensor it reduces, `loss =
per_var.mean()`, whose sum is advised `.detach()`, not `.item()`), is seen (and an append to a
list name, a method of an object held by a plain name, an entry under the key
that a loop over the backpropagated dictionary iterates, and an attribute of
`self` in a method that a loop of the file calls): a loss summed into an
attribute of another object, a dict entry under another computed key, a
meter held on `self` in a method with its own loop or in a dict
(`meters["loss"].update(loss)`), a logger handed in as a parameter of a
method or by a caller of another file, or a reporter that
hands it on to other objects (pytorch-pfn-extras' summaries), is not
reported; nor is a method run once per iteration by a framework's loop (no
loop of the file calls it).  A
part is read one level deep (an operand of the loss's own expression, not of
its operands), and a part returned by a function the linter does not know
(`reg_loss = l2_loss(...)` from another module) is not reported: it may be a
number.""",
)

_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.Div)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# plain-name calls that are not a model's: builtins a loss's expression may use
_BUILTIN_CALLS = frozenset({"sum", "len", "abs", "min", "max", "float", "int", "range", "zip", "enumerate",
                            "list", "tuple", "dict", "map", "sorted", "reversed", "round", "pow"})
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def on_name_assign(checker, name, value) -> None:
    """Note the values bound in a loop, with gradients on, that carry a graph or are
    tensors computed in it (not constants): a loss's part summed later needs
    evidence of its own graph (the backward proves only that the loss as a whole
    carries one)."""
    scope = checker.scope
    # A file with no backward pass has no loss to sum (check_scope needs one): nothing to note.
    if checker.file.trains and scope.loops and not scope.grad_off \
            and isinstance(value, (ast.Call, ast.BinOp, ast.UnaryOp)):
        if checker.is_graph(value):
            scope.note("ADL023", (id(value), True))
        elif checker.is_tensor(value) and not checker.is_const(value):
            scope.note("ADL023", (id(value), False))


def check_scope(checker, scope) -> None:
    """Read the function again only when it runs a backward inside a loop (or, for a
    method, when it backpropagates and keeps something in an attribute of ``self``)."""
    receivers = scope.backward_receivers
    if receivers and not scope.grad_off and scope.owner_class is not None and scope.function is not None:
        _check_attribute_keeps(checker, scope)
    if not receivers or scope.grad_off or not scope.finished_loops or not any(
            a < seq < b for seq, _, _ in receivers for a, b in scope.finished_loops):
        return
    if scope.function is not None:
        body = scope.function.body
    elif scope.name == "<module>":
        body = checker.tree.body
    else:
        return
    losses = {}  # id of the backward call -> the loss names it backpropagates
    summed_back = set()  # names that some backward goes through
    for _, call, receiver in receivers:
        names = _operand_names(receiver)
        if names:
            losses[id(call)] = names
        summed_back.update(n.id for n in ast.walk(receiver) if isinstance(n, ast.Name))
    graph_values = dict(scope.noted("ADL023"))
    _check_recording_closures(checker, body, losses)
    if _check_body(checker, body, losses, summed_back, graph_values):
        # a loss handed to a method of an object (`meter.update(loss, n)`): read once the
        # whole file is, when the summaries of every class's methods are known
        checker.notes["ADL023 methods"].append((body, losses, summed_back, graph_values, scope.function))


def check_file(checker) -> None:
    """A loss handed, on every iteration, to a method that adds it into an attribute
    of an object built before the loop (`losses.update(loss, n)` of an `AverageMeter`
    whose `update` runs `self.sum += val * n`; r359): the same sum, one call down."""
    for body, losses, summed_back, graph_values, function in checker.notes["ADL023 methods"]:
        _check_body(checker, body, losses, summed_back, graph_values, methods=True, function=function)


def _operand_names(node) -> set[str]:
    """Names that are arithmetic operands of ``node`` (`loss`, `loss / k`, `loss * n`):
    the value carries their graph.  A call (`loss.item()`), an attribute (`loss.data`)
    or a subscript stops the search.  The divisor of a quotient whose dividend holds
    a name is a scale, not a loss (`total_loss / grad_accum_every`): a backward of
    the quotient proves a graph in the dividend, not in the divisor (set W's
    GigaGAN summed `divergence.item() / grad_accum_every`, a number)."""
    if isinstance(node, ast.Name):
        return {node.id}
    if _result_field(node):
        return {ast.unparse(node)}  # `output.loss` of a model's result object
    if _keeps_graph_call(node):
        return _operand_names(node.func.value)  # `loss.cpu()`: the same value, moved
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        dividend = _operand_names(node.left)
        if isinstance(node.op, ast.Div) and dividend:
            return dividend
        return dividend | _operand_names(node.right)
    return set()


# methods of a tensor whose result, called with no argument (or `.to(device)`), is
# the same value moved or cast, with its graph: `total += loss.cpu()` keeps it
_GRAPH_KEEPING_METHODS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "clone"})


def _keeps_graph_call(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in _GRAPH_KEEPING_METHODS and not node.keywords \
        and len(node.args) <= (1 if node.func.attr == "to" else 0)


def _result_field(node) -> bool:
    """`output.loss`: a field of a result object held in a name (a Hugging Face
    model's output), not a tensor's own attribute (`loss.data`, `loss.T`); or an
    entry of a result dictionary under a string key or a key the object holds
    (`output["loss"]`, neuromancer's `output[self.train_metric]`)."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        key = node.slice
        return isinstance(key, ast.Constant) and isinstance(key.value, str) or isinstance(key, ast.Attribute) \
            and isinstance(key.value, ast.Name) and key.value.id == "self"
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.attr not in N.TENSOR_ATTRIBUTES and node.attr not in N.METADATA_ATTRIBUTES


def _operand_nodes(node, name: str):
    if isinstance(node, (ast.Name, ast.Subscript)) or _result_field(node):
        if ast.unparse(node) == name:
            yield node
    elif _keeps_graph_call(node):
        yield from _operand_nodes(node.func.value, name)
    elif isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        yield from _operand_nodes(node.left, name)
        yield from _operand_nodes(node.right, name)
    elif isinstance(node, ast.IfExp):  # `loss if total is None else total + loss`: both branches keep it
        yield from _operand_nodes(node.body, name)
        yield from _operand_nodes(node.orelse, name)


def _displayed_operand_names(node) -> set[str]:
    """As _operand_names, also inside a dict, list or tuple display (`{"loss": loss}`)."""
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
        elements = node.values if isinstance(node, ast.Dict) else node.elts
        return set().union(*(_displayed_operand_names(e) for e in elements if e is not None))
    return _operand_names(node)


def _displayed_operand_nodes(node, name: str):
    """As _operand_nodes, also inside a dict, list or tuple display handed to a
    method (`run.log({"loss": loss})`)."""
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
        for element in node.values if isinstance(node, ast.Dict) else node.elts:
            if element is not None:
                yield from _displayed_operand_nodes(element, name)
    else:
        yield from _operand_nodes(node, name)


def _walk(body, path=()):
    """Every node of ``body`` with its path: the (statement, field) pairs of the
    compound statements around it, not entering nested definitions."""
    for stmt in body:
        yield stmt, path
        if isinstance(stmt, _DEFINITIONS):
            continue
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                yield from _walk(inner, path + ((stmt, field),))
        for i, handler in enumerate(getattr(stmt, "handlers", ())):
            yield from _walk(handler.body, path + ((stmt, f"handler{i}"),))
        todo = [(child, path) for child in ast.iter_child_nodes(stmt)]
        while todo:  # the expressions of this statement (its own blocks are walked above)
            node, p = todo.pop()
            if isinstance(node, (ast.stmt, ast.ExceptHandler, ast.Lambda)):
                continue
            yield node, p
            todo.extend((child, p) for child in ast.iter_child_nodes(node))


def _bound_names(node):
    """Names a statement or expression binds, and the text of each dict entry with a
    constant key it assigns (`totals["depth"]`)."""
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        targets = [node.optional_vars]
    elif isinstance(node, ast.NamedExpr):
        targets = [node.target]
    else:
        return
    todo = list(targets)
    while todo:
        target = todo.pop()
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, (ast.Tuple, ast.List)):
            todo.extend(target.elts)
        elif isinstance(target, ast.Starred):
            todo.append(target.value)
        elif _entry_base(target) is not None:
            yield ast.unparse(target)


def _entry_base(node) -> str | None:
    """``totals`` for `totals["depth"]` (a constant key), else None."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
            and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, (str, int)):
        return node.value.id
    return None


def _total(node) -> tuple[str, str] | None:
    """``(text, name bound before the loop)`` of a running total: `total`, or a dict
    entry with a constant key, `totals["depth"]`."""
    if isinstance(node, ast.Name):
        return node.id, node.id
    base = _entry_base(node)
    return (ast.unparse(node), base) if base is not None else None


def _sum_of(node):
    """``(total, base, value)`` for `total += value`, `total -= value`, `total = total +
    value` (``total`` a name or a dict entry; ``base`` the name that holds it)."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        total = _total(node.target)
        return (*total, node.value) if total is not None else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.IfExp):
        total = _total(node.targets[0])
        value = _first_or_sum(node.value, total) if total is not None else None
        return (*total, node.value) if value is not None else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 \
            and isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add):
        total = _total(node.targets[0])
        if total is None:
            return None
        left, right = node.value.left, node.value.right
        if _total(left) == total:
            return (*total, right)
        if _total(right) == total:
            return (*total, left)
    return None


def _first_or_sum(node, total):
    """``value`` for `value if total is None else total + value` (or `total + value if
    total is not None else value`, `value if not total else ...`): the running total's
    first-iteration idiom, where both branches keep ``value`` (RecBole's trainer, r487);
    else None."""
    test = node.test
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    if negated:
        test = test.operand
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        empty_first = isinstance(test.ops[0], ast.Is) != negated  # the body runs when the total is empty
        test = test.left
    elif negated:
        empty_first = True
    else:
        return None
    if _total(test) != total:
        return None
    first, summed = (node.body, node.orelse) if empty_first else (node.orelse, node.body)
    if not (isinstance(summed, ast.BinOp) and isinstance(summed.op, ast.Add)):
        return None
    for side, other in ((summed.left, summed.right), (summed.right, summed.left)):
        if _total(side) == total and ast.unparse(other) == ast.unparse(first):
            return other
    return None


def _sum_operands(value) -> set[str]:
    """The names whose graph a summed value keeps: ``_operand_names``, and for the
    first-iteration idiom (an `IfExp`, see ``_sum_of``) those that both branches keep
    (the added value, not the total)."""
    if isinstance(value, ast.IfExp):
        return _operand_names(value.body) & _operand_names(value.orelse)
    return _operand_names(value)


def _check_body(checker, body, losses: dict, summed_back: set, graph_values: dict,
                methods: bool = False, function=None) -> bool:
    """``graph_values``: id of a value bound in a loop -> True when it carries a graph,
    False when it is a tensor computed there (on_name_assign).  Without ``methods``,
    checks the sums written in ``body`` and returns whether it also hands a loss to a
    method of an object (`meter.update(loss)`); with it, checks only those calls."""
    backwards = []   # (loss name, call, path)
    sums = []        # (total, value, statement, path)
    bindings = []    # (name, line, statement, path)
    detached_in_place = set()
    loss_names = set().union(*losses.values()) if losses else set()
    handed = []      # (object, call, path): `meter.update(loss, n)`
    listed = {}      # list name -> the loss names appended to it: `loss_of_subnets.append(loss)`
    entry_sums = []  # (total, base, dictionary, operand, value, statement, path): `totals[k] += losses[k]`
    in_place_adds = []  # (receiver, call, path): `total.add_(loss)`, `stats.device_stat("loss").add_(loss)`
    for node, path in _walk(body):
        if isinstance(node, ast.Call):
            for name in losses.get(id(node), ()):
                backwards.append((name, node, path))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "add_" and len(node.args) == 1 \
                    and not methods:
                in_place_adds.append((node.func.value, node, path))  # `total.add_(loss)`
            if isinstance(node.func, ast.Attribute) and node.func.attr == "detach_" \
                    and isinstance(node.func.value, ast.Name):
                detached_in_place.add(node.func.value.id)
            elif isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
                    and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and not node.keywords:
                kept_in = node.func.value.id
                if _operand_names(node.args[0]) & loss_names:
                    listed.setdefault(kept_in, set()).update(_operand_names(node.args[0]) & loss_names)
                if not methods:
                    sums.append((kept_in, kept_in, node.args[0], node, path))  # `history.append(loss)`
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and any(_argument_losses(checker, a, listed) & loss_names for a in node.args) | any(
                        _argument_losses(checker, k.value, listed) & loss_names for k in node.keywords):
                handed.append((node.func.value.id, node, path))
        elif isinstance(node, ast.stmt) or isinstance(node, (ast.withitem, ast.NamedExpr)):
            summed = _sum_of(node)
            if summed is not None and not methods:
                sums.append((*summed, node, path))
            elif not methods and isinstance(node, (ast.AugAssign, ast.Assign)):
                entry = _entry_sum(node, path)
                if entry is not None:
                    entry_sums.append((*entry, node, path))
            for name in _bound_names(node):
                bindings.append((name, node.lineno if hasattr(node, "lineno") else 0, node, path))
    if not methods:
        for receiver, call, path in in_place_adds:
            total = _in_place_total(checker, receiver, bindings)
            if total is not None:
                sums.append((*total, call.args[0], call, path))
        if backwards and checker.scope.function is not None:
            # `history.append(loss)` into a list the caller made and handed in: it outlives the loop
            appended = {s[0] for s in sums if isinstance(s[3], ast.Call)}
            bound = {b[0] for b in bindings}
            if appended - bound and appended & checker.scope.parameters:
                for name in _lists_from_callers(checker, checker.scope.function, appended - bound):
                    bindings.append((name, checker.scope.function.lineno, checker.scope.function, []))
        _check_sums(checker, sums, backwards, bindings, summed_back, detached_in_place, graph_values)
        _check_entry_sums(checker, entry_sums, backwards, bindings, summed_back, detached_in_place)
        return bool(handed and backwards)
    accumulations = []  # (object, argument, call, path, (parameter, attribute, line))
    for owner, call, path in handed:
        built = _built_from(owner, bindings)
        if built is None and function is not None and not any(b[0] == owner for b in bindings):
            # a parameter never bound in the function: the class its callers build (r434)
            built = _class_from_callers(checker, function, owner)
            if built is None:
                continue
            given = True
            bindings.append((owner, function.lineno, function, []))  # bound on entry, before any loop
        elif built is None:
            continue
        else:
            given = False
        if isinstance(built, ast.Name) and (built.id, call.func.attr) in checker.summaries.parameter_accumulations:
            arguments = checker.summaries.accumulated_arguments(call, built.id)
        else:  # a class of another file of the project (`utils.AverageMeter()`)
            qualname = checker.qualname(built)
            found = project_class(qualname, checker.filename) if qualname and "." in qualname else None
            facts = class_parameter_accumulations(found[1], call.func.attr) if found is not None else {}
            # the line is the other file's: named with its file, no related location
            facts = {where: (*fact, os.path.basename(found[0])) for where, fact in facts.items()}
            arguments = checker.summaries.accumulated_arguments(call, "", facts) if facts else []
        accumulations.extend((owner, argument, call, path, fact, given and ast.unparse(built))
                             for argument, fact in arguments)
    for owner, argument, call, path, fact, given in accumulations:
        if owner in summed_back or owner in detached_in_place or _grad_off(checker, path):
            continue
        direct = _displayed_operand_names(argument)
        for summed in sorted(_argument_losses(checker, argument, listed)):
            found = next((b for b in backwards if b[0] == summed and _kept_across(checker,
                owner, owner, summed, call, path, b, bindings)), None)
            if found is not None:
                _report(checker, owner, summed, argument, call, found[1], through=(call.func.attr, fact),
                        collected=None if summed in direct else argument, given=given)
                break
    return False


def _in_place_total(checker, receiver, bindings):
    """``(total, name bound before the loop)`` for the receiver of `.add_(value)`, an
    in-place sum: a name (`total.add_(loss)`, as `total += loss`), or the result of a
    method of an object that every binding of the function builds from a class of the
    file, when every `return` of that method gives back a tensor the object keeps
    (`return self.device_stats[name]`): the same stored tensor at each call
    (`stats.device_stat("average_loss").add_(loss)`).  Else None."""
    if isinstance(receiver, ast.Name):
        return receiver.id, receiver.id
    if not (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute)
            and isinstance(receiver.func.value, ast.Name)):
        return None
    owner = receiver.func.value.id
    built = _built_from(owner, bindings)
    if not isinstance(built, ast.Name):
        return None
    classes = [n for n in checker.tree.body if isinstance(n, ast.ClassDef) and n.name == built.id]
    methods = [f for f in (classes[0].body if len(classes) == 1 else [])
               if isinstance(f, ast.FunctionDef) and f.name == receiver.func.attr]
    if len(methods) != 1:
        return None
    returns = [n.value for n in own_nodes(methods[0].body) if isinstance(n, ast.Return)]
    if not returns or not all(_kept_by_self(r) for r in returns):
        return None
    return ast.unparse(receiver), owner


def _kept_by_self(node) -> bool:
    """`self.total`, `self.device_stats[name]`: an attribute of `self` or an item of one
    (not a value computed from it)."""
    if not isinstance(node, (ast.Attribute, ast.Subscript)):
        return False
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _lists_from_callers(checker, function, names) -> set:
    """The parameters among ``names`` that every call of ``function`` in the file fills
    with a list it made: a list display or comprehension, `list()`, or a name whose
    every binding in the calling function (or at the top of the file) is one
    (`history = []`, then `train_one_epoch(model, loader, optimizer, loss_fn,
    history)`).  ``function`` is a top-level function of the file, defined once,
    every mention of its name a call (by name), none of them with `*args` or
    `**kwargs`; a call that leaves the parameter to its default is unknown."""
    parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
    keyword_only = {a.arg for a in function.args.kwonlyargs}
    wanted = {n for n in names if n in parameters or n in keyword_only}
    calls = _caller_arguments(checker, function)
    if calls is None:
        return set()
    for given, known in calls:
        wanted = {n for n in wanted if _made_list(given.get(n), known)}
        if not wanted:
            break
    return wanted


def _caller_arguments(checker, function) -> list | None:
    """``(parameter -> argument, bindings of the caller)`` for every call of
    ``function`` in the file, or None when they are not all known: ``function`` is a
    top-level function of the file, defined once, every mention of its name a call
    (by name), none of them with `*args` or `**kwargs`."""
    from autograd_doctor.lint.argument_modules import _call_count, _mentioned_otherwise, _top_bindings
    from autograd_doctor.lint.arguments import _bindings
    name = function.name
    if function not in checker.tree.body or sum(
            1 for n in checker.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and n.name == name) != 1:
        return None
    source = checker.source
    if _mentioned_otherwise(name, source):
        return None
    parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
    holders = [checker.tree] + [n for n in ast.walk(checker.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    calls = []
    for holder in holders:
        known = None
        nodes = own_nodes(holder.body, enter_classes=True)
        for node in nodes:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
                if known is None:
                    known = _top_bindings(checker.tree) if holder is checker.tree else _bindings(holder)
                calls.append((node, known))
    if not calls or len(calls) != _call_count(name, source):
        return None
    out = []
    for call, known in calls:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        given = dict(zip(parameters, call.args))
        given.update((k.arg, k.value) for k in call.keywords)
        out.append((given, known))
    return out


def _class_from_callers(checker, function, name: str):
    """The class (the callee of a constructor call, `Run`) that every call of
    ``function`` in the file hands in as its parameter ``name``: a constructor call
    (`train(model, batches, Run())`), or a name whose every binding in the caller is
    one (`run = Run()`, then `train(model, batches, run)`); all of one class.  None
    when a call leaves it to its default or passes anything else (r434: a logger
    whose type only the caller shows)."""
    if function is None:
        return None
    classes = {}
    for given, known in _caller_arguments(checker, function) or ():
        value = given.get(name)
        values = [value] if not isinstance(value, ast.Name) else (known.get(value.id) or [None])
        for v in values:
            if not (isinstance(v, ast.Call) and isinstance(v.func, (ast.Name, ast.Attribute))):
                return None
            classes[ast.unparse(v.func)] = v.func
    return next(iter(classes.values())) if len(classes) == 1 else None


def _made_list(value, known) -> bool:
    if isinstance(value, ast.Name):
        bound = known.get(value.id) or ()
        return bool(bound) and all(v is not None and not isinstance(v, ast.Name) and _made_list(v, {})
                                   for v in bound)
    if isinstance(value, (ast.List, ast.ListComp)):
        return True
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "list" \
        and not value.args and not value.keywords


_LIST_SUMS = frozenset({"sum", "mean"})


def _list_reduced(node, names: set) -> str | None:
    """The name among ``names`` whose elements ``node`` adds up, keeping their graphs:
    `sum(L)`, `sum(L) / len(L)`, `torch.stack(L).mean()`, `torch.stack(L).sum()`,
    `torch.mean(torch.stack(L))`, `sum(L, 0.0)`; else None.  `.item()` of the result,
    `np.mean(L)` or any other call is no evidence."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):
        return _list_reduced(node.left, names)
    if not isinstance(node, ast.Call) or node.keywords:
        return None
    func = node.func
    if isinstance(func, ast.Name) and func.id == "sum" and node.args and isinstance(node.args[0], ast.Name) \
            and node.args[0].id in names:
        return node.args[0].id
    stacked = None
    if isinstance(func, ast.Attribute) and func.attr in _LIST_SUMS and not node.args:
        stacked = func.value  # `torch.stack(L).mean()`
    elif isinstance(func, ast.Attribute) and func.attr in _LIST_SUMS and len(node.args) == 1 \
            and isinstance(func.value, ast.Name) and func.value.id == "torch":
        stacked = node.args[0]  # `torch.mean(torch.stack(L))`
    if isinstance(stacked, ast.Call) and isinstance(stacked.func, ast.Attribute) \
            and stacked.func.attr in ("stack", "cat") and isinstance(stacked.func.value, ast.Name) \
            and stacked.func.value.id == "torch" and len(stacked.args) == 1 and not stacked.keywords \
            and isinstance(stacked.args[0], ast.Name) and stacked.args[0].id in names:
        return stacked.args[0].id
    return None


def _list_reducer(checker, name: str) -> int | None:
    """The position of the parameter that ``name``, a function at the top of the file,
    adds up and returns (`def list_mean(values): return sum(values) / len(values)`):
    its only statement (a docstring aside) is such a `return`, the parameter never
    bound again.  None otherwise."""
    found = checker.notes.get("ADL023 list reducers")
    if found is None:
        found = checker.notes["ADL023 list reducers"] = [{}]
        for node in checker.tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.decorator_list:
                continue
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]
            parameters = [a.arg for a in node.args.args]
            if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
                reduced = _list_reduced(body[0].value, set(parameters))
                if reduced is not None:
                    found[0][node.name] = parameters.index(reduced)
    return found[0].get(name)


def _argument_losses(checker, node, listed: dict) -> set[str]:
    """The loss names whose graphs a value handed to a method carries: its arithmetic
    operands (`loss * n`), and the losses appended to a list of the loop (``listed``)
    that the value adds up, directly (`sum(losses) / len(losses)`) or through a function
    of the file that does (`list_mean(loss_of_subnets)`, r511's once-for-all)."""
    if isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
        # `{"loss": loss}`, `[a * k, b * k]`: the display holds each element, graph and all
        elements = node.values if isinstance(node, ast.Dict) else node.elts
        return set().union(*(_argument_losses(checker, e, listed) for e in elements if e is not None))
    names = _operand_names(node)
    if not listed:
        return names
    reduced = _list_reduced(node, set(listed))
    if reduced is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and not node.keywords:
        position = _list_reducer(checker, node.func.id)
        if position is not None and position < len(node.args) and isinstance(node.args[position], ast.Name) \
                and node.args[position].id in listed:
            reduced = node.args[position].id
    return names | listed.get(reduced, set())


def _attribute_keep(node):
    """``(attribute, value, verb)`` for `self.A += value`, `self.A = self.A + value`,
    `self.A.add_(value)` and `self.A.append(value)`, else None."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        attribute = N.self_attribute(node.target)
        return (attribute, node.value, "sum") if attribute else None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.BinOp) \
            and isinstance(node.value.op, ast.Add):
        attribute = N.self_attribute(node.targets[0])
        if attribute is None:
            return None
        for side, other in ((node.value.left, node.value.right), (node.value.right, node.value.left)):
            if N.self_attribute(side) == attribute:
                return attribute, other, "sum"
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("add_", "append") \
            and len(node.args) == 1 and not node.keywords:
        attribute = N.self_attribute(node.func.value)
        return (attribute, node.args[0], "append" if node.func.attr == "append" else "sum") if attribute else None
    return None


def _same_branch(path, other_path) -> bool:
    for (outer, field), (other, other_field) in zip(path, other_path):
        if outer is not other:
            return True
        if field != other_field:
            return False
    return True


def _check_attribute_keeps(checker, scope) -> None:
    """A method that backpropagates a loss and keeps it in an attribute of its object
    (`self.running += loss`, `self.running.add_(loss.cpu() * n)`,
    `self.losses.append(loss)`; TorchFusion's learner, r465), called on every
    iteration of a loop of the file (`for x in loader: self.train_batch(x)`): the
    attribute outlives the call, so it keeps the graph of every call.  Silent when the
    method binds the attribute again, when a method of the class that binds it (or a
    write of it) runs in the same loop, when the attribute is backpropagated, and
    under `no_grad`."""
    function = scope.function
    arguments = function.args.args
    if not arguments or arguments[0].arg != "self":
        return
    losses = {}
    for _, call, receiver in scope.backward_receivers:
        names = _operand_names(receiver)
        if names:
            losses[id(call)] = names
    if not losses:
        return
    loss_names = set().union(*losses.values())
    backwards, keeps, bindings = [], [], []
    rebound, released = set(), set()  # attributes bound again / cleared in the method
    held_calls = {}  # attribute -> the methods called on it: `self.losses.reset()`
    for node, path in _walk(function.body):
        kept = _attribute_keep(node)
        if kept is not None and _operand_names(kept[1]) & loss_names:
            keeps.append((*kept, node, path))
        elif kept is None and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and N.self_attribute(node.func.value):
            held_calls.setdefault(N.self_attribute(node.func.value), set()).add(node.func.attr)
            if any(_argument_losses(checker, a, {}) for a in node.args):
                keeps.append((N.self_attribute(node.func.value), node, "held", node, path))
        if isinstance(node, ast.Call):
            for name in losses.get(id(node), ()):
                backwards.append((name, node, path))
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("detach_", "clear", "zero_"):
                attribute = N.self_attribute(node.func.value)
                if attribute:
                    released.add(attribute)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and kept is None:
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                attribute = N.self_attribute(target)
                if attribute:
                    rebound.add(attribute)
        if isinstance(node, ast.stmt) or isinstance(node, (ast.withitem, ast.NamedExpr)):
            for name in _bound_names(node):
                bindings.append((name, node.lineno if hasattr(node, "lineno") else 0, node, path))
    if not keeps or not backwards:
        return
    facts = checker.notes.get("ADL023 loop calls")
    if facts is None:
        facts = checker.notes["ADL023 loop calls"] = [loop_calls.read(checker.tree)]
    facts = facts[0]
    loops = facts.loops.get(function.name)
    loop_bindings = facts.loop_bindings.get(function.name, ())
    where = "this file"
    if not loops:
        # a loop of another file of the repository that names the class (FedML's clients)
        elsewhere = loop_calls.loops_elsewhere(checker.filename, scope.owner_class, function.name)
        if elsewhere is None:
            return  # no loop calls the method: no evidence that it runs once per iteration
        loops, loop_bindings, other = elsewhere
        where = f"`{other}`"
    for attribute, value, verb, stmt, path in keeps:
        if attribute in rebound or attribute in released or _grad_off(checker, path):
            continue
        if verb == "held":  # `self.losses.update([...])` of a meter the class builds (r422)
            if attribute not in loop_bindings and not any(
                    (facts.binders.get((scope.owner_class, attribute), set()) - {function.name}) & called
                    for called in loops):
                _check_held_meter(checker, scope, attribute, stmt, path, backwards, bindings,
                                  held_calls.get(attribute, set()), loops, where, loss_names)
            continue
        if f"self.{attribute}" in " ".join(checker.text(r) for _, _, r in scope.backward_receivers) \
                or f"{attribute}.backward(" in checker.source:
            continue  # accumulated to be backpropagated
        binders = facts.binders.get((scope.owner_class, attribute), set()) - {function.name}
        if attribute in loop_bindings or any(binders & called for called in loops):
            continue  # bound again in the loop that calls the method: one iteration's graph
        for summed in sorted(_operand_names(value) & loss_names):
            found = next((b for b in backwards if b[0] == summed and _same_branch(path, b[2])), None)
            if found is None:
                continue
            low, high = sorted((found[1].lineno, getattr(stmt, "lineno", 0)))
            root = re.match(r"\w+", summed).group(0)
            if any(name == root and low < line < high for name, line, _, _ in bindings):
                continue
            backward = found[1]
            edits = tuple(checker.edit(node, f"{summed}.detach()") for node in _operand_nodes(value, summed))
            what = "add" if verb == "sum" else "append"
            fix = Fix(f"{what} `{summed}.detach()`", edits, safe=False) if edits else None
            checker.report(
                "ADL023", stmt,
                f"`self.{attribute}` keeps `{summed}`, which `{checker.text(backward)}` on line {backward.lineno} "
                f"backpropagates, with its graph, and `{function.name}` runs on every iteration of a loop of "
                f"{where}: the attribute outlives the call, so it keeps the graph of every call alive and memory "
                f"grows with the call count; {what} `{summed}.item()` (or `{summed}.detach()`)", fix,
                related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                          f"`{summed}` carries a graph: backpropagated here")])
            break


def _check_held_meter(checker, scope, attribute, call, path, backwards, bindings, called_here, loops,
                      where, loss_names) -> None:
    """`self.losses.update([coarse_loss * 1000, refine_loss * 1000])` in a method that
    backpropagates those losses, run once per iteration of a loop (r422, SpareNet):
    ``attribute`` holds an object that every binding of `self.<attribute>` in the class
    builds with one constructor of a class of the file or the project (`self.losses =
    AverageMeter([...])` in `__init__`), whose method adds what it is given into an
    attribute of its own (`self.sum += val * n`, or each element of a list it is given,
    `for idx, v in enumerate(values): self._sum[idx] += v`).  Silent when the method or
    the loop calls a method of that class that binds the attribute again (`reset()`)."""
    meter = _held_class(checker, scope.owner_class, attribute)
    if meter is None:
        return
    where_meter, cls = meter
    method = call.func.attr
    facts = class_parameter_accumulations(cls, method)
    elements = _element_accumulations(cls, method)
    kept_by = None
    for position, argument in enumerate(call.args):
        if isinstance(argument, ast.Starred):
            return
        if position in facts and not isinstance(argument, (ast.List, ast.Tuple, ast.Dict)):
            kept_by = (argument, facts[position])
        elif position in elements and isinstance(argument, (ast.List, ast.Tuple)):
            kept_by = (argument, elements[position])
        if kept_by is not None:
            break
    if kept_by is None:
        return
    argument, fact = kept_by
    resetting = {m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and m.name != method and any(N.self_attribute(t) == fact[1] or (
                     isinstance(t, ast.Subscript) and N.self_attribute(t.value) == fact[1])
                     for n in ast.walk(m) for t in _store_targets(n))}
    if resetting & called_here or any(resetting & called for called in loops):
        return  # the meter starts again on every iteration
    kept = []  # (name, backward) for each value handed with a graph
    for summed in sorted(_argument_losses(checker, argument, {})):
        if summed in loss_names:
            found = next((b for b in backwards if b[0] == summed and _same_branch(path, b[2])), None)
        elif sum(1 for b in bindings if b[0] == summed) == 1 and _graph_names(checker, scope).get(summed):
            # a value of this call with a graph of its own (the interpreter's evidence: a
            # module's output, `coarse_loss` of `self.completion(data)`), beside a loss
            # that the method backpropagates before handing it
            found = next((b for b in backwards if b[1].lineno < call.lineno and _same_branch(path, b[2])), None)
        else:
            found = None
        if found is None:
            continue
        low, high = sorted((found[1].lineno, call.lineno))
        root = re.match(r"\w+", summed).group(0)
        if not any(name == root and low < line < high for name, line, _, _ in bindings):
            kept.append((summed, found[1]))
    if not kept:
        return
    summed, backward = kept[0]
    names = " and ".join(f"`{name}`" for name, _ in kept)
    carries = f"which `{checker.text(backward)}` on line {backward.lineno} backpropagates" \
        if summed in loss_names and len(kept) == 1 else \
        f"{'which carry' if len(kept) > 1 else 'which carries'} a graph of this call (`{checker.text(backward)}` " \
        f"on line {backward.lineno} backpropagates its loss)"
    edits = tuple(checker.edit(node, f"{name}.detach()") for name, _ in kept
                  for node in _displayed_operand_nodes(argument, name))
    detached = " and ".join(f"`{name}.detach()`" for name, _ in kept)
    fix = Fix(f"hand {detached} to `{method}`", edits, safe=False) if edits else None
    line = f"{where_meter} line {fact[2]}" if where_meter else f"line {fact[2]}"
    related = [(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                f"`{checker.text(backward)}` backpropagates here: a graph was built")]
    if not where_meter:
        related.insert(0, (fact[2], 0, 0, f"`{method}` keeps `{fact[0]}` in `self.{fact[1]}` here"))
    items = " and ".join(f"`{name}.item()`" for name, _ in kept)
    checker.report(
        "ADL023", call,
        f"`self.{attribute}.{method}()` keeps {names}, {carries}, in `self.{fact[1]}` of the `{cls.name}` "
        f"that `self.{attribute}` holds (its `{fact[0]}`, {line}), with its graph, and "
        f"`{scope.function.name}` runs on every iteration of a loop of {where}: the meter keeps the graph of "
        f"every call alive and memory grows with the call count; hand it {items} (or `.detach()` them)",
        fix, related=related)


def _graph_names(checker, scope) -> dict:
    """Name -> whether it holds a graph at the end of ``scope``'s method, by the file's
    interpreter of returned graphs (returned_graphs.py: a module's output, followed
    through the file's own functions and methods; `coarse_loss` of
    `self.completion(data)`).  Only positive evidence; run once per method."""
    from autograd_doctor.lint.returned_graphs import FileIndex, Frame, Interpreter
    cache = checker.notes["ADL023 graph names"]
    for function, found in cache:
        if function is scope.function:
            return found
    index = checker.notes.get("ADL023 file index")
    if index is None:
        index = checker.notes["ADL023 file index"] = [FileIndex(checker)]
    frame = Frame(scope.owner_class, {})
    Interpreter(checker, index[0]).exec_body(scope.function.body, frame)
    found = {name: value.graph for name, value in frame.env.items()}
    cache.append((scope.function, found))
    return found


def _store_targets(node):
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [node.target] if not isinstance(node, ast.AugAssign) else []
    return []


def _held_class(checker, owner: str, attribute: str):
    """``(file name or "", ClassDef)`` of the class that every binding of
    `self.<attribute>` in the methods of the file's class ``owner`` (and its bases of
    the file) builds with one constructor call, or None.  A class of the file or of
    another file of the project (`utils.AverageMeter`)."""
    classes = {n.name: n for n in checker.tree.body if isinstance(n, ast.ClassDef)}
    if sum(1 for n in checker.tree.body if isinstance(n, ast.ClassDef) and n.name == owner) != 1:
        return None
    callees, seen, todo = {}, set(), [owner]
    while todo:
        name = todo.pop()
        if name in seen or name not in classes:
            continue
        seen.add(name)
        cls = classes[name]
        todo.extend(b.id for b in cls.bases if isinstance(b, ast.Name))
        for node in ast.walk(cls):
            for target in _store_targets(node) + ([node.target] if isinstance(node, ast.AugAssign) else []):
                for t in ast.walk(target):
                    if N.self_attribute(t) == attribute and isinstance(t.ctx, ast.Store):
                        value = node.value if isinstance(node, ast.Assign) and target is t else None
                        if not (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))):
                            return None
                        callees[ast.unparse(value.func)] = value.func
    if len(callees) != 1:
        return None
    func = next(iter(callees.values()))
    if isinstance(func, ast.Name) and func.id in classes:
        if sum(1 for n in checker.tree.body if isinstance(n, ast.ClassDef) and n.name == func.id) != 1:
            return None
        return "", classes[func.id]
    qualname = checker.qualname(func)
    found = project_class(qualname, checker.filename) if qualname and "." in qualname else None
    return (os.path.basename(found[0]), found[1]) if found is not None else None


def _element_accumulations(cls, method: str) -> dict:
    """{position: (parameter, attribute, line)} of the parameters whose every element
    ``method`` of ``cls`` adds into an item of an attribute of `self`: a `for` over
    the parameter (`for v in values`, `for idx, v in enumerate(values)`) in its own
    body or in the branch of `if isinstance(values, (list, tuple))`, whose body runs
    `self.A[idx] += v` (r422's multi-item `AverageMeter`).  A list display handed to
    it keeps each element's graph in `self.A`."""
    node = next((b for b in cls.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and b.name == method), None)
    if node is None or node.decorator_list:
        return {}
    positional = [a.arg for a in node.args.posonlyargs + node.args.args][1:]
    found = {}
    statements = list(node.body)
    for stmt in node.body:
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.Call) and isinstance(stmt.test.func, ast.Name) \
                and stmt.test.func.id == "isinstance" and len(stmt.test.args) == 2 \
                and isinstance(stmt.test.args[0], ast.Name) and "list" in ast.unparse(stmt.test.args[1]):
            statements.extend(stmt.body)
    for stmt in statements:
        if not isinstance(stmt, ast.For):
            continue
        iterated, element = stmt.iter, stmt.target
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name) and iterated.func.id == "enumerate" \
                and len(iterated.args) == 1 and isinstance(element, ast.Tuple) and len(element.elts) == 2:
            iterated, element = iterated.args[0], element.elts[1]
        if not (isinstance(iterated, ast.Name) and iterated.id in positional and isinstance(element, ast.Name)):
            continue
        for inner in stmt.body:
            if isinstance(inner, ast.AugAssign) and isinstance(inner.op, ast.Add) \
                    and isinstance(inner.target, ast.Subscript) and N.self_attribute(inner.target.value) \
                    and element.id in _operand_names(inner.value):
                found.setdefault(positional.index(iterated.id),
                                 (iterated.id, N.self_attribute(inner.target.value), inner.lineno))
    return found


def _check_recording_closures(checker, body, losses: dict) -> None:
    """A function nested in ``body`` that appends the value it returns to a list of
    ``body`` (`def closure(): loss = ...; losses.append(loss); return loss`), called
    in a loop of ``body`` whose backward goes through the result (`loss = closure();
    loss.backward()`; neural-network-lyapunov's line search, r424): the list, bound
    before the loop and never re-bound in it, keeps the graph of every call."""
    nested = {stmt.name: stmt for stmt in body if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if not nested:
        return
    recorded = {}  # function name -> (list name, appended name, the append call)
    for name, function in nested.items():
        returned = {stmt.value.id for stmt in function.body
                    if isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Name)}
        own = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        for stmt in function.body:
            call = stmt.value if isinstance(stmt, ast.Expr) else None
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
                    and isinstance(call.func.value, ast.Name) and call.func.value.id not in own \
                    and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], ast.Name) \
                    and call.args[0].id in returned and len(returned) == 1:
                recorded[name] = (call.func.value.id, call.args[0].id, call)
    if not recorded:
        return
    for loop, path in _walk(body):
        if not isinstance(loop, _LOOPS):
            continue
        inner = list(_walk(loop.body))
        for stmt, _ in inner:
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name)
                    and stmt.value.func.id in recorded):
                continue
            listed, appended, append = recorded[stmt.value.func.id]
            result = stmt.targets[0].id
            backward = next((node for node, _ in inner if isinstance(node, ast.Call) and node.lineno > stmt.lineno
                             and result in losses.get(id(node), ())), None)
            if backward is None:
                continue
            bound_before = any(isinstance(s, ast.Assign) and s.lineno < loop.lineno and any(
                isinstance(t, ast.Name) and t.id == listed for t in s.targets) for s, _ in _walk(body))
            bound_inside = any(isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and any(
                isinstance(t, ast.Name) and t.id == listed for t in ast.walk(s)
                if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)) for s, _ in inner)
            if not bound_before or bound_inside or _grad_off(checker, path):
                continue
            edits = (checker.edit(append.args[0], f"{appended}.detach()"),)
            checker.report(
                "ADL023", append,
                f"`{listed}` keeps `{appended}`, which `{stmt.value.func.id}()` returns and "
                f"`{checker.text(backward)}` on line {backward.lineno} backpropagates, with its graph on every "
                f"call of the loop on line {loop.lineno}: the list keeps the graph of every call alive, so memory "
                f"grows with the iteration count; append `{appended}.item()` (or `{appended}.detach()`)",
                Fix(f"append `{appended}.detach()`", edits, safe=False),
                related=[(stmt.lineno, checker.col(stmt.lineno, stmt.col_offset), 0, "called on every iteration here"),
                         (backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                          f"`{result}` carries a graph: backpropagated here")])
            return


def _built_from(name: str, bindings):
    """The class (the callee of the constructor call: `AverageMeter`, `utils.AverageMeter`)
    that every binding of ``name`` in the function builds (`losses =
    AverageMeter("Loss")`), or None."""
    classes = {}
    for bound, _, stmt, _ in bindings:
        if bound != name:
            continue
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, (ast.Name, ast.Attribute))):
            return None
        classes[ast.unparse(stmt.value.func)] = stmt.value.func
    return next(iter(classes.values())) if len(classes) == 1 else None


def _check_sums(checker, sums, backwards, bindings, summed_back, detached_in_place, graph_values) -> None:
    """The sums and appends written in the function itself."""
    if not backwards or not sums:
        return
    for total, base, value, stmt, path in sums:
        if base in summed_back or base in detached_in_place or _grad_off(checker, path):
            continue
        for summed in _sum_operands(value):
            found = next((b for b in backwards if b[0] == summed and _kept_across(checker,
                total, base, summed, stmt, path, b, bindings)), None)
            if found is not None:
                _report(checker, total, summed, value, stmt, found[1])
                break
            found = next((b for b in backwards if _kept_across(checker, total, base, summed, stmt, path, b, bindings)
                          and _part_of(checker, summed, b, bindings, graph_values) is not None), None)
            if found is not None:
                _report(checker, total, summed, value, stmt, found[1],
                        part_of=(found[0], _part_of(checker, summed, found, bindings, graph_values)))
                break
            aliased = _aliased_backward(summed, stmt, path, backwards, bindings)
            if aliased is not None and _kept_across(checker, total, base, summed, stmt, path, aliased[0], bindings):
                _report(checker, total, summed, value, stmt, aliased[0][1], alias=(aliased[0][0], aliased[1]))
                break
        else:
            if not _sum_operands(value) & {b[0] for b in backwards}:  # the loss itself: read above
                _check_graph_total(checker, total, base, value, stmt, path, backwards, bindings)


def _check_graph_total(checker, total, base, value, stmt, path, backwards, bindings) -> None:
    """A sum, into a name, of a value that is not the backpropagated loss nor a part of
    it but carries a graph of its own: a metric of the model's output computed by a
    function of the file (`dice += dice_coeff(torch.sigmoid(output), target)`, r762),
    on every iteration of a loop that backpropagates.  The evidence is the
    interpreter of returned graphs (``_graph_names``: the model's output, followed
    through the file's own functions; `.item()`, `.detach()`, `float()` and
    `torch.no_grad()` carry none): the total, a number before the loop, holds a
    graph at the end of the function, and nothing but its sums binds it in the loop
    (``_kept_across``)."""
    function = checker.scope.function
    if total != base or function is None or isinstance(stmt, ast.Call) and not (
            isinstance(stmt.func, ast.Attribute) and stmt.func.attr == "add_"):
        return  # a plain name summed in the function's own body (appends are read as losses only)
    found = next((b for b in backwards if _kept_across(checker, total, base, base, stmt, path, b, bindings)), None)
    if found is None:
        return
    loop = _shared_loop(path, found[2])
    before = [n for name, line, n, p in bindings if name == base and (loop, "body") not in p]
    if not before or not all(isinstance(n, ast.Assign) and _number(n.value) for n in before):
        return  # the total starts as a number: any graph it holds comes from the sums
    if _graph_names(checker, checker.scope).get(base):
        _report(checker, total, None, value, stmt, found[1], computed=True)


def _number(node) -> bool:
    """`0`, `0.0`, `-1.0`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _entry_sum(node, path):
    """``(total, base, dictionary, operand, value)`` for a sum into an entry of a
    dictionary under the key a loop around it iterates, of the entry of another
    dictionary under that key: `for k in losses: totals[k] += losses[k]` (or
    `losses.keys()`), `for k, v in losses.items(): totals[k] = totals[k] + v * n`.
    The iteration reaches every entry of ``dictionary``, so the sum adds each one."""
    target = node.target if isinstance(node, ast.AugAssign) else node.targets[0] if len(node.targets) == 1 else None
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and isinstance(target.slice, ast.Name)):
        return None
    if isinstance(node, ast.AugAssign):
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return None
        value = node.value
    else:
        if not (isinstance(node.value, ast.BinOp) and isinstance(node.value.op, ast.Add)):
            return None
        text = ast.unparse(target)
        if ast.unparse(node.value.left) == text:
            value = node.value.right
        elif ast.unparse(node.value.right) == text:
            value = node.value.left
        else:
            return None
    key = target.slice.id
    for stmt, field in reversed(path):
        if not isinstance(stmt, (ast.For, ast.AsyncFor)) or field != "body":
            continue
        loop_target, source = stmt.target, stmt.iter
        method = None
        if isinstance(source, ast.Call) and isinstance(source.func, ast.Attribute) and not source.args:
            method, source = source.func.attr, source.func.value
        if not isinstance(source, ast.Name):
            return None
        if isinstance(loop_target, ast.Name) and loop_target.id == key and method in (None, "keys"):
            operand = f"{source.id}[{key}]"
        elif isinstance(loop_target, ast.Tuple) and len(loop_target.elts) == 2 and method == "items" \
                and all(isinstance(e, ast.Name) for e in loop_target.elts) and loop_target.elts[0].id == key:
            operand = loop_target.elts[1].id
        else:
            return None
        if operand not in _operand_names_with_entries(value) or source.id == target.value.id:
            return None
        return ast.unparse(target), target.value.id, source.id, operand, value
    return None


def _operand_names_with_entries(node) -> set[str]:
    """``_operand_names``, and the text of an entry under a name's key (`losses[k]`)."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Name):
        return {ast.unparse(node)}
    if _keeps_graph_call(node):
        return _operand_names_with_entries(node.func.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITHMETIC):
        dividend = _operand_names_with_entries(node.left)
        if isinstance(node.op, ast.Div) and dividend:
            return dividend
        return dividend | _operand_names_with_entries(node.right)
    return _operand_names(node)


def _check_entry_sums(checker, entry_sums, backwards, bindings, summed_back, detached_in_place) -> None:
    """The sums of every entry of a dictionary one of whose entries the loop
    backpropagates (`losses["loss"].backward()`, then `for k in losses: totals[k] +=
    losses[k]`; SSA-SC, r459): the iteration reaches the backpropagated entry."""
    if not backwards:
        return
    for total, base, dictionary, operand, value, stmt, path in entry_sums:
        if base in summed_back or base in detached_in_place or _grad_off(checker, path):
            continue
        found = next((b for b in backwards if b[0].startswith(dictionary + "[")
                      and _kept_across(checker, total, base, b[0], stmt, path, b, bindings)), None)
        if found is None:
            continue
        edits = tuple(checker.edit(node, f"{operand}.detach()") for node in _operand_nodes(value, operand))
        fix = Fix(f"sum `{operand}.detach()`", edits, safe=False) if edits else None
        backward = found[1]
        checker.report(
            "ADL023", stmt,
            f"`{total}` sums `{operand}`, every entry of `{dictionary}` in turn, and `{found[0]}` is one "
            f"that `{checker.text(backward)}` on line {backward.lineno} backpropagates: the sum keeps its graph "
            f"on every iteration of this loop, so memory grows with the iteration count; sum "
            f"`{operand}.item()` (or `{operand}.detach()`)", fix,
            related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                      f"`{found[0]}` carries a graph: backpropagated here")])


def _shared_loop(path, other_path):
    """The innermost loop whose body holds both paths, or None (also when they are in
    different branches of one statement)."""
    loop = None
    for (outer, field), (other, other_field) in zip(path, other_path):
        if outer is not other:
            break
        if field != other_field:  # different branches (`if`/`else`, `try`/`except`)
            return None
        if isinstance(outer, _LOOPS) and field == "body":
            loop = outer
    return loop


def _kept_across(checker, total, base, summed, stmt, path, backward, bindings) -> bool:
    """The sum and the backward share a loop, in which ``total`` lives on (``base`` bound
    before it, neither re-bound in it) and ``summed`` is not re-bound between the two."""
    _, call, back_path = backward
    loop = _shared_loop(path, back_path)
    if loop is None:
        return False
    inside = [(name, line, node, p) for name, line, node, p in bindings if (loop, "body") in p]
    if any(name in (total, base) and node is not stmt and not _continues(node, p, path, base)
           for name, line, node, p in inside):
        return False  # the sum starts again in the loop (a window's sum: bounded)
    if not any(name == base and line < loop.lineno for name, line, node, p in bindings
               if (loop, "body") not in p):
        return False  # no sum before the loop that this one adds to
    if _restarted_around_network_loop(loop, base, path, bindings):
        return False  # a sum over the networks of one batch (set V's DML): bounded
    if _restarted_per_step(checker, loop, base, path, bindings):
        return False  # a sum over one optimizer step's micro-batches (set AE's corrdiff): bounded
    low, high = sorted((call.lineno, stmt.lineno))
    root = re.match(r"\w+", summed).group(0)  # `output.loss`, `output["loss"]` are re-bound with `output`
    if call.lineno < stmt.lineno and any(
            name == root and isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None
            and any(n is call for n in ast.walk(node.value)) for name, line, node, p in inside):
        # `(g,) = torch.autograd.grad(g, x, create_graph=True)`, then `kept.append(g)`: the
        # backward's own statement binds the name again, so what is kept is its result (the
        # gradient), not the value it differentiated (set AE's physicsnemo derivative chain)
        return False
    if summed != root and _entries_released(loop, root, summed, low, high):
        return False  # the dictionary's entries are numbers by the time of the sum (set AN's DBNet)
    return not any(name == root and low < line < high for name, line, node, p in inside)


def _released_value(value, key_text: str | None, item: str | None) -> bool:
    """``value`` is a number or a detached copy of an entry: `v.item()`, `float(v)`,
    `d[k].detach()` (``item`` the loop's value name, ``key_text`` the entry's text)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr in _RELEASING_CALLS and not value.args:
        target = func.value
    elif isinstance(func, ast.Name) and func.id in ("float", "int") and len(value.args) == 1:
        target = value.args[0]
    else:
        return False
    text = ast.unparse(target)
    return text == key_text or (item is not None and text == item)


def _entries_released(loop, root: str, summed: str, low: int, high: int) -> bool:
    """Between the backward (line ``low``) and the sum (line ``high``), on the body of
    ``loop`` itself (no `if` around it), the dictionary ``root`` has its entry
    ``summed`` replaced by a number: `root[k] = root[k].item()`, or every entry, by a
    loop over its own keys or items (`for key, value in root.items(): root[key] =
    value.item()`; DBNet's trainer, set AN)."""
    for stmt in loop.body:
        if not low < stmt.lineno < high:
            continue
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                and ast.unparse(stmt.targets[0]) == summed and _released_value(stmt.value, summed, None):
            return True
        if not isinstance(stmt, ast.For) or stmt.orelse:
            continue
        it, target = stmt.iter, stmt.target
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "enumerate" \
                and len(it.args) == 1 and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            it, target = it.args[0], target.elts[1]
        key = item = None
        if isinstance(it, ast.Name) and it.id == root and isinstance(target, ast.Name):
            key = target.id
        elif isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and not it.args \
                and isinstance(it.func.value, ast.Name) and it.func.value.id == root:
            if it.func.attr == "keys" and isinstance(target, ast.Name):
                key = target.id
            elif it.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2 \
                    and all(isinstance(e, ast.Name) for e in target.elts):
                key, item = target.elts[0].id, target.elts[1].id
        if key is None:
            continue
        entry = f"{root}[{key}]"
        for inner in stmt.body:  # on every iteration: not under an `if` nor after a `continue`
            if isinstance(inner, (ast.Continue, ast.Break, ast.Return)):
                break
            if isinstance(inner, ast.Assign) and len(inner.targets) == 1 \
                    and ast.unparse(inner.targets[0]) == entry and _released_value(inner.value, entry, item):
                return True
    return False


# calls whose result holds no graph: a binding through them releases the total
_RELEASING_CALLS = frozenset({"detach", "detach_", "item", "tolist", "numpy", "float", "int", "zero_", "zeros_like"})


def _continues(node, node_path, sum_path, base) -> bool:
    """``node`` binds the total again in the other branch of an `if` around the sum
    (the two never run in one iteration) from the total itself, with no call that
    releases a graph (`total = tuple(map(sum, zip(total, parts)))` beside `total =
    total + loss`, RecBole's r487): the running value goes on, it does not start
    again."""
    if not isinstance(node, ast.Assign):
        return False
    for (outer, field), (other, other_field) in zip(node_path, sum_path):
        if outer is not other:
            return False
        if field != other_field:
            if not isinstance(outer, ast.If):
                return False
            break
    else:
        return False
    if not any(isinstance(n, ast.Name) and n.id == base for n in ast.walk(node.value)):
        return False
    for n in ast.walk(node.value):
        if isinstance(n, ast.Call):
            callee = n.func.attr if isinstance(n.func, ast.Attribute) else n.func.id if isinstance(
                n.func, ast.Name) else None
            if callee in _RELEASING_CALLS:
                return False
    return True


def _aliased_backward(summed, stmt, path, backwards, bindings):
    """A backward of ``B`` where the loop binds ``B = summed`` before it, in the
    branch of the sum (RecBole's `loss = losses`, then `loss.backward()` and the sum
    of `losses`, r487): the backward proves that ``summed`` carries the graph.
    Neither name is bound again between the alias and the backward; returns
    ``(backward, alias statement)``, or None."""
    for alias_name, alias_line, alias, alias_path in bindings:
        if not (isinstance(alias, ast.Assign) and len(alias.targets) == 1
                and isinstance(alias.targets[0], ast.Name) and alias.targets[0].id == alias_name
                and isinstance(alias.value, ast.Name) and alias.value.id == summed):
            continue
        if not _same_branch(alias_path, path):
            continue
        for backward in backwards:
            name, call, back_path = backward
            if name != alias_name or call.lineno <= alias_line or not _same_branch(alias_path, back_path):
                continue
            loop = _shared_loop(alias_path, back_path)
            if loop is None or _shared_loop(path, back_path) is not loop:
                continue
            if any(bound in (alias_name, summed) and alias_line < line < call.lineno and node is not alias
                   for bound, line, node, _ in bindings):
                continue
            return backward, alias
    return None


def _step_calls(nodes, attribute: str = "step") -> list:
    """The calls `<receiver>.<attribute>(...)` in ``nodes`` (statements; nested
    definitions not entered)."""
    found = []
    for node in own_nodes(nodes):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == attribute:
            found.append(node)
    return found


def _restarted_per_step(checker, loop, base, path, bindings) -> bool:
    """The sum lives in a gradient-accumulation window: a counted loop ``W`` (`for n_i
    in range(num_accumulation_rounds):`, ``loop`` itself or a loop around it) whose
    body takes no optimizer step and clears nothing, inside a loop ``L`` whose body
    starts the total again before ``W`` (`loss_accum = 0`, or a factory tensor with no
    graph, `torch.tensor(0.0)`, in the same block as ``W``,
    with no step between), and, after ``W``, steps an optimizer whose `zero_grad()` it
    also calls.  Every iteration the total spans belongs to one optimizer step; the
    graphs it links are those of one step's micro-batches (their saved tensors freed by
    their backward passes), released when it starts again: the count is the
    accumulation factor, not the length of the training.  Set AE's corrdiff:
    `optimizer.zero_grad(); loss_accum = 0; for n_i in range(rounds): ... loss_accum +=
    loss / rounds; loss.backward()`, then `optimizer.step()`.  A window that iterates
    the data (`for x, y in loader:`, full-batch descent over an epoch) is not a
    counted loop and stays reported."""
    index = path.index((loop, "body"))
    for i in range(index, -1, -1):
        window, field = path[i]
        if not (isinstance(window, _LOOPS) and field == "body"):
            continue
        j = i - 1
        while j >= 0 and isinstance(path[j][0], (ast.With, ast.AsyncWith)) and path[j][1] == "body":
            j -= 1
        if j < 0 or not (isinstance(path[j][0], _LOOPS) and path[j][1] == "body"):
            continue
        outer = path[j][0]
        if not (isinstance(window, (ast.For, ast.AsyncFor)) and isinstance(window.iter, ast.Call)
                and isinstance(window.iter.func, ast.Name) and window.iter.func.id == "range"):
            continue
        if _step_calls([window]) or _step_calls([window], "zero_grad"):
            continue
        block = path[:i]
        restarts = [line for name, line, node, p in bindings
                    if name == base and p == block and line < window.lineno and isinstance(node, ast.Assign)
                    and _starts_without_graph(checker, node.value)]
        if not restarts:
            continue
        restart = max(restarts)
        steps = _step_calls(outer.body)
        if any(restart < c.lineno < window.lineno for c in steps):
            continue
        cleared = {ast.unparse(c.func.value) for c in _step_calls(outer.body, "zero_grad")}
        if any(c.lineno > window.end_lineno and ast.unparse(c.func.value) in cleared for c in steps):
            return True
    return False


def _starts_without_graph(checker, value) -> bool:
    """A total's new start that carries no graph: a literal (`loss_accum = 0`) or a
    tensor made only from factories and literals (`batch_loss = torch.tensor(0.0,
    device=device)`, mini_edm's window of set AQ)."""
    return isinstance(value, ast.Constant) or isinstance(value, ast.Call) and checker.is_const(value)


def _restarted_around_network_loop(loop, base, path, bindings) -> bool:
    """``loop`` runs over networks, not data, and ``base`` starts again before it on
    every iteration of the loop around it: the sum holds the graphs of one pass over
    the networks (a few, fixed by the program), released when it starts again.
    Set V's deep mutual learning: `avg_student_loss = 0` in the batch loop, then
    `for i in range(num_students): ...; student_loss.backward(); avg_student_loss
    += student_loss`.  ``loop`` runs over networks when its target is a single name
    that the body uses only to pick a network it calls (`cohort[i](x)`,
    `optimizers[i].step()`, `model(x)` for `model` the target) or in a comparison
    (`if i == j`), at least once to pick one, and the body draws no batch with
    `next(...)`."""
    index = path.index((loop, "body"))
    if index == 0 or path[index - 1][1] != "body" or not isinstance(path[index - 1][0], _LOOPS):
        return False
    outer_path = path[:index]  # the block that holds the loop: the body of the loop around it
    if not any(name == base and line < loop.lineno and p == outer_path for name, line, node, p in bindings):
        return False
    if not (isinstance(loop, (ast.For, ast.AsyncFor)) and isinstance(loop.target, ast.Name)):
        return False
    target = loop.target.id
    parents = {}
    for stmt in loop.body:
        for node in ast.walk(stmt):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "next":
                return False
    picks = 0
    for node, parent in parents.items():
        if not (isinstance(node, ast.Name) and node.id == target):
            continue
        if isinstance(parent, ast.Compare):
            continue
        picked = node
        if isinstance(parent, ast.Subscript) and parent.slice is node:
            picked = parent
        holder = parents.get(picked)
        if isinstance(holder, ast.Call) and holder.func is picked:
            picks += 1
            continue
        if isinstance(holder, ast.Attribute) and isinstance(parents.get(holder), ast.Call) \
                and parents[holder].func is holder:
            picks += 1
            continue
        return False
    return picks > 0


def _part_of(checker, part, backward, bindings, graph_values):
    """The binding of the backpropagated loss that ``part`` is an operand of (`loss =
    part + w * other`), when both are bound in the loop that runs the backward, before
    it, on its path, ``part`` once and with a graph of its own (or the loss is a
    reduction of ``part`` alone, `loss = part.mean()`, whose backward proves it);
    else None."""
    loss, call, back_path = backward
    loop = next((outer for outer, field in reversed(back_path)
                 if isinstance(outer, _LOOPS) and field == "body"), None)
    if loop is None:
        return None
    inside = [(name, line, node, p) for name, line, node, p in bindings if (loop, "body") in p]
    loss_bindings = [b for b in inside if b[0] == loss and b[1] <= call.lineno]
    if not loss_bindings:
        return None
    _, loss_line, loss_node, loss_path = max(loss_bindings, key=lambda b: b[1])
    if not isinstance(loss_node, (ast.Assign, ast.AnnAssign)) or loss_node.value is None:
        return None
    reduced = _reduced_name(loss_node.value) == part  # `loss = part.mean()`: the backward proves part's graph
    if not (reduced or part in _operand_names(loss_node.value)) or _shared_loop(loss_path, back_path) is not loop:
        return None
    part_bindings = [b for b in inside if b[0] == part]
    if len(part_bindings) != 1:
        return None
    _, part_line, part_node, part_path = part_bindings[0]
    if part_line >= loss_line or _shared_loop(part_path, loss_path) is not loop:
        return None
    if reduced:
        return loss_node
    graph = graph_values.get(id(getattr(part_node, "value", None)))
    if graph is None or (not graph and not _reads_model_output(checker, part_node.value, part_line, inside)):
        return None
    return loss_node


# reductions whose result is computed from the reduced tensor alone
_REDUCTIONS = frozenset({"mean", "sum"})


def _reduced_name(node) -> str | None:
    """The name that ``node``, a backpropagated loss's value, reduces and nothing
    else (`per_var.mean()`, `per_var.sum(dim=0)`, `torch.mean(per_var)`): the backward
    of the loss then proves that the name carries a graph (set AU, Transolver's
    AirfRANS loop: `total_loss = loss_per_var.mean()` backpropagated, `loss_per_var`
    summed for the epoch)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTIONS
            and all(k.arg in ("dim", "keepdim") for k in node.keywords)):
        return None
    receiver, args = node.func.value, node.args
    if isinstance(receiver, ast.Name) and receiver.id == "torch" and args:
        receiver, args = args[0], args[1:]  # `torch.mean(per_var)`
    if not isinstance(receiver, ast.Name) or any(not isinstance(a, ast.Constant) for a in args):
        return None
    return receiver.id


def _rooted_at_self(node) -> bool:
    """`self`, `self.model`, `self.lightgcn.user_embeddings`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "self"


def _reads_model_output(checker, value, line, inside, depth=0) -> bool:
    """``value`` reads, directly or through names bound earlier in the loop, the output
    of a call of a model (`model(x)`, `self.generator(x)`, `policy(s).log_prob(a)`):
    a tensor computed from it, that is part of a loss the loop backpropagates,
    carries the model's graph."""
    if depth > 8:
        return False
    for node in ast.walk(value):
        if isinstance(node, ast.Call) and node.args and (
                isinstance(node.func, ast.Name) and node.func.id not in _BUILTIN_CALLS
                and checker.qualname(node.func) is None
                or isinstance(node.func, ast.Attribute) and _rooted_at_self(node.func.value)):
            return True
        if isinstance(node, ast.Name):
            earlier = [(l, n) for name, l, n, _ in inside if name == node.id and l < line]
            if earlier:
                bound_line, stmt = max(earlier, key=lambda b: b[0])
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None and \
                        _reads_model_output(checker, stmt.value, bound_line, inside, depth + 1):
                    return True
    return False


def _grad_off(checker, path) -> bool:
    for stmt, field in path:
        if isinstance(stmt, (ast.With, ast.AsyncWith)) and field == "body":
            for item in stmt.items:
                context = item.context_expr
                func = context.func if isinstance(context, ast.Call) else context
                if N.turns_grad_off(checker.qualname(func), context):
                    return True
    return False


def _report(checker, total, loss, value, stmt, backward, part_of=None, through=None, alias=None,
            collected=None, given=None, computed=False) -> None:
    """``part_of``: (the backpropagated loss, its binding) when ``loss`` is a part of it;
    ``through``: (method, (parameter, attribute, line)) when ``stmt`` hands the loss to a
    method that adds it into an attribute of its object; ``computed``: ``value`` is not
    the loss but carries a graph of its own (``_check_graph_total``)."""
    if computed:
        text = checker.text(value)
        operand = text if isinstance(value, (ast.Name, ast.Call, ast.Attribute, ast.Subscript)) else f"({text})"
        checker.report(
            "ADL023", stmt,
            f"`{total}` sums `{text}`, a tensor with a graph of the model's forward (followed through the "
            f"file's own functions), on every iteration of this loop, which `{checker.text(backward)}` on line "
            f"{backward.lineno} trains: the sum keeps the graph of every iteration alive, so memory grows with "
            f"the iteration count; sum `{operand}.item()` (or `.detach()` it)",
            Fix(f"sum `{operand}.detach()`", (checker.edit(value, f"{operand}.detach()"),), safe=False),
            related=[(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                      "a backward here: gradients are on and the forward builds a graph")])
        return
    edits = tuple(checker.edit(node, f"{loss}.detach()") for node in _displayed_operand_nodes(value, loss))
    if through is not None:
        method, (parameter, attribute, line, *other_file) = through
        fix = Fix(f"hand `{loss}.detach()` to `{method}`", edits, safe=False) if edits else None
        related = [(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                    f"`{loss}` carries a graph: backpropagated here")]
        if not other_file:
            related.insert(0, (line, 0, 0, f"`{method}` keeps `{parameter}` in `self.{attribute}` here"))
        where = f"{other_file[0]} line {line}" if other_file else f"line {line}"
        built = f"the caller builds (`{given}()`) and hands in" if given else "built before this loop"
        if collected is not None:  # `list_mean(loss_of_subnets)`: the losses of a list, added up
            text = checker.text(collected)
            checker.report(
                "ADL023", stmt,
                f"`{total}.{method}()` keeps `{text}`, which adds up `{loss}` (appended to a list of this loop; "
                f"`{checker.text(backward)}` on line {backward.lineno} backpropagates it), in `self.{attribute}` "
                f"of an object {built} (its `{parameter}`, {where}), with its graph on every "
                f"iteration: the object keeps the graph of every iteration alive, so memory grows with the "
                f"iteration count; hand it `{text}.item()` (or `.detach()` it)",
                Fix(f"hand `({text}).detach()` to `{method}`",
                    (checker.edit(collected, f"({text}).detach()"),), safe=False), related=related)
            return
        checker.report(
            "ADL023", stmt,
            f"`{total}.{method}()` keeps `{loss}`, which `{checker.text(backward)}` on line {backward.lineno} "
            f"backpropagates, in `self.{attribute}` of an object {built} (its `{parameter}`, "
            f"{where}), with its graph on every iteration: the object keeps the graph of every iteration "
            f"alive, so memory grows with the iteration count; hand it `{loss}.item()` (or `{loss}.detach()`)",
            fix, related=related)
        return
    # `history.append(loss)` keeps; `total.add_(loss)` sums in place, like `total += loss`
    appended = isinstance(stmt, ast.Call) and not (isinstance(stmt.func, ast.Attribute) and stmt.func.attr == "add_")
    verb, noun = ("append", "list") if appended else ("sum", "sum")
    if not appended and isinstance(stmt, ast.Call):
        verb = "add"
    fix = Fix(f"{verb} `{loss}.detach()`", edits, safe=False) if edits else None
    related = [(backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                f"`{loss}` carries a graph: backpropagated here")]
    what = f"`{loss}`, which"
    advice = f"`{loss}.item()` (or `{loss}.detach()`)"
    if part_of is not None:
        whole, part_of = part_of
        what = f"`{loss}`, a part of `{whole}` (line {part_of.lineno}), which"
        if _reduced_name(part_of.value) == loss:
            what = f"`{loss}`, which `{whole}` (line {part_of.lineno}) reduces and"
            advice = f"`{loss}.detach()` (a tensor the loss reduces, not one number)"
        related = [(part_of.lineno, checker.col(part_of.lineno, part_of.col_offset), 0,
                    f"`{loss}` is a part of `{whole}` here"),
                   (backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                    f"`{whole}` carries a graph: backpropagated here")]
    if alias is not None:
        name, bound = alias
        what = f"`{loss}` (bound to `{name}` on line {bound.lineno}), which"
        related = [(bound.lineno, checker.col(bound.lineno, bound.col_offset), 0, f"`{name}` is `{loss}` here"),
                   (backward.lineno, checker.col(backward.lineno, backward.col_offset), 0,
                    f"`{name}`, so `{loss}`, carries a graph: backpropagated here")]
    checker.report(
        "ADL023", stmt,
        f"`{total}` {'keeps' if appended else 'sums'} {what} `{checker.text(backward)}` on line "
        f"{backward.lineno} backpropagates, with its graph on every iteration of this loop: the {noun} keeps "
        f"the graph of every iteration alive, so memory grows with the iteration count; {verb} "
        f"{advice}", fix, related=related)
