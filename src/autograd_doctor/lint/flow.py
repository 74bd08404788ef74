"""Control flow: `if`/`else` and conditional expressions (facts joined where
paths meet, `isinstance` narrowing, branch and jump ranges), loops (loop
ranges, what a loop stores, writes and re-binds) and `with` blocks
(`no_grad()` and friends)."""

from __future__ import annotations

import ast

from autograd_doctor.lint.defaults import off_by_default
from autograd_doctor.lint.fallbacks import always_returns, feature_flags, returns_by_default

from autograd_doctor.lint import names as N
from autograd_doctor.lint.events import Loop
from autograd_doctor.lint.modules import CONTAINERS
from autograd_doctor.lint.rules import LOOP_END_HOOKS


class ControlFlow:
    """Mixed into ``Checker``."""

    def visit_For(self, node):
        header = self.seq  # `for <target> in <iter>:` is read from here to the body
        self.visit(node.iter)
        it = node.iter
        parameters = (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                      and it.func.attr == "parameters")
        # `for row in x:` and `for row in x.unbind(0):` give views of x, several at once.
        split = None
        if self.is_tensor(it) and not self.splits_tensor(it):
            split = (it, "iteration over " + self.text(it))
        elif self.splits_tensor(it):
            split = (self.split_source(it), self.text(it.func))
        layers = self.modules.container_layers(it, self.scope.owner_class)
        if layers is not None:
            self.scope.layer_loops.add(id(node))  # summaries._layer_loop_bindings
        if layers is not None and isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2:
            self.assign_target(node.target, None, node)  # `for i, layer in enumerate(self.layers):`
            if isinstance(node.target.elts[1], ast.Name):
                self.modules.name_specs[node.target.elts[1].id] = layers
        elif isinstance(node.target, ast.Name):
            name = node.target.id
            self.bind(name, None, tensor=parameters or split is not None)
            if self.is_builtin_call(it, "range"):
                self.scope.int_bindings.add(self.scope.binds[name][-1])
            if layers is not None:  # `for layer in self.layers:` (a container this class built)
                self.modules.name_specs[name] = layers
            if parameters:
                self.scope.parameter_vars.add(name)
                self.scope.parameter_var_modules[name] = self.text(it.func.value)
            elif split is not None and self.is_graph(split[0]):
                self.scope.split_views[name] = split[1]
            elif split is not None and self.copied_parameter(split[0]) is not None:
                # `for channel in tensor.clone()[0]:` in `def denormalize(tensor)`: a
                # hazard where a caller passes a graph (ADL015 waits for that evidence)
                self.scope.split_views[name] = split[1]
                self.scope.provisional_splits[name] = self.copied_parameter(split[0])
        else:
            self.assign_target(node.target, None, node)
            first = node.target.elts[0] if isinstance(node.target, ast.Tuple) and node.target.elts else None
            if isinstance(first, ast.Name) and self.is_builtin_call(it, "enumerate"):
                self.scope.int_bindings.add(self.scope.binds[first.id][-1])  # `for i, x in enumerate(...)`
            self.note_zipped_rows(node.target, it)
        if self.file.trains:  # (ADL003 only)
            self.note_iterated(node.target, it)
        self.loop_body(node.body, header, loop_counter(node), self.iterates_own_layers(it))
        self.visit_body(node.orelse)

    visit_AsyncFor = visit_For

    def note_zipped_rows(self, target, it) -> None:
        """`for channel, mean, std in zip(img[0], means, stds):` and `for i, row in
        enumerate(x):`: the element taken from a tensor with a graph is one of the
        views its iteration returns, as with `for row in x:`."""
        if not isinstance(target, ast.Tuple) or not isinstance(it, ast.Call) or it.keywords \
                or any(isinstance(a, ast.Starred) for a in it.args):
            return
        if self.is_builtin_call(it, "zip") and len(it.args) == len(target.elts):
            pairs = zip(target.elts, it.args)
        elif self.is_builtin_call(it, "enumerate") and len(target.elts) == 2 and len(it.args) == 1:
            pairs = [(target.elts[1], it.args[0])]
        else:
            return
        for elt, source in pairs:
            if not isinstance(elt, ast.Name) or self.splits_tensor(source):
                continue
            if self.is_tensor(source) and self.is_graph(source):
                self.scope.tensors.add(elt.id)
                self.scope.split_views[elt.id] = "iteration over " + self.text(source)
            elif self.copied_parameter(source) is not None:
                self.scope.tensors.add(elt.id)
                self.scope.split_views[elt.id] = "iteration over " + self.text(source)
                self.scope.provisional_splits[elt.id] = self.copied_parameter(source)

    def note_iterated(self, target, it) -> None:
        """Where the values of a `for` target come from: `for x in xs` (elements of
        `xs`), `for a, b in zip(xs, ys)`, `for i, x in enumerate(xs)`."""
        pairs = []
        if isinstance(target, ast.Name):
            if not self.is_builtin_call(it, "range"):
                pairs.append((target, it))
        elif isinstance(target, ast.Tuple) and isinstance(it, ast.Call) and not it.keywords \
                and not any(isinstance(a, ast.Starred) for a in it.args):
            if self.is_builtin_call(it, "zip") and len(it.args) == len(target.elts):
                pairs = list(zip(target.elts, it.args))
            elif self.is_builtin_call(it, "enumerate") and len(target.elts) == 2 and len(it.args) == 1:
                pairs.append((target.elts[1], it.args[0]))
        for elt, source in pairs:
            if isinstance(elt, ast.Name) and self.scope.binds.get(elt.id):
                self.scope.iterated[(elt.id, self.scope.binds[elt.id][-1])] = source

    def visit_While(self, node):
        header = self.seq
        self.visit(node.test)
        self.loop_body(node.body, header)
        self.visit_body(node.orelse)

    def iterates_own_layers(self, iterable) -> bool:
        """`self.layers` or `enumerate(self.layers)`, a container of layers that this
        class built (`nn.ModuleList`, `nn.Sequential`, `nn.ModuleDict`), or `zip` of
        such containers only (`zip(self.blocks, self.units)`, SISR's DRRN: each is
        there to be run, so the pairs are too; a `zip` with anything else, a caller's
        list, may be empty)."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
                and iterable.func.id == "enumerate" and len(iterable.args) == 1:
            iterable = iterable.args[0]
        if self.is_builtin_call(iterable, "zip") and iterable.args and not iterable.keywords:
            return all(self.own_layer_container(a) for a in iterable.args)
        return self.own_layer_container(iterable)

    def own_layer_container(self, node) -> bool:
        """`self.layers`, a container of layers that this class built."""
        spec = self.modules.self_attribute_spec(node, self.scope.owner_class)
        return spec is not None and spec.kind in CONTAINERS

    def loop_body(self, body, header: int, counter: tuple = (), runs: bool = False):
        loop = Loop(start=self.next_seq(), counter=counter, runs=runs)
        if runs:
            self.scope.running_loops.add(loop.start)
        self.scope.loops.append(loop)
        self.visit_body(body)
        self.scope.loops.pop()
        self.scope.finished_loops.append((loop.start, self.next_seq()))
        self.scope.loop_headers[loop.start] = header
        for hook in LOOP_END_HOOKS:
            hook(self, loop)
        for outer in self.scope.loops:
            outer.written |= loop.written
            outer.bound |= loop.bound

    def visit_If(self, node):
        self.visit(node.test)
        guard = self.is_debug_guard(node.test)
        self.guard_depth += guard
        scope = self.scope
        before = self.facts()
        narrowed = self.narrowing(node.test)
        self.narrow(narrowed, True)
        start = self.next_seq()
        skips_last = bool(scope.loops) and skips_last_iteration(node.test, scope.loops[-1].counter)
        outer_grad_off = scope.grad_off
        scope.grad_off = outer_grad_off or id(node) in self.file.grad_off_branches
        opt_in = off_by_default(node.test, self.function_defaults)
        self.opt_in_depth += opt_in
        self.visit_body(node.body)
        self.opt_in_depth -= opt_in
        scope.grad_off = outer_grad_off
        self.guard_depth -= guard
        if id(node) in self.unskippable_ifs and not self.error_expected:
            return  # the path around the body raises further on: the body's facts hold after it
        after_body = self.facts()
        body_split_views = dict(scope.split_views)
        self.restore(before)
        self.narrow(narrowed, False)
        mid = self.next_seq()
        if skips_last:  # `if i != len(layers) - 1: x = F.relu(x)`
            scope.last_iteration_skips.append((start, mid, scope.loops[-1].start))
        if self.leaves(node.body):
            scope.jumps.append((start, mid))
        self.visit_body(node.orelse)
        end = self.next_seq()
        scope.branches.append((start, mid, end))  # an `if` without `else` has an empty else range
        if not node.orelse and always_returns(node.body) and scope.function is not None \
                and any(s is node for s in scope.function.body) and self.returns_by_default(node.test):
            scope.default_returned = True  # the rest runs only for a non-default call (fallbacks.py)
        if node.orelse and self.leaves(node.orelse):
            scope.jumps.append((mid, end))
        # Join: after the `if`, a fact holds only if it holds on every path that
        # reaches the next statement (`if not isinstance(x, T): return` narrows x).
        if self.leaves(node.body):
            return
        if node.orelse and self.leaves(node.orelse):
            self.restore(after_body)
            return
        for facts, body_facts in zip(self.fact_sets(), after_body):
            facts &= body_facts
        # A multi-view output on either path: writing it in place raises on that path
        # (`if qkv_same: q, k, v = proj(x).chunk(3)`, `else: q = ...`, then `q *= s`).
        for name, split in body_split_views.items():
            if name in scope.tensors:
                scope.split_views.setdefault(name, split)

    def returns_by_default(self, test) -> bool:
        if self._feature_flags is None and _reads_self_attribute(test):
            # A flag is set from `hasattr(torch..., ...)` in `__init__`: most files have none.
            self._feature_flags = feature_flags(self.tree, self.qualname, self.source) if "hasattr(" in self.source \
                else frozenset()
        return returns_by_default(test, self.function_defaults, self.scope.owner_class,
                                  self._feature_flags or frozenset(), self.qualname)

    @staticmethod
    def leaves(body) -> bool:
        return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break))

    def fact_sets(self):
        scope = self.scope
        return (scope.tensors, scope.consts, scope.graph, scope.grad_leaves)

    def facts(self):
        scope = self.scope  # (copies written out: taken at every branch and loop)
        return (set(scope.tensors), set(scope.consts), set(scope.graph), set(scope.grad_leaves))

    def restore(self, saved):
        scope = self.scope
        tensors, consts, graph, grad_leaves = saved
        scope.tensors, scope.consts, scope.graph, scope.grad_leaves = \
            set(tensors), set(consts), set(graph), set(grad_leaves)

    def narrow(self, narrowed, branch: bool):
        """Apply what an `isinstance` test proves on the ``branch`` side."""
        if narrowed is None:
            return
        name, positive = narrowed
        if positive == branch:
            self.scope.tensors.add(name)
        else:
            for facts in self.fact_sets():
                facts.discard(name)

    def visit_IfExp(self, node):
        self.visit(node.test)
        before = self.facts()
        narrowed = self.narrowing(node.test)
        self.narrow(narrowed, True)
        self.visit(node.body)
        self.restore(before)
        self.narrow(narrowed, False)
        self.visit(node.orelse)
        self.restore(before)

    def is_debug_guard(self, test) -> bool:
        if not self.file.mentions_debug:
            return False  # most files: no test to walk (this walk was ~5% of the time)
        # The test's lines hold every name, attribute and string the walk reads, unless a string is
        # escaped or two literals join: a test whose lines name neither word needs no walk.
        text = "".join(self.lines[test.lineno - 1:test.end_lineno]).lower()
        if "debug" not in text and "anomaly" not in text and "\\" not in text \
                and text.count('"') + text.count("'") <= 2:
            return False
        for sub in ast.walk(test):
            word = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else \
                sub.value if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else ""
            word = word.lower()
            if "debug" in word or "anomaly" in word:
                return True
        return False

    @property
    def error_expected(self) -> bool:
        """Inside a `try:` body or a `with pytest.raises(...)` / `self.assertRaises(...)` block:
        a statement there may run only for the error it raises."""
        return self.error_expected_depth > 0

    def visit_Try(self, node):
        self.error_expected_depth += 1
        self.visit_body(node.body)
        self.error_expected_depth -= 1
        for handler in node.handlers:
            self.visit(handler)
        self.visit_body(node.orelse)
        self.visit_body(node.finalbody)

    visit_TryStar = visit_Try

    def visit_With(self, node):
        expects_error = any(_expects_error(item.context_expr) for item in node.items)
        self.error_expected_depth += expects_error
        self._visit_with(node)
        self.error_expected_depth -= expects_error

    def _visit_with(self, node):
        self.with_nodes.append(node)  # a fact for the rules that read with statements (ADL038)
        grad_off = False
        for item in node.items:
            item.context_expr._adl_context = True  # a `with` block scopes what it switches on
            self.visit(item.context_expr)
            expr = item.context_expr
            if isinstance(expr, ast.Call) and N.turns_grad_off(self.qualname(expr.func), expr):
                grad_off = True
            if item.optional_vars is not None:
                self.assign_target(item.optional_vars, None, node)
        outer = self.scope.grad_off
        self.scope.grad_off = outer or grad_off
        self.visit_body(node.body)
        self.scope.grad_off = outer

    visit_AsyncWith = visit_With


def _expects_error(expr) -> bool:
    """`pytest.raises(...)`, `self.assertRaises(...)`, `assertRaisesRegex`, `assertWarns`..."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    name = N.last_name(func)
    return name == "raises" or name.startswith(("assertRaises", "assertWarns"))


def loop_counter(node) -> tuple:
    """(counter name, iteration count's expression) of `for i, x in enumerate(seq)`
    (`len(seq)`), `for i in range(n)` (`n`); () for any other loop.  The expression is
    compared as `ast.dump` text only when a test inside the loop needs it (lint cost)."""
    it, target = node.iter, node.target
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and len(it.args) == 1
            and not it.keywords):
        return ()
    if it.func.id == "enumerate" and isinstance(target, ast.Tuple) and target.elts \
            and isinstance(target.elts[0], ast.Name):
        return target.elts[0].id, ast.Call(ast.Name("len", ast.Load()), [it.args[0]], [])
    if it.func.id == "range" and isinstance(target, ast.Name):
        return target.id, it.args[0]
    return ()


def skips_last_iteration(test, counter: tuple) -> bool:
    """``test`` is false exactly on the last iteration of a loop with ``counter``:
    `i != n - 1`, `i < n - 1`, `i + 1 != n`, `i + 1 < n` (either way round)."""
    if not counter or not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    name, count = counter
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.Gt):  # `n - 1 > i` is `i < n - 1`
        left, op, right = right, ast.Lt(), left
    elif isinstance(op, ast.NotEq) and not (isinstance(left, ast.Name) or isinstance(left, ast.BinOp)
                                            and isinstance(left.op, ast.Add)):
        left, right = right, left
    if not isinstance(op, (ast.NotEq, ast.Lt)):
        return False

    def is_one(node) -> bool:
        return isinstance(node, ast.Constant) and node.value == 1 and type(node.value) is int

    if isinstance(left, ast.Name) and left.id == name:  # `i != n - 1`
        return isinstance(right, ast.BinOp) and isinstance(right.op, ast.Sub) and is_one(right.right) \
            and ast.dump(right.left) == ast.dump(count)
    if isinstance(left, ast.BinOp) and isinstance(left.op, ast.Add) and is_one(left.right) \
            and isinstance(left.left, ast.Name) and left.left.id == name:  # `i + 1 != n`
        return ast.dump(right) == ast.dump(count)
    return False


def _reads_self_attribute(test) -> bool:
    """A part of the test (`a and b and ...`) is `self.<flag>`: only then are the class's
    feature flags read."""
    parts = test.values if isinstance(test, ast.BoolOp) else [test]
    return any(isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self"
               for part in parts)
