"""ADL001: an in-place write to a tensor that an op saved for backward."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint import names as N
from autograd_doctor.lint.events import Write
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.instance_callers import runs_only_without_gradients
from autograd_doctor.lint.source import ATOMS
from autograd_doctor.lint.repository_callers import called_only_without_gradients
from autograd_doctor.lint.graph_callers import meets
from autograd_doctor.lint.submodules import part_positions

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL001", name="write-to-saved-tensor", needs_gradients=True,
    summary="A tensor is modified in place after an op saved it for backward.",
    what_it_does="""Finds an in-place write to a name (`y[i] = v`, `y[mask] = v`, `y += 1`,
`y.mul_(2)`, `F.relu(y, inplace=True)`, `torch.add(a, b, out=y)`) made after
an op in the same function saved that tensor for the backward pass, when the
name was not re-bound in between.  Which op saves what comes from
`lint/data/saves.json`, generated from the installed torch by
`scripts/gen_saves_table.py`: ops such as `exp`, `sigmoid`, `tanh`, `relu`,
`softmax`, `log_softmax`, `sqrt` keep their *output*; `mul`, `div`,
`matmul`, `F.linear`, `pow`, `sin`, `log` keep their *inputs*; so does
`Fn.apply(x)` of a `torch.autograd.Function` subclass defined once in the file
whose `forward` hands its input `x`, never bound again, to
`ctx.save_for_backward` and whose `backward` unpacks `ctx.saved_tensors`.  In an
`nn.Module` subclass, calling a module attribute built in `__init__` from
`nn.Linear`, `nn.Conv2d`, `nn.Sigmoid`, `nn.Tanh`, `nn.ReLU`, `nn.Softmax`,
`nn.LogSoftmax`, `nn.GELU`, `nn.SiLU`, `nn.LayerNorm`... counts as the
corresponding op (`self.fc(x)` keeps `x`); in-place activations
(`nn.ReLU(inplace=True)`, `x.relu_()`, `F.relu(x, inplace=True)`) keep their
output, so the residual `out = self.relu(out); out += identity` is found.
Convolutions, normalisation layers, `F.embedding`, `gather`/`scatter_add`/
`index_select` (which keep their integer index), `torch.where` and the common
losses are in the table too.  A view of the name that an op saved counts
(`conv(x.transpose(1, 2))` keeps a view of `x`; views made by basic indexing and
view methods, not `.data`, which has a version counter of its own), and so does
an in-place layer applied straight to the result of an op that keeps its output
(`self.dropout(self.act(h))` with `nn.Dropout(inplace=True)`).  A
write through `.data` (`y.data[0] = 0`) or an alias (`s = y.data; s.zero_()`)
is a silent wrong gradient instead of an error.  Also reported: a layer with
`inplace=True` right after a layer that keeps its output inside one
`nn.Sequential` (`nn.LeakyReLU(inplace=True), nn.Dropout(inplace=True)`).
An operand that an op keeps only to compute the other operand's gradient
(`a * b`, `a @ b`, `F.linear(x, w)`; `a` of `a / b`: probed into the table)
is not kept when the other carries no graph (a factory, `.detach()`, the
result of `torch.autograd.grad`).
Overloads are told apart: `torch.min(a, b)` keeps both inputs,
`torch.max(a)` its input and its result, `torch.max(a, dim)` neither.
Checked where a backward reaches: methods of modules (Lightning's
`LightningModule` and Hugging Face's `PreTrainedModel` included), the loss a
framework backpropagates (`training_step`, a `Trainer`'s `compute_loss`),
helpers a module's methods call, files that call `backward()`, and the
`log_prob`/`rsample`/`entropy`/`cdf` of a `torch.distributions` subclass
(for what flows into the returned value), even in a file without
`backward()`; but not a module method that runs only without gradients
because every instance of its class that the repository builds is only
called under `torch.no_grad()` (a sampler built into another module's
`nn.ModuleList` and called only in its `@torch.no_grad()` methods).  A helper's `Tensor` parameters count as carrying a graph
only when a call in the file passes one (a module's output, a graph tensor,
`model(x)`), directly or through helpers that hand on their own parameters:
`std = torch.std(batch); std[std < eps] = eps` in a function that only other
files call is not reported.  Likewise a `forward()`'s arguments carry a graph
only when the repository builds the class as another module's part (assigned
to `self` in a module class, put in `nn.Sequential` / `nn.ModuleList` /
`nn.ModuleDict`; a subclass counts for its base): a model that only scripts
build and feed with data batches is not reported for normalising its input in
place, while a write to what a layer with weights (`nn.Linear`, a convolution)
kept is reported whatever the input.  A call of a same-file function or
method that writes one of its parameters in place on every path (`def
subtract_mean(batch): batch -= mean`, before any re-binding of the name,
outside any `if`, loop or `try`) writes the tensor its caller passes: reported
at the call when an op kept that tensor (a `tanh` output).
An autograd `Function` whose `forward` writes an input in place and returns
it without `ctx.mark_dirty(...)` (`a[1:2] += b; return a`), when its `backward`
returns a gradient for that input: autograd is not told the input changed, and
an op that saved it (the sigmoid whose output it is) fails.""",
    why_bad="""`backward()` needs the saved value.  PyTorch notices the version bump
and raises `RuntimeError: one of the variables needed for gradient computation
has been modified by an inplace operation`, without saying which line did
it.  If saved-tensor hooks are installed, or the write went through `.data`,
the gradient is silently wrong instead.""",
    example="""y = torch.sigmoid(x)
y[0] = 0.0          # SigmoidBackward0 needs the original y

z = x * w
x.mul_(2)           # MulBackward0 needs the original x for w's gradient""",
    use_instead="""y = torch.sigmoid(x)
y = y.clone()
y[0] = 0.0

z = x * w
x = x.mul(2)""",
    fix_safety="""Unsafe (only with `--unsafe-fixes`): `y += v` becomes `y = y + v`,
a statement `y.add_(v)` becomes `y = y.add(v)`, `inplace=True` becomes
`inplace=False`, and an indexed write gets `y = y.clone()` inserted before it.
Each keeps the saved value intact but changes what other aliases of `y` see.""",
    known_problems="""The analysis follows one function at a time, in source order, with the
paths of `if`/`else`, conditional expressions and loops: a save on one path
and a write on the other is not reported, and a re-binding on only one path
does not hide the hazard.  A save later in a loop body than the write is
reported when the body never re-binds the name and runs no backward pass
(the next iteration writes what this one saved).  A write after a `backward()` call (without
`retain_graph=True`) is not reported: the graph is gone by then.  `y = x * x;
y[0] = 0` is correctly not reported (`mul` saves its inputs, not its output).
Module calls are understood through `nn.Sequential` (first and last layer),
same-file module classes (what their `forward` returns) and same-file factory
functions; modules passed in from elsewhere, `nn.ModuleList` loops and
container elements are not followed.  The `nn.Sequential` check assumes
training mode (dropout writes only then).  A `forward()` argument that the
function only ever uses as a sequence (indexed with integer constants or loop
counters, `len(x)`, `x.append(...)`, returned as is, also through a name only
ever returned as is: `out = x` ... `return out`) is taken for a list of
tensors: replacing an element (`nodes_list[0] = self.proj(nodes_list[0])`, a
detection head's `for i in range(self.nl): x[i] = self.m[i](x[i])`) is not
reported, even where a caller passes a tensor there; an element replaced by
a value with a graph carries it, so a write into what is computed from it
(`y = x[i].sigmoid(); y[..., :2] = ...`) is."""
)


AUG_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
              ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&",
              ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}

OPERATOR_TEXT = {"operator.mul": "*", "operator.truediv": "/", "operator.add": "+",
                 "operator.sub": "-", "operator.pow": "**", "operator.matmul": "@"}


def check_scope(checker, scope) -> None:
    if _result_without_graph(checker, scope):
        return
    if not scope.has_gradients(checker):
        if scope.top_level and scope.writes and scope.saves:
            checker.notes["ADL001"].append(scope)  # unless a module's method calls it
        return
    if _inference_method(checker, scope):
        return
    quiet = _InstancesWithoutGradients(checker, scope)
    _check_writes(checker, scope, scope.reached_only_through_returns(checker), quiet=quiet)
    if scope.parameter_saves and (scope.parameter_method_writes or scope.parameter_aug_writes):
        _note_parameter_writes(checker, scope, quiet)


def _result_without_graph(checker, scope) -> bool:
    """A helper outside any module (a function, or a method of a plain class) that runs no
    backward pass itself and whose every `return` gives back a value with no graph (a
    comparison count: UniAD's `miss_rate` returns `torch.sum(dist > t) / len(dist)`):
    a backward reaches its saves only through what it returns, and that carries no
    graph, so no backward ever reads what the function's ops saved."""
    if scope.module_class or scope.backwards or scope.retain_backwards or scope.framework_backward \
            or not scope.return_values:
        return False
    return all(checker.is_const(value) for _, value in scope.return_values)


class _InstancesWithoutGradients:
    """Whether the module method runs only without gradients because every instance of
    its class that the repository builds is only called so (``instance_callers.py``).
    Asked once, and only when a finding (or a note for one) is about to be made, so a
    method without findings costs nothing."""

    def __init__(self, checker, scope):
        self.checker, self.scope, self.answer = checker, scope, None

    def __call__(self) -> bool:
        if self.answer is None:
            scope = self.scope
            self.answer = bool(
                scope.module_class and scope.owner_class == scope.module_class
                and not (scope.backwards or scope.retain_backwards or scope.framework_backward
                         or scope.returns_to_callers)
                and runs_only_without_gradients(scope.module_class, scope.name,
                                                self.checker.filename, self.checker.tree))
        return self.answer


def _note_parameter_writes(checker, scope, quiet) -> None:
    """A parameter the walk does not know to be a tensor, handed to an op that keeps
    it and then written in place, both while it holds the caller's value (`def
    mish(x): inner = F.softplus(x).tanh(); return x.mul_(inner)`): a hazard for the
    tensor a caller passes there.  Kept until the whole file is read; reported only
    where some call passes a value with a graph at that position (or keyword)."""
    args = scope.arguments
    positional = [a.arg for a in args.posonlyargs + args.args] if args is not None else []
    offset = 1 if scope.owner_class and positional and positional[0] in ("self", "cls") else 0
    writes = [(seq, name, node, f"`.{node.func.attr}()`", ("method",))
              for seq, name, node in scope.parameter_method_writes] + \
        [(seq, name, node, "an augmented assignment", ("augmented",))
         for seq, name, node in scope.parameter_aug_writes]
    for wseq, name, node, how_written, rewrite in sorted(writes, key=lambda t: t[0]):
        binds = scope.binds.get(name)
        if not binds or scope.bound_between(name, binds[0], wseq) or id(node) in scope.reported:
            continue  # re-bound: no longer the caller's tensor
        for sseq, saved, key, how, op_node in scope.parameter_saves:
            if saved == name and sseq < wseq and op_node is not node \
                    and not scope.exclusive(sseq, wseq) and scope.reaches(sseq, wseq) \
                    and not scope.backward_between(sseq, wseq):
                if quiet():
                    return
                position = positional.index(name) - offset if name in positional[offset:] else None
                w = Write(wseq, name, node, how_written, True, rewrite)
                checker.notes["ADL001 parameter"].append((scope.name, position, name, w, key, how, op_node))
                scope.reported.add(id(node))
                break


def _inference_method(checker, scope) -> bool:
    """A module method that only its membership in a module puts under gradients (no
    backward pass in the file or the function, no framework or caller that
    differentiates its result), and that every call in the repository makes without
    gradients (``repository_callers.py``): no backward reaches its saves."""
    if not (scope.module_class and scope.writes and scope.saves) or checker.file.trains:
        return False
    if scope.backwards or scope.retain_backwards or scope.framework_backward or scope.returns_to_callers:
        return False
    return called_only_without_gradients(scope.name, checker.filename, checker.tree)


def _check_writes(checker, scope, returned_only: bool, made_here=None, quiet=None) -> None:
    """``made_here``: only tensors the function computed itself, not its arguments
    (a helper that updates a caller's state in place, a generation cache, may
    well be called only on paths that never backpropagate); it is then
    ``made_here(scope, op_node)``: whether a save without a graph of its own has
    one from the parameters the module's calls pass a graph at (``_helper_fed``).
    ``quiet()``, asked before the first finding or note: the function runs only
    without gradients."""
    for w in scope.writes:
        if not w.grad_on or id(w.node) in scope.reported:
            continue
        if made_here and (scope.binding(w.name, w.seq) or (0, None))[1] is None:
            continue
        waiting = None  # a save whose graph is only the function's parameters'
        untyped = None  # a save whose graph is only its untyped parameters'
        for seq, key, how, op_node in reversed(scope.saves.get(w.name, ())):
            # a helper that a module's methods call with gradients on (``made_here``):
            # its callers pass it their graph tensors, the evidence for its saves
            if seq < w.seq and _has_graph(scope, seq, op_node, made_here) \
                    and not scope.rebound_on_every_path(w.name, seq, w.seq) \
                    and op_node is not w.node and not _feeds_only_a_comparison(op_node) \
                    and not _result_only_compared(checker, scope, op_node) \
                    and not _skipped_on_the_last_iteration(scope, w, seq) \
                    and not scope.exclusive(seq, w.seq) and scope.reaches(seq, w.seq) \
                    and not scope.backward_between(seq, w.seq) \
                    and (not returned_only or _feeds_return(checker, scope, op_node)):
                if seq in scope.provisional_saves and not made_here:
                    waiting = waiting or (key, how, op_node, scope.provisional_origins.get(seq, frozenset()))
                    continue
                if seq in scope.untyped_saves and not made_here:
                    untyped = untyped or (scope.untyped_saves[seq], key, how, op_node)
                    continue
                if quiet is not None and quiet():
                    return
                _report(checker, w, key, how, op_node)
                scope.reported.add(id(w.node))
                break
        else:
            if quiet is not None and (waiting or untyped) and quiet():
                return
            if waiting is not None:  # reported once a call is known to pass a graph
                checker.notes["ADL001 provisional"].append((scope.evidence_key, w, *waiting))
                scope.reported.add(id(w.node))
                continue
            if untyped is not None:  # reported where a call passes a graph to an untyped parameter
                checker.notes["ADL001 untyped"].append((scope.evidence_key, untyped[0], w, *untyped[1:]))
                scope.reported.add(id(w.node))
                continue
            carried = _saved_by_previous_iteration(scope, w, made_here)
            if carried is not None:
                if quiet is not None and quiet():
                    return
                seq, carried = carried[0], carried[1:]
                if seq in scope.untyped_saves and not made_here:
                    # only the untyped parameters' graph: a call must pass one there
                    checker.notes["ADL001 untyped"].append(
                        (scope.evidence_key, scope.untyped_saves[seq], w, *carried, True))
                    scope.reported.add(id(w.node))
                    continue
                _report(checker, w, *carried, previous_iteration=True)
                scope.reported.add(id(w.node))


def _has_graph(scope, seq, op_node, made_here) -> bool:
    """The save ``seq`` keeps a tensor of a graph: with evidence in the function, or,
    in a module's helper (``made_here``), one that its own parameters bring where the
    module's calls pass a graph at their positions."""
    if not made_here:
        return seq in scope.graph_saves
    if seq in scope.graph_saves and seq not in scope.provisional_saves and seq not in scope.untyped_saves:
        return True
    return made_here(scope, op_node)


def _helper_fed(checker):
    """``made_here`` for the helpers the file's modules call: a save computed from the
    helper's parameters has a graph where some call passes one at one of their
    positions (or keywords): directly, or handing on a forward()'s argument of a
    class fed there as another module's part (graph_callers.py; set AN: SOTS's
    `build_targets(p, targets, model)`, handed a loss module's data `targets`)."""
    cache = {}

    def fed(scope, op_node) -> bool:
        if "places" not in cache:
            places = {}
            for callers in (checker.graph_callers, checker.module_callee_callers):
                _feed_parts(checker, callers, set(callers.hands_on))
                for key, where in callers.fed_positions().items():
                    places.setdefault(key, set()).update(where)
            cache["places"] = places
        fed_at = cache["places"].get(scope.name, ())
        return bool(fed_at) and meets(_parameter_origins(scope, op_node), fed_at)
    return fed


def _parameter_origins(scope, node) -> frozenset:
    """The function's parameters (names and call positions, after `self` in a method)
    that ``node``'s names come from, through the function's bindings."""
    args = scope.arguments
    if args is None:
        return frozenset()
    positional = [a.arg for a in args.posonlyargs + args.args]
    offset = 1 if scope.owner_class and positional and positional[0] in ("self", "cls") else 0
    places = {name: i - offset for i, name in enumerate(positional) if i >= offset}
    keywords = {a.arg for a in args.kwonlyargs}
    out, seen = set(), set()
    todo = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in places:
            out.update((name, places[name]))
        elif name in keywords:
            out.add(name)
        for _, value, _ in scope.bind_values.get(name, ()):
            if value is not None:
                todo.extend(n.id for n in ast.walk(value) if isinstance(n, ast.Name))
    return frozenset(out)


def _feed_parts(checker, callers, keys) -> None:
    """Each waiting forward() whose class the repository builds as a part is fed at
    the positions its holders pass a graph at (``part_positions``)."""
    for key in sorted(k for k in keys if k.endswith(".forward")):
        for where in sorted(part_positions(key[: -len(".forward")], checker.filename, checker.tree), key=str):
            callers.graph_call(key, where)


def _saved_by_previous_iteration(scope, w, made_here):
    """``(seq, key, how, op_node)`` of a save later in the same loop body than the write,
    of the same tensor: the next iteration's write overwrites what the previous
    iteration saved (`b[i] = b[i] + 1; y = y + torch.mm(w, b)` in a loop).  Only when
    the loop body never re-binds the name (each iteration would save a new tensor)
    and runs no backward pass (each iteration's graph would be gone)."""
    loops = [(s, e) for s, e in scope.finished_loops if s < w.seq < e]
    if not loops:
        return None
    start, end = max(loops)  # the innermost loop around the write
    if any(start < b < end for b in scope.binds.get(w.name, ())) \
            or any(start < b < end for b, _ in scope.backwards):
        return None
    if w.alias and _alias_rebound_after(scope, w, start, end):
        return None
    for seq, key, how, op_node in scope.saves.get(w.name, ()):
        if w.seq < seq < end and _has_graph(scope, seq, op_node, made_here) \
                and seq not in scope.provisional_saves and op_node is not w.node \
                and not _feeds_only_a_comparison(op_node) \
                and not scope.exclusive(w.seq, seq) and scope.reaches(seq, end):
            return seq, key, how, op_node
    return None


def _alias_rebound_after(scope, w, start: int, end: int) -> bool:
    """`q = x` before the loop, then `q += v; q = layer(q)` in it: the write reaches `x`
    through the alias `q` only on the first iteration; the loop re-binds `q` after the
    write (and never before it), so the next iteration's write goes to the new value,
    not to what this iteration saved of `x`."""
    binds = [b for b in scope.binds.get(w.alias, ()) if start < b < end]
    return bool(binds) and all(b > w.seq for b in binds)


def check_file(checker) -> None:
    """Helpers that the file's modules call from their methods, with gradients on,
    are gradient code too (`def attention(q, k, v)` called from a forward); and
    `nn.Sequential(..., nn.ReLU(inplace=True), nn.Dropout(inplace=True))`: a layer
    that writes its input in place, right after a layer that saved its output; and
    an autograd `Function` whose forward writes an input it gives a gradient for
    without `ctx.mark_dirty`."""
    if "Function)" in checker.source and _FUNCTION_CLASS.search(checker.source):
        _functions_writing_inputs(checker)
    helper_fed = None
    for scope in checker.notes["ADL001"]:
        if scope.name in checker.modules.module_callees:
            helper_fed = helper_fed or _helper_fed(checker)
            _check_writes(checker, scope, returned_only=False, made_here=helper_fed)
    # writes whose graph came only from `Tensor` parameters: a call must pass one
    # or only from a forward()'s arguments: its class must be another module's part,
    # fed a graph at the position (or keyword) of a parameter the save comes from
    fed = _fed_functions(checker) if checker.notes["ADL001 provisional"] else ()
    if fed:
        places = checker.graph_callers.fed_positions()
        for function, w, key, how, op_node, origins in checker.notes["ADL001 provisional"]:
            if meets(origins, places.get(function, ())):
                _report(checker, w, key, how, op_node)
    # writes to values computed from untyped parameters: a call must pass a graph at
    # one of their positions (`scatter_softmax(logits, index)`, r343)
    if checker.notes["ADL001 untyped"]:
        if not fed:
            fed = _fed_functions(checker)
        places = checker.graph_callers.fed_positions()
        for function, positions, w, key, how, op_node, *previous in checker.notes["ADL001 untyped"]:
            if positions & places.get(function, set()):
                _report(checker, w, key, how, op_node, previous_iteration=bool(previous))
    # writes of untyped parameters: a call must pass a graph at that very position
    if checker.notes["ADL001 parameter"]:
        if not fed:
            _fed_functions(checker)  # forwards built as parts feed their callees too
        places = checker.graph_callers.fed_positions()
        for function, position, name, w, key, how, op_node in checker.notes["ADL001 parameter"]:
            fed_at = places.get(function, ())
            if (position is not None and position in fed_at) or name in fed_at:
                _report(checker, w, key, how, op_node)
    # in-place layers that overwrite the output the layer before them saved
    conflicts = {}
    for call, first, second in checker.modules.sequential_neighbours:
        if second.input_layer.inplace and first.output_layer.saves_output:
            conflicts[id(call)] = (call, first.output_layer, second.input_layer)
    for call, before, layer in conflicts.values():
        keyword = next((k for k in call.keywords if k.arg == "inplace"
                        and isinstance(k.value, ast.Constant)), None)
        fix = Fix("construct the module with `inplace=False`",
                  (checker.edit(keyword.value, "False"),), safe=False) if keyword else None
        checker.report("ADL001", call,
                       f"`nn.{layer.kind}(inplace=True)` overwrites the output of the "
                       f"`nn.{before.kind}` before it, which that layer saved for backward; "
                       f"backward() will fail in training mode", fix)


def _fed_functions(checker) -> set:
    """Functions some call passes a graph: directly, or from a forward() whose class
    the repository builds as a part of another module, through chains of helpers.
    A part's forward is fed at the positions its holders pass a graph at
    (``part_positions``), every one for a part no call shows."""
    waiting = {key for key, *_ in checker.notes["ADL001 provisional"]} | set(checker.graph_callers.hands_on)
    _feed_parts(checker, checker.graph_callers, waiting)
    return checker.graph_callers.reached()


def _feeds_only_a_comparison(op_node) -> bool:
    """The op's result is an operand of a comparison and nothing else (`x[torch.abs(x)
    < eps] = 0`): the comparison's bool result carries no graph, so no backward
    reaches the op's node or reads what it saved."""
    return getattr(op_node, "_adl_compared", False)


# torch functions whose first argument's values only select or order: a result
# of them that ends in a comparison carries nothing of the argument to a loss
_SELECTING = frozenset(("torch.topk", "torch.sort", "torch.kthvalue", "torch.max", "torch.min",
                        "torch.amax", "torch.amin", "torch.median", "torch.quantile", "torch.mean",
                        "torch.sum", "torch.abs"))


def _result_only_compared(checker, scope, op_node) -> bool:
    """Every value the function derives from the op's result ends in a comparison
    (or an index, or is written into and read only so): `freq = spec.abs()`,
    `freq[0] = 0`, `top, _ = torch.topk(freq, k)`, `spec[freq <= top.min()] = 0`
    (set AH: BasicTS's DFT decomposition).  The comparisons' bool results carry no
    graph, so no backward reaches the op's node or reads what it saved.  Followed
    through names bound once in the function, reductions and selections; any other
    use (an argument of another call, a return, an attribute, a container) is
    taken as reaching a loss."""
    function = scope.function
    if function is None:
        return False
    parents = getattr(function, "_adl_parents", None)
    if parents is None:
        parents = {id(child): node for node in ast.walk(function) for child in ast.iter_child_nodes(node)}
        function._adl_parents = parents
    compared = []
    return _only_compared(checker, function, parents, op_node, 0, compared) and bool(compared)


def _only_compared(checker, function, parents, node, depth: int, compared: list) -> bool:
    """``compared`` collects the comparisons reached: a result nothing reads at all is
    no evidence (a fragment's `z = x * w` is still taken as reaching a loss)."""
    if depth > 6:
        return False
    cur = node
    while True:
        parent = parents.get(id(cur))
        if isinstance(parent, ast.Compare):
            compared.append(parent)
            return True
        if isinstance(parent, ast.Subscript):
            if cur is parent.slice:
                return True  # an index selects; it carries no graph into the result
            if isinstance(parent.ctx, ast.Store):
                return True  # `freq[0] = 0`: written into; its other reads are followed
            cur = parent
            continue
        if isinstance(parent, ast.Attribute) and cur is parent.value:
            call = parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent and not parent.attr.endswith("_") \
                    and checker.qualname(parent) is None:
                cur = call  # `top.min()`, `score.mean(dim=-1)`: a value derived from it
                continue
            return False
        if isinstance(parent, ast.Call) and cur in parent.args \
                and isinstance(parent.func, (ast.Name, ast.Attribute)) \
                and checker.qualname(parent.func) in _SELECTING:
            cur = parent
            continue
        if isinstance(parent, ast.Assign) and cur is parent.value and len(parent.targets) == 1:
            target = parent.targets[0]
            names = [target] if isinstance(target, ast.Name) else \
                list(target.elts) if isinstance(target, (ast.Tuple, ast.List)) else []
            if not names or not all(isinstance(n, ast.Name) for n in names):
                return False
            return all(_name_only_compared(checker, function, parents, n.id, depth + 1, compared)
                       for n in names)
        return False


def _name_only_compared(checker, function, parents, name: str, depth: int, compared: list) -> bool:
    """Every read of ``name`` in the function ends in a comparison; a name never read
    is no use; a name bound more than once (or a parameter) is not followed."""
    loads, stores = [], 0
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name:
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            else:
                stores += 1
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
    if not loads:
        return True
    if stores != 1 or name in {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}:
        return False
    return all(_only_compared(checker, function, parents, load, depth, compared) for load in loads)


def _skipped_on_the_last_iteration(scope, w, save: int) -> bool:
    """The save is in an `if i != len(layers) - 1:` body of a loop over `layers`, the
    write comes after the loop, and every iteration re-binds the name before that
    `if`: the last iteration skips the save and leaves a fresh value, so no save
    of the loop reaches the write (`feat = layer(feat)`, `if li != last: feat =
    F.relu(feat)`; after the loop `feat.sigmoid_()` writes the last layer's output).
    Not when the loop can end early (a `break`/`continue`/`return` in it)."""
    for start, end, loop_start in scope.last_iteration_skips:
        if not start <= save < end:
            continue
        loop_end = next((e for s, e in scope.finished_loops if s == loop_start), None)
        if loop_end is not None and w.seq >= loop_end \
                and not any(loop_start <= s < loop_end for s, _ in scope.jumps) \
                and scope.rebound_on_every_path(w.name, loop_start, start):
            return True
    return False


def _feeds_return(checker, scope, op_node) -> bool:
    """The op's result flows, through names bound in this function, into a value
    it returns: a backward from the caller goes through the op's saved tensors."""
    seen, stack = set(), list(checker.returns)
    while stack:
        node = stack.pop()
        if node is op_node:
            return True
        if isinstance(node, ast.Name):
            if node.id not in seen:
                seen.add(node.id)
                stack.extend(v for _, v, _ in scope.bind_values.get(node.id, ()) if v is not None)
        elif not isinstance(node, (ast.Lambda, ast.FunctionDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False


def _report(checker, w, key, how, op_node, previous_iteration=False):
    op = OPERATOR_TEXT.get(key.split(":")[0]) or \
        key.split(":")[0].replace("torch.nn.functional.", "F.").replace("torch.Tensor.", "Tensor.")
    entry = N.saves_table().get(key) or checker.custom_function_saves()[key.split(":", 1)[1]]
    what = "its output" if how == "output" else "this input"
    if entry.get("custom"):
        op = f"{key.split(':', 1)[1]}.apply"
        what = "this input: its `forward` calls `ctx.save_for_backward` on it"
    outcome = ("the write bypasses autograd's check, so the gradient will be silently wrong"
               if w.through_data else "backward() will fail or use the new values")
    checker.report("ADL001", w.node,
                   f"`{w.name}` is modified in place ({w.how}) after `{op}` on line "
                   f"{op_node.lineno} saved it for backward"
                   f"{' in the previous iteration of the loop' if previous_iteration else ''} ({entry['grad_fn']} keeps "
                   f"{what}); {outcome}", rewrite_fix(checker, w.node, w.rewrite),
                   related=[(op_node.lineno, checker.col(op_node.lineno, op_node.col_offset),
                             checker.col(op_node.lineno, op_node.end_col_offset)
                             if op_node.end_lineno == op_node.lineno else 0,
                             f"saved here: {op} keeps {what}")])


def rewrite_fix(checker, node, rewrite) -> Fix | None:
    """The unsafe fix that writes out of place (``Write.rewrite`` says the form);
    ADL002 offers the same one for an in-place activation."""
    if not rewrite:
        return None
    form = rewrite[0]
    if form == "augmented":  # `y += v` -> `y = y + v`
        name, sym = node.target.id, AUG_SYMBOL.get(type(node.op))
        if not sym:
            return None
        rhs = checker.text(node.value)
        if not isinstance(node.value, ATOMS):
            rhs = f"({rhs})"
        return Fix(f"write out of place: `{name} = {name} {sym} ...`",
                   (checker.edit(node, f"{name} = {name} {sym} {rhs}"),), safe=False)
    if form == "indexed":  # `y[i] = v` -> `y = y.clone()` first
        return checker.clone_before(node, rewrite[1])
    if form == "method":  # a statement `y.add_(v)` -> `y = y.add(v)`
        name, attr = node.func.value.id, node.func.attr
        if attr[:-1] not in N.OUT_OF_PLACE or not checker.statement_is(node):
            return None
        return Fix(f"write out of place: `{name} = {name}.{attr[:-1]}(...)`",
                   (checker.edit(node.func, f"{name} = {name}.{attr[:-1]}"),), safe=False)
    keyword = rewrite[1]
    if form == "module":
        # As a statement (`self.act(x)`), the module's only effect is the write:
        # constructing it with inplace=False would make the call dead code.
        if keyword is None or checker.statement_is(node):
            return None
        return Fix("construct the module with `inplace=False`", (checker.edit(keyword.value, "False"),),
                   safe=False)
    return _functional_fix(checker, node, node.args[0], keyword)


def _functional_fix(checker, node, first, inplace_kw) -> Fix | None:
    """`inplace=False`, keeping the effect: as a statement, `F.threshold(x, ...,
    inplace=True)` only has its effect on `x`, so it becomes `x = F.threshold(x,
    ..., inplace=False)`; a statement writing anything but a plain name gets no
    fix (with `inplace=False` it would compute a value and drop it)."""
    edits = [checker.edit(inplace_kw.value, "False")]
    if checker.statement_is(node):
        if not isinstance(first, ast.Name):
            return None
        edits.insert(0, checker.insert_before(node, f"{first.id} = "))
    return Fix("pass `inplace=False`" + (f" and re-bind `{first.id}`" if len(edits) > 1 else ""),
               tuple(edits), safe=False)


_FUNCTION_CLASS = re.compile(r"^class \w+\([\w.]*Function\):", re.M)


def _functions_writing_inputs(checker) -> None:
    """`class InPlaceAdd(torch.autograd.Function)` whose `forward(ctx, a, b)` does
    `a[1:2] += b; return a` without `ctx.mark_dirty(a)`: autograd is not told that
    the input changed, so an op that saved it for backward (the sigmoid whose output
    it is) finds it modified.  Reported for an input the `backward` returns a
    gradient for (not `None`: a buffer like a running mean updated in place is no
    differentiable input), written before the forward re-binds the name, and
    returned as the output (an input changed only as scratch space, cogdl's
    sparsemax `x -= max_val[batch]` before a new output, is left alone)."""
    for cls in checker.tree.body:  # custom Functions are defined at the top of a module
        if not isinstance(cls, ast.ClassDef) or not any(
                isinstance(b, (ast.Name, ast.Attribute)) and checker.qualname(b) in N.AUTOGRAD_FUNCTIONS
                for b in cls.bases):
            continue
        methods = {m.name: m for m in cls.body if isinstance(m, ast.FunctionDef)}
        forward, backward = methods.get("forward"), methods.get("backward")
        if forward is None or backward is None:
            continue
        inputs = [a.arg for a in forward.args.args[1:]]
        returned = {n.id for r in _statements_in_order(forward.body) if isinstance(r, ast.Return) and r.value is not None
                    for n in ([r.value] if not isinstance(r.value, ast.Tuple) else r.value.elts)
                    if isinstance(n, ast.Name)}
        if not returned & set(inputs) or "mark_dirty" in checker.text(forward):
            continue  # returns no input of its own, or tells autograd which it wrote
        graded = _graded_inputs(backward, len(inputs))
        for position, name in enumerate(inputs):
            if position not in graded or name not in returned:
                continue
            write = _first_write_before_rebinding(forward, name)
            if write is not None:
                checker.report(
                    "ADL001", write,
                    f"`{cls.name}.forward` writes its input `{name}` in place without "
                    f"`ctx.mark_dirty({name})`: autograd is not told that `{name}` changed, so an op "
                    f"that saved it for backward fails (modified by an inplace operation) or "
                    f"computes wrong gradients; write a copy (`{name} = {name}.clone()`) or mark it dirty")


def _graded_inputs(backward, count: int) -> set:
    """Positions of the forward's inputs that some `return` of ``backward`` gives a
    gradient for (not the constant `None`)."""
    out = set()
    for node in ast.walk(backward):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
        for i, v in enumerate(values[:count]):
            if not (isinstance(v, ast.Constant) and v.value is None):
                out.add(i)
    return out


def _first_write_before_rebinding(function, name: str):
    """The first statement of ``function``'s own body (in order, nested blocks
    included) that writes ``name`` in place (`name += ...`, `name[i] += ...`,
    `name[i] = ...`, `name.add_(...)`), if no assignment re-binds ``name`` before it."""
    for stmt in _statements_in_order(function.body):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else \
            [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
        for t in targets:
            if isinstance(t, ast.Name) and t.id == name:
                if isinstance(stmt, ast.AugAssign):
                    return stmt
                return None  # re-bound: no longer the caller's tensor
            if isinstance(t, ast.Subscript) and _base_name(t.value) == name:
                return stmt
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            func = stmt.value.func
            if isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_") \
                    and func.attr in N.tensor_methods() and _base_name(func.value) == name:
                return stmt
    return None


def _base_name(node):
    while isinstance(node, ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _statements_in_order(body):
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
                yield from _statements_in_order(inner)
