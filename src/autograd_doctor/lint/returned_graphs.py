"""Which values carry a graph in a file's training code, followed through the
returns of its own functions (ADL028).

A small abstract interpreter over one file: a value is ``Value(graph, items,
origin, what)`` where ``graph`` says the object itself is (or holds, in a way
not followed) a tensor with a graph, ``items`` the known parts of a dict or
tuple (key or position -> Value), ``origin`` the same-file call whose return
gave the graph, ``what`` the name it had where it was made.

Only positive evidence makes a graph: a call of a module with parameters (a
layer of `self` built from `nn.<Layer>(...)`, a class of the file, or a name the
file calls `.parameters()` on; `self(x)` in a module), a loss the function
backpropagates, and values computed from those.  `.item()`, `.detach()`,
`float()`, comparisons, `argmax`, attributes like `.shape`, and everything made
under `torch.no_grad()` carry none.  Names and attributes nothing binds, and
calls of functions from elsewhere on values without a graph, carry none
(unknown stays silent).

Same-file functions and methods are followed at each call (the caller's
argument values bound to the parameters), a few levels deep, within a budget of
statements per file: past it, nothing more is found.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

from autograd_doctor.lint import names as N
from autograd_doctor.lint.arguments import nested_statements
from autograd_doctor.lint.releasing_helpers import is_releasing_call
from autograd_doctor.lint.type_tests import branch_without_tensor
from autograd_doctor.lint.walk import own_nodes
from autograd_doctor.lint.names import self_attribute

# Methods whose result carries no graph.
CUT_METHODS = frozenset({
    "item", "tolist", "detach", "numpy", "argmax", "argmin", "size", "dim", "numel", "long", "int",
    "bool", "eq", "ne", "lt", "le", "gt", "ge", "nonzero", "sign", "keys", "__len__", "data_ptr",
    "element_size", "stride", "is_contiguous", "requires_grad_", "copy", "isnan", "isinf", "isfinite",
})
CUT_FUNCTIONS = frozenset({
    "len", "int", "float", "bool", "str", "round", "print", "isinstance", "range", "repr", "format", "type",
    "id", "hash",
    "torch.argmax", "torch.argmin", "torch.zeros_like", "torch.ones_like", "torch.empty_like",
    "torch.randn_like", "torch.rand_like", "torch.full_like", "torch.randint_like", "torch.tensor",
    "torch.isnan", "torch.isinf", "torch.isfinite", "torch.eq", "torch.equal", "torch.allclose",
    "torch.no_grad", "torch.sign", "torch.numel",
})
# Attributes of a tensor that are tensors with its graph.
TENSOR_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
# Built-in layers without parameters: their output carries a graph only when their input does.
PARAMETERLESS_LAYERS = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "ELU", "SELU", "CELU", "Tanh", "Sigmoid",
    "Softmax", "LogSoftmax", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink",
    "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "Flatten", "Unflatten",
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "Upsample",
    "PixelShuffle", "CosineSimilarity", "PairwiseDistance",
})
# Appends that keep a value in a container.
KEEPING_METHODS = frozenset({"append", "extend", "insert", "appendleft"})
BACKWARD_CALLERS = frozenset({"backward", "manual_backward"})
# `name.parameters(` or `self.name.named_parameters(`, not `x.name.parameters(`
_PARAMETERS_CALL = re.compile(r"(?<![\w.])(self\.)?([A-Za-z_]\w*)\.(?:named_)?parameters\(")
_DEPTH = 4
_BUDGET = 20000  # statements interpreted per file


@dataclass(frozen=True)
class Value:
    graph: bool = False
    items: tuple | None = None  # ((key, Value), ...) of a dict literal or a tuple
    origin: tuple | None = None  # (callee definition, its `return` carrying the graph, the call)
    what: str | None = None
    # bound to a name from one position of a value whose structure is unknown (a module's
    # result unpacked): a tensor with a graph if used as one, but when it is unpacked in turn it
    # is a container whose contents nothing shows (the statistics a model returns beside its
    # outputs may be floats): its parts carry no graph
    part: bool = False

    def item(self, key):
        for k, v in self.items or ():
            if k == key:
                return v
        return None

    def holds(self) -> bool:
        return self.graph or any(v.holds() for _, v in self.items or ())

    def graph_part(self):
        """The first part holding a graph: ``(path, value)``."""
        if self.graph:
            return (), self
        for k, v in self.items or ():
            if v.holds():
                path, part = v.graph_part()
                return (k,) + path, part
        return None

    def key(self):
        return (self.graph, tuple((k, v.key()) for k, v in self.items or ()), self.part)


NOTHING = Value()


def graph(origin=None, what=None) -> Value:
    return Value(True, None, origin, what)


def join(a: Value, b: Value) -> Value:
    if a is b:
        return a
    if a.items is not None and b.items is not None:
        keys = [k for k, _ in a.items] + [k for k, _ in b.items if a.item(k) is None]
        items = tuple((k, join(a.item(k) or NOTHING, b.item(k) or NOTHING)) for k in keys)
        return Value(a.graph or b.graph, items, a.origin or b.origin, a.what or b.what)
    if a.items is not None and not b.holds():
        return a
    if b.items is not None and not a.holds():
        return b
    holds = a.holds() or b.holds()
    if not holds:
        return NOTHING
    first = a if a.holds() else b
    part = all(v.part for v in (a, b) if v.holds())
    return Value(True, None, first.origin or (b.origin if b.holds() else None), first.what, part)


def with_origin(value: Value, origin) -> Value:
    if not value.holds():
        return value
    items = None if value.items is None else tuple((k, with_origin(v, origin)) for k, v in value.items)
    return Value(value.graph, items, origin, value.what, value.part)


def _any_graph(values) -> Value:
    """The result of an op on ``values``: a graph if any holds one (its origin kept)."""
    for v in values:
        if v.holds():
            part = v.graph_part()[1]
            return graph(part.origin or v.origin)
    return NOTHING


@dataclass
class Frame:
    """One function being interpreted."""
    cls: str | None  # the class whose method it is (for `self`)
    env: dict
    grad_off: bool = False
    returns: list = field(default_factory=list)  # (Value, return node)
    loops: list = field(default_factory=list)  # enclosing loop records of the caller


@dataclass
class LoopRecord:
    loop: ast.AST
    keeps: list = field(default_factory=list)  # (statement, container text, kept node, Value)
    backward_origins: list = field(default_factory=list)  # (origin, backward call)


class FileIndex:
    """The file's functions, classes, and evidence of which names hold modules with parameters."""

    def __init__(self, checker):
        self.checker = checker
        self.functions: dict[str, ast.AST] = {}
        self.methods: dict[str, dict[str, ast.AST]] = {}
        self.module_classes: set[str] = set()
        self.module_attributes: dict[str, set] = {}
        self.module_names: set[str] = set()
        tree = checker.tree
        # One pass over the file's statements: every definition, nested ones too (a name
        # defined twice is not resolved), and the assignments that may hold modules.
        self.callers: list = [(tree.body, None)]  # (body, class of its `self`)
        seen_functions, seen_classes = set(), set()
        assigned_names = []  # (name, value) of `name = value`
        stored_on_self = []  # (class of the method, attribute, value) of `self.<attribute> = value`
        todo = [(stmt, None, None) for stmt in tree.body]  # (statement, class it is defined in, class of its method)
        while todo:
            node, cls, method_cls = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if cls is None:
                    if node.name in seen_functions:
                        self.functions.pop(node.name, None)
                    else:
                        self.functions[node.name] = node
                    seen_functions.add(node.name)
                self.callers.append((node.body, cls))
                todo.extend((stmt, None, cls or method_cls) for stmt in node.body)
                continue
            if isinstance(node, ast.ClassDef):
                if node.name in seen_classes:
                    self.methods[node.name] = {}
                else:
                    self.methods[node.name] = {f.name: f for f in node.body
                                               if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
                seen_classes.add(node.name)
                if any((checker.qualname(b) or "").endswith("Module") or
                       (isinstance(b, ast.Attribute) and b.attr.endswith("Module")) for b in node.bases):
                    self.module_classes.add(node.name)
                todo.extend((stmt, node.name, None) for stmt in node.body)
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                if isinstance(target, ast.Name):
                    assigned_names.append((target.id, node.value))
                elif method_cls is not None and self_attribute(target):
                    stored_on_self.append((method_cls, target.attr, node.value))
            for name in ("body", "orelse", "finalbody"):
                inner = getattr(node, name, None)
                if isinstance(inner, list):
                    todo.extend((stmt, None, method_cls) for stmt in inner)
            for handler in getattr(node, "handlers", ()):
                todo.extend((stmt, None, method_cls) for stmt in handler.body)
            for case in getattr(node, "cases", ()):
                todo.extend((stmt, None, method_cls) for stmt in case.body)
        # `model.parameters()`, `self.encoder.named_parameters()`: read from the text
        for match in _PARAMETERS_CALL.finditer(checker.source):
            owner, name = match.group(1), match.group(2)
            if owner is None:
                self.module_names.add(name)
            else:
                self.module_attributes.setdefault(None, set()).add(name)
        self.module_names.update(name for name, value in assigned_names if self.makes_module(value))
        for method_cls, attribute, value in stored_on_self:
            if self.makes_module(value) or (isinstance(value, ast.Name) and value.id in self.module_names):
                self.module_attributes.setdefault(method_cls, set()).add(attribute)

    def makes_module(self, value) -> bool:
        """`nn.Linear(...)`, `nn.Sequential(...)`, `MyNet(...)` (a module class of the file)."""
        if not isinstance(value, ast.Call):
            return False
        if isinstance(value.func, ast.Name) and value.func.id in self.module_classes:
            return True
        q = self.checker.qualname(value.func) or ""
        if not q.startswith("torch.nn.") or q.count(".") != 2:
            return False
        layer = q.rsplit(".", 1)[1]
        return layer[:1].isupper() and not layer.endswith("Loss") and layer not in PARAMETERLESS_LAYERS

    def is_module_call(self, call, frame) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return (func.id == "self" and frame.cls in self.module_classes) or (
                func.id in self.module_names and func.id not in self.functions)
        if self_attribute(func) and frame.cls is not None:
            if func.attr in self.methods.get(frame.cls, ()):
                return False
            return func.attr in self.module_attributes.get(frame.cls, ()) \
                or func.attr in self.module_attributes.get(None, ())
        return False

    def resolve(self, call, frame):
        """The same-file definition a call runs, and the class of its `self`."""
        func = call.func
        if isinstance(func, ast.Name) and func.id in self.functions:
            return self.functions[func.id], None
        if isinstance(func, ast.Attribute):
            if isinstance(func.value, ast.Name) and func.value.id == "self":
                method = self.methods.get(frame.cls, {}).get(func.attr)
                return (method, frame.cls) if method is not None else (None, None)
            owners = [c for c, methods in self.methods.items() if func.attr in methods]
            if len(owners) == 1 and isinstance(func.value, ast.Name) and func.value.id not in self.methods:
                return self.methods[owners[0]][func.attr], owners[0]
        return None, None


class Interpreter:
    def __init__(self, checker, index: FileIndex):
        self.checker = checker
        self.index = index
        self.budget = _BUDGET
        self.stack: list = []
        self.memo: dict = {}
        self.records: list[LoopRecord] = []

    # ----- functions -----
    def run_caller(self, body, cls):
        frame = Frame(cls, {})
        self.exec_body(body, frame)

    def call_function(self, definition, cls, call, frame) -> Value:
        if definition in self.stack or len(self.stack) >= _DEPTH or self.budget <= 0:
            return NOTHING
        args = definition.args
        parameters = [a.arg for a in args.posonlyargs + args.args]
        if cls is not None and parameters and not _is_static(definition):
            parameters = parameters[1:]
        env = {}
        for name, arg in zip(parameters, call.args):
            if isinstance(arg, ast.Starred):
                break
            env[name] = self.eval(arg, frame)
        for keyword in call.keywords:
            if keyword.arg is not None:
                env[keyword.arg] = self.eval(keyword.value, frame)
        grad_off = frame.grad_off or any(
            N.turns_grad_off(self.checker.qualname(d.func if isinstance(d, ast.Call) else d), d)
            for d in definition.decorator_list)
        memo_key = (id(definition), cls, grad_off, tuple(sorted((k, v.key()) for k, v in env.items())))
        if memo_key not in self.memo:
            inner = Frame(cls, {k: Value(v.graph, v.items, None, k if v.holds() and v.items is None else v.what,
                                         v.part)
                                for k, v in env.items()}, grad_off)
            self.stack.append(definition)
            self.exec_body(definition.body, inner)
            self.stack.pop()
            result = NOTHING
            for value, node in inner.returns:
                result = join(result, with_origin(value, (definition, node)))
            self.memo[memo_key] = result
        result = self.memo[memo_key]
        return _with_call(result, call)

    # ----- statements -----
    def exec_body(self, body, frame):
        for stmt in body:
            if self.budget <= 0:
                return
            self.budget -= 1
            self.exec(stmt, frame)

    def exec(self, stmt, frame):
        if isinstance(stmt, ast.Assign):
            value = self.eval(stmt.value, frame)
            for target in stmt.targets:
                self.assign(target, value, frame)
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            self.assign(stmt.target, self.eval(stmt.value, frame), frame)
        elif isinstance(stmt, ast.AugAssign):
            value = self.eval(stmt.value, frame)
            if isinstance(stmt.target, ast.Name):
                old = frame.env.get(stmt.target.id, NOTHING)
                frame.env[stmt.target.id] = NOTHING if frame.grad_off else _any_graph([old, value])
                if isinstance(stmt.op, ast.Add) and frame.loops and not self.stack and not frame.grad_off \
                        and value.holds():
                    # `total += step(...)`: a sum across the loop keeps every graph it adds
                    frame.loops[-1].keeps.append((stmt, stmt.target, stmt.value, value))
            elif isinstance(stmt.target, ast.Subscript) and isinstance(stmt.target.value, ast.Name):
                base = stmt.target.value
                old = frame.env.get(base.id, NOTHING)
                if not frame.grad_off and value.holds() and old.items is None:
                    frame.env[base.id] = _any_graph([old, value])
                if isinstance(stmt.op, ast.Add) and frame.loops and not self.stack and not frame.grad_off \
                        and value.holds() and not isinstance(stmt.target.slice, ast.Slice):
                    # `totals[name] += term` of a returned dict's entries: the dict of sums keeps
                    # every graph it adds, across each loop around it that it lives across
                    for record in frame.loops:
                        record.keeps.append((stmt, base, stmt.value, value))
        elif isinstance(stmt, ast.Expr):
            self.expression_statement(stmt, frame)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                frame.returns.append((self.eval(stmt.value, frame), stmt))
        elif isinstance(stmt, ast.If):
            self.eval(stmt.test, frame)
            self.branches([stmt.body, stmt.orelse], frame, self._no_tensor_names(stmt.test))
        elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self.loop(stmt, frame)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            outer = frame.grad_off
            for item in stmt.items:
                context = item.context_expr
                q = self.checker.qualname(context.func if isinstance(context, ast.Call) else context)
                if N.turns_grad_off(q, context):
                    frame.grad_off = True
                elif item.optional_vars is not None:
                    self.assign(item.optional_vars, NOTHING, frame)
            self.exec_body(stmt.body, frame)
            frame.grad_off = outer
        elif isinstance(stmt, ast.Try) or (hasattr(ast, "TryStar") and isinstance(stmt, ast.TryStar)):
            self.exec_body(stmt.body, frame)
            self.branches([[]] + [h.body for h in stmt.handlers], frame)
            self.exec_body(stmt.orelse, frame)
            self.exec_body(stmt.finalbody, frame)

    def branches(self, bodies, frame, no_tensor=(None, None)):
        """Run each body from the same start and join what they bind; ``no_tensor``
        names, per body, a name that is no tensor there (the branch of a type test,
        type_tests.py), so that the body starts with it holding no graph."""
        before = dict(frame.env)
        results = []
        for i, body in enumerate(bodies):
            frame.env = dict(before)
            name = no_tensor[i] if i < len(no_tensor) else None
            if name is not None and name in frame.env:
                frame.env[name] = NOTHING
            self.exec_body(body, frame)
            results.append(frame.env)
        merged = {}
        for env in results:
            for name, value in env.items():
                merged[name] = join(merged[name], value) if name in merged else value
        frame.env = merged

    def loop(self, stmt, frame):
        record = LoopRecord(stmt)
        frame.loops.append(record)
        if isinstance(stmt, ast.While):
            self.eval(stmt.test, frame)
        else:
            iterated = self.eval(stmt.iter, frame)
            self.assign(stmt.target, _any_graph([iterated]), frame)
        self.branches([[], stmt.body], frame)
        self.exec_body(stmt.orelse, frame)
        frame.loops.pop()
        if not self.stack:
            self.records.append(record)

    def expression_statement(self, stmt, frame):
        call = stmt.value
        if not isinstance(call, ast.Call):
            self.eval(call, frame)
            return
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in BACKWARD_CALLERS:
            # `loss.backward()`, `accelerator.backward(loss)`, `self.manual_backward(loss)`
            receivers = ([func.value] if func.attr == "backward" else []) + call.args[:1]
            value = NOTHING
            for receiver in receivers:
                value = join(value, self.eval(receiver, frame))
            for record in frame.loops:
                record.backward_origins.extend((o, call) for o in _origins(value))
            receiver = receivers[0] if receivers else None
            if isinstance(receiver, ast.Name) and not frame.grad_off:  # the backward proves a graph
                old = frame.env.get(receiver.id, NOTHING)
                frame.env[receiver.id] = old if old.holds() else graph(what=receiver.id)
            return
        if isinstance(func, ast.Attribute) and func.attr in KEEPING_METHODS and call.args:
            value = self.eval(call.args[-1], frame)
            container = func.value
            if isinstance(container, ast.Name):
                old = frame.env.get(container.id, NOTHING)
                frame.env[container.id] = _any_graph([old, value])
            if frame.loops and not self.stack and value.holds():
                frame.loops[-1].keeps.append((call, container, call.args[-1], value))
            for arg in call.args[:-1]:
                self.eval(arg, frame)
            return
        if isinstance(func, ast.Attribute) and func.attr == "detach_" and isinstance(func.value, ast.Name):
            frame.env[func.value.id] = NOTHING
            return
        self.eval(call, frame)

    def assign(self, target, value, frame):
        if isinstance(target, ast.Name):
            frame.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for i, element in enumerate(target.elts):
                if value.items is None and value.part:
                    self.assign(element.value if isinstance(element, ast.Starred) else element, NOTHING, frame)
                elif isinstance(element, ast.Starred):
                    self.assign(element.value, _any_graph([value]), frame)
                elif value.items is not None and not starred:
                    self.assign(element, value.item(i) or NOTHING, frame)
                elif not value.holds():
                    self.assign(element, NOTHING, frame)
                elif isinstance(element, ast.Name):
                    self.assign(element, replace(_any_graph([value]), part=True), frame)
                else:  # `out, (h, c) = self.lstm(x)`: the structure is written at the call
                    self.assign(element, _any_graph([value]), frame)
        elif isinstance(target, ast.Subscript):
            key = _constant_key(target.slice)
            base = target.value
            if isinstance(base, ast.Name) and base.id in frame.env:
                old = frame.env[base.id]
                if old.items is not None and key is not None:
                    items = tuple((k, value if k == key else v) for k, v in old.items)
                    if old.item(key) is None:
                        items += ((key, value),)
                    frame.env[base.id] = Value(old.graph, items, old.origin, old.what)
                elif value.holds():
                    frame.env[base.id] = _any_graph([old, value])
            if frame.loops and not self.stack and value.holds() and key is None \
                    and not isinstance(target.slice, ast.Slice):
                frame.loops[-1].keeps.append((target, base, target, value))

    # ----- expressions -----
    def eval(self, node, frame) -> Value:
        if isinstance(node, ast.Name):
            value = frame.env.get(node.id, NOTHING)
            if value.holds() and value.what is None and value.items is None:
                return replace(value, what=node.id)
            return value
        if isinstance(node, ast.Constant) or isinstance(node, (ast.JoinedStr, ast.Lambda)):
            return NOTHING
        if isinstance(node, ast.Dict):
            items = []
            loose = []
            for k, v in zip(node.keys, node.values):
                value = self.eval(v, frame)
                key = _constant_key(k) if k is not None else None
                if key is None:
                    loose.append(value if k is not None else _any_graph([value]))
                else:
                    items.append((key, value))
            return Value(any(v.holds() for v in loose), tuple(items))
        if isinstance(node, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in node.elts):
                return _any_graph([self.eval(e, frame) for e in node.elts])
            return Value(False, tuple((i, self.eval(e, frame)) for i, e in enumerate(node.elts)))
        if isinstance(node, ast.Starred):
            return self.eval(node.value, frame)
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value, frame)
            self.assign(node.target, value, frame)
            return value
        if isinstance(node, ast.IfExp):
            self.eval(node.test, frame)
            in_body, in_orelse = self._no_tensor_names(node.test)
            return join(self._eval_without(node.body, in_body, frame),
                        self._eval_without(node.orelse, in_orelse, frame))
        if isinstance(node, (ast.Compare, ast.BoolOp)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.eval(child, frame)
            return NOTHING
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node, frame)
        if isinstance(node, ast.Subscript):
            base = self.eval(node.value, frame)
            self.eval(node.slice, frame)
            key = _constant_key(node.slice)
            if base.items is not None and key is not None:
                return base.item(key) or NOTHING
            return NOTHING if frame.grad_off else _any_graph([base])
        if isinstance(node, ast.Attribute):
            base = self.eval(node.value, frame)
            # a module may return any object: only a tensor's own views are known to keep its
            # graph (`out.loss_value` of a result object may be a float)
            if node.attr not in TENSOR_VIEW_ATTRIBUTES or frame.grad_off:
                return NOTHING
            return _any_graph([base])
        if isinstance(node, (ast.BinOp, ast.UnaryOp)):
            operands = [self.eval(c, frame) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
            return NOTHING if frame.grad_off else _any_graph(operands)
        if isinstance(node, ast.Call):
            return self.eval_call(node, frame)
        return NOTHING

    def _no_tensor_names(self, test) -> tuple:
        """``(name in the body, name in the else branch)``: the name a type test
        proves no tensor on that branch (`loss.item() if torch.is_tensor(loss) else
        loss`: `loss` in the else branch), None elsewhere."""
        read = branch_without_tensor(self.checker, test)
        if read is None:
            return None, None
        name, in_body = read
        return (name, None) if in_body else (None, name)

    def _eval_without(self, node, name, frame) -> Value:
        """``node``'s value with ``name`` holding no graph while it is evaluated."""
        if name is None or name not in frame.env:
            return self.eval(node, frame)
        held = frame.env[name]
        frame.env[name] = NOTHING
        try:
            return self.eval(node, frame)
        finally:
            if frame.env.get(name) is NOTHING:
                frame.env[name] = held

    def comprehension(self, node, frame):
        saved = dict(frame.env)
        for generator in node.generators:
            self.assign(generator.target, _any_graph([self.eval(generator.iter, frame)]), frame)
        parts = [node.value] if isinstance(node, ast.DictComp) else [node.elt]  # a dict's keys are labels
        result = _any_graph([self.eval(p, frame) for p in parts])
        frame.env = saved
        return NOTHING if frame.grad_off else result

    def eval_call(self, call, frame) -> Value:
        func = call.func
        definition, cls = self.index.resolve(call, frame)
        if definition is not None:
            if isinstance(func, ast.Attribute):
                self.eval(func.value, frame)
            return self.call_function(definition, cls, call, frame)
        arguments = [self.eval(a, frame) for a in call.args] + [self.eval(k.value, frame) for k in call.keywords]
        q = self.checker.qualname(func) or (func.id if isinstance(func, ast.Name) else "")
        if q in ("dict", "collections.OrderedDict", "OrderedDict") and not call.args[1:]:
            items = list(arguments[0].items or ()) if call.args and arguments[0].items is not None else []
            loose = [arguments[0]] if call.args and arguments[0].items is None else []
            for keyword, value in zip(call.keywords, arguments[len(call.args):]):
                if keyword.arg is None:
                    loose.append(value)
                else:
                    items.append((keyword.arg, value))
            return Value(any(v.holds() for v in loose), tuple(items))
        if frame.grad_off or q in CUT_FUNCTIONS:
            return NOTHING
        if q == "torch.autograd.grad" and not any(
                k.arg == "create_graph" and not (isinstance(k.value, ast.Constant) and not k.value.value)
                for k in call.keywords):
            return NOTHING  # the gradients of a backward without `create_graph=True` have no graph
        if isinstance(func, ast.Attribute):
            receiver = self.eval(func.value, frame)
            if func.attr in CUT_METHODS:
                return NOTHING
            arguments.append(receiver)
        if self.index.is_module_call(call, frame):
            return graph()
        if self.checker.qualname(func) and "." in self.checker.qualname(func) \
                and returns_numbers_in_project(self.checker.qualname(func), self.checker.filename):
            return NOTHING  # `total_loss_multiple_batches(out, y)`: a helper returning `.item()` sums
        if is_releasing_call(self.checker, call):
            return NOTHING  # `list_detach(predictions)`: a project helper that detaches what it returns
        return _any_graph(arguments)


def _with_call(value: Value, call) -> Value:
    """The callee's origins, with the call site added."""
    if not value.holds():
        return value
    items = None if value.items is None else tuple((k, _with_call(v, call)) for k, v in value.items)
    origin = value.origin + (call,) if value.origin is not None and len(value.origin) == 2 else value.origin
    return Value(value.graph, items, origin, value.what, value.part)


def _origins(value: Value) -> set:
    found = set()
    if value.holds() and value.origin is not None:
        found.add(value.origin)
    for _, v in value.items or ():
        found |= _origins(v)
    return found


def _is_static(definition) -> bool:
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in definition.decorator_list)


def _constant_key(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and not isinstance(node.value, bool):
        return node.value
    return None


def trains_and_returns(checker) -> bool:
    """A function of the file runs a backward pass (``FileFacts.backward_functions``) and
    returns a value: the only files ADL028 reads further."""
    names = checker.file.backward_functions
    if not names:
        return False
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names
               and any(isinstance(n, ast.Return) and n.value is not None for n in nested_statements(node.body))
               for node in nested_statements(checker.tree.body))


def runs_backward_itself(function) -> bool:
    """``function``'s own code calls `.backward(...)` or `.manual_backward(...)`: it trains (a
    function that only asks `torch.autograd.grad` for a gradient may be a saliency map)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in BACKWARD_CALLERS
               for n in own_nodes(function.body))


def returns_numbers_in_project(qualname: str, filename: str) -> bool:
    """Whether ``qualname`` (as the linted file imports it) is a function of a file of
    the same project whose every `return` gives Python numbers: `.item()`,
    `float(...)`, constants, and sums, lists and arithmetic of those
    (PNA's `return sum([total_loss(...).data.item() for b in ...]) / n`).  A name
    returned, or anything else, is not known to be a number."""
    from autograd_doctor.lint.clearing import module_file_in_project, parsed_file
    module, _, name = qualname.rpartition(".")
    path = module_file_in_project(module, filename) if module and filename else None
    tree = parsed_file(path) if path else None
    if tree is None:
        return False
    found = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name]
    if len(found) != 1:
        return False
    returns = [n for n in ast.walk(found[0]) if isinstance(n, ast.Return)]
    return bool(returns) and all(r.value is not None and _number(r.value) for r in returns)


def _number(node) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("item", "tolist") and not node.args:
            return True
        if isinstance(func, ast.Name) and func.id in ("float", "int", "len", "round"):
            return True
        if isinstance(func, ast.Name) and func.id in ("sum", "max", "min") and len(node.args) == 1:
            return _number(node.args[0])
        return False
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _number(node.elt)
    if isinstance(node, (ast.List, ast.Tuple)):
        return all(_number(e) for e in node.elts)
    if isinstance(node, ast.BinOp):
        return _number(node.left) and (_number(node.right) or isinstance(node.right, ast.Name))
    return False
