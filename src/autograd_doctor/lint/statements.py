"""Assignment statements: what a name is bound to (facts), what an op saved
when its result is named, in-place augmented assignments, stores into
containers and attributes, optimizers and the modules they step."""

from __future__ import annotations

import ast

from autograd_doctor.lint import names as N
from autograd_doctor.lint.configured_modules import configured_layer
from autograd_doctor.lint.container_arguments import integer_index, only_indexed_by_integers
from autograd_doctor.lint.modules import RETURN_THE_MODULE
from autograd_doctor.lint.rules import (
    ATTRIBUTE_ASSIGN_HOOKS, INPLACE_WRITE_HOOKS, ITEM_ASSIGN_HOOKS, NAME_ASSIGN_HOOKS,
)


# the ops whose saves-table entry has `outputs` (several tensors returned): `torch.linalg.svd`,
# `a.svd()`, ... (a cheap first test before the table's)
_SEVERAL_OUTPUTS = frozenset({"svd", "eigh", "qr", "slogdet"})


class AssignmentEvents:
    """Mixed into ``Checker``."""

    def visit_Assign(self, node):
        owners = self.training.param_owners
        self.training.param_owners = []
        self.visit(node.value)
        self.record_optimizer(node.targets, node.value)
        self.training.param_owners = owners + self.training.param_owners
        single = len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        if single:  # before the name changes meaning: `x = torch.tensor([x])`
            for hook in NAME_ASSIGN_HOOKS:
                hook(self, node.targets[0].id, node.value)
        for target in node.targets:
            self.assign_target(target, node.value, node)
        if single:
            self.after_named_value(node.targets[0].id, node.value)
        elif len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)):
            self.after_unpacked_value(node.targets[0], node.value)

    def visit_AnnAssign(self, node):
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
            single = isinstance(node.target, ast.Name)
            if single:
                for hook in NAME_ASSIGN_HOOKS:
                    hook(self, node.target.id, node.value)
            self.assign_target(node.target, node.value, node)
            if single:
                self.after_named_value(node.target.id, node.value)

    def record_optimizer(self, targets, value):
        """``opt = torch.optim.Adam(model.parameters())``: remember whose parameters
        ``opt`` steps (ADL003), and which modules' parameters a list holds."""
        if len(targets) == 1 and self.record_element_optimizer(targets[0], value):
            return
        if len(targets) != 1 or not isinstance(targets[0], (ast.Name, ast.Attribute)):
            return
        if not isinstance(value, ast.Call):
            # `params = list(self.enc.parameters()) + list(self.dec.parameters())`, and
            # parameter groups, `groups = [{"params": self.tagger.parameters()}, ...]`
            if isinstance(value, (ast.BinOp, ast.List, ast.Tuple)) and self.training.param_owners:
                self.training.param_lists[self.text(targets[0])] = set(self.training.param_owners)
            return
        key = self.text(targets[0])
        self.record_container_members(key, value)
        owners = set(self.training.param_owners)
        for owner in list(owners):  # `nn.ModuleList([self.enc, self.dec]).parameters()`
            owners |= self.training.container_members.get(owner, set())
        lists = self.training.param_lists
        for a in (list(value.args) + [k.value for k in value.keywords]) if lists else ():
            if isinstance(a, (ast.Name, ast.Attribute)):
                owners |= lists.get(self.text(a), set())
            elif isinstance(a, (ast.ListComp, ast.GeneratorExp, ast.Call)):
                # a list of parameters by name, filtered: `[p for p in params if
                # p.requires_grad]`, `filter(lambda p: p.requires_grad, params)`
                for n in ast.walk(a):
                    if isinstance(n, (ast.Name, ast.Attribute)):
                        owners |= lists.get(self.text(n), set())
        owners |= self.attribute_aliases(owners)
        if owners:
            self.training.param_lists[key] = owners
        q = self.qualname(value.func) or ""
        short = value.func.attr if isinstance(value.func, ast.Attribute) else \
            value.func.id if isinstance(value.func, ast.Name) else ""
        if q.startswith("torch.optim.") or short in N.OPTIMIZER_CLASSES or \
                short in self.scope.optimizer_parameters:  # `optimizer_class=optim.Adam`
            self.training.optimizers[key] = owners
        elif short in self.training.optimizer_methods and owners:
            # a same-file Optimizer subclass (SAM) built on these modules' parameters
            self.training.optimizers[key] = owners
            self.training.optimizer_instances[key] = short

    def record_element_optimizer(self, target, value) -> bool:
        """Optimizers kept one per element of a container of modules, paired by position:
        `optimizerDs[i] = Adam(discriminators[i].parameters())` (the same index name on
        both sides) and `optimizers = [Adam(m.parameters()) for m in models]`.  Recorded as
        the pattern `optimizerDs[*]` over `discriminators[*]`: the step of `optimizerDs[i]`
        updates `discriminators[i]`, for the same `i` (ADL003 checks that the value and
        the step share one iteration of the loop binding `i`).  Whether it handled the
        statement."""
        if N.indexed_element(target, self.text) is not None and isinstance(value, ast.Call):
            base, index = N.indexed_element(target, self.text)
            element = f"[{index}]"
            owners = set(self.training.param_owners)
            if not owners or not all(element in o for o in owners) or not self.builds_optimizer(value):
                return False
            self.training.optimizers[base + N.ELEMENT] = {o.replace(element, N.ELEMENT) for o in owners}
            return True
        if isinstance(target, (ast.Name, ast.Attribute)) and isinstance(value, (ast.List, ast.Tuple)) \
                and len(value.elts) > 1 and all(isinstance(e, (ast.Name, ast.Attribute)) for e in value.elts):
            # `optimizers_local = [optimizer_local1, optimizer_local2]` after `models_local =
            # [model_local1, model_local2]`, each `optimizer_localK` built over `model_localK`
            # alone: the list's element `[i]` steps the other list's element `[i]`
            elements = [self.text(e) for e in value.elts]
            self.training.displays[self.text(target)] = elements
            steps = [self.training.optimizers.get(e) for e in elements]
            if all(owners is not None and len(owners) == 1 for owners in steps):
                stepped = [next(iter(owners)) for owners in steps]
                paired = [name for name, modules in self.training.displays.items() if modules == stepped]
                if len(paired) == 1:
                    self.training.optimizers[self.text(target) + N.ELEMENT] = {paired[0] + N.ELEMENT}
            return False  # the list of parameters case below may still apply
        if isinstance(target, (ast.Name, ast.Attribute)) and isinstance(value, ast.ListComp) \
                and len(value.generators) == 1 and isinstance(value.elt, ast.Call):
            generator = value.generators[0]
            if generator.ifs or generator.is_async or not isinstance(generator.target, ast.Name) \
                    or not isinstance(generator.iter, (ast.Name, ast.Attribute)) \
                    or not self.builds_optimizer(value.elt):
                return False
            var, container = generator.target.id, self.text(generator.iter)
            receivers = [self.text(n.func.value) for n in ast.walk(value.elt)
                         if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and n.func.attr in ("parameters", "named_parameters")]
            # each element's optimizer over that element's parameters (or a part of it)
            if not receivers or not all(r == var or r.startswith(var + ".") for r in receivers):
                return False
            self.training.optimizers[self.text(target) + N.ELEMENT] = \
                {container + N.ELEMENT + r[len(var):] for r in receivers}
            return True
        return False

    def builds_optimizer(self, call) -> bool:
        """``torch.optim.Adam(...)`` (or a class the file's code names as an optimizer)."""
        q = self.qualname(call.func) or ""
        short = call.func.attr if isinstance(call.func, ast.Attribute) else \
            call.func.id if isinstance(call.func, ast.Name) else ""
        return q.startswith("torch.optim.") or short in N.OPTIMIZER_CLASSES

    def attribute_aliases(self, owners) -> set:
        """`self.critic = critic` in the method that builds `Adam(critic.parameters())`
        from its parameter `critic`: the optimizer steps `self.critic` too, the same
        object under the attribute the other methods call.  Only when the parameter is
        never re-bound in the method and the class binds the attribute once, so both
        names hold the one module (ADL003)."""
        node, cls = self.scope.function_node, self.scope.owner_class
        plain = {o for o in owners if o.isidentifier()}
        if node is None or cls is None or not plain:
            return set()
        arguments = node.args
        parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        stored = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        plain = {o for o in plain if o in parameters and o not in stored}
        class_node = next((c for c in self.tree.body if isinstance(c, ast.ClassDef) and c.name == cls), None)
        if not plain or class_node is None:
            return set()
        given: dict = {}  # attribute of `self` -> what each of its bindings in the class gives it
        for statement in ast.walk(class_node):
            targets = statement.targets if isinstance(statement, ast.Assign) else \
                [statement.target] if isinstance(statement, (ast.AugAssign, ast.AnnAssign)) else []
            value = getattr(statement, "value", None)
            for target in targets:
                pairs = [(target, value)]
                if isinstance(target, (ast.Tuple, ast.List)):
                    pairs = list(zip(target.elts, value.elts)) if isinstance(value, (ast.Tuple, ast.List)) \
                        and len(value.elts) == len(target.elts) else [(e, None) for e in target.elts]
                for t, v in pairs:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        given.setdefault(t.attr, []).append(
                            v.id if isinstance(v, ast.Name) and isinstance(statement, ast.Assign) else None)
        return {N.AttributeAlias(f"self.{attr}") for attr, values in given.items()
                if len(values) == 1 and values[0] in plain}

    def record_container_members(self, key, value) -> None:
        """`self.model_modules = nn.ModuleList([self.encoder, self.decoder])`: an
        optimizer over the container's parameters steps those layers (ADL003)."""
        q = self.qualname(value.func) or ""
        if q.rsplit(".", 1)[-1] not in ("ModuleList", "Sequential", "ModuleDict") or \
                not q.startswith("torch.nn."):
            return
        items = value.args[0].elts if len(value.args) == 1 and isinstance(value.args[0], (ast.List, ast.Tuple)) \
            else value.args
        members = {self.text(a) for a in items if isinstance(a, (ast.Name, ast.Attribute))}
        if members:
            self.training.container_members[key] = members

    def assign_target(self, target, value, stmt):
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.record_factory_layers(target, value)
            pairs = isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts)
            pieces = value is not None and not pairs and (
                self.splits_tensor(value) or self.torch_split_of_parameter(value))
            if not pairs and not pieces:
                self.layer_outputs_into_items(target, value, stmt)
            source = None if pairs or pieces else self.values_indices_source(value, target)
            if source is not None:
                self.bind_values_indices(target, value, source, stmt)
                return
            if not pairs and not pieces and self.bind_returned(target, value, stmt):
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
                    elif pieces and self.untyped_parameter(self.split_source(value)):
                        # `theta *= 2 * math.pi` after `..., theta, ... = torch.split(pose, 1, -1)`
                        # in `def transform(pose)`: a hazard where a caller passes a graph
                        self.scope.split_views[elt.id] = self.text(value.func)
                        self.scope.provisional_splits[elt.id] = self.split_source(value).id
                    elif pieces and self.scope.graph_arguments and \
                            self.result_carries_graph(self.split_source(value)):
                        self.scope.graph_arguments.add(elt.id)
                        self.note_origins(elt.id, self.split_source(value))
                elif isinstance(elt, ast.Attribute) and value is not None and self.module_output(value):
                    self.assign_attribute(elt, value, stmt)  # `out, self.hidden = self.rnn(x, self.hidden)`
                elif isinstance(elt, ast.Attribute) and isinstance(value, ast.Name) \
                        and self.named_module_output(value) is not None:
                    # `f, state = self.lstm(x, (self.h, self.c)); (self.h, self.c) = state`
                    self.assign_attribute(elt, self.named_module_output(value), stmt)
                elif isinstance(elt, (ast.Tuple, ast.List)) and not pairs and not pieces \
                        and isinstance(value, ast.Call):
                    self.bind_nested_outputs(elt, value, stmt)  # `out, (h, c) = self.lstm(x, (h, c))`
                else:
                    self.assign_target(elt.value if isinstance(elt, ast.Starred) else elt, None, stmt)
        elif isinstance(target, ast.Subscript):
            if isinstance(target.value, ast.Attribute) and target.value.attr == "data":
                target.value._adl_written = True
            if isinstance(target.value, ast.Attribute) and value is not None:
                for hook in ITEM_ASSIGN_HOOKS:
                    hook(self, target, value, stmt)
            self.visit(target.value)
            self.visit(target.slice)
            base = self.view_base(target.value)
            container = target.value
            if isinstance(container, ast.Name) and value is not None and \
                    self.list_results.get((id(self.scope), container.id)) == len(self.scope.binds.get(container.id, ())):
                base = None  # `layers[-1] = ...` of a module's returned list: an item replaced
                container = None
            elif self.indexed_container(target):
                base = None  # `nodes_list[0] = ...`: a list element replaced (container_arguments.py)
                if value is not None and not self.scope.grad_off and self.is_graph(value):
                    # the element now holds a graph tensor (`x[i] = self.m[i](x[i])`): what
                    # is computed from `x[i]` carries it (`y = x[i].sigmoid()` saves y);
                    # element assignments stay element replacements (cached above)
                    self.scope.tensors.add(target.value.id)
                    self.holds_written_graph(target.value.id, value)
            if base is not None and base in self.scope.tensors or isinstance(container, ast.Call):
                self.record_write(target.value, stmt, "an indexed assignment",
                                  ("indexed", base) if base else ())
                self.note_self_index(target, stmt)
                self.note_transposed_self_copy(target, value, stmt)
                if base is not None and value is not None and not self.scope.grad_off:
                    self.holds_written_graph(base, value)
            elif self.layer_parameter(container):
                self.record_write(container, stmt, "an indexed assignment")
            elif self.keyed_self_attribute(target) is not None and isinstance(value, ast.Call):
                self.record_keyed_layer(self.keyed_self_attribute(target), value)  # `self.models["enc"] = Enc()`
            elif isinstance(container, ast.Name) and value is not None:
                if container.id in self.scope.parameters and container.id not in ("self", "cls") \
                        and not self.scope.grad_off:
                    # `def fill(h, mask, v): h[mask] = v`: writes whatever tensor the caller passes
                    self.scope.parameter_index_writes.append((self.next_seq(), container.id, stmt))
                self.record_store(container.id, value, stmt)
        elif isinstance(target, ast.Attribute):
            self.assign_attribute(target, value, stmt)
        else:
            self.visit(target)

    def layer_outputs_into_items(self, target, value, stmt) -> None:
        """`self.h[i], self.c[i] = cell(x, (self.h[i], self.c[i]))`: the outputs of a layer
        with parameters (every one carries its graph) unpacked into items of containers
        held on an object; the item hooks see the whole call as each item's value."""
        if value is None or not (self.module_output(value)
                                 or self.modules.appended_layer_call(value, self.scope.owner_class)):
            return
        for elt in target.elts:
            if isinstance(elt, ast.Subscript) and isinstance(elt.value, ast.Attribute):
                for hook in ITEM_ASSIGN_HOOKS:
                    hook(self, elt, value, stmt)

    def keyed_self_attribute(self, node) -> str | None:
        """`models["decoder"]` for `self.models["decoder"]` in a method of a class (the
        key its layer spec is kept under, ``ModuleFacts.called_module``)."""
        if self.scope.owner_class and self.class_stack and self.class_stack[-1] is None \
                and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "self" \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) \
                and node.slice.value.isidentifier():
            return f'{node.value.attr}["{node.slice.value}"]'
        return None

    def record_keyed_layer(self, key: str, value) -> None:
        """A module kept in a dict of `self` under a constant key: `self.models =
        {"encoder": Encoder(), ...}`, `nn.ModuleDict({...})`, `self.models["encoder"] =
        Encoder()`; `self.models["encoder"](x)` then calls that layer."""
        spec = self.modules.module_spec(value)
        if spec is not None:
            self.modules.module_specs[self.scope.owner_class][key] = spec

    def record_keyed_layers(self, attr: str, value) -> None:
        """`self.models = {"encoder": Encoder(), ...}` (or `nn.ModuleDict({...})`)."""
        if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords \
                and isinstance(value.args[0], ast.Dict) \
                and (self.qualname(value.func) or "").rsplit(".", 1)[-1] == "ModuleDict":
            value = value.args[0]
        if not isinstance(value, ast.Dict):
            return
        for key, item in zip(value.keys, value.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier() \
                    and isinstance(item, ast.Call):
                self.record_keyed_layer(f'{attr}["{key.value}"]', item)

    def note_self_index(self, target, stmt) -> None:
        """`mask[mask] = v`: the index of an indexed write is the written tensor itself
        (ADL010): the index and the destination share memory."""
        if not isinstance(target.value, ast.Name):
            return
        elts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        for elt in elts:
            if isinstance(elt, ast.Name) and elt.id == target.value.id:
                self.scope.note("ADL010", (stmt, elt, elt.id, "index"))

    def note_transposed_self_copy(self, target, value, stmt) -> None:
        """`out[1] = out[1].transpose(-2, -1)`: the value is the written region itself,
        transposed (a view with other strides over the same memory), which PyTorch
        refuses to copy (ADL010)."""
        if not isinstance(target.value, ast.Name) or value is None or not self.basic_index(target.slice):
            return
        node, transposed = value, False
        while True:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in N.TRANSPOSING_METHODS:
                node, transposed = node.func.value, True
            elif isinstance(node, ast.Attribute) and node.attr in N.TRANSPOSING_ATTRIBUTES:
                node, transposed = node.value, True
            else:
                break
        if transposed and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                and node.value.id == target.value.id and ast.dump(node.slice) == ast.dump(target.slice):
            self.scope.note("ADL010", (stmt, value, target.value.id))

    def assign_attribute(self, target, value, stmt):
        """`x.attr = value`: facts about `requires_grad`, cleared gradients, graph
        tensors kept on a module and the layers built in `__init__`."""
        self.visit(target.value)
        if target.attr == "requires_grad" and isinstance(target.value, ast.Name):
            self.scope.consts.discard(target.value.id)
            if isinstance(value, ast.Constant) and value.value is True \
                    and target.value.id in self.scope.tensors:
                self.scope.grad_leaves.add(target.value.id)
            elif isinstance(value, ast.Constant) and value.value is False:
                self.scope.grad_leaves.discard(target.value.id)
                if target.value.id in self.scope.parameter_vars:  # freezes the module iterated
                    self.freeze_module(self.scope.parameter_var_modules.get(target.value.id), True)
                self.scope.parameter_vars.discard(target.value.id)
            if isinstance(value, ast.Constant) and value.value is True \
                    and target.value.id in self.scope.parameter_vars:
                self.freeze_module(self.scope.parameter_var_modules.get(target.value.id), False)
        if target.attr == "grad" and value is not None and not any(
                isinstance(part, ast.Attribute) and part.attr == "grad" for part in ast.walk(value)):
            # `p.grad = None`, or a new gradient (`p.grad = meta_grads[i] / n`, CAVIA's
            # meta-update): either way what earlier backward passes added is gone
            self.scope.zero_grads.append(self.next_seq())
        if target.attr == "data":
            self.data_attribute(target)
        if self.keeps_graph_on_module(target, value):
            self.modules.graph_attributes[self.scope.module_class].append((target.attr, stmt.lineno))
        if (isinstance(target.value, ast.Name) and target.value.id == "self"
                and self.class_stack and self.class_stack[-1] is None
                and self.scope.owner_class and isinstance(value, (ast.Dict, ast.Call))):
            self.record_keyed_layers(target.attr, value)
        if (isinstance(target.value, ast.Name) and target.value.id == "self"
                and self.class_stack and self.class_stack[-1] is None
                and self.scope.owner_class and isinstance(value, ast.Call)):
            # the layers of an nn.Module, and those an agent or trainer object holds
            spec = self.modules.module_spec(value)
            itself = self.module_itself(value)
            if spec is None and isinstance(itself, ast.Name) and itself.id in self.modules.name_specs \
                    and itself.id in self.scope.binds:
                # a network given to the constructor: `self.model = model.eval()` (argument_modules.py)
                spec = self.modules.name_specs[itself.id]
            if spec is None:  # `self.critic = self.create_NN(...)`: a factory method of the class
                spec = self.modules.method_factory(value, self.scope.owner_class, self.summaries.class_shapes)
            if spec is None and self.scope.module_class and self.scope.name == "__init__":
                spec = configured_layer(self, value)  # `activate_name[activate]()`
            if spec is not None:
                self.modules.module_specs[self.scope.owner_class][target.attr] = spec
            elif self.scope.module_class and self.scope.name == "__init__" and self.is_grad_leaf(value):
                self.modules.parameter_attributes[self.scope.module_class].add(target.attr)
        elif (isinstance(value, (ast.Name, ast.Attribute)) and isinstance(target.value, ast.Name)
              and target.value.id == "self" and self.class_stack and self.class_stack[-1] is None
              and self.scope.module_class and self.scope.name == "__init__"
              and configured_layer(self, value) is not None):
            # an activation kept as a function: `self.activation = activation` (`=F.relu`)
            self.modules.module_specs[self.scope.owner_class][target.attr] = configured_layer(self, value)
        elif isinstance(value, ast.Name) and value.id in self.modules.name_specs and \
                isinstance(target.value, ast.Name) and target.value.id == "self" and \
                self.scope.owner_class and value.id in self.scope.binds:
            # a network given to the constructor: `self.net = net` (argument_modules.py)
            self.modules.module_specs[self.scope.owner_class][target.attr] = self.modules.name_specs[value.id]
        for hook in ATTRIBUTE_ASSIGN_HOOKS:
            hook(self, target, value, stmt)

    def record_factory_layers(self, target, value) -> None:
        """`self.netEnc_a, self.netDec_a = define_ED(...)` in a method: the layers a
        same-file function returns as a tuple (modules.tuple_factories), one per
        attribute of `self`."""
        specs = self.modules.tuple_factory_specs(value, len(target.elts))
        if specs is None or not self.scope.owner_class or not (self.class_stack and self.class_stack[-1] is None):
            return
        for elt, spec in zip(target.elts, specs):
            if isinstance(elt, ast.Attribute) and isinstance(elt.value, ast.Name) and elt.value.id == "self":
                self.modules.module_specs[self.scope.owner_class][elt.attr] = spec

    @staticmethod
    def module_itself(value):
        """The receiver of `model.eval()`, `model.to(device)` (nn.Module methods that
        return the module itself, modules.RETURN_THE_MODULE), else ``value``."""
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in RETURN_THE_MODULE:
            value = value.func.value
        return value

    def torch_split_of_parameter(self, value) -> bool:
        """`torch.split(pose_tensor, 1, -1)` of an untyped parameter: tensors, since torch's
        splitting functions take only a tensor (a method `x.split(...)` may be a string's)."""
        if not isinstance(value, ast.Call) or not value.args or not isinstance(value.args[0], ast.Name) \
                or value.args[0].id not in self.scope.parameters:
            return False
        q = self.qualname(value.func)
        return q is not None and q in N.SPLITTING_FUNCTIONS and self.untyped_parameter(value.args[0])

    def indexed_container(self, target: ast.Subscript) -> bool:
        """``target`` is `x[<integer>]` for a forward() argument `x` taken for a tensor
        only because forward() receives it, still the caller's value, that the function
        only ever uses as a sequence (indexed with integer constants or loop counters,
        `len(x)`, returned as is): a list of tensors (container_arguments.py).
        The answer is kept, and such an `x` is no tensor for the rest of the walk."""
        scope = self.scope
        name = target.value
        if not isinstance(name, ast.Name) or name.id not in scope.assumed_tensor_arguments \
                or not (integer_index(target.slice) or isinstance(target.slice, ast.Name)) \
                or len(scope.binds.get(name.id, ())) != 1:
            return False
        if scope.assumed_tensor_arguments[name.id] is None:
            scope.assumed_tensor_arguments[name.id] = only_indexed_by_integers(scope.function, name.id)
            if scope.assumed_tensor_arguments[name.id]:
                for facts in (scope.tensors, scope.graph, scope.graph_arguments):
                    facts.discard(name.id)
        return scope.assumed_tensor_arguments[name.id]

    def untyped_parameter(self, node) -> bool:
        """``node`` is a parameter of this function, still the caller's value, that the
        walk does not know to be a tensor (no annotation), with gradients on."""
        scope = self.scope
        return isinstance(node, ast.Name) and node.id in scope.parameters and not scope.grad_off \
            and node.id not in scope.tensors and node.id not in ("self", "cls") \
            and len(scope.binds.get(node.id, ())) == 1

    def copied_parameter(self, node):
        """The untyped parameter (``untyped_parameter``) that ``node`` is a copy or a
        view of: `tensor.clone()[0]`, or a name bound once to `tensor.clone()` then
        indexed; None for anything else (the parameter itself or a slice of it, which
        may be a list or a data loader; an op that computes; a detached copy)."""
        # A tensor method on the way (`.clone()`, `.view()`...): the parameter itself, or
        # a slice of it, may be a list or a data loader.
        steps = 0
        for _ in range(8):  # a short chain of copies and views
            if isinstance(node, ast.Subscript) and self.basic_index(node.slice):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords \
                    and (node.func.attr == "clone" or node.func.attr in N.VIEW_METHODS) \
                    and node.func.attr not in ("detach", "indices", "values"):
                node, steps = node.func.value, steps + 1
            elif isinstance(node, ast.Name):
                if self.untyped_parameter(node):
                    return node.id if steps else None
                if len(self.scope.binds.get(node.id, ())) != 1:
                    return None
                entry = self.scope.binding(node.id, self.seq + 1)
                if entry is None or entry[1] is None or entry[2]:
                    return None
                node = entry[1]
            else:
                return None
        return None

    def bind_nested_outputs(self, target, value, stmt) -> None:
        """The names of a nested target (`(h, c)` of an LSTM's `out, (h, c) =
        self.lstm(x, (h, c))`): each is bound to the call, like a name one level up."""
        for elt in target.elts:
            if isinstance(elt, ast.Name):
                self.bind(elt.id, None, source=value)
            elif isinstance(elt, (ast.Tuple, ast.List)):
                self.bind_nested_outputs(elt, value, stmt)
            elif isinstance(elt, ast.Attribute) and self.module_output(value):
                self.assign_attribute(elt, value, stmt)  # `out, (self.h, self.c) = self.lstm(x, (self.h, self.c))`
            else:
                self.assign_target(elt.value if isinstance(elt, ast.Starred) else elt, None, stmt)

    def named_module_output(self, name):
        """The call of a parameterised layer that ``name``'s live binding unpacks
        (`f, state = self.lstm(...)`: `state`), else None."""
        entry = self.scope.binding(name.id, self.seq + 1)
        source = entry[1] if entry is not None else None
        return source if isinstance(source, ast.Call) and self.module_output(source) else None

    def module_output(self, value) -> bool:
        """A call of a parameterised layer (every output of an RNN carries its graph)."""
        spec = self.called_module(value) if isinstance(value, ast.Call) else None
        return spec is not None and spec.parameterised

    def keeps_graph_on_module(self, target, value) -> bool:
        """`self.attr = value` in a module's method, where ``value`` carries a graph
        (outside a path callers opt into, `if use_cache:`).  A leaf that requires grad
        carries none: `self.grid = nn.Parameter(F.interpolate(self.grid.data, ...))`
        (DirectVoxGO's grid rescale) starts a fresh leaf, deep-copyable and linked to
        no earlier call."""
        return (isinstance(target.value, ast.Name) and target.value.id == "self"
                and bool(self.scope.module_class) and not self.scope.grad_off
                and not self.opt_in_depth and value is not None and self.is_graph(value)
                and not self.is_grad_leaf(value))

    def bind_returned(self, target, value, stmt) -> bool:
        """`loss, logs = self.compute(batch)` of a same-file function with a summary
        (summaries.py): each name gets its position's facts; its binding's value is
        `call[i]`, so that ADL003 follows that position only."""
        summary = self.call_summary(value)
        if summary is None or any(isinstance(e, ast.Starred) for e in target.elts):
            return False
        entries, kind = summary
        if kind is False or (kind is True and len(entries) != len(target.elts)):
            return False
        for i, elt in enumerate(target.elts):
            entry = entries[0] if kind == "split" else entries[i]
            element = ast.copy_location(ast.Subscript(value=value, slice=ast.Constant(i), ctx=ast.Load()), value)
            if not isinstance(elt, ast.Name):
                self.assign_target(elt, None, stmt)
                continue
            self.bind(elt.id, None, tensor=entry not in (None, "dict"), source=element)
            graph = self.returned_entry(value, i if kind is True else None)
            if graph:
                self.scope.graph.add(elt.id)
                if entry == "views":
                    self.scope.split_views[elt.id] = self.text(value.func)
            elif entry == "args" and self.scope.graph_arguments and any(
                    self.result_carries_graph(a) for a in value.args if not isinstance(a, ast.Starred)):
                self.scope.graph_arguments.add(elt.id)
                self.note_origins(elt.id, value)
        return True

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
                    self.note_origins(n.id, source)

    def holds_written_graph(self, base: str, value) -> None:
        """`b = torch.zeros(n); b[0] = x * w`: the tensor now holds a value with a
        graph, so it carries one (an op given it saves it for backward)."""
        if self.is_graph(value):
            self.scope.consts.discard(base)
            self.scope.graph.add(base)
        elif self.scope.graph_arguments and self.result_carries_graph(value):
            self.scope.consts.discard(base)
            self.scope.graph_arguments.add(base)  # from a forward()'s argument
            self.scope.argument_origins[base] = self.argument_origins_of(value) | \
                self.scope.argument_origins.get(base, frozenset())

    def after_named_value(self, name, value):
        """Record what an op saved when its result is bound to ``name``; also when
        ``name`` is bound to a view of that result (`r = F.relu(x).permute(0, 3, 1, 2)`):
        the view shares the output's memory and version counter, so writing it in
        place writes the saved output."""
        spec = self.called_module(value)
        op = self.saving_op(value) if spec is None else self.op_entry(_output_key(spec.output_layer))
        if op is None and spec is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in _SHARING_VIEW_METHODS:
            base = _view_base(value)
            if base is not None:
                spec = self.called_module(base)
                op = self.saving_op(base) if spec is None else self.op_entry(_output_key(spec.output_layer))
                value = base
        if op is not None:
            key, entry = op
            if entry["output"] and not self.scope.grad_off and name not in self.scope.consts:
                self.add_save(name, key, "output", value)
        elif spec is None and isinstance(value, ast.Subscript):
            self.module_result_item_save(name, value)
        elif spec is None:
            self.returned_output_save(name, value, None)

    def module_result_item_save(self, name, value) -> None:
        """`corr = self.encoders[1](x)[0]`: item ``k`` (a constant) of what a module of a
        same-file class returns, when that class's `forward` gives back, at position
        ``k`` of its tuple, the output an op kept (summaries.record_output_saves)."""
        call, index = value.value, value.slice
        if not (isinstance(call, ast.Call) and isinstance(index, ast.Constant)
                and type(index.value) is int and index.value >= 0):
            return
        spec = self.called_module(call)
        if spec is None or spec.kind not in self.modules.module_classes:
            return
        self.returned_output_save(name, call, index.value, key=(spec.kind, "forward"))

    def returned_output_save(self, name, value, position, key=None) -> None:
        """`hatom, _ = self.mpn(x, self.outputAtom)` where `mpn` returns the result of
        calling its module parameter, and `self.outputAtom` ends in `nn.ReLU()`; or `h =
        helper(x)` where `helper` returns what `torch.sigmoid` kept: the caller's name is
        the saved output (summaries.record_output_saves)."""
        if self.scope.grad_off or name in self.scope.consts or not isinstance(value, ast.Call):
            return
        found = self.summaries.output_saves_of(value, self.scope.owner_class, key)
        if found is None or found[1] != (position is not None):
            return
        entry = found[0].get(position or 0)
        if entry is None:
            return
        if entry[0] == "op":
            key, graph = entry[1], entry[2]
        else:
            argument = entry[1]
            spec = self.modules.self_attribute_spec(argument, self.scope.owner_class) \
                if isinstance(argument, ast.Attribute) else \
                self.modules.name_specs.get(argument.id) if isinstance(argument, ast.Name) else None
            op = self.op_entry(_output_key(spec.output_layer)) if spec is not None else None
            if op is None or not op[1]["output"]:
                return
            key, graph = op[0], spec.parameterised  # a layer with weights: its output has a graph
        self.scope.tensors.add(name)
        self.add_save(name, key, "output", value)
        if graph:
            self.scope.graph_saves.add(self.scope.saves[name][-1][0])

    def after_unpacked_value(self, target, value) -> None:
        """`U, S, Vh = torch.linalg.svd(a)`: an op that returns several tensors (its
        saves-table entry has ``outputs``), unpacked into as many names: each is a
        tensor, with the op's graph, and those the op keeps are saved outputs."""
        if isinstance(value, ast.Call) and target.elts and self.summaries.output_saves.get(
                self.summaries.key_of(value, self.scope.owner_class)) is not None:
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    self.returned_output_save(elt.id, value, i)
            return
        if not isinstance(value, ast.Call) or not target.elts or not isinstance(value.func, ast.Attribute) \
                or value.func.attr not in _SEVERAL_OUTPUTS:
            return
        op = self.saving_op(value)
        if op is None or "outputs" not in op[1] or len(target.elts) != op[1]["count"]:
            return
        key, entry = op
        # the decomposed tensor: `torch.linalg.svd(a)`'s `a`, `a.svd()`'s receiver
        decomposed = value.func.value if key.startswith("torch.Tensor.") else \
            value.args[0] if value.args else None
        graph = decomposed is not None and not self.scope.grad_off and self.is_graph(decomposed)
        for i, elt in enumerate(target.elts):
            if not isinstance(elt, ast.Name):
                continue
            self.scope.tensors.add(elt.id)
            if graph:
                self.scope.graph.add(elt.id)
            if i in entry["outputs"] and not self.scope.grad_off and decomposed is not None:
                self.add_save(elt.id, key, "output", value, graph_from=decomposed)

    def visit_AugAssign(self, node):
        owners = self.training.param_owners
        self.training.param_owners = []
        self.visit(node.value)
        if isinstance(node.op, ast.Add) and isinstance(node.target, (ast.Name, ast.Attribute)) \
                and self.training.param_owners:
            # `self.parameters_to_train += list(self.models["encoder"].parameters())`
            self.training.param_lists.setdefault(self.text(node.target), set()).update(
                self.training.param_owners)
        self.training.param_owners = owners + self.training.param_owners
        target = node.target
        if isinstance(target, ast.Name):
            seq = self.next_seq()
            self.scope.uses[target.id].append(seq)
            self.scope.bind_values[target.id].append((seq, node, self.scope.grad_off))
            if not (self.scope.grad_off or self.is_number(node.value) or self.is_const(node.value)):
                self.scope.consts.discard(target.id)  # `acc += t`: acc may carry t's graph now
            if target.id in self.scope.tensors:
                self.record_write(target, node, "an augmented assignment", ("augmented",))
                for hook in INPLACE_WRITE_HOOKS:
                    hook(self, target.id, (node.value,), node)
            elif target.id in self.scope.parameters and not self.scope.grad_off and \
                    not self.is_number(node.value):
                # `features -= features.mean(0)`: in place when the caller passes a tensor
                # (`n -= 1` on a count is no write; the callers decide the rest)
                self.scope.parameter_aug_writes.append((seq, target.id, node))
        elif isinstance(target, ast.Subscript):
            self.visit(target.value)
            self.visit(target.slice)
            base = self.view_base(target.value)
            if base is not None and base in self.scope.tensors:
                self.record_write(target.value, node, "an augmented assignment", ("indexed", base))
                self.note_self_index(target, node)
            elif self.layer_parameter(target.value):
                self.record_write(target.value, node, "an augmented assignment")
        else:
            self.visit(target)
            if self.layer_parameter(target):
                self.record_write(target, node, "an augmented assignment")
            if isinstance(target, ast.Attribute) and target.attr == "data":
                self.data_attribute(target)


# view methods whose result always shares its receiver's memory and version counter,
# and may be written in place (not `expand`, `as_strided`, `unfold`: overlapping
# elements; not `detach` / `.data`: ADL004 / ADL005; not `reshape` / `flatten`:
# they may copy)
_SHARING_VIEW_METHODS = frozenset("""
view view_as t transpose permute narrow select unsqueeze squeeze diagonal movedim
moveaxis swapaxes swapdims unflatten
""".split())


def _output_key(layer):
    """The saves-table key of what a module's output layer computes: an in-place
    activation (`nn.LeakyReLU(inplace=True)`) runs the in-place op, whose entry
    (`...leaky_relu:inplace`) says it keeps the tensor it wrote, where the
    out-of-place op keeps its input."""
    return layer.inplace_key if layer.inplace and layer.inplace_key else layer.op


def _view_base(value):
    """The call under a chain of view methods (`F.relu(x).permute(0, 3, 1, 2)`:
    `F.relu(x)`); None when ``value`` is not such a chain over a call."""
    node, views = value, 0
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _SHARING_VIEW_METHODS:
        node, views = node.func.value, views + 1
    return node if views and isinstance(node, ast.Call) else None

