"""ADL019: a second backward through a graph that an earlier backward freed."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.rules.base import Rule
from autograd_doctor.lint.rules.adl003_step_before_backward_of_older_graph import (
    _dependencies, _frees_graph, module_summaries)

RULE = Rule(
    code="ADL019", name="backward-through-freed-graph",
    summary="A `backward()` goes through the graph of a value that an earlier `backward()` without `retain_graph=True` already freed.",
    what_it_does="""Finds two backward passes in one function, on one path, whose losses are both
computed from one value (a name bound once, not re-bound in between) that was
made by calling a module with parameters (`fake = G(z)`), when the first
backward has no `retain_graph=True` (nor `create_graph`) and the value is not
cut on the way (`.detach()`, `.item()`, `no_grad`, or a factory that reads only
its shape: `torch.ones_like(out)`, `out.new_zeros(n)`).  This is the GAN pattern
of a discriminator loss computed from `D(fake)` instead of `D(fake.detach())`:
`d_loss.backward()` frees the generator's graph that `g_loss.backward()`
needs next.  Two values unpacked from one call (`loc_preds, cls_preds =
net(x)`, `mu, logvar = self.encode(x)`) count as one graph when the called
same-file `forward` (or method) computes both from one call of a layer with
parameters, outside any loop (`fms = self.fpn(x)`, then both heads on `fms`):
backpropagating one, then the other, frees the shared part in between.  Two
calls of one layer (`self.q(s, a)`, `self.q(s, pi)`) make two graphs.  The same loss
backpropagated twice (`loss.backward(); optimizer.step(); loss.backward()`, one
forward pass) is the same case; its help is to run the forward pass again.  A
module handed in as a parameter counts when every call of the function passes
one (argument_modules.py), also a name unpacked from a same-file factory
(`model, optimizer = build()`, every `return` of `build` a tuple with a module
constructor at that position), or from a tuple or list display of its own length
(`generator, discriminator = Generator(), Discriminator()`; a swap stays unknown).
For two different losses the help does not say which one to detach in (a GAN
that updates G first detaches in D's loss, the second one), and offers
`retain_graph=True` only when no optimizer step lies between the two backwards.""",
    why_bad="""A backward pass frees the buffers its graph saved (the inputs of every
linear layer of `G`, ...) unless asked to keep them.  The second backward
through the shared part then raises `RuntimeError: Trying to backward through
the graph a second time (or directly access saved tensors after they have
already been freed)`.""",
    example="""scores = D(x)                # D: a module with parameters
d_loss = F.softplus(-scores).mean()
d_loss.backward()            # frees D's graph (through scores)
g_loss = F.softplus(scores).mean()
g_loss.backward()            # needs it again""",
    use_instead="""scores = D(x)
d_loss = F.softplus(-scores).mean()
d_loss.backward(retain_graph=True)   # or use scores.detach() in one of the losses
g_loss = F.softplus(scores).mean()
g_loss.backward()""",
    fix_safety="No automatic fix: `.detach()` in the first loss (when its gradient should not reach the shared part) or `retain_graph=True` (when it should) depends on the algorithm.",
    known_problems="""Only one function is followed, and only values made by a module call that
the linter knows has parameters (a same-file module class, an `nn` layer, a
`self.<layer>` of a module) count as evidence of a graph with saved tensors.
A backward whose loss is only reached through a container or an attribute
(`losses["d"]`, `self.fake`) is not followed.  In a loop, a value carried into
the next iteration (`out, hidden = model(x, hidden)`, truncated
backpropagation through time without `hidden = hidden.detach()`) is found
when the name is re-bound once in the body, from itself, by a known module
(the help detaches each element, `[s.detach() for s in states]`, when the name
was bound before the loop to a list display, a comprehension or `list(...)`,
and `tuple(s.detach() for s in states)` for a tuple: a container has no
`.detach()`; any other first binding is taken for a tensor); and a value computed once before the loop by a module with parameters (PPO's
advantages from the critic, also through a method of the same object that
returns it), or by an op that saves a tensor for backward (the saves table:
`torch.tanh` its result, `* 2` its scalar, not `+ 1`) applied to a leaf that
requires grad (a learned initial state, `h0 = torch.tanh(start)` of an
`nn.Parameter`), and read by the loop's backward in every iteration; and a tensor
made before the loop that the body writes in place with a module's output
(`slots[i] = emb(tokens)[j]`) and the backward reads: the write is recorded on
the tensor, whose graph then reaches the earlier iterations.  A comprehension
counts as a loop: `[torch.autograd.grad(score, x)[0] for x in inputs]` goes
through `score`'s graph once per input.  A backward inside a module's forward pass
(a same-file layer that backpropagates a loss of its input, called by another
module's `forward` on a layer's output) frees the graph the returned values carry:
a backward through what that module returned is reported.  So does a same-file
function or method (also `obj.method(...)` of a method one class of the file
defines) that backpropagates one of its arguments without `retain_graph=True`:
a later backward of the caller through that argument's graph, or through a value
the function returned from it, is reported.  A loss summed across the iterations
for a later backward (`accu += loss_3d / k`, the total bound before the loop,
backpropagated every k-th iteration earlier in the body than the sum and
restarted only after that backward or in the other branch of an `if`) is
reported at that backward when another backward of the body, without
`retain_graph=True`, freed before the sum a graph the summed value shares (a
binding made in the iteration by a module with parameters, or another output of
one call of a layer): the later backward goes through the freed graph.  A state that a
same-file module's `forward` keeps on itself for its next call (`out,
self.hidden = self.lstm(x, self.hidden)`, a spiking neuron's `self.v = self.v +
(x - self.v) / tau`: re-bound from its own previous value by operators, torch
functions and the class's layers only, with a graph from a layer with parameters
or from the input of a module that every construction places after such a layer
in an `nn.Sequential`) is reported at the backward of a loop that calls a network
running that module (through `self.<attr>` layers and `nn.Sequential`s, outside
any `if`) when the loop mentions the network only to call it (or `zero_grad()`,
`parameters()`, ...) and calls no function that binds the state (`reset()`,
`repackage_hidden()`, by name); where nothing but `__init__` binds the state
elsewhere, ADL017 reports it at the assignment instead.""",
)


def check_scope(checker, scope) -> None:
    _record_output_layers(checker, scope)
    check_loops(checker, scope)
    check_carried_sums(checker, scope)
    check_comprehensions(checker, scope)
    check_freed_by_called_modules(checker, scope)
    check_helper_backwards(checker, scope)
    check_backwards_after_helpers(checker, scope)
    check_module_states(checker, scope)
    backwards = scope.backward_receivers
    for i, (seq2, node2, recv2) in enumerate(backwards):
        if id(node2) in scope.reported:
            continue
        read_by_second = _bindings_read(checker, scope, recv2, seq2)
        for seq1, node1, recv1 in backwards[:i]:
            if not _frees_graph(node1) or scope.exclusive(seq1, seq2) or not scope.reaches(seq1, seq2):
                continue
            shared = [b for b in _bindings_read(checker, scope, recv1, seq1) if b in read_by_second
                      and b[1] < seq1 and _made_by_parameterised_module(checker, scope, b)]
            if shared:
                name, bseq = min(shared, key=lambda b: b[1])
                value = next(v for s, v, _ in scope.bind_values[name] if s == bseq)
                same = _same_loss(scope, recv1, seq1, recv2, seq2)
                stepped = same and any(seq1 < s < seq2 for s, _, _ in scope.steps)
                # which loss should not reach the producer is the algorithm's choice (a GAN
                # that updates G first detaches in D's loss, the second one); a step between
                # the two backwards may write what a retained graph saved, so retaining is
                # offered only when none lies between
                producer = checker.text(value.func) if isinstance(value, ast.Call) else name
                between = any(seq1 < s < seq2 for s, _, _ in scope.steps)
                help_ = (f"{'clear the gradients and ' if stepped else ''}run the forward pass again "
                         f"to compute `{same}` before this backward"
                         if same else f"detach `{name}` where the loss that must not update `{producer}` uses it"
                         f"{'' if between else ', or retain the graph'}")
                checker.report(
                    "ADL019", node2,
                    f"this backward goes through the graph of `{name}` (line {value.lineno}), which "
                    f"`{checker.text(node1)}` on line {node1.lineno} already freed (no "
                    f"`retain_graph=True`); backward() will fail (Trying to backward through the graph "
                    f"a second time); {help_}",
                    related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                              f"`{name}` computed here"),
                             (node1.lineno, checker.col(node1.lineno, node1.col_offset), 0,
                              "this backward frees its graph")])
                scope.reported.add(id(node2))
                break
            sibling = _sibling_outputs(checker, scope, recv1, seq1, read_by_second)
            if sibling is not None:
                first, second, call, layer = sibling
                checker.report(
                    "ADL019", node2,
                    f"this backward goes through the graph of `{second}`, which `{checker.text(call.func)}(...)` "
                    f"on line {call.lineno} returned together with `{first}`: both are computed from one "
                    f"call of `{layer}`, whose graph `{checker.text(node1)}` on line {node1.lineno} already "
                    f"freed (no `retain_graph=True`); backward() will fail (Trying to backward through the "
                    f"graph a second time); retain the graph in the first backward, or backpropagate both "
                    f"at once (`torch.autograd.backward([...], [...])` or the sum of the losses)",
                    related=[(call.lineno, checker.col(call.lineno, call.col_offset), 0,
                              f"`{first}` and `{second}` computed here, by one call of `{layer}`"),
                             (node1.lineno, checker.col(node1.lineno, node1.col_offset), 0,
                              "this backward frees its graph")])
                scope.reported.add(id(node2))
                break


def _record_output_layers(checker, scope) -> None:
    """Keep a method that returns a tuple on every path (a module's `forward`, `def
    heads(self, x)`), for ``_output_layers``, which summarises it only when a
    function backpropagates twice (most files never do)."""
    if scope.owner_class is None or scope.grad_off or not scope.return_values or not checker.file.trains:
        return  # (the backward passes it would explain are in this file)
    if all(isinstance(value, ast.Tuple) and len(value.elts) >= 2 for _, value in scope.return_values):
        checker.notes["ADL019 tuple methods"].append(scope)


def _output_layers(checker) -> dict:
    """``(class, method) -> per position, the calls of layers of `self` with
    parameters that every `return` computes the value from``, through its
    bindings, the lists it appends to and the loops over them (`fms =
    self.fpn(x)`, `for fm in fms: loc_preds.append(self.loc_head(fm))`).  Two
    positions computed from one call (one node outside any loop, so one graph)
    share what that call saved (``_sibling_outputs``); two calls of one layer
    (`self.q(s, a)`, `self.q(s, pi)`) make two graphs."""
    found = checker.notes.get("ADL019 output layers")
    if found is None:
        found = checker.notes["ADL019 output layers"] = {}
    pending = checker.notes.get("ADL019 tuple methods") or []
    while pending:
        scope = pending.pop()
        per_return = [[_layer_calls_of(checker, scope, elt, seq) for elt in value.elts]
                      for seq, value in scope.return_values]
        if len({len(r) for r in per_return}) != 1:
            continue
        common = [frozenset.intersection(*position) for position in zip(*per_return)]
        if sum(bool(calls) for calls in common) < 2:
            continue
        looped = _nodes_in_loops(checker, scope)
        common = tuple(frozenset(c for c in calls if c[1] not in looped) for calls in common)
        if sum(bool(calls) for calls in common) >= 2:
            found[(scope.owner_class, scope.name)] = common
    return found


def _nodes_in_loops(checker, scope) -> set:
    """ids of the nodes inside a loop (or comprehension) of the method ``scope`` walks."""
    for cls in ast.walk(checker.tree):
        if isinstance(cls, ast.ClassDef) and cls.name == scope.owner_class:
            for method in cls.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name == scope.name:
                    return {id(n) for loop in ast.walk(method)
                            if isinstance(loop, (ast.For, ast.AsyncFor, ast.While, ast.comprehension))
                            for n in ast.walk(loop)}
    return set()


def _layer_calls_of(checker, scope, value, at) -> frozenset:
    """``{(layer text, id of the call)}``: the calls of layers of `self` with
    parameters (trained: not frozen) made, with gradients on, to compute ``value``
    (read at seq ``at``): through earlier bindings, `name.append(...)` of a list and
    `for` targets over an iterable; not through `.detach()`, `.item()` or `no_grad`
    (adl003's ``_dependencies``)."""
    specs = checker.modules.module_specs.get(scope.owner_class, {})
    frozen = checker.modules.frozen
    found, work, seen = set(), [(value, at)], set()
    while work and len(seen) < 200:
        node, when = work.pop()
        names, modules = _dependencies(checker, node, scope.module_class, scope.owner_class)
        layers = set()
        for module in modules:
            spec = specs.get(module[5:]) if module.startswith("self.") else None
            if spec is not None and spec.parameterised and module not in frozen \
                    and "class " + spec.kind not in frozen:
                layers.add(module)
        if layers:
            found.update((checker.text(n.func), id(n)) for n in ast.walk(node)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and checker.text(n.func) in layers)
        for name in names:
            entry = scope.binding(name, when)
            if entry is None or entry[2] or (name, entry[0]) in seen:
                continue
            seen.add((name, entry[0]))
            if entry[1] is not None:
                work.append((entry[1], entry[0]))
            elif (name, entry[0]) in scope.iterated:  # `for fm in fms`: an element of `fms`
                work.append((scope.iterated[(name, entry[0])], entry[0]))
            if isinstance(entry[1], ast.List):  # `preds = []`, then `preds.append(pred)`
                work += [(arg, seq) for seq, arg in scope.appended.get(name, ())
                         if entry[0] < seq < when and scope.binding(name, seq) is entry]
    return frozenset(found)


def _sibling_outputs(checker, scope, recv1, seq1, read_by_second):
    """Two values unpacked from one call (`loc_preds, cls_preds = net(x)`), the
    first read by the backward at ``seq1``, the second by a later one, where the
    called method (a same-file module's `forward`, a method returning a tuple)
    computes both from one call of a layer with parameters (``_record_output_layers``):
    (first name, second name, the call, the shared layer), or None."""
    if not checker.notes.get("ADL019 tuple methods") and not checker.notes.get("ADL019 output layers"):
        return None
    layers_by_method = _output_layers(checker)
    if not layers_by_method:
        return None
    for name1, bseq1 in sorted(_bindings_read(checker, scope, recv1, seq1), key=lambda b: b[1]):
        entry1 = next((e for e in scope.bind_values.get(name1, ()) if e[0] == bseq1), None)
        if entry1 is None or entry1[2] or bseq1 > seq1:
            continue
        call1, position1 = _unpacked_from(checker, name1, entry1[1])
        if call1 is None:
            continue
        method = _called_method(checker, scope, call1)
        layers = layers_by_method.get(method) if method is not None else None
        if layers is None or position1 >= len(layers):
            continue
        for name2, bseq2 in read_by_second:
            entry2 = next((e for e in scope.bind_values.get(name2, ()) if e[0] == bseq2), None)
            call2, position2 = _unpacked_from(checker, name2, entry2[1]) if entry2 is not None else (None, 0)
            if call2 is not call1 or position2 == position1 or position2 >= len(layers):
                continue
            shared = layers[position1] & layers[position2]
            if shared:
                return name1, name2, call1, min(shared)[0]
    return None


def _unpacked_from(checker, name, value):
    """``(call, position)`` when the binding of ``name`` whose value is ``value`` took
    one element of a call's tuple: `a, b = f(x)` (the walk binds both to the call,
    or to `f(x)[i]` when it has a summary of `f`), else ``(None, 0)``."""
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call) and \
            isinstance(value.slice, ast.Constant) and isinstance(value.slice.value, int):
        return value.value, value.slice.value
    if isinstance(value, ast.Call):
        targets = _unpacked_names(checker).get(id(value))
        if targets is not None and targets.count(name) == 1:
            return value, targets.index(name)
    return None, 0


def _called_method(checker, scope, call):
    """``(class, method)`` that ``call`` runs, for a class of this file: `self.heads(x)`
    in a method of the class, `net(x)` / `self.net(x)` / `net.heads(x)` of a module
    the file built from one of its classes."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and scope.owner_class is not None and func.attr in scope.class_methods:
        return scope.owner_class, func.attr
    spec = checker.called_module(call)
    if spec is not None:
        return spec.kind, "forward"
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        spec = checker.modules.name_specs.get(func.value.id)
        if spec is not None:
            return spec.kind, func.attr
    return None


def _unpacked_names(checker) -> dict:
    """id of a call -> the names a statement unpacks its result into (`a, b = f(x)`)."""
    cached = checker.notes.get("ADL019 unpacked")
    if cached is not None:
        return cached[0]
    found = {}
    for node in ast.walk(checker.tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call) \
                and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                and all(isinstance(e, ast.Name) for e in node.targets[0].elts):
            found[id(node.value)] = [e.id for e in node.targets[0].elts]
    checker.notes["ADL019 unpacked"] = [found]
    return found


def check_helper_backwards(checker, scope) -> None:
    """A same-file helper that backpropagates a loss computed from one of its
    parameters (`update_hessian(optimizer, logits)`: `F.cross_entropy(logits, y_sample)
    .backward()`), called with a value whose graph an earlier backward of the caller
    freed (`logits, loss = model(X, Y); loss.backward()`): the helper's backward goes
    through it again.  Reported at the helper's backward, where it fails."""
    reported = checker.notes.setdefault("ADL019 helper reported", set())
    for seq2, call in scope.noted("ADL019 helper"):
        callee = _helper_definition(checker, scope, call)
        if callee is None:
            continue
        function, offset = callee
        for position, (parameter, backward) in _backpropagated_parameters(checker, function).items():
            if id(backward) in reported:
                continue
            index = position - offset
            argument = call.args[index] if 0 <= index < len(call.args) and \
                not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]) else \
                next((k.value for k in call.keywords if k.arg == parameter), None)
            if argument is None:
                continue
            read_by_helper = _bindings_read(checker, scope, argument, seq2)
            for seq1, node1, recv1 in scope.backward_receivers:
                if seq1 >= seq2 or not _frees_graph(node1) or scope.exclusive(seq1, seq2) \
                        or not scope.reaches(seq1, seq2):
                    continue
                shared = _shared_module_binding(checker, scope, _bindings_read(checker, scope, recv1, seq1),
                                                read_by_helper, seq1)
                if shared is None:
                    continue
                name, value = shared
                reported.add(id(backward))
                checker.report(
                    "ADL019", backward,
                    f"this backward goes through `{parameter}`, which `{checker.text(call.func)}(...)` on "
                    f"line {call.lineno} passes `{checker.text(argument)}`, computed from `{name}` (line "
                    f"{value.lineno}), whose graph `{checker.text(node1)}` on line {node1.lineno} already "
                    f"freed (no `retain_graph=True`); backward() will fail (Trying to backward through the "
                    f"graph a second time); compute it again before the call, or retain the graph",
                    related=[(call.lineno, checker.col(call.lineno, call.col_offset), 0,
                              f"`{checker.text(argument)}` handed to the helper here"),
                             (node1.lineno, checker.col(node1.lineno, node1.col_offset), 0,
                              "this backward frees its graph")])
                break


def check_backwards_after_helpers(checker, scope) -> None:
    """A same-file helper that backpropagates one of its arguments and frees its
    graph (the adaptive-weighted GAN's `aw_loss(d_real, d_fake, ...)`, which sets the
    discriminator's gradients itself), then a backward of the caller through that
    argument's graph (`aw_loss.backward()` of the helper's result): the second
    backward fails.  Reported at the caller's backward."""
    for seq1, call in scope.noted("ADL019 helper"):
        callee = _helper_definition(checker, scope, call)
        if callee is None:
            continue
        function, offset = callee
        for position, (parameter, backward) in _backpropagated_parameters(checker, function).items():
            index = position - offset
            argument = call.args[index] if 0 <= index < len(call.args) and \
                not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]) else \
                next((k.value for k in call.keywords if k.arg == parameter), None)
            if argument is None or not _frees_graph(backward):
                continue
            read_by_helper = _bindings_read(checker, scope, argument, seq1)
            returned = _returns_parameter(function, parameter)
            for seq2, node2, recv2 in scope.backward_receivers:
                if seq2 <= seq1 or id(node2) in scope.reported or scope.exclusive(seq1, seq2) \
                        or not scope.reaches(seq1, seq2):
                    continue
                read_by_second = _bindings_read(checker, scope, recv2, seq2)
                if returned and any(v is call for n, b in read_by_second
                                    for s, v, _ in scope.bind_values.get(n, ()) if s == b):
                    read_by_second = read_by_second | read_by_helper  # the helper's result: its argument's graph
                shared = _shared_module_binding(checker, scope, read_by_helper, read_by_second, seq1)
                if shared is None:
                    continue
                name, value = shared
                checker.report(
                    "ADL019", node2,
                    f"this backward goes through the graph of `{name}` (line {value.lineno}), which "
                    f"`{checker.text(call.func)}(...)` on line {call.lineno} already backpropagated and "
                    f"freed (`{checker.text(backward)}` on line {backward.lineno}, no `retain_graph=True`, "
                    f"through its parameter `{parameter}`); backward() will fail (Trying to backward through "
                    f"the graph a second time); use the gradients the helper computed, or retain the graph there",
                    related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                              f"`{name}` computed here"),
                             (call.lineno, checker.col(call.lineno, call.col_offset), 0,
                              f"`{checker.text(argument)}` backpropagated by the helper here")])
                scope.reported.add(id(node2))


def _returns_parameter(function, parameter: str) -> bool:
    """Whether a `return` of ``function`` gives a value computed from ``parameter``
    (through its own assignments, not through `.detach()` / `.item()`)."""
    depends = _assigned_dependencies(function)
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            names = _names_not_cut(node.value)
            if parameter in names or any(parameter in depends.get(n, ()) for n in names):
                return True
    return False


def _shared_module_binding(checker, scope, first, second, before):
    """A binding both reads go through (the same name and binding, or another name
    unpacked from the same call: `logits, loss = model(X, Y)`), made before
    ``before`` by a module with parameters: (name, value) or None."""
    values = {}
    for name, bseq in second:
        entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == bseq), None)
        if entry is not None and entry[1] is not None:
            values[id(entry[1])] = (name, bseq)
    for name, bseq in sorted(first, key=lambda b: b[1]):
        entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == bseq), None)
        if entry is None or entry[1] is None or bseq >= before:
            continue
        other = (name, bseq) if (name, bseq) in second else values.get(id(entry[1]))
        if other is not None and _made_by_parameterised_module(checker, scope, (name, bseq)):
            return other[0], entry[1]
    return None


def _helper_definition(checker, scope, call):
    """(the FunctionDef a call `f(...)` / `self.f(...)` runs, how many leading
    parameters the call does not pass) for a function or method defined once."""
    func = call.func
    if isinstance(func, ast.Name):
        defs = [n for n in checker.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and n.name == func.id]
        return (defs[0], 0) if len(defs) == 1 else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self" \
            and scope.owner_class:
        classes = [n for n in checker.tree.body if isinstance(n, ast.ClassDef) and n.name == scope.owner_class]
        defs = [n for c in classes for n in c.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func.attr]
        return (defs[0], 1) if len(defs) == 1 else None
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        # `aw.aw_loss(...)` on another object: the method, when one class of the file defines it
        defs = [n for c in checker.tree.body if isinstance(c, ast.ClassDef) for n in c.body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func.attr]
        return (defs[0], 1) if len(defs) == 1 and not defs[0].decorator_list else None
    return None


_CUTTING = frozenset({"detach", "item", "tolist", "numpy", "cpu_numpy"})


def _backpropagated_parameters(checker, function) -> dict:
    """position -> (parameter, backward call) for the parameters of ``function`` from
    which a loss that one of its freeing backward passes (`.backward()`,
    `torch.autograd.grad(...)`, without `retain_graph=True`) is computed, through its
    own assignments; a `.detach()` / `.item()` on the way cuts the link."""
    cache = checker.notes.setdefault("ADL019 helper parameters", {})
    key = (function.name, function.lineno)
    if key in cache:
        return cache[key]
    parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
    depends = _assigned_dependencies(function)
    found = {}
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        keywords = {k.arg: k.value for k in node.keywords}
        if any(isinstance(keywords.get(k), ast.Constant) and keywords[k].value for k in ("retain_graph", "create_graph")) \
                or any(k in keywords and not isinstance(keywords[k], ast.Constant) for k in ("retain_graph", "create_graph")):
            continue
        if node.func.attr == "backward" and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
            receiver = node.func.value
        elif node.func.attr == "grad" and checker.text(node.func).endswith("autograd.grad") and node.args:
            receiver = node.args[0]
        else:
            continue
        reached = set()
        for name in _names_not_cut(receiver):
            reached |= {name} | depends.get(name, set())
        for position, parameter in enumerate(parameters):
            if parameter in reached and parameter not in ("self", "cls"):
                found.setdefault(position, (parameter, node))
    cache[key] = found
    return found


def _names_not_cut(node) -> set:
    names, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTTING:
            continue
        if isinstance(n, ast.Name):
            names.add(n.id)
        stack.extend(ast.iter_child_nodes(n))
    return names


def check_loops(checker, scope) -> None:
    """Truncated backpropagation through time without `detach()`: a loop whose
    backward goes through a value carried over from the previous iteration
    (`out, hidden = model(x, hidden)`), whose graph that iteration's backward
    freed."""
    for seq, node, recv in scope.backward_receivers:
        if id(node) in scope.reported or not _frees_graph(node):
            continue
        loops = [(start, end) for start, end in scope.finished_loops if start < seq < end]
        if not loops:
            continue
        start, end = max(loops)
        read = _bindings_read(checker, scope, recv, seq)
        carried = _carried_binding(checker, scope, read, start, end, seq)
        before = None if carried is not None else _bound_before_loop(checker, scope, read, start, end)
        written = None if carried is not None or before is not None else \
            _written_buffer(checker, scope, read, start, end, seq)
        if written is not None:
            name, write = written
            checker.report(
                "ADL019", node,
                f"`{name}` is made before the loop and written in place on line {write.node.lineno} "
                f"with a value that has a graph: the write is recorded on `{name}`, so the next "
                f"iteration's backward goes through this iteration's graph again after freeing it "
                f"(no `retain_graph=True`); backward() will fail (Trying to backward through the graph "
                f"a second time); make `{name}` inside the loop, or `{name}.detach_()` after the backward",
                related=[(write.node.lineno, checker.col(write.node.lineno, write.node.col_offset), 0,
                          f"`{name}` written here, kept for the next iteration")])
            scope.reported.add(id(node))
        elif before is not None:
            name, bseq = before
            value = next(v for s, v, _ in scope.bind_values[name] if s == bseq)
            checker.report(
                "ADL019", node,
                f"`{name}` (line {value.lineno}) is computed once, before the loop, and this "
                f"backward goes through its graph in every iteration: the first iteration's "
                f"backward frees it (no `retain_graph=True`), so the second fails (Trying to "
                f"backward through the graph a second time); use `{name}.detach()` in the loop "
                f"if its gradient is not wanted there, or compute it inside the loop",
                related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                          f"`{name}` computed here, before the loop")])
            scope.reported.add(id(node))
        elif carried is not None:
            name, bseq = carried
            value = next(v for s, v, _ in scope.bind_values[name] if s == bseq)
            checker.report(
                "ADL019", node,
                f"`{name}` (line {value.lineno}) carries its graph into the next iteration of the "
                f"loop, where this backward goes through it again after freeing it (no "
                f"`retain_graph=True`); backward() will fail (Trying to backward through the graph "
                f"a second time); detach it for the next iteration "
                f"(`{name} = {_detached_form(scope, name, start, checker)}`)",
                related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                          f"`{name}` computed here, read again in the next iteration")])
            scope.reported.add(id(node))


def check_carried_sums(checker, scope) -> None:
    """A loss summed across the iterations of a loop for a later backward (`accu +=
    loss_3d / k`, backpropagated every k-th iteration), whose graph another backward
    of the loop freed before the sum: the value summed shares, through a binding made
    by a module with parameters in the same iteration (or as another output of one
    call of a layer, ``_sibling_outputs``), the graph of a loss that an earlier
    backward of the body backpropagated without `retain_graph=True`.  The sum's
    backward, in a later iteration (earlier in the body than the sum, the total bound
    before the loop and not re-bound on the way), goes through that freed graph."""
    backwards = scope.backward_receivers
    if len(backwards) < 2 or not scope.finished_loops:
        return
    for seq2, node2, recv2 in backwards:
        if id(node2) in scope.reported or not isinstance(recv2, ast.Name):
            continue
        loops = [(start, end) for start, end in scope.finished_loops if start < seq2 < end]
        if not loops:
            continue
        start, end = max(loops)
        total = recv2.id
        entries = [e for e in scope.bind_values.get(total, ()) if start < e[0] < end]
        if not any(e[0] < start for e in scope.bind_values.get(total, ())):
            continue  # the total must be started before the loop, to be carried
        found = None
        for sum_seq, value, grad_off in entries:
            summed = _summed_into(total, value)
            if summed is None or grad_off or sum_seq < seq2:
                continue
            # every other binding of the total in the loop restarts it where the sum
            # still reaches the backward: after the backward and before the sum, or in
            # the branch of an `if` that the sum is not in (`if ...: accu.backward();
            # accu = 0.0` / `else: accu += loss`)
            if not all(seq2 < s < sum_seq or (scope.exclusive(s, sum_seq) and s > seq2)
                       for s, _, _ in entries if s != sum_seq):
                continue
            read = _bindings_read(checker, scope, summed, sum_seq)
            for seq1, node1, recv1 in backwards:
                if node1 is node2 or not start < seq1 < sum_seq or not _frees_graph(node1) \
                        or scope.exclusive(seq1, sum_seq) or not scope.reaches(seq1, sum_seq):
                    continue
                shared = [b for b in _bindings_read(checker, scope, recv1, seq1) if b in read
                          and start < b[1] < seq1 and _made_by_parameterised_module(checker, scope, b)]
                if shared:
                    name, bseq = min(shared, key=lambda b: b[1])
                    found = (name, bseq, None, sum_seq, value, summed, node1)
                    break
                sibling = _sibling_outputs(checker, scope, recv1, seq1, read)
                if sibling is not None and start < min(
                        b for n, b in _bindings_read(checker, scope, recv1, seq1) if n == sibling[0]) < seq1:
                    found = (sibling[1], None, sibling, sum_seq, value, summed, node1)
                    break
            if found is not None:
                break
        if found is None:
            continue
        name, bseq, sibling, sum_seq, value, summed, node1 = found
        sum_node = value if isinstance(value, ast.stmt) else value
        if sibling is not None:
            first, _, call, layer = sibling
            how = (f"which `{checker.text(call.func)}(...)` on line {call.lineno} returned together with "
                   f"`{first}`, both computed from one call of `{layer}`")
            where = (call.lineno, checker.col(call.lineno, call.col_offset), 0,
                     f"`{first}` and `{name}` computed here, by one call of `{layer}`")
        else:
            bound = next(v for s, v, _ in scope.bind_values[name] if s == bseq)
            how = f"which shares the graph of `{name}` (line {bound.lineno})"
            where = (bound.lineno, checker.col(bound.lineno, bound.col_offset), 0, f"`{name}` computed here")
        checker.report(
            "ADL019", node2,
            f"`{total}` holds `{checker.text(summed)}`, summed on line {sum_node.lineno} in earlier "
            f"iterations, {how}; `{checker.text(node1)}` on line {node1.lineno} freed that graph "
            f"(no `retain_graph=True`) before the sum, so this backward goes through a freed graph: "
            f"backward() will fail (Trying to backward through the graph a second time); "
            f"backpropagate `{checker.text(summed)}` in the iteration that computes it, in the same "
            f"backward as the first loss",
            related=[where,
                     (node1.lineno, checker.col(node1.lineno, node1.col_offset), 0,
                      "this backward frees the shared graph"),
                     (sum_node.lineno, checker.col(sum_node.lineno, sum_node.col_offset), 0,
                      f"summed into `{total}` here, for a later iteration's backward")])
        scope.reported.add(id(node2))


def _summed_into(total: str, value):
    """The value added to ``total`` by a binding of it: `total += x` (the binding's value
    is the statement) or `total = total + x`; else None."""
    if isinstance(value, ast.AugAssign):
        if isinstance(value.op, ast.Add) and isinstance(value.target, ast.Name) and value.target.id == total:
            return value.value
        return None
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        for side, other in ((value.left, value.right), (value.right, value.left)):
            if isinstance(side, ast.Name) and side.id == total:
                return other
    return None


def _detached_form(scope, name: str, loop_start: int, checker=None) -> str:
    """How to detach ``name`` for the next iteration: `h.detach()` for a tensor; for
    a Python list or tuple of states, bound before the loop to a list or tuple
    display, a comprehension or `list(...)` / `tuple(...)` (a list has no
    `.detach()`), or to a call of a same-file function every `return` of which is
    one (`state = init_rnn_state(...)` returning `(torch.zeros(...),)`), each
    element detached into a container of the same kind."""
    before = scope.binding(name, loop_start)
    value = before[1] if before is not None else None
    if checker is not None and isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        helper = _helper_definition(checker, scope, value)
        returns = [n.value for n in ast.walk(helper[0]) if isinstance(n, ast.Return)] if helper else []
        if returns and all(isinstance(r, ast.Tuple) for r in returns):
            value = returns[0]
        elif returns and all(isinstance(r, (ast.List, ast.ListComp)) for r in returns):
            value = returns[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("list", "tuple"):
        kind = value.func.id
    elif isinstance(value, (ast.List, ast.ListComp)):
        kind = "list"
    elif isinstance(value, ast.Tuple):
        kind = "tuple"
    else:
        return f"{name}.detach()"
    if kind == "list":
        return f"[s.detach() for s in {name}]"
    return f"tuple(s.detach() for s in {name})"


def check_comprehensions(checker, scope) -> None:
    """`[torch.autograd.grad(selected, x)[0] for x in inputs]`: a comprehension runs
    its element once per item, like a loop body; a freeing backward there whose loss
    reads none of the comprehension's targets goes through one graph, computed before
    it by a module with parameters, once per item: the second item's call fails."""
    for seq, node, recv in scope.backward_receivers:
        if id(node) in scope.reported or not _frees_graph(node) or \
                not any(" for " in line for line in checker.lines[node.lineno - 1:node.lineno + 3]):
            continue  # (no comprehension's `for` near the call: no walk of the file)
        comprehension = _comprehensions_around(checker).get(id(node))
        if comprehension is None:
            continue
        targets = {n.id for g in comprehension.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        if targets & set(_graph_names(checker, recv)):
            continue  # a loss per item (`[f(x).backward() for x in xs]`)
        read = _bindings_read(checker, scope, recv, seq)
        made = next((b for b in sorted(read, key=lambda b: b[1])
                     if b[0] not in targets and _made_by_parameterised_module(checker, scope, b)), None)
        if made is None:
            continue
        name, bseq = made
        value = next(v for s, v, _ in scope.bind_values[name] if s == bseq)
        loop = comprehension.generators[0]
        checker.report(
            "ADL019", node,
            f"`{checker.text(node.func)}` runs once for each `{checker.text(loop.target)}` in "
            f"`{checker.text(loop.iter)}`, each time through the graph of `{name}` (line "
            f"{value.lineno}), computed once before: the first call frees it (no `retain_graph=True`), "
            f"so the second fails (Trying to backward through the graph a second time); pass "
            f"`retain_graph=True`, or take the gradients of all items in one call",
            related=[(value.lineno, checker.col(value.lineno, value.col_offset), 0,
                      f"`{name}` computed here, before the comprehension")])
        scope.reported.add(id(node))


def check_freed_by_called_modules(checker, scope) -> None:
    """A backward through what a same-file module returned, when that module's
    `forward` already ran a freeing backward through the graph the value carries:
    vqtorch's `VectorQuant.forward` backpropagates its codebook loss, computed from
    its input `z`, and returns `z`-derived outputs; an autoencoder that calls it on
    `self.encoder(x)` returns values whose encoder graph is freed, so the training
    loop's `loss.backward()` fails."""
    if not scope.backward_receivers or "backward(" not in checker.source:
        return
    freeing = _modules_returning_freed_graphs(checker)
    if not freeing:
        return
    for seq, node, recv in scope.backward_receivers:
        if id(node) in scope.reported:
            continue
        found = None
        for name, bseq in sorted(_bindings_read(checker, scope, recv, seq), key=lambda b: b[1]):
            entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == bseq), None)
            if entry is None or entry[1] is None or entry[2]:
                continue
            for call in ast.walk(entry[1]):
                spec = checker.called_module(call) if isinstance(call, ast.Call) else None
                if spec is not None and spec.kind in freeing:
                    found = (name, call, spec.kind)
                    break
            if found:
                break
        if found is None:
            continue
        name, call, kind = found
        inner = freeing[kind]
        checker.report(
            "ADL019", node,
            f"this backward goes through `{name}`, which `{checker.text(call.func)}(...)` on line "
            f"{call.lineno} returned: `{kind}`'s forward pass computes it from a graph that a "
            f"backward inside that pass, `{checker.text(inner)}` on line {inner.lineno}, already freed "
            f"(no `retain_graph=True`); backward() will fail (Trying to backward through the graph a "
            f"second time); compute the inner loss from a `.detach()`ed input, or retain the graph there",
            related=[(call.lineno, checker.col(call.lineno, call.col_offset), 0, f"`{name}` returned here"),
                     (inner.lineno, checker.col(inner.lineno, inner.col_offset), 0,
                      "this backward frees the graph the returned values carry")])
        scope.reported.add(id(node))


def _modules_returning_freed_graphs(checker) -> dict:
    """Same-file module classes whose `forward` returns values with a freed graph,
    -> the freeing backward: a `forward` that backpropagates (freeing) a loss
    computed from its argument, and returns values computed from that argument,
    called by another class's `forward` on the output of one of its layers with
    parameters (`self.vq(self.encoder(x))`), whose result that `forward` returns
    (and so on, up the classes that call such a module).  Computed again only when
    the walk has read more module classes since (a training loop after the classes
    reads them all)."""
    known = (len(checker.modules.module_classes), sum(len(v) for v in checker.modules.module_specs.values()))
    cached = checker.notes.get("ADL019 freeing modules")
    if cached is not None and cached[1] == known:
        return cached[0]
    forwards = {}
    for cls in checker.tree.body:
        if isinstance(cls, ast.ClassDef) and cls.name in checker.modules.module_classes:
            forward = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
            if forward is not None:
                forwards[cls.name] = forward
    # classes whose forward frees the graph of an argument (position without `self`)
    # that its returned values carry: class -> (positions, backward)
    frees_arguments = {}
    for kind, forward in forwards.items():
        if "backward(" not in checker.text(forward) and "autograd.grad(" not in checker.text(forward):
            continue  # most forwards run no backward: no walk
        parameters = [a.arg for a in forward.args.posonlyargs + forward.args.args]
        freed = _backpropagated_parameters(checker, forward)
        returned = _returned_names(forward)
        positions = {p - 1 for p, (parameter, _) in freed.items() if parameter in returned}
        if positions and len(parameters) > 1:
            frees_arguments[kind] = (positions, min((b for _, b in freed.values()), key=lambda b: b.lineno))
    found = {}
    changed = bool(frees_arguments)
    while changed:
        changed = False
        for kind, forward in forwards.items():
            if kind in found:
                continue
            inner = _returns_freed_layer_output(checker, kind, forward, frees_arguments, found)
            if inner is not None:
                found[kind] = inner
                changed = True
    checker.notes["ADL019 freeing modules"] = [found, known]
    return found


def _returned_names(function) -> set:
    """The names the returned values of ``function`` are computed from, through its
    assignments (not through `.detach()` / `.item()`)."""
    depends = _assigned_dependencies(function)
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            for name in _names_not_cut(node.value):
                names |= {name} | depends.get(name, set())
    return names


def _assigned_dependencies(function) -> dict:
    """name -> every name its assigned values are computed from, transitively."""
    depends: dict = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            sources = _names_not_cut(node.value)
            for target in node.targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        depends.setdefault(t.id, set()).update(sources)
    changed = True
    while changed:
        changed = False
        for sources in depends.values():
            more = set().union(*(depends.get(s, set()) for s in sources)) - sources
            if more:
                sources |= more
                changed = True
    return depends


def _returns_freed_layer_output(checker, kind, forward, frees_arguments, found):
    """The freeing backward behind a value ``forward`` (of class ``kind``) returns:
    a layer of `self` whose class frees its argument, called on the output of a layer
    of `self` with parameters, or a layer whose class returns freed values; or None."""
    specs = checker.modules.module_specs.get(kind, {})

    def layer_kind(call):
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            spec = specs.get(func.attr)
            return spec
        return None

    bound_to_layer = {}  # name -> a call of a parameterised layer of self it is bound to
    for node in ast.walk(forward):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            spec = layer_kind(node.value)
            if spec is not None and spec.parameterised:
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        bound_to_layer[t.id] = node.value
    freed_names, inner = set(), None
    for node in ast.walk(forward):
        if not isinstance(node, ast.Assign):
            continue
        for call in ast.walk(node.value):
            spec = layer_kind(call) if isinstance(call, ast.Call) else None
            if spec is None:
                continue
            backward = found.get(spec.kind)
            if backward is None and spec.kind in frees_arguments:
                positions, candidate = frees_arguments[spec.kind]
                for position in positions:
                    argument = call.args[position] if position < len(call.args) else None
                    if isinstance(argument, ast.Name):
                        argument = bound_to_layer.get(argument.id)
                    argument_spec = layer_kind(argument) if isinstance(argument, ast.Call) else None
                    if argument_spec is not None and argument_spec.parameterised:
                        backward = candidate
            if backward is not None:
                freed_names |= {t.id for target in node.targets for t in ast.walk(target) if isinstance(t, ast.Name)}
                inner = backward
    if not freed_names or not (freed_names & _returned_names(forward)):
        return None
    return inner


def _comprehensions_around(checker) -> dict:
    """id of a backward call (`.backward(...)`, `autograd.grad(...)`) in the element of
    a comprehension -> that comprehension (the innermost); computed once per file, only
    when a function backpropagates."""
    cached = checker.notes.get("ADL019 comprehensions")
    if cached is not None:
        return cached[0]
    found = {}
    if "backward(" in checker.source or "grad(" in checker.source:
        for comprehension in ast.walk(checker.tree):
            if not isinstance(comprehension, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
                continue
            elements = [comprehension.key, comprehension.value] if isinstance(comprehension, ast.DictComp) \
                else [comprehension.elt]
            for element in elements:
                for n in ast.walk(element):
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                            and n.func.attr in ("backward", "grad"):
                        found[id(n)] = comprehension
    checker.notes["ADL019 comprehensions"] = [found]
    return found


def _carried_binding(checker, scope, read, start, end, at):
    """A binding (name, seq) in the loop body whose graph the backward at ``at``
    frees, and which the next iteration reads: the body reads ``name`` as it was
    before the loop (so the next iteration reads this binding), and no other
    binding of ``name`` follows it in the body (no `hidden = hidden.detach()`)."""
    values_read = {id(v) for n, b in read for s, v, _ in scope.bind_values.get(n, ()) if s == b}
    for name, bseq in sorted(read, key=lambda b: b[1]):
        if not start < bseq < at:
            continue
        value = next((v for s, v, _ in scope.bind_values[name] if s == bseq), None)
        for carried in _graph_names(checker, value) if value is not None else ():
            before = scope.binding(carried, bseq)
            body = [s for s in scope.binds.get(carried, ()) if start < s < end]
            if before is None or before[0] >= start or len(body) != 1 \
                    or any(start < d < end for d in scope.detached_in_place.get(carried, ())):
                continue  # (`for s in state: s.detach_()` in the loop cuts what it carries)
            again = body[0]
            again_value = next((v for s, v, _ in scope.bind_values[carried] if s == again), None)
            if again_value is None or not _made_by_parameterised_module(checker, scope, (carried, again)):
                continue
            # the carried value shares the graph that this backward frees: made by the
            # same call (`out, hidden = rnn(x, hidden)`), or computed from what it reads
            if id(again_value) in values_read or any(
                    b in read and _made_by_parameterised_module(checker, scope, b)
                    for b in _bindings_read(checker, scope, again_value, again)):
                return carried, again
    return None


def _bound_before_loop(checker, scope, read, start, end):
    """A binding made before the loop (and not re-bound in it) whose graph, made by
    a module with parameters, the loop's freeing backward goes through: PPO's
    advantages computed from the critic once, then used in every epoch."""
    for name, bseq in sorted(read, key=lambda b: b[1]):
        if bseq >= start or any(start < s < end for s in scope.binds.get(name, ())):
            continue
        if _made_by_parameterised_module(checker, scope, (name, bseq)) or \
                _saved_from_grad_leaf(checker, scope, (name, bseq)):
            return name, bseq
    return None


def _saved_from_grad_leaf(checker, scope, binding) -> bool:
    """The binding's value applies, with gradients on, an op that saves a tensor for its
    backward (the saves table: `torch.tanh` its result, `* 2` its scalar) to a name bound to
    a leaf that requires grad (`nn.Parameter(...)`, `torch.zeros(..., requires_grad=True)`):
    its graph holds what the op saved, which a backward through it frees.  A learned initial
    state, `h0 = torch.tanh(start)` before the loop.  An op that saves nothing (`start +
    1`) leaves nothing to free: silent."""
    from autograd_doctor.lint.optimizer_leaves import makes_leaf_requiring_grad

    name, seq = binding
    entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == seq), None)
    if entry is None or entry[1] is None or entry[2]:
        return False
    value = entry[1]
    if any(isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in _CUTTING
           for sub in ast.walk(value)):
        return False
    for op in ast.walk(value):
        found = checker.saving_op(op) if isinstance(op, (ast.Call, ast.BinOp)) else None
        if found is None or not found[1].get("saved"):
            continue
        for leaf in ast.walk(op):
            if isinstance(leaf, ast.Name) and isinstance(leaf.ctx, ast.Load):
                leaf_binding = scope.binding(leaf.id, seq)
                if leaf_binding is not None and makes_leaf_requiring_grad(checker, leaf_binding[1]):
                    return True
    return False


def _written_buffer(checker, scope, read, start, end, at):
    """A tensor made before the loop (and not re-bound, nor `detach_()`ed, in it) that
    the loop body writes in place (`buf[i] = v`) before this backward, with a value
    made by a module with parameters, and that this backward reads: each write is
    recorded on the tensor, so its graph reaches back to every earlier iteration."""
    for name, bseq in sorted(read, key=lambda b: b[1]):
        if bseq >= start or any(start < s < end for s in scope.binds.get(name, ())) \
                or any(start < s < end for s in scope.detached_in_place.get(name, ())):
            continue
        for write in scope.writes:
            if write.name != name or not start < write.seq < at or not write.grad_on \
                    or write.through_data or write.via or write.rewrite[:1] != ("indexed",) \
                    or not isinstance(write.node, ast.Assign):
                continue
            value = write.node.value
            sources = _bindings_read(checker, scope, value, write.seq)
            if any(start < b[1] < write.seq and _made_by_parameterised_module(checker, scope, b)
                   for b in sources):
                return name, write
    return None


def _same_loss(scope, recv1, seq1, recv2, seq2):
    """The name both backwards are called on, when it holds one value (the same
    binding live at both): `loss.backward()` twice on one forward pass (after an
    `optimizer.step()`, retaining the graph would only move the failure to the
    weights the step changed in place); None otherwise."""
    if isinstance(recv1, ast.Name) and isinstance(recv2, ast.Name) and recv1.id == recv2.id:
        first, second = scope.binding(recv1.id, seq1), scope.binding(recv2.id, seq2)
        if first is not None and second is not None and first[0] == second[0]:
            return recv1.id
    return None


def _bindings_read(checker, scope, node, at) -> set:
    """Every (name, binding seq) whose graph ``node`` (evaluated at seq ``at``) is
    surely part of: followed only through operators, indexing, torch functions,
    tensor methods and calls of known modules (`D(fake)`, `bce(...)` after
    `bce = nn.BCELoss()`); an unknown call (`ada.tune(d_real)`, which may return
    a float) or a graph-cutting one (`.detach()`, `.item()`) ends the path."""
    found, work = set(), [(node, at)]
    while work and len(found) < 200:
        n, when = work.pop()
        for name in _graph_names(checker, n):
            entry = scope.binding(name, when)
            if entry is None or (name, entry[0]) in found:
                continue
            found.add((name, entry[0]))
            if entry[1] is not None and not entry[2]:
                work.append((entry[1], entry[0]))
    return found


def _graph_names(checker, node) -> list[str]:
    names, stack = [], [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Name):
            names.append(n.id)
        elif isinstance(n, ast.BinOp):
            stack += [n.left, n.right]
        elif isinstance(n, ast.UnaryOp):
            stack.append(n.operand)
        elif isinstance(n, ast.Subscript):
            stack.append(n.value)
        elif isinstance(n, (ast.List, ast.Tuple)):
            stack += n.elts
        elif isinstance(n, ast.IfExp):
            stack += [n.body, n.orelse]
        elif isinstance(n, ast.AugAssign):
            stack += [n.target, n.value]  # `loss += loss_t`: the old loss and loss_t's graph
        elif isinstance(n, ast.Call):
            stack += _graph_operands(checker, n)
        elif isinstance(n, (ast.ListComp, ast.GeneratorExp)):
            # `[val for val in outputs[:, idx]]`: the elements of the iterables, not the targets
            targets = {t.id for g in n.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
            names += [m for m in _graph_names(checker, n.elt) if m not in targets]
            stack += [g.iter for g in n.generators]
    return names


def _graph_operands(checker, call) -> list:
    """The operands whose graph ``call``'s result surely carries, or [] if unknown."""
    if any(k.arg == "requires_grad" for k in call.keywords):
        return []
    operands = list(call.args) + [k.value for k in call.keywords]
    func = call.func
    q = checker.qualname(func)
    if q is not None:
        if q.startswith("torch.") and q.rsplit(".", 1)[-1] in N.OVERLOADED_OPS:
            # `torch.min(surr1, surr2)`: a tensor with both graphs (not the `(values,
            # indices)` pair of `torch.min(x, dim)`)
            return operands if checker.overload(call, q) in ("", ":other") else []
        if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _SHAPE_ONLY_FACTORIES:
            return []  # `torch.ones_like(d_real)`: a new constant of its shape, no graph
        return operands if q.startswith("torch.") and N.is_tensor_function(q) else []
    if isinstance(func, ast.Attribute) and func.attr in _NEW_TENSOR_METHODS:
        return []  # `d_real.new_ones(n)`: a new constant, no graph
    if checker.called_module(call) is not None:
        return operands
    if isinstance(func, ast.Name) and func.id in _tensor_helpers(checker):
        return operands  # `get_loss(output, target, t)`: a helper returning a torch op of them
    if isinstance(func, ast.Name):
        # `rnn(inputs, state, params)`: a top-level function of the file returns values
        # computed (not through `.detach()`) from these of its arguments
        helper = _helper_definition(checker, None, call)
        if helper is not None and not helper[0].decorator_list:
            parameters = [a.arg for a in helper[0].args.posonlyargs + helper[0].args.args]
            returned = _returned_names(helper[0])
            return [a for i, a in enumerate(call.args) if i < len(parameters) and parameters[i] in returned]
    if isinstance(func, ast.Attribute) and func.attr in N.tensor_methods() and \
            func.attr not in N.GRAD_CUTTING_METHODS and func.attr not in N.NOT_TENSOR_METHODS:
        return [func.value] + operands
    return []


# Factories that read only the shape, dtype and device of their tensor argument:
# the result is a new constant without the argument's graph.
_SHAPE_ONLY_FACTORIES = frozenset("""zeros_like ones_like empty_like full_like rand_like randn_like
randint_like""".split())
# Tensor methods that make a new constant (`x.new_zeros(n)`, `x.new_tensor(v)` copies without a graph).
_NEW_TENSOR_METHODS = frozenset("new_zeros new_ones new_empty new_full new_tensor".split())


def _tensor_helpers(checker) -> frozenset:
    """Top-level functions of the file, defined once, whose every `return` is a call
    of a torch function (`return F.binary_cross_entropy_with_logits(output[t], y)`):
    their result carries the graph of the arguments they compute it from."""
    cached = checker.notes.get("ADL019 tensor helpers")
    if cached is not None:
        return cached[0]
    defs: dict = {}
    for node in checker.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(node.name, []).append(node)
    found = set()
    for name, nodes in defs.items():
        if len(nodes) != 1:
            continue
        returns = [n.value for n in ast.walk(nodes[0]) if isinstance(n, ast.Return)]
        if returns and all(isinstance(r, ast.Call) and (checker.qualname(r.func) or "").startswith("torch.")
                           and N.is_tensor_function(checker.qualname(r.func)) for r in returns):
            found.add(name)
    checker.notes["ADL019 tensor helpers"] = [frozenset(found)]
    return frozenset(found)


def _made_by_parameterised_module(checker, scope, binding) -> bool:
    """The binding's value calls a module known to have parameters (so its graph
    saved tensors), with gradients on."""
    name, seq = binding
    entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == seq), None)
    if entry is None or entry[1] is None or entry[2]:
        return False
    specs = checker.modules.module_specs.get(scope.owner_class, {})
    frozen = checker.modules.frozen  # `for p in vgg.parameters(): p.requires_grad_(False)`

    def trained(module: str) -> bool:
        spec = specs.get(module[5:]) if module.startswith("self.") else None
        return spec is not None and spec.parameterised and module not in frozen and \
            "class " + spec.kind not in frozen

    module_summaries(checker)
    for sub in ast.walk(entry[1]):
        if isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Call) and \
                isinstance(sub.slice, ast.Constant) and isinstance(sub.slice.value, int):
            # `self.compute(batch)[0]`: a method of this object whose result came from its layers
            modules = checker.summaries.modules_of(sub.value, scope.owner_class, sub.slice.value)
            if modules and any(trained(m) for m in modules):
                return True
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Attribute) and sub.func.attr in ("detach", "item", "tolist", "numpy"):
                return False
            spec = checker.called_module(sub)
            if spec is not None and spec.parameterised and checker.text(sub.func) not in frozen \
                    and "class " + spec.kind not in frozen:
                return True
            modules = checker.summaries.modules_of(sub, scope.owner_class, None)
            if modules and any(trained(m) for m in modules):
                return True
            if isinstance(sub.func, ast.Name) and _computes_from_passed_parameters(checker, scope, sub, seq):
                return True
    return False


_PARAMETER_MAKERS = frozenset({"torch.nn.Parameter", "torch.nn.ParameterList", "torch.nn.parameter.Parameter"})


def _computes_from_passed_parameters(checker, scope, call, at) -> bool:
    """`outputs, state = rnn(inputs, state, params)`: a top-level function of the
    file handed a name that holds `nn.Parameter`s (bound to a list of them, an
    `nn.ParameterList`, or a same-file function returning one, as `params =
    get_params(...)`), whose returned values are computed from that argument."""
    helper = _helper_definition(checker, scope, call)
    if helper is None:
        return False
    function, _ = helper
    parameters = [a.arg for a in function.args.posonlyargs + function.args.args]
    returned = None
    for position, arg in enumerate(call.args):
        if not isinstance(arg, ast.Name) or position >= len(parameters):
            continue
        entry = scope.binding(arg.id, at)
        if entry is None or entry[2] or not _holds_parameters(checker, scope, entry[1], 0):
            continue
        if returned is None:
            returned = _returned_names(function)
        if parameters[position] in returned:
            return True
    return False


def _holds_parameters(checker, scope, value, depth) -> bool:
    """``value`` is a list or tuple of `nn.Parameter(...)`, an `nn.ParameterList`,
    or a call of a same-file function whose every `return` is one of those."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return bool(value.elts) and all(isinstance(e, ast.Call) and checker.qualname(e.func) in _PARAMETER_MAKERS
                                        for e in value.elts)
    if not isinstance(value, ast.Call):
        return False
    if checker.qualname(value.func) in _PARAMETER_MAKERS:
        return True
    if depth >= 2 or not isinstance(value.func, ast.Name):
        return False
    helper = _helper_definition(checker, scope, value)
    if helper is None:
        return False
    returns = [n.value for n in ast.walk(helper[0]) if isinstance(n, ast.Return)]
    return bool(returns) and all(r is not None and _holds_parameters(checker, scope, r, depth + 1) for r in returns)


# --- a module's state carried across its forward calls (stop 44) -------------------

# methods of an nn.Module (or an optimizer-like use of one) that leave what its
# forward keeps on itself as it is; any other mention of the network in the loop
# (a method of its own, `reset_net(net)`) may reset that state: the check stays silent
_STATE_KEEPING = frozenset({"zero_grad", "train", "eval", "parameters", "named_parameters", "to",
                            "cuda", "cpu", "requires_grad_", "state_dict", "modules", "children",
                            "named_modules", "buffers", "named_buffers"})


def check_module_states(checker, scope) -> None:
    """A same-file module whose forward re-binds `self.<state>` from its previous
    value without `.detach()` (`out, self.hidden = self.lstm(x, self.hidden)`,
    `self.v = self.v + (x - self.v) / tau`), run by a network that a loop calls
    and backpropagates in every iteration with nothing between that could reset the
    state: the next iteration's graph starts at the state the previous backward
    freed."""
    if scope.grad_off or scope.function_node is None or not scope.backward_receivers:
        return
    states = _module_states(checker)
    if not states:
        return
    function = scope.function_node
    loops = [n for n in ast.walk(function) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    for seq, node, recv in scope.backward_receivers:
        if id(node) in scope.reported or not _frees_graph(node):
            continue
        around = [lp for lp in loops if lp.lineno < node.lineno <= (lp.end_lineno or lp.lineno)]
        if not around:
            continue
        loop = max(around, key=lambda lp: lp.lineno)
        found = _stateful_network_call(checker, scope, recv, seq, loop, states)
        if found is None:
            continue
        call, state_class, attr, assign = found
        network = checker.text(call.func)
        checker.report(
            "ADL019", node,
            f"`{network}` runs `{state_class}`, whose forward keeps `self.{attr}` (line {assign.lineno}) "
            f"for its next call without `.detach()`: the next iteration's graph starts at the state "
            f"this backward frees (no `retain_graph=True`), so the second backward fails (Trying to "
            f"backward through the graph a second time); detach (or reset) `{attr}` between the "
            f"iterations",
            related=[(assign.lineno, checker.col(assign.lineno, assign.col_offset), 0,
                      f"`self.{attr}` carried into the next call here"),
                     (call.lineno, checker.col(call.lineno, call.col_offset), 0,
                      "the network called in every iteration")])
        scope.reported.add(id(node))


def _stateful_network_call(checker, scope, recv, seq, loop, states):
    """The call of a network in ``loop`` that this backward reads, whose network runs
    a stateful class, with nothing in the loop that could reset the state."""
    start, end = loop.lineno, loop.end_lineno or loop.lineno
    for name, bseq in _bindings_read(checker, scope, recv, seq) | {("", -1)}:
        if name:
            entry = next((e for e in scope.bind_values.get(name, ()) if e[0] == bseq), None)
            if entry is None or entry[1] is None or entry[2]:
                continue
            value = entry[1]
        else:
            value = recv
        if not start <= getattr(value, "lineno", 0) <= end:
            continue
        for call in _uncut_calls(value):
            classes = _network_classes(checker, scope, call.func, start)
            if not classes:
                continue
            held = _classes_run(checker, classes)
            for cls in sorted(held):
                for attr, (assign, resetters) in sorted(states.get(cls, {}).items()):
                    if _reported_by_adl017(checker, assign, resetters):
                        return None  # ADL017 reports the same state where it is kept
                    if _forwards_call(checker, held, resetters) or \
                            not _loop_keeps_state(loop, call.func, checker, resetters):
                        continue
                    return call, cls, attr, assign
    return None


def _reported_by_adl017(checker, assign, resetters) -> bool:
    """ADL017 reports a state re-bound from itself with a layer's graph at the
    assignment, when nothing but `__init__` binds it elsewhere: one finding per bug."""
    return resetters <= {"__init__"} and any(
        stmt is assign for stmt, *_ in checker.notes.get("ADL017 carried", ()))


def _uncut_calls(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call):
            if isinstance(n.func, ast.Attribute) and n.func.attr in _CUTTING:
                continue
            yield n
        stack.extend(ast.iter_child_nodes(n))


def _network_classes(checker, scope, func, loop_start) -> set:
    """Same-file module classes that the network ``func`` names is built of: a name
    bound once before the loop to a constructor call (also an `nn.Sequential` of
    them), a parameter every call fills with one (argument_modules.py), or
    `self.<attr>` holding a same-file module."""
    module_classes = checker.modules.module_classes
    ctor = None
    if isinstance(func, ast.Name):
        binds = scope.bind_values.get(func.id, ())
        params = checker.file.module_parameters.get((scope.owner_class, scope.name), {})
        if func.id in params and len(binds) <= 1:
            ctor = params[func.id]
        elif len(binds) == 1 and binds[0][1] is not None and getattr(binds[0][1], "lineno", loop_start) < loop_start:
            ctor = binds[0][1]
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        spec = checker.modules.module_specs.get(scope.owner_class, {}).get(func.attr)
        if spec is not None and spec.kind in module_classes:
            return {spec.kind}
        return set()
    if not isinstance(ctor, ast.Call):
        return set()
    return {n.func.id for n in ast.walk(ctor) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name) and n.func.id in module_classes}


def _classes_run(checker, classes) -> set:
    """``classes`` and the same-file module classes their forwards call (through
    `self.<attr>` built in `__init__`, also inside an `nn.Sequential`), outside any
    `if`."""
    nodes = checker.modules.module_class_nodes
    done, work = set(), list(classes)
    while work:
        cls = work.pop()
        if cls in done or cls not in nodes:
            continue
        done.add(cls)
        node = nodes[cls]
        init = _method(node, "__init__")
        forward = _method(node, "forward")
        if init is None or forward is None:
            continue
        called = {c.func.attr for c in _calls_outside_ifs(forward)
                  if isinstance(c.func, ast.Attribute) and isinstance(c.func.value, ast.Name)
                  and c.func.value.id == "self"}
        for stmt in ast.walk(init):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute) \
                    and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self" \
                    and stmt.targets[0].attr in called and isinstance(stmt.value, ast.Call):
                work += [n.func.id for n in ast.walk(stmt.value) if isinstance(n, ast.Call)
                         and isinstance(n.func, ast.Name) and n.func.id in nodes]
    return done


def _method(cls, name):
    return next((b for b in cls.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef)) and b.name == name), None)


def _calls_outside_ifs(function):
    stack = list(function.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.If, ast.IfExp, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Call):
            yield n
        stack.extend(ast.iter_child_nodes(n))


def _forwards_call(checker, classes, names) -> bool:
    """A forward of ``classes`` calls one of ``names`` (a method that may reset the state)."""
    nodes = checker.modules.module_class_nodes
    for cls in classes:
        forward = _method(nodes[cls], "forward") if cls in nodes else None
        if forward is not None and any(_called_name(c) in names for c in ast.walk(forward) if isinstance(c, ast.Call)):
            return True
    return False


def _called_name(call):
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def _loop_keeps_state(loop, func, checker, resetters) -> bool:
    """The loop mentions the network only to call it (or through a method in
    ``_STATE_KEEPING``), and calls nothing named like a method that may reset the state."""
    text = checker.text(func)
    parents = {}
    for n in ast.walk(loop):
        for c in ast.iter_child_nodes(n):
            parents[id(c)] = n
    for n in ast.walk(loop):
        if isinstance(n, ast.Call) and _called_name(n) in resetters:
            return False
        if isinstance(n, (ast.Name, ast.Attribute)) and checker.text(n) == text:
            parent = parents.get(id(n))
            if isinstance(parent, ast.Call) and parent.func is n:
                continue
            if isinstance(parent, ast.Attribute) and parent.attr in _STATE_KEEPING:
                grand = parents.get(id(parent))
                if isinstance(grand, ast.Call) and grand.func is parent:
                    continue
            return False
    return True


def _module_states(checker) -> dict:
    """class -> {attr: (the assignment that carries it, names of functions that may
    reset it)} for same-file module classes whose `forward` re-binds `self.<attr>`
    from its own previous value (not through `.detach()`, `.data`, `.item()`), with
    a graph: the re-binding calls a layer of the class with parameters, or reads the
    forward's input and every construction of the class follows a layer with
    parameters in an `nn.Sequential`.  Every other binding of `self.<attr>` in the
    forward is a first value under `if self.<attr> is None:`; the forward has no
    `no_grad` region."""
    found = checker.notes.get("ADL019 module states")
    if found is not None:
        return found
    found = checker.notes["ADL019 module states"] = {}
    if not checker.file.trains:
        return found
    nodes = checker.modules.module_class_nodes
    for cls, node in nodes.items():
        forward = _method(node, "forward")
        if forward is None or forward.decorator_list or "no_grad" in checker.text(forward) \
                or "inference_mode" in checker.text(forward):
            continue
        inputs = {a.arg for a in forward.args.args[1:] + forward.args.posonlyargs + forward.args.kwonlyargs}
        per_attr = {}
        _state_assignments(forward.body, False, per_attr)
        for attr, assigns in per_attr.items():
            carrying = [a for a, init in assigns if not init and _reads_self_attr(a.value, attr)]
            others = [a for a, init in assigns if not init and not _reads_self_attr(a.value, attr)]
            if not carrying or others or not all(_plain_ops(checker, cls, a.value) for a in carrying):
                continue  # (`self.h = repackage(self.h)`, `self.h = self.h.detach()`: cut, or unknown)
            assign = carrying[0]
            if not any(_has_graph(checker, cls, a.value, inputs) for a in carrying):
                continue
            found.setdefault(cls, {})[attr] = (assign, _resetters(checker, attr, forward))
    return found


def _state_assignments(body, in_init, per_attr) -> None:
    """Assignments to `self.<attr>` in ``body`` -> per_attr[attr] = [(assign, under an
    `if self.<attr> is None:`)], an assignment under any other `if` counts as
    `(assign, False)` and a non-reading one (it makes the check stay silent)."""
    for stmt in body:
        if isinstance(stmt, ast.If):
            none_test = _is_none_test(stmt.test)
            for s in stmt.body:
                _state_assignments([s], none_test, per_attr) if none_test else _state_assignments(
                    [s], False, _Poisoned(per_attr))
            _state_assignments(stmt.orelse, False, _Poisoned(per_attr))
            continue
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
            _state_assignments(stmt.body, in_init, per_attr)
            _state_assignments(getattr(stmt, "orelse", []), in_init, per_attr)
            continue
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        if isinstance(stmt, ast.AugAssign):
                            per_attr.setdefault(t.attr, []).append((stmt, True if in_init else False))
                        else:
                            per_attr.setdefault(t.attr, []).append((stmt, in_init))
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, stmt.orelse, stmt.finalbody, *[h.body for h in stmt.handlers]):
                _state_assignments(part, False, _Poisoned(per_attr))


class _Poisoned(dict):
    """Assignments under an `if` (not a first value) or a `try`: recorded as not
    reading the state, so the attribute is left alone."""

    def __init__(self, target):
        super().__init__()
        self.target = target

    def setdefault(self, key, default=None):
        return _PoisonList(self.target.setdefault(key, []))


class _PoisonList:
    def __init__(self, target):
        self.target = target

    def append(self, item):
        stmt, _ = item
        self.target.append((ast.Assign(targets=[], value=ast.Constant(None), lineno=stmt.lineno,
                                       col_offset=stmt.col_offset), False))


def _is_none_test(test) -> bool:
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is) \
        and isinstance(test.left, ast.Attribute) and isinstance(test.left.value, ast.Name) \
        and test.left.value.id == "self" and isinstance(test.comparators[0], ast.Constant) \
        and test.comparators[0].value is None


def _reads_self_attr(value, attr) -> bool:
    stack = [value]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CUTTING:
            continue
        if isinstance(n, ast.Attribute) and n.attr == "data":
            continue
        if isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.value, ast.Name) and n.value.id == "self":
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


def _plain_ops(checker, cls, value) -> bool:
    """``value`` is computed only by operators, torch functions, tensor methods that
    keep the graph and layers of ``cls``: no `.detach()`, `.data`, `.item()`, no
    comprehension, no call of a function or method the linter cannot see through."""
    specs = checker.modules.module_specs.get(cls, {})
    for n in ast.walk(value):
        if isinstance(n, (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.Lambda)):
            return False
        if isinstance(n, ast.Attribute) and n.attr == "data":
            return False
        if not isinstance(n, ast.Call):
            continue
        func = n.func
        if isinstance(func, ast.Attribute) and func.attr in _CUTTING | {"detach_", "clone"}:
            return False  # (`self.h.clone().detach()` reads as a cut, `clone()` alone is kept off too)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            if func.attr not in specs:
                return False  # a method of the class
            continue
        qualname = checker.qualname(func) or ""
        if qualname.startswith("torch.") or (isinstance(func, ast.Attribute) and not isinstance(func.value, ast.Name)):
            continue  # a torch function, a method of a computed tensor (`(x - v).sigmoid()`)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and \
                func.value.id not in ("np", "numpy", "math", "copy", "random"):
            continue  # a tensor method of a local (`spike.mul(v)`)
        return False
    return True


def _has_graph(checker, cls, value, inputs) -> bool:
    """The carried value is made with a graph: it calls a layer of ``cls`` with
    parameters (not frozen), or reads the forward's input where every construction
    of ``cls`` in the file follows a layer with parameters in an `nn.Sequential`."""
    specs = checker.modules.module_specs.get(cls, {})
    frozen = checker.modules.frozen
    for n in _uncut_calls(value):
        if isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
            spec = specs.get(n.func.attr)
            if spec is not None and spec.parameterised and f"self.{n.func.attr}" not in frozen \
                    and "class " + spec.kind not in frozen:
                return True
    reads_input = any(isinstance(n, ast.Name) and n.id in inputs for n in ast.walk(value))
    if not reads_input:
        return False
    constructions = [n for n in ast.walk(checker.tree) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Name) and n.func.id == cls]
    if not constructions:
        return False
    sequentials = [n for n in ast.walk(checker.tree) if isinstance(n, ast.Call)
                   and checker.qualname(n.func) in ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")]
    for construction in constructions:
        holder = next((s for s in sequentials if any(a is construction for a in s.args)), None)
        if holder is None:
            return False
        position = next(i for i, a in enumerate(holder.args) if a is construction)
        if not any(checker.modules.module_spec(a) is not None and checker.modules.module_spec(a).parameterised
                   for a in holder.args[:position]):
            return False
    return True


def _resetters(checker, attr, forward) -> frozenset:
    """Names of the file's functions and methods that may reset the state: those
    (other than ``forward``) that bind or write any `<x>.<attr>`, and those that call
    one of them, by name."""
    functions = [n for n in ast.walk(checker.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n is not forward]
    names = set()
    for f in functions:
        for n in ast.walk(f):
            if isinstance(n, ast.Attribute) and n.attr == attr and isinstance(n.ctx, (ast.Store, ast.Del)):
                names.add(f.name)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.endswith("_") \
                    and isinstance(n.func.value, ast.Attribute) and n.func.value.attr == attr:
                names.add(f.name)  # `self.h.detach_()`, `self.h.zero_()`
    for _ in range(4):
        more = {f.name for f in functions if f.name not in names and any(
            isinstance(c, ast.Call) and _called_name(c) in names for c in ast.walk(f))}
        if not more:
            break
        names |= more
    return frozenset(names)
