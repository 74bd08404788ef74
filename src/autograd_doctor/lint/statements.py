"""Assignment statements: what a name is bound to (facts), what an op saved
when its result is named, in-place augmented assignments, stores into
containers and attributes, optimizers and the modules they step."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.findings import Fix
from autograd_doctor.lint.rules import adl016_requires_grad_typo as requires_grad_typo
from autograd_doctor.lint.source import ATOMS

AUG_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**",
              ast.MatMult: "@", ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&",
              ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}


class AssignmentEvents:
    """Mixed into ``Checker``."""

    def visit_Assign(self, node):
        owners = self.param_owners
        self.param_owners = []
        self.visit(node.value)
        self.record_optimizer(node.targets, node.value)
        self.param_owners = owners + self.param_owners
        single = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        loss_list = self.tensor_list(node.value) if single else None
        for target in node.targets:
            self.assign_target(target, node.value, node)
        if single:
            self.after_named_value(node.targets[0].id, node.value, loss_list)

    def visit_AnnAssign(self, node):
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            single = isinstance(node.target, ast.Name)
            loss_list = self.tensor_list(node.value) if single else None
            self.assign_target(node.target, node.value, node)
            if single:
                self.after_named_value(node.target.id, node.value, loss_list)

    def record_optimizer(self, targets, value):
        """``opt = torch.optim.Adam(model.parameters())``: remember whose parameters
        ``opt`` steps (ADL003), and which modules' parameters a list holds."""
        if not isinstance(value, ast.Call) or len(targets) != 1 or \
                not isinstance(targets[0], (ast.Name, ast.Attribute)):
            return
        key = self.text(targets[0])
        owners = set(self.param_owners)
        for a in list(value.args) + [k.value for k in value.keywords]:
            if isinstance(a, (ast.Name, ast.Attribute)):
                owners |= self.param_lists.get(self.text(a), set())
        if owners:
            self.param_lists[key] = owners
        q = self.qualname(value.func) or ""
        short = value.func.attr if isinstance(value.func, ast.Attribute) else \
            value.func.id if isinstance(value.func, ast.Name) else ""
        if q.startswith("torch.optim.") or short in N.OPTIMIZER_CLASSES or \
                short in self.scope.optimizer_parameters:  # `optimizer_class=optim.Adam`
            self.optimizers[key] = owners

    def assign_target(self, target, value, stmt):
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts)
            pieces = value is not None and not pairs and self.splits_tensor(value)
            source = None if pairs or pieces else self.values_indices_source(value, target)
            if source is not None:
                self.bind_values_indices(target, value, source, stmt)
                return
            for i, elt in enumerate(target.elts):
                if pairs:
                    self.assign_target(elt, value.elts[i], stmt)
                    if isinstance(elt, ast.Name):
                        self.after_named_value(elt.id, value.elts[i])
                elif isinstance(elt, ast.Name):
                    self.bind(elt.id, None, tensor=pieces, source=value)
                    if pieces and self.is_graph(self.split_source(value)):
                        self.scope.split_views[elt.id] = self.text(value.func)
                        self.scope.graph.add(elt.id)
                    elif pieces and self.scope.graph_arguments and \
                            self.result_carries_graph(self.split_source(value)):
                        self.scope.graph_arguments.add(elt.id)
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
            elif self.layer_parameter(container):
                self.record_write(container, stmt, "an indexed assignment")
            elif isinstance(container, ast.Name) and value is not None:
                self.record_store(container.id, value, stmt)
        elif isinstance(target, ast.Attribute):
            self.visit(target.value)
            if target.attr == "requires_grad" and isinstance(target.value, ast.Name):
                self.scope.consts.discard(target.value.id)
                if isinstance(value, ast.Constant) and value.value is True \
                        and target.value.id in self.scope.tensors:
                    self.scope.grad_leaves.add(target.value.id)
                elif isinstance(value, ast.Constant) and value.value is False:
                    self.scope.grad_leaves.discard(target.value.id)
                    self.scope.parameter_vars.discard(target.value.id)
            requires_grad_typo.on_attribute_assign(self, target, value, stmt)
            if target.attr == "grad" and isinstance(value, ast.Constant) and value.value is None:
                self.scope.zero_grads.append(self.next_seq())  # `p.grad = None`
            if target.attr == "data":
                self.check_data_attribute(target)
            if (isinstance(target.value, ast.Name) and target.value.id == "self"
                    and self.scope.module_class and not self.scope.grad_off
                    and not self.opt_in_depth  # `if use_cache:`: a path callers opt into
                    and value is not None and self.is_graph(value)):
                cls = self.scope.module_class
                self.graph_attributes[cls].append((target.attr, stmt.lineno))
                if target.attr in self.buffers[cls]:
                    self.scope.buffer_stores.append((stmt, target.attr))
            if (isinstance(target.value, ast.Name) and target.value.id == "self"
                    and self.class_stack and self.class_stack[-1] is None
                    and self.scope.module_class and isinstance(value, ast.Call)):
                spec = self.module_spec(value)
                if spec is not None:
                    self.module_specs[self.scope.module_class][target.attr] = spec
        else:
            self.visit(target)

    def values_indices_source(self, value, target):
        """The tensor that `values, indices = x.topk(k)` (or `torch.max(x, dim)`, ...)
        reads, when ``target`` unpacks exactly those two."""
        if len(target.elts) != 2 or not isinstance(value, ast.Call) or \
                any(isinstance(e, ast.Starred) for e in target.elts):
            return None
        func = value.func
        q = self.qualname(func)
        if q is not None:
            if q.startswith("torch.") and q[6:] in N.VALUES_INDICES_METHODS and len(value.args) >= 2:
                return value.args[0]
            return None
        if isinstance(func, ast.Attribute) and func.attr in N.VALUES_INDICES_METHODS and \
                (value.args or value.keywords) and self.is_tensor(func.value):
            return func.value
        return None

    def bind_values_indices(self, target, value, source, stmt):
        """`(sx, sy), (ix, iy) = logits.topk(k)`: the values carry ``source``'s graph,
        the indices are integers; a nested tuple unpacks a tensor into tensors."""
        graph = self.is_graph(source)
        from_arguments = not graph and bool(self.scope.graph_arguments) and \
            self.result_carries_graph(source)
        for i, elt in enumerate(target.elts):
            names = [elt] if isinstance(elt, ast.Name) else \
                list(elt.elts) if isinstance(elt, (ast.Tuple, ast.List)) else []
            if not names or not all(isinstance(n, ast.Name) for n in names):
                self.assign_target(elt, None, stmt)
                continue
            for n in names:
                self.bind(n.id, None, tensor=True, source=value)
                if i == 1:
                    self.scope.consts.add(n.id)
                elif graph:
                    self.scope.graph.add(n.id)
                elif from_arguments:
                    self.scope.graph_arguments.add(n.id)

    def after_named_value(self, name, value, loss_list=None):
        """Record what an op saved when its result is bound to ``name``."""
        spec = self.called_module(value)
        op = self.saving_op(value) if spec is None else self.op_entry(spec.output_layer.op)
        if op is not None:
            key, entry = op
            if entry["output"] and not self.scope.grad_off and name not in self.scope.consts:
                self.add_save(name, key, "output", value)
        if loss_list is not None:
            fix = None
            if isinstance(loss_list.func, ast.Attribute) and len(loss_list.args) == 1 \
                    and not loss_list.keywords:
                fix = Fix("stack the tensors: `torch.stack([...])` keeps the graph",
                          (self.edit(loss_list.func, self.text(loss_list.func.value) + ".stack"),),
                          safe=False)
            self.scope.loss_lists.append((name, loss_list, fix))

    def tensor_list(self, value):
        """The ``torch.tensor([a, b])`` call in ``value`` when its elements are tensors
        that may carry a graph (checked before the assignment rebinds any of them)."""
        while (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
               and self.qualname(value.func) is None):  # torch.tensor([...]).sum()
            value = value.func.value
        if (isinstance(value, ast.Call) and self.qualname(value.func) == "torch.tensor"
                and not self.scope.grad_off
                and value.args and isinstance(value.args[0], (ast.List, ast.Tuple))
                and value.args[0].elts
                and all(self.is_tensor(e) and not self.is_const(e) for e in value.args[0].elts)):
            return value
        return None

    def visit_AugAssign(self, node):
        self.visit(node.value)
        target = node.target
        if isinstance(target, ast.Name):
            seq = self.next_seq()
            self.scope.uses[target.id].append(seq)
            self.scope.bind_values[target.id].append((seq, node, self.scope.grad_off))
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
            elif self.layer_parameter(target.value):
                self.record_write(target.value, node, "an augmented assignment")
        else:
            self.visit(target)
            if self.layer_parameter(target):
                self.record_write(target, node, "an augmented assignment")
            if isinstance(target, ast.Attribute) and target.attr == "data":
                self.check_data_attribute(target)
