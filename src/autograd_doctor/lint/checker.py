"""One pass over a module's AST, pyflakes-style: a handler per node type.

The walk records, per function, a short ordered list of events (names bound,
names read, values saved for backward, in-place writes).  When the walk leaves
a function the events are matched ("a write after a save with no rebinding in
between", "a read after an in-place activation").  Nothing is imported or run.
"""

from __future__ import annotations

import ast
from collections import defaultdict

from autograd_doctor.lint import names as N
from autograd_doctor.lint.events import Loop, Scope, Write
from autograd_doctor.lint.findings import Edit, Finding, Fix, split_lines
from autograd_doctor.lint.knowledge import TensorKnowledge
from autograd_doctor.lint.matching import match_scope

AUG_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
              ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&",
              ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
GRADIENT_RULES = frozenset({"ADL001", "ADL003", "ADL004"})
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


class Checker(TensorKnowledge):
    """Lint one parsed module; ``findings`` holds the result."""

    def __init__(self, tree: ast.Module, source: str, filename: str):
        self.source = source
        self.filename = filename
        self.lines = split_lines(source)
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}
        self.module_classes: set[str] = set()
        self.inplace_attrs: dict[str, dict[str, ast.keyword]] = defaultdict(dict)
        self.module_attrs: dict[str, set] = defaultdict(set)
        self.module_kinds: dict[str, dict[str, str]] = defaultdict(dict)  # class -> attr -> nn.X
        self.class_stack: list[str | None] = []
        self.guard_depth = 0            # inside `if <debug flag>:`
        self.seq = 0
        self.scope = Scope("<module>", grad_off=False)
        self._handlers: dict[type, object] = {}
        self.defines_optimizer = False
        self.visit_body(tree.body)
        match_scope(self, self.scope)
        if self.defines_optimizer:  # Optimizer.step() runs under no_grad
            self.findings = [f for f in self.findings if f.code not in GRADIENT_RULES]

    # ----- traversal -----------------------------------------------------
    def visit(self, node):
        handler = self._handlers.get(node.__class__)
        if handler is None:
            handler = getattr(self, "visit_" + node.__class__.__name__, self.generic_visit)
            self._handlers[node.__class__] = handler
        handler(node)

    def generic_visit(self, node):
        # Only the grammar's fields: other code in the process may have hung extra
        # attributes (e.g. `.parent`) on shared nodes such as the `ast.Load()` singleton.
        for field_name in node._fields:
            value = getattr(node, field_name, None)
            if isinstance(value, ast.AST):
                self.visit(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)

    def visit_body(self, body):
        for stmt in body:
            self.visit(stmt)

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    # ----- names, imports ----------------------------------------------
    def visit_Import(self, node):
        for a in node.names:
            if a.asname:
                self.aliases[a.asname] = a.name
            else:
                top = a.name.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node):
        if node.module and not node.level:
            for a in node.names:
                self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            self.scope.uses[node.id].append(self.next_seq())
        else:
            self.bind(node.id, None)

    def bind(self, name: str, value, tensor: bool | None = None):
        scope = self.scope
        scope.binds[name].append(self.next_seq())
        if tensor is None:
            tensor = value is not None and self.is_tensor(value)
        if tensor:
            scope.tensors.add(name)
        else:
            scope.tensors.discard(name)
        if value is not None and tensor and self.is_const(value):
            scope.consts.add(name)
        else:
            scope.consts.discard(name)
        scope.detached.pop(name, None)
        scope.expanded.pop(name, None)
        for loop in scope.loops:
            loop.bound.add(name)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            source = self.view_base(value.func.value)
            if value.func.attr == "detach" and source:
                scope.detached[name] = (source, scope.binds[name][-1])
            elif value.func.attr in ("expand", "expand_as") and self.is_tensor(value.func.value):
                scope.expanded[name] = scope.binds[name][-1]


    # ----- reporting ----------------------------------------------------
    def col(self, line: int, byte_col: int) -> int:
        """Convert an AST UTF-8 byte offset to a 1-based character column."""
        if line - 1 < len(self.lines):
            text = self.lines[line - 1]
            if not text.isascii():
                return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1
        return byte_col + 1

    def edit(self, node, content: str, end_node=None) -> Edit:
        end = end_node or node
        return Edit(node.lineno, self.col(node.lineno, node.col_offset),
                    end.end_lineno, self.col(end.end_lineno, end.end_col_offset), content)

    def text(self, node) -> str:
        """Source of ``node`` (like ``ast.get_source_segment``, without re-splitting the file)."""
        lines = self.lines[node.lineno - 1: node.end_lineno]
        if not lines:
            return ""
        if len(lines) == 1:
            return lines[0].encode("utf-8")[node.col_offset: node.end_col_offset].decode("utf-8", "replace")
        first = lines[0].encode("utf-8")[node.col_offset:].decode("utf-8", "replace")
        last = lines[-1].encode("utf-8")[: node.end_col_offset].decode("utf-8", "replace")
        return first + "".join(lines[1:-1]) + last

    def atom_text(self, node) -> str:
        """Source of ``node``, parenthesised unless a method call can follow it as is."""
        text = self.text(node)
        return text if isinstance(node, ATOMS) else f"({text})"

    def report(self, code: str, node, message: str, fix: Fix | None = None, related=()):
        self.findings.append(Finding(
            code, message, self.filename, node.lineno, self.col(node.lineno, node.col_offset),
            node.end_lineno or node.lineno,
            self.col(node.end_lineno or node.lineno, node.end_col_offset or node.col_offset),
            fix, list(related)))

    def clone_before(self, stmt, name: str) -> Fix | None:
        """Unsafe fix: insert ``name = name.clone()`` on its own line before ``stmt``."""
        line = self.lines[stmt.lineno - 1] if stmt.lineno - 1 < len(self.lines) else ""
        indent = line[: len(line) - len(line.lstrip())]
        if len(indent.encode("utf-8")) != stmt.col_offset:
            return None
        return Fix(f"copy `{name}` first: `{name} = {name}.clone()`",
                   (Edit(stmt.lineno, 1, stmt.lineno, 1, f"{indent}{name} = {name}.clone()\n"),),
                   safe=False)

    # ----- scopes -------------------------------------------------------
    def visit_FunctionDef(self, node):
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)  # defaults and annotations run in the outer scope
        if node.returns:
            self.visit(node.returns)
        self.bind(node.name, None)
        grad_off = self.scope.grad_off or N.is_init_function(node.name) or any(
            self.qualname(d.func if isinstance(d, ast.Call) else d) in N.GRAD_OFF_CONTEXTS
            for d in node.decorator_list)
        module_class = self.class_stack[-1] if self.class_stack else None
        outer, outer_guard = self.scope, self.guard_depth
        self.scope = Scope(node.name, grad_off, module_class)
        self.guard_depth = outer_guard if "debug" not in node.name.lower() else outer_guard + 1
        self.class_stack.append(None)
        args = node.args
        all_args = args.posonlyargs + args.args + args.kwonlyargs
        for i, a in enumerate(all_args):
            tensor = self.is_tensor_annotation(a.annotation) or (
                module_class is not None and node.name == "forward" and i > 0 and a.annotation is None)
            self.bind(a.arg, None, tensor=tensor)
        for a in (args.vararg, args.kwarg):
            if a:
                self.bind(a.arg, None)
        self.visit_body(node.body)
        self.class_stack.pop()
        match_scope(self, self.scope)
        self.scope, self.guard_depth = outer, outer_guard

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_arguments(self, node):
        for d in node.defaults + [d for d in node.kw_defaults if d is not None]:
            self.visit(d)

    def visit_Lambda(self, node):
        self.visit(node.args)

    def visit_ClassDef(self, node):
        for d in node.decorator_list:
            self.visit(d)
        for b in node.bases:
            self.visit(b)
        is_module = any(self.is_module_base(b) for b in node.bases)
        if any((self.qualname(b) or "").startswith("torch.optim.") or
               (isinstance(b, ast.Name) and b.id == "Optimizer") for b in node.bases):
            self.defines_optimizer = True
        if is_module:
            self.module_classes.add(node.name)
        self.class_stack.append(node.name if is_module else None)
        outer = self.scope
        self.scope = Scope(node.name, outer.grad_off)  # class body: names only
        self.visit_body(node.body)
        self.scope = outer
        self.class_stack.pop()
        self.bind(node.name, None)

    # ----- statements ---------------------------------------------------
    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self.assign_target(target, node.value, node)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            self.after_named_value(name, node.value)

    def visit_AnnAssign(self, node):
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            self.assign_target(node.target, node.value, node)
            if isinstance(node.target, ast.Name):
                self.after_named_value(node.target.id, node.value)

    def assign_target(self, target, value, stmt):
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts)
            pieces = value is not None and not pairs and self.splits_tensor(value)
            for i, elt in enumerate(target.elts):
                if pairs:
                    self.assign_target(elt, value.elts[i], stmt)
                    if isinstance(elt, ast.Name):
                        self.after_named_value(elt.id, value.elts[i])
                elif isinstance(elt, ast.Name):
                    self.bind(elt.id, None, tensor=pieces)
                else:
                    self.assign_target(elt.value if isinstance(elt, ast.Starred) else elt, None, stmt)
        elif isinstance(target, ast.Subscript):
            if isinstance(target.value, ast.Attribute) and target.value.attr == "data":
                target.value._adl_written = True
            self.visit(target.value)
            self.visit(target.slice)
            base = self.view_base(target.value)
            container = target.value
            if base is not None and base in self.scope.tensors or isinstance(container, ast.Call):
                self.record_write(target.value, stmt, "an indexed assignment",
                                  fix=self.clone_before(stmt, base) if base else None)
            elif isinstance(container, ast.Name) and value is not None:
                self.record_store(container.id, value, stmt)
        elif isinstance(target, ast.Attribute):
            self.visit(target.value)
            if target.attr == "requires_grad" and isinstance(target.value, ast.Name):
                self.scope.consts.discard(target.value.id)
            if target.attr == "data":
                self.check_data_attribute(target)
            if (isinstance(target.value, ast.Name) and target.value.id == "self"
                    and self.class_stack and self.class_stack[-1] is None
                    and self.scope.module_class and isinstance(value, ast.Call)):
                q = self.qualname(value.func) or ""
                if self.is_module_base(value.func) or (isinstance(value.func, ast.Name)
                                                       and value.func.id in self.module_classes):
                    self.module_attrs[self.scope.module_class].add(target.attr)
                    self.module_kinds[self.scope.module_class][target.attr] = q
                kw = self.inplace_module_keyword(value)
                if kw is not None:
                    self.inplace_attrs[self.scope.module_class][target.attr] = kw
        else:
            self.visit(target)

    def after_named_value(self, name, value):
        """Record what an op saved when its result is bound to ``name``."""
        op = self.saving_op(value)
        if op is not None:
            key, entry = op
            if entry["output"] and not self.scope.grad_off and not self.is_const(value):
                self.scope.saves[name].append((self.next_seq(), key, "output", value))
        while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
               and self.qualname(value.func) is None):  # torch.tensor([...]).sum()
            value = value.func.value
        if (isinstance(value, ast.Call) and self.qualname(value.func) == "torch.tensor"
                and value.args and isinstance(value.args[0], (ast.List, ast.Tuple))
                and value.args[0].elts and all(self.is_tensor(e) for e in value.args[0].elts)):
            fix = None
            if isinstance(value.func, ast.Attribute) and len(value.args) == 1 and not value.keywords:
                fix = Fix("stack the tensors: `torch.stack([...])` keeps the graph",
                          (self.edit(value.func, self.text(value.func.value) + ".stack"),), safe=False)
            self.scope.loss_lists.append((name, value, fix))

    def visit_AugAssign(self, node):
        self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Name):
            self.scope.uses[target.id].append(self.next_seq())
            if target.id in self.scope.tensors:
                fix = None
                sym = AUG_SYMBOL.get(type(node.op))
                if sym:
                    rhs = self.text(node.value)
                    if not isinstance(node.value, ATOMS):
                        rhs = f"({rhs})"
                    fix = Fix(f"write out of place: `{target.id} = {target.id} {sym} ...`",
                              (self.edit(node, f"{target.id} = {target.id} {sym} {rhs}"),), safe=False)
                self.record_write(target, node, "an augmented assignment", fix=fix)
                self.check_overlap(target.id, node.value, node)
        elif isinstance(target, ast.Subscript):
            self.visit(target.value)
            self.visit(target.slice)
            base = self.view_base(target.value)
            if base is not None and base in self.scope.tensors:
                self.record_write(target.value, node, "an augmented assignment",
                                  fix=self.clone_before(node, base))
        else:
            self.visit(target)
            if isinstance(target, ast.Attribute) and target.attr == "data":
                self.check_data_attribute(target)

    def visit_For(self, node):
        self.visit(node.iter)
        tensor = False
        it = node.iter
        if (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                and it.func.attr == "parameters"):
            tensor = True
        if isinstance(node.target, ast.Name):
            self.bind(node.target.id, None, tensor=tensor)
        else:
            self.assign_target(node.target, None, node)
        self.loop_body(node.body)
        self.visit_body(node.orelse)

    visit_AsyncFor = visit_For

    def visit_While(self, node):
        self.visit(node.test)
        self.loop_body(node.body)
        self.visit_body(node.orelse)

    def loop_body(self, body):
        loop = Loop()
        self.scope.loops.append(loop)
        self.visit_body(body)
        self.scope.loops.pop()
        for name, store, itself in loop.stores:
            if name in loop.written and name not in loop.bound and name in self.scope.tensors:
                what = f"`{name}` itself" if itself else f"a view of `{name}`"
                self.report("ADL011", store,
                            f"{what} is stored here, but `{name}` is written in place in the same "
                            f"loop, so every stored entry shares its memory and shows its last values")
        for outer in self.scope.loops:
            outer.written |= loop.written
            outer.bound |= loop.bound

    def visit_If(self, node):
        self.visit(node.test)
        guard = self.is_debug_guard(node.test)
        self.guard_depth += guard
        scope = self.scope
        before = (set(scope.tensors), set(scope.consts))
        checked = self.isinstance_tensor(node.test)
        if checked:
            scope.tensors.add(checked)
        start = self.next_seq()
        self.visit_body(node.body)
        self.guard_depth -= guard
        after_body = (scope.tensors, scope.consts)
        scope.tensors, scope.consts = set(before[0]), set(before[1])
        if checked:
            scope.tensors.discard(checked)
        if node.orelse:
            mid = self.next_seq()
            self.visit_body(node.orelse)
            scope.branches.append((start, mid, self.next_seq()))
        # after the `if`, a name is known to be a tensor only if both paths agree
        scope.tensors &= after_body[0]
        scope.consts &= after_body[1]

    def visit_IfExp(self, node):
        self.visit(node.test)
        scope = self.scope
        checked = self.isinstance_tensor(node.test)
        known = checked in scope.tensors
        if checked:
            scope.tensors.add(checked)
        self.visit(node.body)
        if checked:
            scope.tensors.discard(checked)
        self.visit(node.orelse)
        if checked and known:
            scope.tensors.add(checked)

    def is_debug_guard(self, test) -> bool:
        for sub in ast.walk(test):
            word = sub.id if isinstance(sub, ast.Name) else sub.attr if isinstance(sub, ast.Attribute) else \
                sub.value if isinstance(sub, ast.Constant) and isinstance(sub.value, str) else ""
            word = word.lower()
            if "debug" in word or "anomaly" in word:
                return True
        return False

    def visit_With(self, node):
        grad_off = False
        for item in node.items:
            self.visit(item.context_expr)
            expr = item.context_expr
            if isinstance(expr, ast.Call):
                q = self.qualname(expr.func)
                if q in N.GRAD_OFF_CONTEXTS and not self.false_arg(expr):
                    grad_off = True
                elif q in ("torch.set_grad_enabled", "torch.autograd.set_grad_enabled") and \
                        self.false_arg(expr):
                    grad_off = True
            if item.optional_vars is not None:
                self.assign_target(item.optional_vars, None, node)
        outer = self.scope.grad_off
        self.scope.grad_off = outer or grad_off
        self.visit_body(node.body)
        self.scope.grad_off = outer

    visit_AsyncWith = visit_With

    @staticmethod
    def false_arg(call) -> bool:
        return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is False

    # ----- expressions --------------------------------------------------
    def visit_Attribute(self, node):
        self.visit(node.value)
        if node.attr == "data" and isinstance(node.ctx, ast.Load):
            self.check_data_attribute(node)

    def check_data_attribute(self, node):
        if self.scope.grad_off:
            return
        base = node.value
        evidence = self.is_tensor(base) or (
            isinstance(base, ast.Attribute) and base.attr in ("weight", "bias", "grad")
            and not isinstance(base.value, ast.Call))
        if not evidence:
            return
        fix = None
        if isinstance(node.ctx, ast.Load) and not getattr(node, "_adl_written", False):
            fix = Fix("read through `.detach()`", (self.edit(node, self.text(base) + ".detach()"),),
                      safe=False)
        self.scope.data_uses.append((node, f"`.data` on `{self.text(base)}` bypasses autograd's "
                                     f"version tracking in code that runs with gradients enabled", fix))

    def visit_BinOp(self, node):
        self.visit(node.left)
        self.visit(node.right)
        op = self.saving_op(node)
        if op is not None and not self.scope.grad_off:
            self.record_input_saves(op, [node.left, node.right], node)

    def visit_Call(self, node):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr.endswith("_") and \
                isinstance(func.value, ast.Attribute) and func.value.attr == "data":
            func.value._adl_written = True
        self.visit(func)
        for a in node.args:
            self.visit(a)
        for k in node.keywords:
            self.visit(k.value)
        q = self.qualname(func)
        if q is not None:
            self.check_function_call(node, q)
        elif isinstance(func, ast.Attribute):
            self.check_method_call(node, func)
        op = self.saving_op(node)
        if op is not None and not self.scope.grad_off:
            args = list(node.args)
            if op[0].startswith("torch.Tensor."):  # the receiver is input 0
                args = [func.value] + args
            self.record_input_saves(op, args, node)

    def check_function_call(self, node, q):
        scope = self.scope
        short = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn.init."):
            return
        first = node.args[0] if node.args else None
        inplace_kw = next((k for k in node.keywords if k.arg == "inplace"), None)
        if (q.startswith("torch.nn.functional.") and short in N.INPLACE_FUNCTIONALS and inplace_kw
                and isinstance(inplace_kw.value, ast.Constant) and inplace_kw.value.value is True
                and first is not None):
            fix = Fix("pass `inplace=False`", (self.edit(inplace_kw.value, "False"),), safe=False)
            self.record_inplace_activation(first, node, fix)
            self.record_write(first, node, f"`{short}(..., inplace=True)`", fix=fix)
        elif (short.endswith("_") and not short.endswith("__") and first is not None
              and (q.count(".") == 1 or q.startswith("torch.nn.functional."))
              and q.startswith("torch.")):
            if short[:-1] in N.INPLACE_FUNCTIONALS or short[:-1] in ("sigmoid", "tanh"):
                self.record_inplace_activation(first, node, None)
            self.record_write(first, node, f"`{q}`")
        out = next((k for k in node.keywords if k.arg == "out"), None)
        if out is not None and q.startswith("torch."):
            self.record_write(out.value, node, "`out=`")
        if q in ("copy.deepcopy",) and first is not None and self.is_tensor(first):
            self.report("ADL006", node,
                        f"`copy.deepcopy` of tensor `{self.text(first)}`; deepcopy fails on non-leaf "
                        f"tensors and copies autograd state", Fix(
                            "use `.detach().clone()`",
                            (self.edit(node, self.atom_text(first) + ".detach().clone()"),), safe=False))
        if q in ("torch.tensor", "torch.Tensor", "torch.as_tensor") and q != "torch.as_tensor" \
                and first is not None and self.is_tensor(first):
            fix = None
            if q == "torch.tensor" and len(node.args) == 1 and not node.keywords:
                fix = Fix("use `.detach().clone()`",
                          (self.edit(node, self.atom_text(first) + ".detach().clone()"),), safe=True)
            self.report("ADL008", node,
                        f"`{self.text(node.func)}()` of tensor `{self.text(first)}` "
                        f"copies it and drops it from the graph", fix)
        if q in ("torch.autograd.grad", "torch.autograd.backward"):
            scope.backwards.append((self.next_seq(), node))
        if q in ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly") and first is not None and \
                isinstance(first, ast.Constant) and first.value is True and not self.guard_depth:
            self.report("ADL013", node, "anomaly detection is switched on unconditionally; it slows "
                        "every forward and backward pass")
        if q in ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly") \
                and not self.guard_depth and not self.false_arg(node):
            self.report("ADL013", node, "`detect_anomaly()` is left on unconditionally; it slows "
                        "every forward and backward pass")

    def check_method_call(self, node, func):
        scope = self.scope
        attr = func.attr
        recv = func.value
        if attr == "requires_grad_" and isinstance(recv, ast.Name):
            scope.consts.discard(recv.id)  # a factory tensor that now requires grad
        if attr.endswith("_") and not attr.startswith("_") and attr not in N.NOT_WRITING_METHODS:
            fix = None
            if (isinstance(recv, ast.Name) and attr[:-1] in N.OUT_OF_PLACE and recv.id in scope.tensors
                    and self.statement_is(node)):
                fix = Fix(f"write out of place: `{recv.id} = {recv.id}.{attr[:-1]}(...)`",
                          (self.edit(func, f"{recv.id} = {recv.id}.{attr[:-1]}"),), safe=False)
            self.record_write(recv, node, f"`.{attr}()`", fix=fix)
            # Only a write to the whole tensor is checked: two views of one base
            # (`x.select(0, 0).copy_(x.select(0, 1))`) may well be disjoint.
            if isinstance(recv, ast.Name) and recv.id in scope.tensors:
                for arg in node.args:
                    self.check_overlap(recv.id, arg, node)
        elif attr == "detach" and not node.args and isinstance(recv, ast.Call) and \
                isinstance(recv.func, ast.Attribute) and recv.func.attr == "clone" and not recv.args:
            inner = recv.func.value
            if self.is_const(inner):
                return
            head = self.text(recv.func)
            head = head[:head.rfind("clone")].rstrip()
            clone_args = self.text(recv)[len(self.text(recv.func)):]
            fix = Fix("call `.detach()` before `.clone()`",
                      (self.edit(node, head[:-1].rstrip() + ".detach().clone" + clone_args),),
                      safe=True) if head.endswith(".") and clone_args.startswith("(") else None
            self.report("ADL007", node, f"`.clone().detach()` copies `{self.text(inner)}` inside the "
                        "graph first; `.detach().clone()` copies only the values", fix)
        elif attr == "backward":
            retain = any(k.arg == "retain_graph" and isinstance(k.value, ast.Constant)
                         and k.value.value is True for k in node.keywords)
            if not scope.grad_off or True:
                (scope.retain_backwards if retain else scope.backwards).append((self.next_seq(), node))
            while isinstance(recv, (ast.Call, ast.Attribute)):
                recv = recv.func if isinstance(recv, ast.Call) else recv.value
            if isinstance(recv, ast.Name):
                scope.backward_names.add(recv.id)
        elif attr == "step" and isinstance(recv, (ast.Name, ast.Attribute)):
            name = (recv.id if isinstance(recv, ast.Name) else recv.attr).lower()
            # `optimizer.step()`, or AMP's `scaler.step(optimizer)`
            if ("opt" in name and not node.args) or ("scaler" in name and len(node.args) == 1):
                scope.steps.append((self.next_seq(), node))
        elif attr in ("append", "insert") and isinstance(recv, ast.Name) and node.args \
                and recv.id not in scope.tensors:
            self.record_store(recv.id, node.args[-1], node)
        elif (isinstance(recv, ast.Name) and recv.id == "self" and scope.module_class
              and attr in self.inplace_attrs.get(scope.module_class, ()) and node.args):
            kw = self.inplace_attrs[scope.module_class][attr]
            fix = Fix("construct the module with `inplace=False`", (self.edit(kw.value, "False"),),
                      safe=False)
            self.record_inplace_activation(node.args[0], node, fix, module=f"self.{attr}")
            self.record_write(node.args[0], node, f"`self.{attr}` (inplace=True)", fix=fix)

    def statement_is(self, call) -> bool:
        """True when ``call`` is a whole expression statement (its value is unused)."""
        return getattr(call, "_adl_stmt", False)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call):
            node.value._adl_stmt = True
        self.visit(node.value)

    def inplace_module_keyword(self, call) -> ast.keyword | None:
        q = self.qualname(call.func) or ""
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in N.INPLACE_MODULES:
            for k in call.keywords:
                if k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True:
                    return k
        return None

    # ----- events -------------------------------------------------------

    def record_input_saves(self, op, args, node):
        key, entry = op
        if self.is_const(node):
            return
        for i in entry["inputs"]:
            if i < len(args) and isinstance(args[i], ast.Name) and args[i].id in self.scope.tensors:
                if not key.endswith("pow"):
                    others = [a for j, a in enumerate(args[:2]) if j != i]
                    if any(isinstance(o, ast.Constant) for o in others):
                        continue
                self.scope.saves[args[i].id].append((self.next_seq(), key, f"input {i}", node))

    def record_write(self, target, node, how, fix=None):
        scope = self.scope
        via, via_source = "", ""
        probe = target
        while True:  # walk through views: x.t()[0].add_ writes x
            if isinstance(probe, ast.Call) and isinstance(probe.func, ast.Attribute):
                if probe.func.attr == "detach" and not via:
                    via, via_source = "detach", self.view_base(probe.func.value) or ""
                elif probe.func.attr in ("expand", "expand_as") and not via and \
                        self.is_tensor(probe.func.value):
                    via = "expand"
                if probe.func.attr not in N.VIEW_METHODS:
                    return
                probe = probe.func.value
            elif isinstance(probe, ast.Subscript):
                probe = probe.value
            elif isinstance(probe, ast.Attribute) and probe.attr in N.VIEW_ATTRIBUTES:
                probe = probe.value
            else:
                break
        if not isinstance(probe, ast.Name):
            return
        name = probe.id
        seq = self.next_seq()
        source = scope.detached.get(name, ("", 0))[0]
        scope.writes.append(Write(seq, name, node, how, not scope.grad_off, fix, via, via_source,
                                  source if source != name else "", name in scope.expanded))
        for loop in scope.loops:
            loop.written.add(name)

    def record_inplace_activation(self, arg, node, fix, module=None):
        if isinstance(arg, ast.Name) and not self.scope.grad_off:
            self.scope.inplace_calls.append((self.next_seq() + 1, arg.id, node, fix, module))

    def record_store(self, container, value, node):
        if not self.scope.loops:
            return
        base = None
        if isinstance(value, ast.Name):
            base = value.id
        elif self.is_view_of(value, self.view_base(value) or ""):
            base = self.view_base(value)
        if base is not None and base in self.scope.tensors:
            self.scope.loops[-1].stores.append((base, node, isinstance(value, ast.Name)))

    def check_overlap(self, target, value, node):
        if self.is_view_of(value, target) and target in self.scope.tensors:
            fix = Fix("copy the operand first with `.clone()`",
                      (self.edit(value, self.atom_text(value) + ".clone()"),), safe=True)
            self.report("ADL010", node,
                        f"`{self.text(value)}` is a view of `{target}`, which this in-place op "
                        f"writes while reading it; the result depends on the kernel's loop order", fix)
