"""Per-function summaries: what a same-file function or method gives back.

After the walk leaves a function, its ``return`` values are summarised, one
entry per position of a returned tuple (or one for a single value):

* ``"graph"``: the value carries a graph whatever the arguments (it is computed
  from a parameterised module, a graph tensor or a leaf that requires grad);
* ``"args"``: it carries a graph when the call's arguments do (a forward's or a
  helper's tensor arguments flow into it);
* ``"through"``: a top-level function's parameter, rearranged by views and
  reshapes only (`return t.reshape(n, -1)`): a tensor, with its graph, when the
  argument is one;
* ``"views"``: several views of one graph tensor (`x.chunk(3, -1)`), each a
  multi-view output that autograd forbids writing in place;
* ``"tensor"``: a tensor, with no evidence of a graph (`return torch.matmul(a, b)`
  of untyped arguments): the caller's name is a tensor, nothing more;
* ``"dict"``: a dict literal, bound to a name, holding a graph tensor (`outputs =
  {"topview": self.decoder(f)}`): no tensor, but ADL003 follows it to the modules
  its values were computed from;
* ``None``: nothing is known.

A position's entry holds only when every ``return`` of the function agrees
(positive evidence on every path); returns of different lengths give no
summary.  For ADL003 each position also lists the modules the value was
computed from (names of `self.<layer>` and callables), from the function's own
bindings, so that `model_loss, actor_loss = self.loss(batch)` in a caller is
known to go through the layers `loss()` called.

Two more per-function facts (applied at each call with the caller's facts):
the parameters a function writes in place on every path (``parameter_writes``:
the call writes the argument, ADL001), and for a method, the optimizers held
on `self` it steps and the parameters whose values reach its backward passes
(``training_steps``: a step, and a backward through those arguments, at the
call; ADL003).

Callers see a summary only for calls they can resolve: `self.method(...)` in
a method of the same class, `function(...)` of a top-level function of the
file.  Methods are walked in source order; a call of a method defined later in
the class has no summary at that point (ADL003 reads the module lists once the
whole file is read, so order does not matter there).
"""

from __future__ import annotations

import ast

from autograd_doctor.lint.walk import walk_nodes
from autograd_doctor.lint.names import self_attribute

_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Match)
if hasattr(ast, "TryStar"):
    _COMPOUND += (ast.TryStar,)


# what a view of a name is written as: `m[0]`, `m.T`, `m.transpose(0, 1)`
_VIEW_EXPRESSIONS = (ast.Subscript, ast.Attribute, ast.Call)


class FunctionSummaries:
    def __init__(self):
        # (class or None, function name) -> tuple of per-position entries, and a
        # flag: True when the function returns a tuple (positions), False for one value
        self.returns: dict[tuple, tuple[tuple, bool]] = {}
        self.classes: set[str] = set()  # the classes of the methods in ``returns``
        # (class or None, function name) -> per-position frozensets of module names
        self.modules: dict[tuple, tuple] = {}
        # (class or None, function name) -> {call position: (parameter, line)} of the
        # parameters the function writes in place on every path (record_parameter_writes)
        self.parameter_writes: dict[tuple, dict] = {}
        # (class or None, function name) -> {call position: (parameter, op key, how)} of the
        # parameters the function hands to an op that keeps them, on every path
        # (record_parameter_saves)
        self.parameter_saves: dict[tuple, dict] = {}
        # (class, method) -> ((step node, optimizer text), ...), frozenset of call positions
        # of the parameters that reach a backward pass (record_training_steps)
        self.training_steps: dict[tuple, tuple] = {}
        # (class or None, function name) -> the call position of the parameter that every
        # `return` gives back a view of (`return m.transpose(-2, -1)`; record_parameter_views)
        self.parameter_views: dict[tuple, int] = {}
        # (class, method) -> ((backward call, attributes of `self` it goes through), ...):
        # `self.loss_G.backward()` on a loss computed from `self.fake_B`, which another
        # method set (record_training_steps; ADL003)
        self.attribute_backwards: dict[tuple, tuple] = {}
        # (class, method) -> {call position or keyword: (parameter, attribute, line)} of the
        # parameters the method adds into an attribute of `self` on every path
        # (`self.sum += val * n`; record_parameter_accumulations, ADL023)
        self.parameter_accumulations: dict[tuple, dict] = {}
        # class -> (the names of its same-file base classes, the methods it defines):
        # `self.take_optimisation_step(...)` in a subclass is the base class's method
        # unless the subclass defines its own (training_steps_of)
        self.class_shapes: dict[str, tuple] = {}
        # (class or None, function name) -> ({return position: ("op", key) or ("param", call
        # position, parameter)}, is_tuple, positional parameter count or None): the returned
        # names an op kept as its output (`h = torch.relu(...); return h`), or the result of
        # calling a parameter (`node_vecs = W_n(node_vecs); return node_vecs, messages`), which
        # the module the caller passes may keep (record_output_saves; ADL001)
        self.output_saves: dict[tuple, tuple] = {}

    def record(self, key, summaries: list) -> None:
        """Combine the summaries of each `return` (``summaries``: one ``(entries,
        is_tuple)`` per return) into the function's."""
        if not summaries:
            return
        shapes = {(len(entries), is_tuple) for entries, is_tuple in summaries}
        if len(shapes) != 1:
            return
        (_, is_tuple), = shapes
        combined = tuple(
            entries[0] if len(set(entries)) == 1 else None
            for entries in zip(*(e for e, _ in summaries)))
        if any(combined):
            self.returns[key] = (combined, is_tuple)
            if key[0] is not None:
                self.classes.add(key[0])

    def record_modules(self, key, per_return: list) -> None:
        """The modules each position was computed from, on every `return` (ADL003)."""
        if not per_return or len({len(m) for m in per_return}) != 1:
            return
        common = tuple(frozenset.intersection(*position) for position in zip(*per_return))
        if any(common):
            self.modules[key] = common

    def record_parameter_writes(self, key, node, scope, method: bool) -> None:
        """The parameters ``node`` (a function just walked, ``scope`` its facts)
        writes in place while they still hold the caller's value: a write with
        gradients on (not through `.data`), before any re-binding of the name, in a
        statement of the function's own body outside any `if`, loop, `with` or `try`
        (so it runs on every call), or inside an `if` of that body whose test reads
        only the object's configuration, never what the call passes (`left =
        self.left; if left is not None: x[x < left] = left`: the write runs on every
        call of an instance so configured, as a module's forward writing its input
        under such an `if` counts, _configured_lines).  `def subtract_mean(batch):
        batch -= mean`."""
        args = node.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        if method:
            if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                   for d in node.decorator_list):
                return
            positional = positional[1:]
        names = set(positional) | {a.arg for a in args.kwonlyargs}
        untyped_writes = scope.parameter_aug_writes + scope.parameter_method_writes + scope.parameter_index_writes
        if not any(w.name in names for w in scope.writes) and not untyped_writes:
            return  # most functions write none of their parameters: no walk
        unconditional = _unconditional_lines(node) + _configured_lines(node)
        found = {}
        for position, name in enumerate(positional + [a.arg for a in args.kwonlyargs]):
            binds = scope.binds.get(name)
            if not binds:
                continue
            start = binds[0]
            writes = [(w.seq, w.node, False) for w in scope.writes
                      if w.name == name and w.grad_on and not w.through_data]
            # an untyped parameter written in place (`p -= t`, `p.div_(t)`, `p[m] = 0`):
            # a write of the caller's argument where the caller passes a tensor
            writes += [(seq, stmt, True) for seq, written, stmt in untyped_writes if written == name]
            for seq, stmt, untyped in sorted(writes, key=lambda t: t[0]):
                if _within(stmt, unconditional) and not scope.bound_between(name, start, seq):
                    found[position if position < len(positional) else name] = (name, stmt.lineno, untyped)
                    break
        if found:
            self.parameter_writes[key] = found

    def record_parameter_saves(self, key, node, scope, method: bool) -> None:
        """The parameters ``node`` passes, while they still hold the caller's value,
        to an op that keeps that input for backward, with gradients on, in a statement
        of its own body outside any `if`, loop, `with` or `try`: `def logadd(x0, x1,
        x2): m = torch.max(torch.max(x0, x1), x2)` keeps `x0`, `x1` and `x2`.  Only
        parameters the walk did not know to be tensors (the others' saves are facts
        of the function itself)."""
        if not scope.parameter_saves:
            return
        positional = _caller_positional(node, method)
        if positional is None:
            return
        order = positional + [a.arg for a in node.args.kwonlyargs]
        unconditional = _unconditional_nodes(node)
        found = {}
        for seq, name, op_key, how, call in scope.parameter_saves:
            if name not in order or id(call) not in unconditional:
                continue
            binds = scope.binds.get(name)
            if not binds or scope.bound_between(name, binds[0], seq):
                continue
            position = order.index(name)
            found.setdefault(position if position < len(positional) else name, (name, op_key, how))
        if found:
            self.parameter_saves[key] = found

    def record_output_saves(self, key, node, scope, method: bool) -> None:
        """What ``node`` returns at each position when every `return` gives back, there,
        the same name, all of whose bindings are plain assignments among the
        statements of the function's own body (outside any `if`, loop, `with` or
        `try`), the last one before every `return`: bound to the result of an op that
        keeps its output, with a graph (an `"op"` entry: the caller's name is that
        saved output), or to the result of calling one of its positional parameters
        (a `"param"` entry: the caller's argument decides, when it is a module whose
        output layer keeps its output)."""
        returns = [value for _, value in scope.return_values]
        if not returns or not any(v.__class__ is ast.Name or (v.__class__ is ast.Tuple and any(
                e.__class__ is ast.Name for e in v.elts)) for v in returns):
            return  # most functions return a call or an expression: nothing to read
        shapes = {len(v.elts) if isinstance(v, ast.Tuple) else None for v in returns}
        if len(shapes) != 1:
            return
        width = shapes.pop()
        positional = _caller_positional(node, method)
        if positional is None:
            return
        # a call that unpacks `*args` into the parameters fills them exactly only when
        # none has a default and none collects the rest
        exact = None if (node.args.defaults or node.args.vararg) else len(positional)
        bindings = {}  # the own body's top-level `name = value` statements
        for stmt in node.body:
            if stmt.__class__ is ast.Assign and len(stmt.targets) == 1 and stmt.targets[0].__class__ is ast.Name:
                bindings.setdefault(stmt.targets[0].id, []).append(stmt)
            elif stmt.__class__ is ast.For:
                for name, assign in _layer_loop_bindings(stmt, scope).items():
                    bindings.setdefault(name, []).append(assign)
        found = {}
        for position in range(width if width is not None else 1):
            values = [v.elts[position] if width is not None else v for v in returns]
            if any(v.__class__ is not ast.Name for v in values) or len({v.id for v in values}) != 1:
                continue
            name = values[0].id
            assigns = bindings.get(name, [])
            # every binding of the name is one of those statements (`node_vecs =
            # torch.cat(...); node_vecs = W_n(node_vecs)`): the last is what every
            # `return` after it gives back
            # a parameter re-bound by those statements (`x = self.act(x)`) has one
            # binding more, its own, which they all come after
            own = 1 if name in positional else 0
            if not assigns or len(scope.binds.get(name, ())) != len(assigns) + own:
                continue
            last = assigns[-1]
            if any(v.lineno <= last.lineno for v in values):
                continue
            value = last.value
            entry = None
            for seq, op_key, how, saved in scope.saves.get(name, ()):
                if how == "output" and saved is value and seq in scope.graph_saves:
                    # a graph whatever the caller passes: from the function's own
                    # parameterised modules or graph tensors, not its parameters'
                    entry = ("op", op_key, seq not in scope.provisional_saves and seq not in scope.untyped_saves)
            if entry is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
                    and value.func.id in positional and len(scope.binds.get(value.func.id, ())) <= 1:
                entry = ("param", positional.index(value.func.id), value.func.id)
            if entry is not None:
                found[position] = entry
        if found:
            self.output_saves[key] = (found, width is not None, exact)

    def output_saves_of(self, call, owner_class: str | None, key=None) -> tuple | None:
        """``({position: entry}, is_tuple)`` for a call of a function that returns a
        saved output (record_output_saves), its `"param"` entries resolved to the
        argument the call passes (``("param", argument)``; dropped when the call's
        arguments cannot be matched to the parameters).  ``key``: the function, when
        the caller knows it and ``call`` does not name it (a call of a module of a
        same-file class runs that class's `forward`)."""
        key = key if key is not None else self.key_of(call, owner_class)
        recorded = self.output_saves.get(key) if key is not None else None
        if recorded is None:
            return None
        found, is_tuple, exact = recorded
        out = {}
        stars = [i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)]
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        for position, entry in found.items():
            if entry[0] == "op":
                out[position] = entry
                continue
            _, index, name = entry
            argument = None
            if not stars:
                argument = call.args[index] if index < len(call.args) else keywords.get(name)
            elif len(stars) == 1 and exact is not None and not call.keywords:
                # `self.mpn(*tensors, depth, W_m, W_n)`: the arguments after the one
                # unpacked fill the last parameters (the call raises otherwise)
                after = len(call.args) - stars[0] - 1
                from_end = exact - index
                if 1 <= from_end <= after:
                    argument = call.args[len(call.args) - from_end]
            if argument is not None:
                out[position] = ("param", argument)
        return (out, is_tuple) if out else None

    def record_parameter_accumulations(self, key, node, scope) -> None:
        """The parameters a method (``key``: class and name; ``node`` just walked,
        ``scope`` its facts) adds, while they still hold the caller's value, into an
        attribute of `self`, in a statement of its own body outside any `if`, loop,
        `with` or `try`: `self.sum += val * n`, `self.total = self.total + value`,
        `self.sum += average(val)` of a top-level function of the file that gives
        back what its arguments carry, `self.losses.append(loss)`.  An object whose method does that, called
        with a loss on every iteration of a loop, keeps the graph of every iteration
        in its attribute (ADL023)."""
        args = node.args
        if len(args.args) + len(args.posonlyargs) < 2 and not args.kwonlyargs:
            return  # `self` only: nothing handed in to keep
        if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list):
            return
        found = _self_accumulations(node, self._carried_names,
                                    lambda name: len(scope.binds.get(name, ())) == 1)  # never re-bound
        if found:
            self.parameter_accumulations[key] = found

    def _carried_names(self, value) -> set:
        """Names whose value (and graph) ``value`` carries: arithmetic operands, and the
        arguments of a call of a top-level function of the file whose single return
        carries its arguments' graph (`allreduce_average(val)`).  `.item()`,
        `float(...)` and other calls carry none."""
        if isinstance(value, ast.Name):
            return {value.id}
        if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            return self._carried_names(value.left) | self._carried_names(value.right)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _COPIES \
                and len(value.args) == 1 and not value.keywords:
            return self._carried_names(value.args[0])  # `dict(row)`: a shallow copy holds the same values
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.keywords:
            summary = self.returns.get((None, value.func.id))
            if summary is not None and not summary[1] and summary[0][0] in ("args", "through"):
                return set().union(*(self._carried_names(a) for a in value.args)) if value.args else set()
        return set()

    def accumulated_arguments(self, call, class_name: str, found: dict | None = None) -> list:
        """``(argument, (parameter, attribute, line))`` for each argument of ``call``, a
        call of a method of ``class_name``, that the method adds into an attribute of
        `self` (``found``: the method's facts, for a class of another file)."""
        if found is None:
            found = self.parameter_accumulations.get((class_name, call.func.attr), {})
        arguments = []
        for where, fact in found.items():
            if isinstance(where, int) and where < len(call.args):
                if not isinstance(call.args[where], ast.Starred):
                    arguments.append((call.args[where], fact))
                continue
            arguments.extend((k.value, fact) for k in call.keywords if k.arg == fact[0])
        return arguments

    def record_parameter_views(self, key, node, scope, view_base, method: bool) -> None:
        """The parameter that every `return` of ``node`` gives back a view of, by basic
        indexing and view methods, never re-bound (`def swap(m): return m.transpose(0,
        1)`, `def first_row(self, t): return t[:1]`): the call's result shares memory
        with that argument (ADL010).  ``view_base``: the checker's, which names the
        tensor an expression views."""
        base = None
        for _, value in scope.return_values:
            if value.__class__ not in _VIEW_EXPRESSIONS:
                return
            viewed = view_base(value, shares_version=True)
            if viewed is None or (base is not None and viewed != base):
                return
            base = viewed
        if base not in scope.parameters:
            return
        positional = [a.arg for a in node.args.posonlyargs + node.args.args]
        if method and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list):
            positional = positional[1:]
        if base not in positional or len(scope.binds.get(base, ())) > 1:
            return  # not a parameter, or re-bound: no longer the caller's tensor
        self.parameter_views[key] = positional.index(base)

    def viewed_argument(self, call, owner_class: str | None):
        """The argument of ``call`` that the called function returns a view of, or None."""
        key = self.key_of(call, owner_class)
        position = self.parameter_views.get(key) if key is not None else None
        if position is None and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            position = self.parameter_views.get((call.func.value.id, call.func.attr))  # `Matrices.transpose(v)`
        if position is None or position >= len(call.args) or isinstance(call.args[position], ast.Starred) \
                or any(isinstance(a, ast.Starred) for a in call.args[:position]):
            return None
        return call.args[position]

    def parameter_saves_of(self, call, owner_class: str | None):
        """``[(argument, parameter, op key, how)]`` for a call of a function that keeps
        some of its parameters for backward (record_parameter_saves)."""
        key = self.key_of(call, owner_class)
        saves = self.parameter_saves.get(key) if key is not None else None
        if not saves or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return None
        keywords = {k.arg: k.value for k in call.keywords}
        out = []
        for where, (name, op_key, how) in saves.items():
            arg = call.args[where] if isinstance(where, int) and where < len(call.args) else keywords.get(name)
            if arg is not None:
                out.append((arg, name, op_key, how))
        return out or None

    def record_training_steps(self, key, node, scope, method: bool) -> None:
        """For a method (ADL003): the optimizers held on `self` it steps, each with its
        `step()` node, and the call positions of the parameters whose values reach one
        of its backward passes (`def dis_update(self, preds): loss = f(preds);
        loss.backward()`).  An optimizer the function receives as a parameter counts
        too, as the argument its call passes there (`def update_params(optim, network,
        loss): ...; loss.backward(); optim.step()`, a top-level helper or a method);
        a top-level function is summarised only when it steps such a parameter.  Only
        steps and backward passes in the function's own body outside any `if`, loop,
        `with` or `try`."""
        if not (scope.steps or scope.backward_receivers):
            return
        unconditional = _unconditional_nodes(node)
        positional = [a.arg for a in node.args.posonlyargs + node.args.args][1 if method else 0:]
        keyword_only = {a.arg for a in node.args.kwonlyargs}
        steps = [(step, text) for _, step, text in scope.steps
                 if id(step) in unconditional and method and text.startswith("self.")]
        # `optim.step()` of a parameter: (step node, (position or None, name)), the
        # argument's text is the optimizer at each call (training_steps_of)
        steps += [(step, (positional.index(text) if text in positional else None, text))
                  for _, step, text in scope.steps
                  if id(step) in unconditional and (text in positional or text in keyword_only)
                  and _still_parameter(scope, text, _step_seq(scope, step))]
        if not method and not any(isinstance(optimizer, tuple) for _, optimizer in steps):
            return
        reached = set()
        names = set(positional) | keyword_only
        for seq, call, recv in scope.backward_receivers:
            if id(call) in unconditional:
                reached |= _parameters_reaching(scope, node, recv, seq, names)
        # each parameter by its position and by its name: `self.enforce_encoding(s2,
        # encoded1=hidden)` passes `encoded1` by keyword (r251)
        positions = frozenset(i for i, name in enumerate(positional) if name in reached) | \
            frozenset(name for name in reached if name in positional or name in keyword_only)
        backwards = tuple((call, *attributes) for seq, call, recv in scope.backward_receivers
                          if method and id(call) in unconditional
                          for attributes in [_attributes_reaching(scope, node, recv, seq)] if attributes[1])
        if steps or positions or backwards:
            self.training_steps[key] = (tuple(steps), positions)
        if backwards:
            self.attribute_backwards[key] = backwards

    def training_steps_of(self, call, owner_class: str | None):
        """``(steps, arguments)`` of a call of a function with a summary
        (record_training_steps): the function's `(step node, optimizer text)` pairs
        (an optimizer parameter named by the argument the call passes there, a name or
        an attribute) and the argument expressions that reach its backward passes.  A
        method a same-file base class defines, and the calling class does not, is the
        base class's."""
        key = self.key_of(call, owner_class)
        if key is None:
            return None
        entry = self.training_steps.get(key) if key[0] is None else self._inherited(self.training_steps, key)
        if entry is None or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        steps, positions = entry
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        named_steps = []
        for step, optimizer in steps:
            if isinstance(optimizer, tuple):  # a parameter: the argument passed there
                where, name = optimizer
                arg = call.args[where] if where is not None and where < len(call.args) else keywords.get(name)
                if not isinstance(arg, (ast.Name, ast.Attribute)):
                    continue
                optimizer = ast.unparse(arg)
                step = call  # the step of this call's optimizer: reported at the call
            named_steps.append((step, optimizer))
        return tuple(named_steps), [call.args[where] if isinstance(where, int) else keywords[where]
                                    for where in sorted(positions, key=str)
                                    if (isinstance(where, int) and where < len(call.args)) or where in keywords]

    def _inherited(self, table: dict, key):
        """``table[key]`` for ``(class, method)``, or the entry of the same-file base
        class that defines the method when the class does not (first base first)."""
        seen = set()
        work = [key[0]]
        while work:
            cls = work.pop(0)
            if cls in seen:
                continue
            seen.add(cls)
            if (cls, key[1]) in table:
                return table[(cls, key[1])]
            bases, methods = self.class_shapes.get(cls, ((), frozenset()))
            if key[1] in methods:
                return None  # the class defines the method itself, without a summary
            work += list(bases)
        return None

    def attribute_backwards_of(self, call, owner_class: str | None) -> tuple:
        """``((backward call, attributes it does not set, every attribute), ...)`` of a
        call of a same-class method whose backward passes go through attributes of
        `self` (_attributes_reaching)."""
        key = self.key_of(call, owner_class)
        return self.attribute_backwards.get(key, ()) if key is not None and key[0] is not None else ()

    def parameter_writes_of(self, call, owner_class: str | None):
        """``(function name, [(argument, parameter, line, untyped)])`` for a call of a
        function that writes some of its parameters in place: each argument expression
        of the call (positional or keyword) that lands on such a parameter (``untyped``:
        a parameter the function's walk did not know to be a tensor)."""
        key = self.key_of(call, owner_class)
        writes = self.parameter_writes.get(key) if key is not None else None
        if not writes or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords):
            return None
        out = []
        keywords = {k.arg: k.value for k in call.keywords}
        for where, (name, line, untyped) in writes.items():
            arg = call.args[where] if isinstance(where, int) and where < len(call.args) else keywords.get(name)
            if arg is not None:
                out.append((arg, name, line, untyped))
        return (key[1], out) if out else None

    @staticmethod
    def key_of(call, owner_class: str | None):
        """``(class, method)`` for `self.method(...)` inside ``owner_class``,
        ``(None, function)`` for `function(...)`; None for other calls."""
        if not isinstance(call, ast.Call):
            return None
        func = call.func
        if isinstance(func, ast.Name):
            return None, func.id
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "self" and owner_class:
            return owner_class, func.attr
        return None

    def of_call(self, call, owner_class: str | None):
        """``(entries, is_tuple)`` of the function ``call`` calls, or None."""
        key = self.key_of(call, owner_class)
        if key is None and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                and isinstance(call.func.value, ast.Name) and call.func.value.id in self.classes:
            key = (call.func.value.id, call.func.attr)  # `Matrices.mul(a, b)`: a class of the file
        return self.returns.get(key) if key is not None else None

    def modules_of(self, call, owner_class: str | None, position: int | None):
        """The modules the returned value (element ``position`` of a tuple) was
        computed from, or None when unknown; only for positions whose value is
        known to carry a graph (a list built from `action.item()`s that a method
        also returns is computed "from" the actor, but without its graph)."""
        key = self.key_of(call, owner_class)
        entry = self.modules.get(key) if key is not None else None
        returns = self.returns.get(key) if key is not None else None
        if entry is None or returns is None:
            return None
        graphs, kind = returns
        if kind == "split" or kind is False:
            return entry[0] if graphs[0] not in (None, "tensor") and len(entry) == 1 else None
        if position is None or position >= len(entry) or len(graphs) != len(entry):
            return None
        return entry[position] if graphs[position] not in (None, "tensor") else None

    def passes_arguments(self, call, owner_class: str | None, position: int | None) -> bool:
        """The returned value carries its arguments' graph ("args")."""
        key = self.key_of(call, owner_class)
        returns = self.returns.get(key) if key is not None else None
        if returns is None:
            return False
        graphs, kind = returns
        index = 0 if kind in ("split", False) else position
        return index is not None and index < len(graphs) and graphs[index] == "args"


def _parameters_reaching(scope, function, recv, at: int, parameters: set) -> set:
    """The parameters of ``function`` whose values the expression ``recv`` (read at
    ``at``) was computed from, through the function's bindings; a receiver kept on
    `self` (`self.loss.backward()`) is followed to the last `self.loss = ...` before it."""
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
        stored = [n.value for n in ast.walk(function) if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                          and t.value.id == "self" and t.attr == recv.attr for t in n.targets)
                  and n.lineno <= recv.lineno]
        if not stored:
            return set()
        recv = max(stored, key=lambda v: v.lineno)
    found, work, seen = set(), [(recv, at)], set()
    while work and len(seen) < 200:
        node, when = work.pop()
        for name in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}:
            entry = scope.binding(name, when)
            if entry is None or (name, entry[0]) in seen:
                continue
            seen.add((name, entry[0]))
            if entry[1] is None:
                binds = scope.binds.get(name)
                if name in parameters and binds and binds[0] == entry[0]:
                    found.add(name)  # the parameter's own binding: the caller's value
                continue
            work.append((entry[1], entry[0]))
    return found


def _attributes_reaching(scope, function, recv, at: int) -> tuple:
    """The attributes of `self` that the method ``function`` does not set itself and
    whose values the backward receiver ``recv`` (read at ``at``) was computed from,
    through its bindings and the attributes it sets (`self.loss_G = self.loss_G_L1
    + ...`); not through `.detach()`, `.item()` or `.data`.  With them, every
    attribute the backward goes through, also those the method sets (whose graph
    a backward that frees it frees)."""
    assigned = {}
    for n in ast.walk(function):
        if isinstance(n, ast.Assign):
            for t in n.targets:
                for elt in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                    if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == "self":
                        assigned.setdefault(elt.attr, []).append(n.value)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute) \
                and isinstance(n.target.value, ast.Name) and n.target.value.id == "self":
            assigned.setdefault(n.target.attr, []).append(n.value)
    found, work, seen = set(), [(recv, at)], set()
    while work and len(seen) < 200:
        node, when = work.pop()
        names, attributes = _values_read(node)
        for attr in attributes:
            if ("self", attr) in seen:
                continue
            seen.add(("self", attr))
            if attr in assigned:
                work += [(value, when) for value in assigned[attr]]
            else:
                found.add(attr)
        for name in names:
            entry = scope.binding(name, when)
            if entry is None or (name, entry[0]) in seen or entry[1] is None or entry[2]:
                continue
            seen.add((name, entry[0]))
            work.append((entry[1], entry[0]))
    return frozenset(found), frozenset(attr for kind, attr in seen if kind == "self")


def _values_read(node):
    """Names and attributes of `self` read as values in ``node`` (not the layers it
    calls, `self.net(x)`), outside `.detach()`/`.item()`/`.data`."""
    names, attributes, stack = set(), set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Attribute) and func.attr in ("detach", "item", "tolist", "numpy"):
                continue
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                    and func.value.id == "self"):
                stack.append(func)
            stack.extend(n.args)
            stack.extend(k.value for k in n.keywords)
        elif isinstance(n, ast.Attribute):
            if n.attr == "data":
                continue
            if isinstance(n.value, ast.Name) and n.value.id == "self":
                attributes.add(n.attr)
            else:
                stack.append(n.value)
        elif isinstance(n, ast.Name):
            names.add(n.id)
        elif not isinstance(n, (ast.Lambda, ast.Compare, ast.BoolOp)):
            stack.extend(ast.iter_child_nodes(n))
    return names, attributes


# builtins whose result, called on one container, holds the same elements (a shallow copy)
_COPIES = frozenset({"dict", "list", "tuple"})


def class_parameter_accumulations(cls: ast.ClassDef, method: str) -> dict:
    """For a class of another file of the project (read, not walked): the parameters
    its ``method`` adds into (or appends to) an attribute of `self` in a statement of
    its own body outside any `if`, loop, `with` or `try`, as arithmetic operands only,
    and never re-bound in the method; as ``FunctionSummaries.parameter_accumulations``
    records for the file's own classes.  `AverageMeter.update` of a `utils.py`."""
    node = next((b for b in cls.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and b.name == method), None)
    if node is None or any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")
                           for d in node.decorator_list):
        return {}
    found = _self_accumulations(node, _operand_names, lambda name: True)
    if found:
        rebound = {t.id for n in ast.walk(node) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For))
                   for t in ast.walk(n.target if not isinstance(n, ast.Assign) else ast.Tuple(n.targets))
                   if isinstance(t, ast.Name)}
        found = {k: v for k, v in found.items() if v[0] not in rebound}
    return found


def _self_accumulations(method, names_of, kept) -> dict:
    """{call position or keyword: (parameter, attribute, line)} of the parameters of ``method``
    that a statement of its own body adds into an attribute of `self` (``_added_into_self``):
    ``names_of(value)`` gives the names the added value carries, ``kept(name)`` whether the
    parameter still holds what the caller passed."""
    args = method.args
    positional = [a.arg for a in args.posonlyargs + args.args][1:]
    order = positional + [a.arg for a in args.kwonlyargs]
    found = {}
    for stmt in method.body:
        added = _added_into_self(stmt)
        if added is None:
            continue
        attribute, value = added
        for name in names_of(value):
            if name in order and kept(name):
                position = order.index(name)
                found.setdefault(position if position < len(positional) else name, (name, attribute, stmt.lineno))
    return found


def _operand_names(value) -> set:
    """The names that are arithmetic operands of ``value`` (`val * n`)."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        return _operand_names(value.left) | _operand_names(value.right)
    return set()


def _added_into_self(stmt):
    """``(attribute, value)`` for `self.a += value`, `self.a = self.a + value` (or
    `value + self.a`) and `self.a.append(value)`, else None."""
    if isinstance(stmt, ast.Expr):
        call = stmt.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append" \
                and len(call.args) == 1 and not call.keywords:
            attribute = self_attribute(call.func.value)
            return (attribute, call.args[0]) if attribute else None
        return None
    if isinstance(stmt, ast.AugAssign):
        attribute = self_attribute(stmt.target) if isinstance(stmt.op, ast.Add) else None
        return (attribute, stmt.value) if attribute else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.BinOp) \
            and isinstance(stmt.value.op, ast.Add):
        attribute = self_attribute(stmt.targets[0])
        if attribute is None:
            return None
        if self_attribute(stmt.value.left) == attribute:
            return attribute, stmt.value.right
        if self_attribute(stmt.value.right) == attribute:
            return attribute, stmt.value.left
    return None


def _still_parameter(scope, name: str, at: int) -> bool:
    """``name`` still holds the caller's value at ``at`` (its parameter binding)."""
    entry = scope.binding(name, at)
    binds = scope.binds.get(name)
    return entry is not None and bool(binds) and binds[0] == entry[0]


def _step_seq(scope, step) -> int:
    """The seq at which ``scope`` recorded the `step()` node ``step``."""
    return next(seq for seq, node, _ in scope.steps if node is step)


def _unconditional_nodes(function) -> set:
    """ids of the nodes in the statements of ``function``'s own body that are not
    compound (no `if`, loop, `with`, `try` or nested definition): they run on
    every call that returns normally."""
    return {id(n) for stmt in function.body if not isinstance(stmt, _COMPOUND) for n in ast.walk(stmt)}


def _unconditional_lines(function) -> list:
    """The line ranges of the statements of ``function``'s own body that are not
    compound (as _unconditional_nodes, without walking them)."""
    return [(stmt.lineno, stmt.end_lineno) for stmt in function.body if not isinstance(stmt, _COMPOUND)]


def _configured_lines(function) -> list:
    """The line ranges of the simple statements inside the `if`s of ``function``'s own
    body (and their `elif`/`else`, nested `if`s of the same kind included) whose test
    reads only configuration: attributes of `self` (`if self.eps is not None`), names
    the function does not bind (module constants), and locals bound only from those
    (`left, right = self.domain; if left is not None`).  A test that reads a parameter
    (`if clip:`, `if x.min() < 0:`) depends on the call, and one that names an
    `inplace` switch (`if self.inplace:`) says the write is optional: neither counts."""
    parameters = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
    for a in (function.args.vararg, function.args.kwarg):
        if a is not None:
            parameters.add(a.arg)
    parameters.discard("self")
    if not any(isinstance(stmt, ast.If) for stmt in function.body):
        return []  # nothing to read (most functions): the walks below are skipped
    locals_read = {}  # "bound", "config": read only when a test names a local (lazily: most read `self.x`)

    def unconfigured_local(name: str) -> bool:
        if not locals_read:
            stored = locals_read["bound"] = set()  # every name stored in it (one walk for both)
            locals_read["config"] = _configuration_locals(function, parameters, stored)
        return name in locals_read["bound"] and name not in locals_read["config"]

    def configured(test) -> bool:
        for n in ast.walk(test):
            if isinstance(n, ast.Name) and (n.id in parameters or "inplace" in n.id.lower()
                                            or (n.id != "self" and unconfigured_local(n.id))):
                return False
            if isinstance(n, ast.Attribute) and "inplace" in n.attr.lower():
                return False
            if isinstance(n, (ast.NamedExpr, ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom)):
                return False
        return True

    ranges = []

    def walk(body) -> None:
        for stmt in body:
            if isinstance(stmt, ast.If):
                if configured(stmt.test):
                    for inner in (stmt.body, stmt.orelse):
                        ranges.extend((s.lineno, s.end_lineno) for s in inner if not isinstance(s, _COMPOUND))
                        walk(inner)

    walk(function.body)
    return ranges


def _configuration_locals(function, parameters: set, stored: set | None = None) -> set:
    """Names of ``function`` bound only by plain assignments (in its own body, outside
    compound statements) whose values read nothing but attributes of `self`,
    constants and names it does not bind: `left, right = self.left, self.right`.
    ``stored``, when given, receives every name a `Name` node of the function stores
    (nested functions included), read in the same walk."""
    assigned: dict = {}
    spoiled = set()
    for stmt in walk_nodes(function):
        if stored is not None and stmt.__class__ is ast.Name and stmt.ctx.__class__ is ast.Store:
            stored.add(stmt.id)
        if stmt.__class__ not in _TARGET_HOLDERS:
            continue
        for target in _targets(stmt):
            for n in walk_nodes(target):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    if isinstance(stmt, ast.Assign) and stmt in function.body:
                        assigned.setdefault(n.id, []).append(stmt.value)
                    else:
                        spoiled.add(n.id)
    config = set()
    bound = set(assigned) | spoiled | parameters
    for name, values in assigned.items():
        if name in spoiled or name in parameters:
            continue
        if all(not any(isinstance(n, ast.Name) and n.id != "self" and n.id in bound
                       for n in ast.walk(v))
               and not any(isinstance(n, ast.Call) for n in ast.walk(v)) for v in values):
            config.add(name)
    return config


_TARGET_HOLDERS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With,
                             ast.AsyncWith, ast.NamedExpr, ast.comprehension})


def _targets(stmt) -> list:
    if isinstance(stmt, ast.Assign):
        return stmt.targets
    if isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
        return [stmt.target]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in stmt.items if i.optional_vars is not None]
    if isinstance(stmt, ast.NamedExpr):
        return [stmt.target]
    if isinstance(stmt, ast.comprehension):
        return [stmt.target]
    return []


def _within(node, ranges) -> bool:
    """``node`` lies in one of the statements of ``ranges`` (_unconditional_lines)."""
    return any(start <= node.lineno and node.end_lineno <= end for start, end in ranges)


def _caller_positional(node, method: bool) -> list[str] | None:
    """The names of the positional parameters a caller's arguments fill, in order (a method's
    `self` left out); None for a static or class method, whose first argument is not known."""
    positional = [a.arg for a in node.args.posonlyargs + node.args.args]
    if not method:
        return positional
    if any(isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod") for d in node.decorator_list):
        return None
    return positional[1:]


def _layer_loop_bindings(loop: ast.For, scope) -> dict:
    """`for layer in self.layers: x = layer(x)`: the names a top-level loop over a
    container of layers (its items known from `__init__`, ``scope.layer_loops``)
    binds once, by a plain assignment among the loop body's own statements (outside
    any `if`, inner loop, `with` or `try`), in a loop with no `break`, `continue` or
    `else`.  After the loop each such name holds what that assignment gave on the
    last pass: a container `__init__` fills is taken to hold a layer (a forward
    looping over an empty one would give back its input unchanged)."""
    if loop.orelse or id(loop) not in scope.layer_loops:
        return {}
    stack = list(loop.body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return {}
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(n for n in ast.iter_child_nodes(stmt) if isinstance(n, ast.stmt))
    found = {}
    for stmt in loop.body:
        if stmt.__class__ is ast.Assign and len(stmt.targets) == 1 and stmt.targets[0].__class__ is ast.Name:
            found.setdefault(stmt.targets[0].id, []).append(stmt)
    return {name: assigns[0] for name, assigns in found.items() if len(assigns) == 1}
