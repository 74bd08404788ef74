"""What the checker knows about a name or an expression: its torch qualname,
whether it is a tensor, a constant tensor (cannot require grad), a view of
another name, or an op of the saves table.  Mixed into ``Checker``; it reads
``self.aliases`` and ``self.scope``."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.list_forwards import list_forward_classes

NUMBER_TYPES = (int, float, complex)
BINOP_NAMES = {ast.Mult: "mul", ast.Div: "truediv", ast.Add: "add", ast.Sub: "sub",
               ast.Pow: "pow", ast.MatMult: "matmul"}


# Binary ops whose saves change when the second operand is a Python scalar.
SCALAR_FORMS = {"mul": "operator.mul:scalar", "div": "operator.truediv:scalar",
                "true_divide": "operator.truediv:scalar", "pow": "operator.pow:scalar",
                "add": "operator.add:scalar", "sub": "operator.sub:scalar"}


class TensorKnowledge:
    with_graph_arguments = False  # set by result_carries_graph
    with_untyped_arguments = False  # set by computed_from_untyped_arguments
    def qualname(self, node) -> str | None:
        return N.qualified_name(node, self.aliases)

    def is_tensor(self, node) -> bool:
        if isinstance(node, ast.Name):
            return node.id in self.scope.tensors
        if isinstance(node, ast.Call):
            func = node.func
            summary = self.summaries.of_call(node, self.scope.owner_class)
            if summary is not None and summary[1] is False and summary[0][0] == "through":
                # `flatten(t)`: a tensor argument rearranged (Checker.reshapes_parameter)
                return any(self.is_tensor(a) for a in node.args)
            if summary is not None and summary[1] is False and summary[0][0] is not None:
                return True  # a same-file function that returns a tensor (summaries.py)
            q = self.qualname(func)
            if q is not None:
                if q[6:] in N.OVERLOADED_OPS and q.startswith("torch."):
                    return self.overload(node, q) in ("", ":other")
                return N.is_tensor_function(q)
            if isinstance(func, ast.Name):
                return func.id in self.modules.name_specs or self.calls_own_module(node)
            if isinstance(func, ast.Subscript):  # `self.layers[i](x)`
                return self.called_module(node) is not None
            if isinstance(func, ast.Attribute):
                recv = func.value
                if isinstance(recv, ast.Name) and recv.id == "self" and self.scope.owner_class:
                    return func.attr in self.modules.module_specs.get(self.scope.owner_class, ())
                if func.attr in N.TENSOR_ONLY_METHODS:
                    return True
                if func.attr in N.OVERLOADED_OPS:
                    return self.is_tensor(recv) and self.overload(node, "torch.Tensor." + func.attr) in ("", ":other")
                return func.attr not in N.NOT_TENSOR_METHODS and func.attr in N.tensor_methods() \
                    and self.is_tensor(recv)
            return False
        if isinstance(node, ast.Attribute):
            return node.attr in N.TENSOR_ATTRIBUTES and self.is_tensor(node.value) or \
                self.parameter_attribute(node)
        if isinstance(node, ast.BinOp):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.is_tensor(node.operand)
        if isinstance(node, ast.Subscript):  # `torch.autograd.grad(loss, x)[0]`: a gradient
            return self.is_tensor(node.value) or (isinstance(node.value, ast.Call) and (
                self.qualname(node.value.func) == "torch.autograd.grad"
                or self.reduction_pair_element(node) is not None))
        return False

    def returns_list(self, spec) -> bool:
        """True when ``spec`` is a same-file module class whose ``forward`` returns a
        Python list (list_forwards.py): calling it gives no tensor."""
        found = self.__dict__.get("_list_forwards")
        if found is None:
            tree = getattr(self, "tree", None)
            found = list_forward_classes(tree) if isinstance(tree, ast.Module) else frozenset()
            self.__dict__["_list_forwards"] = found
        return spec is not None and spec.kind in found

    def list_module_call(self, value) -> bool:
        """``value`` calls a same-file module whose ``forward`` returns a list
        (`self.encoder(x)`, `encoder(x)`): the result is a list of tensors."""
        if not isinstance(value, ast.Call):
            return False
        func = value.func
        if isinstance(func, ast.Name):
            return self.returns_list(self.modules.name_specs.get(func.id))
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "self" and self.scope.owner_class:
            return self.returns_list(self.modules.module_specs.get(self.scope.owner_class, {}).get(func.attr))
        return False

    def reduction_pair_element(self, node) -> tuple | None:
        """``x.max(1)[0]`` / ``torch.sort(x)[1]``: an element, by a constant index, of
        the (values, indices) pair a reduction over a dimension returns, as ``(x,
        index)``; None for anything else.  The values (0) keep ``x``'s graph, the
        indices (1) are integers."""
        index, call = node.slice, node.value
        if not (isinstance(index, ast.Constant) and index.value in (0, 1) and isinstance(call, ast.Call)):
            return None
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in N.VALUES_INDICES_METHODS and \
                (call.args or call.keywords or func.attr == "sort"):
            q = self.qualname(func)
            if q is None and self.is_tensor(func.value) and (
                    func.attr not in N.OVERLOADED_OPS or self.overload(call, "torch.Tensor." + func.attr) == ":dim"):
                return func.value, index.value
            if q is not None and q.startswith("torch.") and q[6:] in N.VALUES_INDICES_METHODS and call.args and \
                    (q[6:] not in N.OVERLOADED_OPS or self.overload(call, q) == ":dim"):
                return call.args[0], index.value
        return None

    def is_number(self, node) -> bool:
        """A Python number surely: a literal, `len(x)`/`int(x)`/`float(x)`, a size
        (`x.size(0)`, `x.shape[0]`, `x.numel()`), or arithmetic of those."""
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (int, float))
        if isinstance(node, ast.Call):
            func = node.func
            return (isinstance(func, ast.Name) and func.id in ("len", "int", "float", "bool")) or \
                (isinstance(func, ast.Attribute) and func.attr in N.METADATA_METHODS)
        if isinstance(node, ast.Subscript):
            return isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
        if isinstance(node, ast.BinOp):
            return self.is_number(node.left) and self.is_number(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.is_number(node.operand)
        return False

    def parameter_attribute(self, node) -> bool:
        """`self.in_proj_weight` in a method of a module class whose `__init__` made it
        an `nn.Parameter`: a leaf that requires grad.  Also `self.conv.weight`, the
        weight of a layer with parameters that the class built (or was handed), not
        frozen: `F.conv2d(x, self.conv.weight)` computes from a leaf that requires grad."""
        if not isinstance(node, ast.Attribute):
            return False
        if isinstance(node.value, ast.Name):
            owner = self.scope.module_class or self.scope.owner_class  # a plain class: class_leaves.py
            return node.value.id == "self" and bool(owner) and \
                node.attr in self.modules.parameter_attributes.get(owner, ())
        if node.attr != "weight" or not isinstance(node.value, ast.Attribute):
            return False
        spec = self.modules.self_attribute_spec(node.value, self.scope.owner_class)
        frozen = self.modules.frozen
        return spec is not None and spec.parameterised and spec.kind in N.LAYERS_WITH_WEIGHT \
            and self.text(node.value) not in frozen and "class " + spec.kind not in frozen

    def is_const(self, node) -> bool:
        """True for values built only from factories and literals (no ``requires_grad``)."""
        if isinstance(node, (ast.Constant, ast.Compare)):  # comparisons give bool tensors
            return True
        if isinstance(node, ast.Name):
            return node.id in self.scope.consts
        if isinstance(node, ast.Call):
            if any(k.arg == "requires_grad" for k in node.keywords):
                return False
            if self.integer_result(node):
                return True
            q = self.qualname(node.func)
            if q is not None:
                if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
                    return False  # requires grad by default
                if q == "torch.autograd.grad":  # gradients without a graph of their own
                    return len(node.args) < 5 and not any(
                        k.arg is None or (k.arg == "create_graph" and not (
                            isinstance(k.value, ast.Constant) and k.value.value in (False, None)))
                        for k in node.keywords)
                if q.startswith("torch.") and q[6:] in N.FACTORIES:
                    # `torch.randn_like(param)` takes only the shape, dtype and device of its
                    # tensor argument: what it returns never carries that tensor's graph.
                    return q.endswith("_like") or all(self.is_const(a) or not self.is_tensor(a) for a in node.args)
                return N.is_tensor_function(q) and bool(node.args) and \
                    all(self.is_const(a) for a in node.args)
            if isinstance(node.func, ast.Attribute):
                if node.func.attr in N.GRAD_CUTTING_METHODS:  # `x.detach()`: no graph, whatever x is
                    return True
                return node.func.attr != "requires_grad_" and self.is_const(node.func.value) and \
                    all(self.is_const(a) for a in node.args if self.is_tensor(a))
            return False
        if isinstance(node, ast.Attribute):
            return node.attr == "data" or (node.attr in N.VIEW_ATTRIBUTES and self.is_const(node.value))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
            return True  # `mask_a & mask_b`: bool (or integer) tensors carry no graph
        if isinstance(node, ast.BinOp):  # `const_tensor * (-math.log(1e4) / d)` stays constant
            # each side asked once, and the right one only if the left allows it:
            # asking twice doubles the work at every level of a long sum
            # (`w1 * l1 + w2 * l2 + ...`), 2**depth calls in all
            left, right = node.left, node.right
            left_const = self.is_const(left)
            if not left_const and self.is_tensor(left):
                return False  # a tensor with a graph, maybe: so is the result
            right_const = self.is_const(right)
            if not right_const and self.is_tensor(right):
                return False
            left_literal, right_literal = isinstance(left, ast.Constant), isinstance(right, ast.Constant)
            return (left_const and not left_literal) or (right_const and not right_literal) or \
                (left_literal and right_literal)
        if isinstance(node, ast.UnaryOp):
            return self.is_const(node.operand)
        if isinstance(node, ast.Subscript):
            return self.is_const(node.value)
        return False

    def calls_own_module(self, call) -> bool:
        """`self(x)` in a method of an nn.Module subclass: a call of the module (its
        forward, computed from its parameters)."""
        return isinstance(call.func, ast.Name) and call.func.id == "self" and bool(call.args) \
            and bool(self.scope.module_class)

    def integer_result(self, call) -> bool:
        """``x.gt(0)``, ``torch.argmax(x)``, ``x.long()``: a bool or integer result, no graph."""
        func = call.func
        q = self.qualname(func)
        if q is not None:
            return q.startswith("torch.") and q.count(".") == 1 and q[6:] in N.INTEGER_RESULT_METHODS
        return isinstance(func, ast.Attribute) and func.attr in N.INTEGER_RESULT_METHODS \
            and self.is_tensor(func.value)

    def view_base(self, node, shares_version: bool = False) -> str | None:
        """The name whose storage ``node`` views: ``x[0].t()`` -> ``x``.

        ``shares_version``: only views that share the name's version counter, as an op's
        saved argument does (`conv(x.transpose(1, 2))` keeps a view of `x`, so a later
        write to `x` breaks that backward): basic indexing with constants and slices
        and the view methods, never a copy (advanced indexing) nor `.data`, which has
        a version counter of its own."""
        while True:
            if isinstance(node, ast.Name):
                return node.id
            if isinstance(node, ast.Subscript) and (not shares_version or self.basic_index(node.slice)):
                node = node.value
            elif isinstance(node, ast.Attribute) and node.attr in N.VIEW_ATTRIBUTES \
                    and not (shares_version and node.attr == "data"):
                node = node.value
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in N.VIEW_METHODS):
                node = self._viewed_operand(node)
                if node is None:
                    return None
            else:
                return None

    def _viewed_operand(self, call):
        """What the view call ``call`` views: the receiver of a tensor method
        (`x.unsqueeze(-1)` -> `x`), the first argument of torch's function form
        (`torch.unsqueeze(x, -1)` -> `x`, never the module `torch`), and None for
        another imported module's function (`np.squeeze(a)`: a copy or not a tensor).
        The receiver is an imported module when its name resolves to an import."""
        receiver = call.func.value
        if self.qualname(receiver) is None:
            return receiver
        q = self.qualname(call.func) or ""
        if (q.startswith("torch.") or q == "torch") and call.args \
                and not isinstance(call.args[0], ast.Starred):
            return call.args[0]
        return None

    def layer_parameter(self, node) -> bool:
        """True when ``node`` is (a view of) the ``weight`` or ``bias`` of a layer bound to
        a name in this file: ``dense.weight[:, 0]`` after ``dense = nn.Linear(...)``."""
        while True:
            if isinstance(node, ast.Subscript):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in N.VIEW_METHODS:
                node = node.func.value
            elif isinstance(node, ast.Attribute) and node.attr in ("weight", "bias"):
                return isinstance(node.value, ast.Name) and node.value.id in self.modules.name_specs
            elif isinstance(node, ast.Attribute) and node.attr in N.VIEW_ATTRIBUTES:
                node = node.value
            else:
                return False

    def is_view_of(self, node, name: str) -> bool:
        """True when ``node`` is a view of ``name`` (but not ``name`` itself)."""
        if isinstance(node, ast.Name):
            return False
        if isinstance(node, ast.Subscript) and not self.basic_index(node.slice):
            return False
        if isinstance(node, ast.Call) and self.summaries.parameter_views:
            viewed = self.summaries.viewed_argument(node, self.scope.owner_class)
            if viewed is not None:  # `swap(s)` of a same-file `def swap(m): return m.t()`
                return (isinstance(viewed, ast.Name) and viewed.id == name) or self.is_view_of(viewed, name)
        return self.view_base(node) == name

    def basic_index(self, index) -> bool:
        """Slices, ints, None and Ellipsis make views; lists and tensors copy."""
        items = index.elts if isinstance(index, ast.Tuple) else [index]
        for item in items:
            if isinstance(item, ast.Slice):
                continue
            if isinstance(item, ast.Constant) and (item.value is None or item.value is Ellipsis
                                                   or isinstance(item.value, int)):
                continue
            if isinstance(item, ast.UnaryOp) and isinstance(item.operand, ast.Constant):
                continue
            if self.is_int(item):  # `x[i - 1]` with `for i in range(n)`
                continue
            return False
        return True

    def is_int(self, node) -> bool:
        """An int for certain: a literal, a name bound by `for i in range(...)` (or
        the index of `enumerate`) or to a literal, and `+ - * // %` of those."""
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self.is_int(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
            return self.is_int(node.left) and self.is_int(node.right)
        if isinstance(node, ast.Name):
            entry = self.scope.binding(node.id, self.seq + 1)
            if entry is None:
                return False
            value = entry[1]
            return entry[0] in self.scope.int_bindings or (
                isinstance(value, ast.Constant) and type(value.value) is int)
        return False

    def is_builtin_call(self, node, name: str) -> bool:
        """`range(...)`, `enumerate(...)`: a call of the builtin, not re-bound in the file."""
        return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
                and self.qualname(node.func) in (None, name))

    def is_tensor_annotation(self, ann) -> bool:
        if ann is None:
            return False
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            return ann.value in ("Tensor", "torch.Tensor")
        q = self.qualname(ann)
        return q == "torch.Tensor" or (isinstance(ann, ast.Name) and ann.id == "Tensor" and q is None)

    def is_module_base(self, base) -> bool:
        q = self.qualname(base) or ""
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() or q in N.FRAMEWORK_MODULE_BASES:
            return True
        return isinstance(base, ast.Name) and base.id in self.modules.module_classes

    def is_distribution_base(self, base) -> bool:
        """``torch.distributions.Distribution`` (any class of that package) or a
        same-file subclass of one."""
        q = self.qualname(base) or ""
        return q.startswith(N.DISTRIBUTION_BASES) or (
            isinstance(base, ast.Name) and base.id in self.modules.distribution_classes)

    def framework_loss_method(self, bases, method: str) -> bool:
        """``training_step`` of a LightningModule, ``compute_loss`` of a Hugging Face
        ``Trainer`` subclass: the framework backpropagates what they return."""
        packages = N.FRAMEWORK_LOSS_METHODS.get(method)
        return packages is not None and any(
            (self.qualname(b) or "").startswith(packages) or
            (isinstance(b, ast.Name) and b.id in self.modules.framework_classes) for b in bases)

    def is_graph(self, node) -> bool:
        if node is None:
            return False
        return self._is_graph(node)

    def _is_graph(self, node) -> bool:
        """True when ``node`` is known to carry an autograd graph (a non-leaf that
        requires grad): the output of a parameterised module of this class, or an op
        on such a value or on a leaf that requires grad."""
        if isinstance(node, ast.Name):
            return node.id in self.scope.graph or node.id in self.scope.grad_leaves or (
                self.with_graph_arguments and node.id in self.scope.graph_arguments) or (
                self.with_untyped_arguments and node.id in self.scope.untyped_arguments)
        if self.is_grad_leaf(node) or self.parameter_attribute(node):
            return True
        if self.with_untyped_arguments and self.on_untyped_argument(node):
            return True  # `logits / temperature`, `spec.pow(0.5)`: a tensor where the caller passes one
        if self.is_const(node) or not self.is_tensor(node):
            return False
        if isinstance(node, ast.Call):
            func = node.func
            entry = self.returned_entry(node, None)
            if entry is not None:  # a same-file function's result (summaries.py)
                return entry
            spec = self.called_module(node)
            if spec is not None:  # `self.act(h)`: an activation passes on its input's graph
                frozen = bool(self.modules.frozen) and (self.text(func) in self.modules.frozen
                                                        or "class " + spec.kind in self.modules.frozen)
                return (spec.parameterised and not frozen) or any(self.is_graph(a) for a in node.args)
            if self.calls_own_module(node):
                return True  # `self(x)` in a training_step: the module's own forward
            operands = list(node.args) + [k.value for k in node.keywords]
            if isinstance(func, ast.Attribute) and self.qualname(func) is None:
                operands.append(func.value)
            return any(self.is_graph(a) for a in operands)
        if isinstance(node, ast.BinOp):
            return self.is_graph(node.left) or self.is_graph(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.is_graph(node.operand)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Call):
            element = self.reduction_pair_element(node)
            if element is not None:  # `x.max(1)[0]`: the values keep `x`'s graph, the indices none
                return element[1] == 0 and self.is_graph(element[0])
        if isinstance(node, ast.Attribute) and (node.attr == "data" or (
                node.attr == "grad" and "create_graph" not in getattr(self, "source", "create_graph"))):
            # `x.data` is cut from the graph; `x.grad`, filled by a backward without
            # `create_graph=True` (none in the file), has no graph of its own
            return False
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            return self.is_graph(node.value)
        return False

    def call_summary(self, call):
        """The summary (summaries.py) of what ``call`` returns: of the same-file function
        it calls, or of the `forward` of the same-file module class of the held layer it
        calls (`q1, q2 = self.critic(s)`, `self.critic = TwinnedQNetwork(...)`)."""
        summary = self.summaries.of_call(call, self.scope.owner_class)
        if summary is None and isinstance(call, ast.Call) and not isinstance(call.func, ast.Name):
            spec = self.called_module(call)
            if spec is not None and spec.kind in self.modules.module_classes:
                summary = self.summaries.returns.get((spec.kind, "forward"))
        return summary

    def returned_entry(self, call, position: int | None) -> bool | None:
        """Whether what the same-file function ``call`` calls returns (element
        ``position`` of its tuple) carries a graph, from its summary: True, False, or
        None when it has no summary for it."""
        summary = self.call_summary(call)
        if summary is None:
            return None
        entries, kind = summary
        if kind == "split":
            entry = entries[0]
        elif (position is None) != (kind is False) or (position or 0) >= len(entries):
            return None
        else:
            entry = entries[position or 0]
        if entry in ("graph", "views"):
            return True
        if entry in ("args", "through"):
            return any(self.is_graph(a) for a in list(call.args) + [k.value for k in call.keywords]
                       if not isinstance(a, ast.Starred))
        return None

    def result_carries_graph(self, node) -> bool:
        """Positive evidence that the result of the op ``node`` is part of a graph, so
        that what it saves is needed by a backward pass: it is computed from a
        parameterised module, a graph tensor or a leaf that requires grad, or (in an
        ``nn.Module``'s ``forward``) from a tensor argument, which callers pass from
        the layers before it.  Unknown sources give False: no claim."""
        self.with_graph_arguments = True
        try:
            return self.is_graph(node)
        finally:
            self.with_graph_arguments = False

    def computed_from_untyped_arguments(self, node) -> bool:
        """``node`` would carry a graph if the function's untyped parameters did (a
        tensor op on them or on what was computed from them): the graph then needs a
        call that passes one there (graph_callers.py)."""
        self.with_untyped_arguments = True
        try:
            return self.is_graph(node)
        finally:
            self.with_untyped_arguments = False

    def on_untyped_argument(self, node) -> bool:
        """An operator or a method call directly on an untyped parameter (or a value
        computed from one): `logits / temperature`, `spec.pow(0.5)`."""
        if isinstance(node, ast.BinOp):
            operands = (node.left, node.right)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            operands = (node.func.value,)
        else:
            return False
        return any(isinstance(o, ast.Name) and o.id in self.scope.untyped_arguments for o in operands)

    def untyped_origins(self, node) -> frozenset:
        """The positions (and names) of the untyped parameters ``node`` is computed from."""
        origins = frozenset()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.scope.untyped_arguments:
                origins |= self.scope.untyped_arguments[n.id]
        return origins

    def is_grad_leaf(self, node) -> bool:
        """A leaf that requires grad: ``torch.zeros(3, requires_grad=True)``, ``nn.Parameter(t)``."""
        if not isinstance(node, ast.Call):
            return False
        q = self.qualname(node.func) or ""
        if q in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return not any(k.arg == "requires_grad" and isinstance(k.value, ast.Constant)
                           and k.value.value is False for k in node.keywords)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
            return not self.false_arg(node) and (self.is_const(node.func.value) or
                                                 self.is_grad_leaf(node.func.value) or
                                                 self._fresh_copy(node.func.value))
        return q.startswith("torch.") and q[6:] in N.FACTORIES and any(
            k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords)

    def _fresh_copy(self, node) -> bool:
        """A tensor that is a leaf of its own: `t.detach()` (or a `.clone()` of it), or a
        `.clone()` of an untyped parameter, the caller's tensor (`batch.clone()` in
        `def compute(self, batch, rows)`, as `input_.requires_grad_(True)` takes it)."""
        if not isinstance(node, ast.Call) or node.args or node.keywords or not isinstance(node.func, ast.Attribute):
            return False
        attr, base = node.func.attr, node.func.value
        if attr == "detach":
            return True
        if attr == "clone":
            return self._fresh_copy(base) or self.untyped_parameter(base)
        return False

    def narrowing(self, test) -> tuple[str, bool] | None:
        """``("x", True)`` for ``isinstance(x, torch.Tensor)``, ``("x", False)`` for
        ``not isinstance(x, torch.Tensor)``: what the test proves in its true branch."""
        positive = True
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, positive = test.operand, not positive
        name = self.isinstance_tensor(test)
        return (name, positive) if name else None

    def isinstance_tensor(self, test) -> str | None:
        """``x`` for ``isinstance(x, torch.Tensor)`` (or a tuple holding it)."""
        if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name)):
            types = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
            if any(self.qualname(t) in ("torch.Tensor", "torch.nn.Parameter") for t in types):
                return test.args[0].id
        return None

    def saving_op(self, node):
        """``(key, table entry)`` when ``node`` is an op in saves.json, else None."""
        table = N.saves_table()
        if isinstance(node, ast.BinOp):
            name = BINOP_NAMES.get(type(node.op))
            if name is None or not self.is_tensor(node.left):
                return None
            right = node.right
            scalar = isinstance(right, ast.Constant) and isinstance(right.value, NUMBER_TYPES) or (
                isinstance(right, ast.UnaryOp) and isinstance(right.operand, ast.Constant))
            key = f"operator.{name}:scalar" if scalar else f"operator.{name}"
            if not scalar and not self.is_tensor(right):
                return None
            entry = table.get(key)
            return (key, entry) if entry else None
        if not isinstance(node, ast.Call):
            return None
        q = self.qualname(node.func)
        func = node.func
        if q is None and func.__class__ is ast.Attribute and func.attr == "apply" \
                and func.value.__class__ is ast.Name:
            entry = self.custom_function_saves().get(func.value.id)
            if entry is not None:  # `Square.apply(z)`: the receiver is argument 0
                return f"custom:{func.value.id}", entry
        if q is None and isinstance(func, ast.Attribute):
            recv = func.value
            if isinstance(recv, ast.Name) and recv.id == "self" and self.scope.module_class:
                return None  # a module call: see ExpressionEvents.module_call
            elif self.is_tensor(recv) or func.attr in N.TENSOR_ONLY_METHODS:  # `x.exp()`: x is a tensor
                q = "torch.Tensor." + func.attr

        if q is not None and q.rsplit(".", 1)[-1] in N.OVERLOADED_OPS and q.startswith("torch."):
            suffix = self.overload(node, q)
            q = None if suffix is None else q + suffix
        if q is not None and q.startswith("torch.nn.functional.") and any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords):
            q += ":inplace"  # `F.silu(x, inplace=True)` keeps a copy of x, not x itself
        if q is None or q not in table:
            return None
        scalar_key = SCALAR_FORMS.get(q.rsplit(".", 1)[-1])
        if scalar_key is not None:  # `torch.pow(x, 2.0)` saves less than `torch.pow(x, y)`
            args = list(node.args)
            other = args[0] if q.startswith("torch.Tensor.") and args else \
                args[1] if len(args) > 1 and not q.startswith("torch.Tensor.") else None
            if other is None:  # `torch.pow(d, exponent=0.5)`: the keyword's value picks the overload
                other = next((k.value for k in node.keywords if k.arg in ("exponent", "other")), None)
            if other is not None and not self.is_tensor(other):
                return (scalar_key, table[scalar_key]) if scalar_key in table else None
        return q, table[q]

    def custom_function_saves(self) -> dict:
        """Saves-table entries for the file's own `torch.autograd.Function` classes
        whose `forward` saves inputs as they are (custom_functions.saved_inputs), by
        class name; a name defined more than once is left out."""
        cached = getattr(self, "_custom_saves", None)
        if cached is None:
            cached = {}
            if "save_for_backward" in self.source:
                from autograd_doctor.lint.custom_functions import saved_inputs
                classes = [n for n in ast.walk(self.tree) if isinstance(n, ast.ClassDef)]
                names = [c.name for c in classes]
                for cls in classes:
                    saved = saved_inputs(cls, self.qualname) if names.count(cls.name) == 1 else None
                    if saved:
                        cached[cls.name] = {"grad_fn": f"{cls.name}Backward", "inputs": [i + 1 for i in saved],
                                            "output": False, "saved": [], "custom": True}
            self._custom_saves = cached
        return cached

    def overload(self, call, q) -> str | None:
        """Which overload of ``torch.min``-like ``q`` the call is, as a suffix of its
        saves-table key: ``":other"`` (a tensor second argument), ``":dim"`` (a
        dimension), ``""`` (a whole-tensor reduction); None when the second
        argument's kind is unknown (a name that may hold either)."""
        method = q.startswith("torch.Tensor.")
        positional = call.args[0 if method else 1:]
        keywords = {k.arg: k.value for k in call.keywords}
        second = positional[0] if positional else keywords.get("other", keywords.get("dim"))
        if second is None:
            return ""
        if "dim" in keywords or isinstance(second, ast.Constant) or \
                (isinstance(second, ast.UnaryOp) and isinstance(second.operand, ast.Constant)):
            return ":dim"
        return ":other" if self.is_tensor(second) else None

    def splits_tensor(self, node) -> bool:
        """True for ``x.chunk(...)``, ``x.split(...)``, ``x.unbind()``, ``torch.chunk(x, ...)``
        on a known tensor: unpacking it gives tensors."""
        if not isinstance(node, ast.Call):
            return False
        q = self.qualname(node.func)
        if q is not None:
            return q in N.SPLITTING_FUNCTIONS and bool(node.args) and self.is_tensor(node.args[0])
        return isinstance(node.func, ast.Attribute) and node.func.attr in N.SPLITTING_METHODS \
            and self.is_tensor(node.func.value)

    def split_source(self, node):
        """The tensor that ``x.chunk(...)`` / ``torch.split(x, ...)`` splits."""
        if isinstance(node, ast.Call):
            if self.qualname(node.func) is not None:
                return node.args[0] if node.args else None
            if isinstance(node.func, ast.Attribute):
                return node.func.value
        return None

    @staticmethod
    def op_entry(key):
        """``(key, saves-table entry)`` for an op key, or None."""
        entry = N.saves_table().get(key or "")
        return (key, entry) if entry else None

    def alias_base(self, value):
        """``(base, kind)`` when ``value`` shares memory with the tensor named
        ``base``: ``t.data`` ("data"), ``t.detach()`` ("detach"), ``t[0]``,
        ``t.view(...)``, ``t.T`` ("view"); ``t.exp_()`` ("view": an in-place method
        returns its receiver, so `e = r.exp_()` names `r` itself); a bare name,
        ``out = t`` ("view"): the same tensor under a second name, so a write through
        either changes what an op saved of the other (r29, r100)."""
        if isinstance(value, ast.Name):
            if value.id not in self.scope.tensors:
                return None
            return self.scope.alias_of.get(value.id, (value.id, "view"))
        kind = None
        node = value
        while True:
            if isinstance(node, ast.Attribute) and node.attr in N.VIEW_ATTRIBUTES:
                kind = kind or ("data" if node.attr == "data" else "view")
                if node.attr == "data":
                    kind = "data"
                node = node.value
            elif isinstance(node, ast.Subscript) and self.basic_index(node.slice):
                kind = kind or "view"
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in N.VIEW_METHODS:
                if node.func.attr == "detach" and kind != "data":
                    kind = "detach"
                kind = kind or "view"
                node = self._viewed_operand(node)
                if node is None:
                    return None
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and N.returns_its_receiver(node.func.attr):
                kind = kind or "view"
                node = node.func.value
            else:
                break
        if kind is None or not isinstance(node, ast.Name) or node.id not in self.scope.tensors:
            return None
        base, base_kind = self.scope.alias_of.get(node.id, (node.id, kind))
        return base, "data" if "data" in (kind, base_kind) else \
            "detach" if "detach" in (kind, base_kind) else "view"

