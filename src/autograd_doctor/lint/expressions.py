"""Expression handlers of the walk: calls, operators and attributes become
events (a save for backward, an in-place write, an in-place activation, a
backward pass, an optimizer step) and candidates for the rules."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.clearing import is_self_call
from autograd_doctor.lint.events import Write
from autograd_doctor.lint.findings import Fix

# In-place fills whose last argument is one value: PyTorch reads it before the
# write (`fill_` clones a value that aliases the target; `masked_fill_` and
# `index_fill_` take `.item()`), so `p.fill_(p[0])` is well defined
# (pytorch3d's tests do exactly this).
_SCALAR_VALUE_METHODS = frozenset({"fill_", "masked_fill_", "index_fill_"})


class ExpressionEvents:
    """Mixed into ``Checker``: reads its facts (``TensorKnowledge``) and appends
    to ``self.scope``'s event lists."""

    def visit_Attribute(self, node):
        if node.attr in N.METADATA_ATTRIBUTES and isinstance(node.value, ast.Name):
            node.value._adl_metadata = True  # `x.shape` reads no values (checker.visit_Name)
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
        if isinstance(func, ast.Attribute) and func.attr in N.METADATA_METHODS and \
                isinstance(func.value, ast.Name):
            func.value._adl_metadata = True  # `x.size(0)` reads no values
        self.visit(func)
        for a in node.args:
            self.visit(a)
        for k in node.keywords:
            self.visit(k.value)
        q = self.qualname(func)
        if q is not None:
            self.check_function_call(node, q)
            if self.scope.loops and not q.startswith("torch.") and "." in q:
                self.scope.imported_calls.append((self.seq, q))  # may clear (ADL018)
        elif isinstance(func, ast.Attribute):
            self.check_method_call(node, func)
        elif isinstance(func, ast.Name) and node.args and self.called_module(node) is not None:
            self.module_call(node, self.called_module(node).input_layer, func.id)
        elif isinstance(func, ast.Name) and self.scope.module_class and not self.scope.grad_off:
            self.module_callees.add(func.id)  # a helper of the module's methods
        if (isinstance(func, ast.Name) and func.id in self.zero_grad_functions) or \
                (is_self_call(node) and func.attr in self.zero_grad_functions):
            self.scope.zero_grads.append(self.next_seq())  # `self.reset_grad()`
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
            fix = self.out_of_place_call_fix(node, first, inplace_kw)
            self.record_inplace_activation(first, node, fix)
            self.record_write(first, node, f"`{short}(..., inplace=True)`", fix=fix)
            self.record_inplace_output_save(first, f"torch.nn.functional.{short}:inplace", node)
        elif (short.endswith("_") and not short.endswith("__") and first is not None
              and (q.count(".") == 1 or q.startswith("torch.nn.functional."))
              and q.startswith("torch.")):
            if short[:-1] in N.INPLACE_FUNCTIONALS or short[:-1] in ("sigmoid", "tanh"):
                self.record_inplace_activation(first, node, None)
            self.record_write(first, node, f"`{q}`")
            self.record_inplace_output_save(first, q[:-1], node)
        out = next((k for k in node.keywords if k.arg == "out"), None)
        if out is not None and q.startswith("torch."):
            self.record_write(out.value, node, "`out=`")
        if q == "copy.deepcopy" and isinstance(first, ast.Name) and first.id in self.name_specs \
                and self.graph_attributes.get(self.name_specs[first.id].kind):
            scope.module_deepcopies.append((node, first.id, self.name_specs[first.id].kind))
        if q == "copy.deepcopy" and first is not None and not scope.grad_off and self.is_graph(first) \
                and not self.is_grad_leaf(first) \
                and not (isinstance(first, ast.Name) and first.id in scope.grad_leaves):
            scope.deepcopies.append((node, first))
        if q in ("torch.tensor", "torch.Tensor") and first is not None and self.is_tensor(first) \
                and not scope.grad_off:
            fix = None
            if q == "torch.tensor" and len(node.args) == 1 and not node.keywords:
                fix = Fix("use `.detach().clone()`",
                          (self.edit(node, self.atom_text(first) + ".detach().clone()"),), safe=True)
            scope.tensor_ctors.append((node, first, fix))
        if q in ("torch.autograd.grad", "torch.autograd.backward"):
            seq = self.next_seq()
            scope.backwards.append((seq, node))
            if first is not None:
                scope.backward_receivers.append((seq, node, first))
        scoped = getattr(node, "_adl_context", False)  # `with ...:` switches it off again
        if q in ("torch.autograd.set_detect_anomaly", "torch.autograd.anomaly_mode.set_detect_anomaly") \
                and isinstance(first, ast.Constant) and first.value is True \
                and not self.guard_depth and not scoped:
            scope.anomaly.append((node, "anomaly detection is switched on unconditionally; it slows "
                                        "every forward and backward pass"))
        if q in ("torch.autograd.detect_anomaly", "torch.autograd.anomaly_mode.detect_anomaly") \
                and not self.guard_depth and not self.false_arg(node) and not scoped:
            scope.anomaly.append((node, "`detect_anomaly()` is left on unconditionally; it slows "
                                        "every forward and backward pass"))
        if q.startswith("torch."):
            for k in node.keywords:
                if k.arg in N.REQUIRES_GRAD_TYPOS:
                    scope.grad_typos.append((k, k.arg))

    def check_method_call(self, node, func):
        scope = self.scope
        attr = func.attr
        recv = func.value
        if attr == "zero_grad" or (attr in ("zero_", "detach_", "fill_", "requires_grad_")
                                   and self.mentions_grad(recv)):
            scope.zero_grads.append(self.next_seq())
        if attr == "requires_grad_" and isinstance(recv, ast.Name):
            scope.consts.discard(recv.id)  # a factory tensor that now requires grad
            if self.false_arg(node):
                scope.grad_leaves.discard(recv.id)
            elif recv.id in scope.tensors and recv.id not in scope.graph:
                scope.grad_leaves.add(recv.id)
        if attr.endswith("_") and not attr.startswith("_") and attr not in N.NOT_WRITING_METHODS:
            fix = None
            if (isinstance(recv, ast.Name) and attr[:-1] in N.OUT_OF_PLACE and recv.id in scope.tensors
                    and self.statement_is(node)):
                fix = Fix(f"write out of place: `{recv.id} = {recv.id}.{attr[:-1]}(...)`",
                          (self.edit(func, f"{recv.id} = {recv.id}.{attr[:-1]}"),), safe=False)
            self.record_write(recv, node, f"`.{attr}()`", fix=fix)
            self.record_inplace_output_save(recv, "torch.Tensor." + attr[:-1], node)
            # Only a write to the whole tensor is checked: two views of one base
            # (`x.select(0, 0).copy_(x.select(0, 1))`) may well be disjoint.
            if isinstance(recv, ast.Name) and recv.id in scope.tensors:
                for arg in node.args:
                    if attr in _SCALAR_VALUE_METHODS and arg is node.args[-1]:
                        continue
                    self.check_overlap(recv.id, arg, node)
        elif attr == "detach" and not node.args and isinstance(recv, ast.Call) and \
                isinstance(recv.func, ast.Attribute) and recv.func.attr == "clone" and not recv.args:
            inner = recv.func.value
            if self.is_const(inner) or scope.grad_off:
                return
            head = self.text(recv.func)
            head = head[:head.rfind("clone")].rstrip()
            clone_args = self.text(recv)[len(self.text(recv.func)):]
            fix = Fix("call `.detach()` before `.clone()`",
                      (self.edit(node, head[:-1].rstrip() + ".detach().clone" + clone_args),),
                      safe=True) if head.endswith(".") and clone_args.startswith("(") else None
            scope.clone_detach.append((node, inner, fix))
        elif attr in ("backward", "manual_backward"):
            if node.args and (attr == "manual_backward" or self.text(recv).lower().endswith(
                    N.FRAMEWORK_BACKWARD_RECEIVERS)):
                recv = node.args[0]  # `accelerator.backward(loss)` runs `loss.backward()`
            elif attr == "manual_backward":
                return
            elif isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) \
                    and recv.func.attr == "scale" and len(recv.args) == 1:
                recv = recv.args[0]  # AMP: `scaler.scale(loss).backward()`
            retain = any(k.arg == "retain_graph" and isinstance(k.value, ast.Constant)
                         and k.value.value is True for k in node.keywords)
            seq = self.next_seq()
            (scope.retain_backwards if retain else scope.backwards).append((seq, node))
            scope.backward_receivers.append((seq, node, recv))
            while isinstance(recv, (ast.Call, ast.Attribute)):
                recv = recv.func if isinstance(recv, ast.Call) else recv.value
            if isinstance(recv, ast.Name):
                scope.backward_names.add(recv.id)
        elif attr == "step" and isinstance(recv, (ast.Name, ast.Attribute)):
            name = (recv.id if isinstance(recv, ast.Name) else recv.attr).lower()
            # `optimizer.step()`, or AMP's `scaler.step(optimizer)`
            if "opt" in name and not node.args:
                scope.steps.append((self.next_seq(), node, self.text(recv)))
            elif "scaler" in name and len(node.args) == 1:
                scope.steps.append((self.next_seq(), node, self.text(node.args[0])))
        elif attr == "register_buffer" and isinstance(recv, ast.Name) and recv.id == "self" \
                and scope.module_class and node.args and isinstance(node.args[0], ast.Constant):
            self.buffers[scope.module_class].add(node.args[0].value)
        elif attr in ("parameters", "named_parameters") and isinstance(recv, (ast.Name, ast.Attribute)):
            self.param_owners.append(self.text(recv))
        elif attr in ("append", "insert") and isinstance(recv, ast.Name) and node.args \
                and recv.id not in scope.tensors:
            self.record_store(recv.id, node.args[-1], node)
        elif node.args and self.called_module(node) is not None:
            self.module_call(node, self.called_module(node).input_layer, f"self.{attr}")

    def out_of_place_call_fix(self, node, first, inplace_kw):
        """`inplace=False`, keeping the effect: as a statement, `F.threshold(x, ...,
        inplace=True)` only has its effect on `x`, so it becomes `x = F.threshold(x,
        ..., inplace=False)`; a statement writing anything but a plain name gets no
        fix (with `inplace=False` it would compute a value and drop it)."""
        edits = [self.edit(inplace_kw.value, "False")]
        if self.statement_is(node):
            if not isinstance(first, ast.Name):
                return None
            edits.insert(0, self.insert_before(node, f"{first.id} = "))
        return Fix("pass `inplace=False`" + (f" and re-bind `{first.id}`" if len(edits) > 1 else ""),
                   tuple(edits), safe=False)

    def module_call(self, node, layer, text):
        """``self.<attr>(x)``: its input layer writes ``x`` (inplace=True) or saves it."""
        arg = node.args[0]
        if self.scope.grad_off:
            return
        if layer.inplace:
            kw = layer.inplace_keyword
            # As a statement (`self.act(x)`), the module's only effect is the write:
            # constructing it with inplace=False would make the call dead code.
            fix = Fix("construct the module with `inplace=False`", (self.edit(kw.value, "False"),),
                      safe=False) if kw is not None and not self.statement_is(node) else None
            how = f"`{text}` (inplace=True)" if layer.kind in N.INPLACE_MODULES else \
                f"`{text}` (its forward writes its argument in place)"
            self.record_inplace_activation(arg, node, fix, module=how)
            self.record_write(arg, node, how, fix=fix)
            if layer.saves_output and layer.inplace_key:  # `nn.ReLU(inplace=True)`
                self.record_inplace_output_save(arg, layer.inplace_key, node)
            elif layer.saves_output:  # a same-file module that writes its input
                self.record_inplace_output_save(arg, layer.op or "", node, activation=True)
            return
        op = self.op_entry(layer.op)
        if op is not None:
            self.record_input_saves(op, [arg], node)

    @staticmethod
    def mentions_grad(node) -> bool:
        """`p.grad`, `p.grad.data`: the receiver is a gradient."""
        while isinstance(node, ast.Attribute):
            if node.attr == "grad":
                return True
            node = node.value
        return False

    def statement_is(self, call) -> bool:
        """True when ``call`` is a whole expression statement (its value is unused)."""
        return getattr(call, "_adl_stmt", False)

    def visit_Expr(self, node):
        if isinstance(node.value, ast.Call):
            node.value._adl_stmt = True
        self.visit(node.value)

    def add_save(self, name, key, how, node):
        """``name``'s value is saved for backward; a view (or `.data`) of another
        tensor shares its memory and version counter, so its base is saved too."""
        seq = self.next_seq()
        if self.result_carries_graph(node):
            self.scope.graph_saves.add(seq)
        self.scope.saves[name].append((seq, key, how, node))
        if name in self.scope.alias_of:
            self.scope.saves[self.scope.alias_of[name][0]].append((seq, key, how, node))

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
                self.add_save(args[i].id, key, f"input {i}", node)

    def record_write(self, target, node, how, fix=None):
        scope = self.scope
        via, via_source, through_data = "", "", False
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
                through_data = through_data or probe.attr == "data"
                probe = probe.value
            else:
                break
        if isinstance(probe, ast.Attribute) and probe.attr in ("weight", "bias") and isinstance(probe.value, ast.Name):
            self.record_module_parameter_write(probe, node, how, via, through_data)
            return
        if not isinstance(probe, ast.Name):
            return
        name = probe.id
        seq = self.next_seq()
        source = scope.detached.get(name, ("", 0))[0]
        leaf = "parameter" if name in scope.parameter_vars else \
            "factory" if name in scope.grad_leaves else ""
        scope.writes.append(Write(seq, name, node, how, not scope.grad_off, fix, via, via_source,
                                  source if source != name else "", name in scope.expanded,
                                  through_data, leaf, scope.split_views.get(name, "")))
        if name in scope.alias_of:  # `s = t.data; s.zero_()` writes t
            base, kind = scope.alias_of[name]
            leaf = "parameter" if base in scope.parameter_vars else \
                "factory" if base in scope.grad_leaves else ""
            scope.writes.append(Write(seq, base, node, f"{how} through `{name}`", not scope.grad_off,
                                      None, "detach" if kind == "detach" else via, "", "", False,
                                      through_data or kind == "data", leaf))
        for loop in scope.loops:
            loop.written.add(name)

    def record_module_parameter_write(self, probe, node, how, via, through_data):
        """`dense.weight[:, 0] -= v` where this function made `dense = nn.Linear(...)`: the
        write is to a parameter, a leaf that requires grad. Files that mention
        `requires_grad` at all may have frozen it, so they are left alone."""
        owner = probe.value.id
        spec = self.name_specs.get(owner)
        scope = self.scope
        if spec is None or not spec.parameterised or owner not in scope.binds or "requires_grad" in self.source:
            return
        scope.writes.append(Write(self.next_seq(), f"{owner}.{probe.attr}", node, how, not scope.grad_off, None,
                                  via, "", "", False, through_data, "module"))

    def record_inplace_output_save(self, target, key, node, activation=False):
        """An in-place op that keeps its output (`x.relu_()`, `nn.ReLU(inplace=True)(x)`)
        saves the tensor it wrote: a later write to it breaks backward.  In-place
        activations (``activation``) all keep their output: their input is gone."""
        entry = N.saves_table().get(key)
        if entry is None or self.scope.grad_off or not (entry["output"] or activation):
            return
        if isinstance(target, ast.Name) and target.id in self.scope.tensors \
                and target.id not in self.scope.consts:
            self.add_save(target.id, key, "output", node)

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
            self.scope.overlaps.append((node, value, target))
