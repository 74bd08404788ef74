"""Expression handlers of the walk: calls, operators and attributes become
events (a save for backward, an in-place write, an in-place activation, a
backward pass, an optimizer step); the rules' hooks see each call, `.data`
and in-place write here and decide for themselves."""

from __future__ import annotations

import ast
import re

from autograd_doctor.lint import names as N
from autograd_doctor.lint.clearing import is_self_call
from autograd_doctor.lint.events import Write
from autograd_doctor.lint.held_instances import held_method
from autograd_doctor.lint.rules import (
    CALL_HOOKS, DATA_ATTRIBUTE_HOOKS, GRAD_READ_HOOKS, INPLACE_WRITE_HOOKS, LOCAL_CALL_HOOKS, METHOD_CALL_HOOKS,
)
from autograd_doctor.lint.walk import child_nodes, walk_nodes


_SAVING_NODES = (ast.Call, ast.BinOp)  # the nodes whose op may save for backward


class ExpressionEvents:
    """Mixed into ``Checker``: reads its facts (``TensorKnowledge``) and appends
    to ``self.scope``'s event lists."""

    def visit_Attribute(self, node):
        if node.attr in N.METADATA_ATTRIBUTES and isinstance(node.value, ast.Name):
            node.value._adl_metadata = True  # `x.shape` reads no values (checker.visit_Name)
        self.visit(node.value)
        if node.attr == "data" and isinstance(node.ctx, ast.Load):
            self.data_attribute(node)
        elif node.attr == "grad" and isinstance(node.ctx, ast.Load):
            for hook in GRAD_READ_HOOKS:
                hook(self, node)

    def data_attribute(self, node):
        """`x.data`, read or assigned: rules that look at it (ADL004) decide."""
        for hook in DATA_ATTRIBUTE_HOOKS:
            hook(self, node)

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
        elif isinstance(func, (ast.Name, ast.Subscript)) and self.called_module(node) is not None:
            self.module_call(node, self.called_module(node), self.text(func))
        elif isinstance(func, ast.Name) and not self.scope.grad_off:
            if self.file.trains:  # (ADL003 only)
                self.scope.name_calls.append((self.seq, node))  # `finish_episode(states, log_probs)`
            if self.scope.module_class:
                self.modules.module_callees.add(func.id)  # a helper of the module's methods
                if not self.file.trains and (node.args or node.keywords):
                    self.record_graph_call(node, self.module_callee_callers)
        if self.file.trains and not self.scope.grad_off and (node.args or node.keywords):
            self.record_graph_call(node)
        if (node.args or node.keywords) and not self.scope.grad_off and (
                (q is None and isinstance(func, ast.Name)) or is_self_call(node) or (
                    isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute)
                    and isinstance(func.value.value, ast.Name) and func.value.value.id == "self")):
            for hook in LOCAL_CALL_HOOKS:  # `plot(x, x @ a)`: a same-file function's call
                hook(self, node)
        if not self.scope.grad_off and (self.summaries.parameter_writes or self.summaries.training_steps):
            self.record_argument_writes(node)
            self.record_helper_training(node)
        if not self.scope.grad_off and self.summaries.parameter_saves:
            self.record_argument_saves(node)
        self_call = is_self_call(node)
        if (isinstance(func, ast.Name) and func.id in self.training.zero_grad_functions) or \
                (self_call and func.attr in self.training.zero_grad_functions):
            self.scope.zero_grads.append(self.next_seq())  # `self.reset_grad()`
        elif self_call and self.scope.loops:
            self.scope.self_calls.append((self.seq, func.attr))  # may be inherited and clear (ADL018)
        if (isinstance(func, ast.Name) and func.id in self.file.backward_functions) or \
                (self_call and func.attr in self.file.backward_functions):
            self.scope.helper_backwards.append(self.next_seq())  # `update(loss, opt)`
            if node.args or node.keywords:  # which argument it backpropagates: ADL019 reads the callee
                self.scope.note("ADL019 helper", (self.seq, node))
        elif self.file.backward_functions and isinstance(func, ast.Attribute) and \
                func.attr in self.file.backward_functions and \
                (node.args or node.keywords) and isinstance(func.value, ast.Name) and \
                func.attr not in ("backward", "manual_backward"):  # `accelerator.backward(loss)` is one already
            # `aw.aw_loss(d_real, d_fake, ...)`: a method of a same-file class that backpropagates
            # an argument (ADL019 reads the callee when one class of the file defines it)
            self.scope.note("ADL019 helper", (self.next_seq(), node))
        op = self.saving_op(node)
        if op is not None and not self.scope.grad_off:
            args = list(node.args)
            if q is None and isinstance(func, ast.Attribute):  # a method: the receiver is input 0
                # (also when `x.pow(2)` resolves to the scalar form `operator.pow:scalar`)
                args = [func.value] + args
            if op[1]["grad_fn"].endswith("LossBackward0") and op[0].startswith("torch.nn.functional."):
                self.loss_operands_are_tensors(args[:2])
            self.record_input_saves(op, args, node)

    def loss_operands_are_tensors(self, operands) -> None:
        """`F.cross_entropy(logits, y)`: a loss function takes only tensors (it raises on
        anything else), so a plain name passed as its input or target holds one from
        here on (`x, y = batch`: `y` is the batch's label tensor); so is the receiver of
        a view method passed there (`targets.view(-1)`: no list has `.view`)."""
        for operand in operands:
            while isinstance(operand, ast.Call) and isinstance(operand.func, ast.Attribute) \
                    and operand.func.attr in N.VIEW_METHODS:
                operand = operand.func.value
            if isinstance(operand, ast.Name) and operand.id not in self.scope.tensors \
                    and operand.id != "self" and not self.is_number(operand):
                self.scope.tensors.add(operand.id)

    def freeze_module(self, module: str | None, frozen: bool) -> None:
        """The parameters of ``module`` (its text) stop (or start again) requiring grad:
        a call of it gives a graph only through its input."""
        if module == "self" and self.scope.owner_class:
            module = "class " + self.scope.owner_class  # every instance: frozen in its own __init__
        if module:
            (self.modules.frozen.add if frozen else self.modules.frozen.discard)(module)

    def record_graph_call(self, call, callers=None) -> None:
        """A call of a same-file function `f(...)` / `self.f(...)` that passes a value
        with a graph (graph_callers.py): known here, or computed from this function's
        own parameters, which then need evidence of their own."""
        func = call.func
        callee = func.id if isinstance(func, ast.Name) else func.attr if is_self_call(call) else None
        spec = self.modules.name_specs.get(func.id) if isinstance(func, ast.Name) else \
            self.modules.self_attribute_spec(func, self.scope.owner_class)
        if spec is not None and spec.kind in self.modules.module_classes:
            # `cmd_loss(h_s, h_t)` after `cmd_loss = CMDLoss()`; `self.bn(self.conv(x))`
            # with `self.bn = MyBatchNorm2d(4)` built in this class's `__init__`
            callee = spec.kind + ".forward"
        if callee is None:  # `self.se3.warp(...)`, `sim.step(...)`: a held same-file instance
            callee = held_method(self, call)
        if callee is None:
            return
        callers = self.graph_callers if callers is None else callers
        scope = self.scope
        for i, value in enumerate(list(call.args) + [k.value for k in call.keywords]):
            if isinstance(value, ast.Starred):
                continue
            where = None  # the position or keyword it lands on, found only when needed
            if self.is_graph(value) or self.calls_parameter(value) or (
                    isinstance(value, ast.Name) and self.graph_binding_reaches(value.id, call)):
                where = _landing(call, i)
                callers.graph_call(callee, where)  # `f(layer(x))`, `f(model(x))`
            elif scope.graph_arguments and self.result_carries_graph(value):
                where = _landing(call, i)
                if scope.provisional:  # only where this function is fed at its origins
                    callers.handed_on(scope.evidence_key, callee, where,
                                                 self.argument_origins_of(value))
                else:  # a forward()'s arguments, a log_prob's value
                    callers.graph_call(callee, where)

    def graph_binding_reaches(self, name: str, call) -> bool:
        """A binding of ``name`` that carries a graph (or calls a parameter) reaches
        ``call`` on one path at least (``reaching_bind_values``).  The reaching bindings
        are a subset of all of them: when none of all carries one, the answer is no
        without the statement order (whose parent map walks the whole function)."""
        def carries(binding) -> bool:
            _, v, off = binding
            return v is not None and not off and (self.is_graph(v) or self.calls_parameter(v))

        binds = self.scope.bind_values.get(name, ())
        if not any(carries(b) for b in binds):
            return False
        return any(carries(b) for b in self.reaching_bind_values(name, call))

    def reaching_bind_values(self, name: str, call) -> list:
        """The bindings of ``name`` whose value can reach ``call``: all of them, unless
        the latest one is a statement that runs before the call on every path to it
        (a sibling before the call's statement in one block, or a `with` around such
        a statement): then only that one (set AJ: escnn's `X = best_X`, a detached
        copy, then `_normalize(X)`; `h = h.detach()` before `unit_(h)`).  An earlier
        binding to a graph tensor does not reach the call there."""
        binds = self.scope.bind_values.get(name, ())
        if len(binds) < 2:
            return binds
        latest = max(binds, key=lambda b: b[0])
        value = latest[1]
        if value is None:
            return binds
        root = self.scope.function if self.scope.function is not None else self.tree
        parents = getattr(root, "_adl_stmt_parents", None)
        if parents is None:
            parents = {id(child): node for node in walk_nodes(root) for child in child_nodes(node)}
            root._adl_stmt_parents = parents
        bound = value
        while bound is not None and not isinstance(bound, ast.stmt):
            bound = parents.get(id(bound))
        if not isinstance(bound, (ast.Assign, ast.AnnAssign)) or bound.value is not value:
            return binds  # `h += 1` keeps what `h` held; an unpacked or chained target
        while isinstance(parents.get(id(bound)), (ast.With, ast.AsyncWith)) \
                and bound in parents[id(bound)].body:
            bound = parents[id(bound)]  # a `with` body always runs (or raises)
        node = call
        while node is not None and node is not root:
            parent = parents.get(id(node))
            if parent is None:
                break
            if isinstance(node, ast.stmt):
                for field in ("body", "orelse", "finalbody"):
                    block = getattr(parent, field, None)
                    if isinstance(block, list) and node in block:
                        if bound in block and block.index(bound) < block.index(node):
                            return [latest]
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) \
                    and parent is not root:
                break  # a nested function's body runs later, from elsewhere
            node = parent
        return binds

    def calls_parameter(self, value) -> bool:
        """`model(x)`: a call of a callable this function was given, with arguments; or
        `self.model(x)`, an attribute of the object that is none of its class's methods
        (a network handed to the constructor; `self.helper(x)` is no evidence)."""
        if not isinstance(value, ast.Call) or not (value.args or value.keywords):
            return False
        func = value.func
        if isinstance(func, ast.Name):
            return func.id in self.scope.parameters
        return is_self_call(value) and func.attr not in self.scope.class_methods and \
            "self" in self.scope.parameters

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
            rewrite = ("functional", inplace_kw)
            self.record_inplace_activation(first, node, rewrite)
            self.record_write(first, node, f"`{short}(..., inplace=True)`", rewrite)
            self.record_write_to_result(first, node, f"`{short}(..., inplace=True)`", rewrite)
            self.record_inplace_output_save(first, f"torch.nn.functional.{short}:inplace", node)
        elif (short.endswith("_") and not short.endswith("__") and first is not None
              and (q.count(".") == 1 or q.startswith("torch.nn.functional."))
              and q.startswith("torch.")):
            if short[:-1] in N.INPLACE_FUNCTIONALS or short[:-1] in ("sigmoid", "tanh"):
                self.record_inplace_activation(first, node, ())
            self.record_write(first, node, f"`{q}`")
            self.record_inplace_output_save(first, q[:-1], node)
        if q == "torch.nn.Sequential" and len(node.args) == 1 and isinstance(first, ast.Starred) \
                and isinstance(first.value, ast.Name):
            self.record_appended_neighbours(first.value.id)  # `nn.Sequential(*layers)`
        out = next((k for k in node.keywords if k.arg == "out"), None)
        if out is not None and q.startswith("torch."):
            self.record_write(out.value, node, "`out=`")
        if q in ("torch.autograd.grad", "torch.autograd.backward"):
            seq = self.next_seq()
            scope.backwards.append((seq, node))
            if first is not None:
                scope.backward_receivers.append((seq, node, first))
        for hook in CALL_HOOKS:
            hook(self, node, q)

    def applies_gradients(self, node, recv) -> bool:
        """`recv.<method>(...)` (``node``) runs a same-file class's update of tensors from
        gradients (``TrainingFacts.update_methods``) on gradients: the receiver is an
        optimizer (its name says so, as for `step()`, or the file binds it to that
        class) and the gradients reach the update: the method reads `.grad` itself, or
        the call passes values read from `.grad` (`[w.grad for w in weights]`, directly
        or through a name the calling function binds to them)."""
        classes, reads_grad = self.training.update_methods[node.func.attr]
        name = (recv.id if isinstance(recv, ast.Name) else recv.attr).lower()
        text = self.text(recv)
        if ("opt" not in name or "sched" in name) and not any(
                isinstance(a, ast.Assign) and isinstance(a.value, ast.Call)
                and isinstance(a.value.func, ast.Name) and a.value.func.id in classes
                and any(self.text(t) == text for t in a.targets) for a in ast.walk(self.tree)):
            return False
        if reads_grad:
            return True
        arguments = node.args + [k.value for k in node.keywords]
        if any(_reads_grad(a) for a in arguments):
            return True
        names = {n.id for a in arguments for n in ast.walk(a) if isinstance(n, ast.Name)}
        function = self.scope.function
        return function is not None and any(
            isinstance(a, ast.Assign) and _reads_grad(a.value)
            and any(isinstance(t, ast.Name) and t.id in names for t in a.targets)
            for a in ast.walk(function))

    def check_method_call(self, node, func):
        scope = self.scope
        attr = func.attr
        recv = func.value
        if scope.untyped_arguments and attr in N.TENSOR_ONLY_METHODS and isinstance(recv, ast.Name) \
                and recv.id in scope.untyped_arguments and recv.id not in scope.tensors:
            # `src.detach()` on an untyped parameter: no list, number or array has it, so
            # a tensor from here on (its graph still needs a call that passes one)
            scope.tensors.add(recv.id)
        if attr == "zero_grad" or (attr in ("zero_", "detach_", "fill_", "requires_grad_")
                                   and self.mentions_grad(recv)):
            scope.zero_grads.append(self.next_seq())
            if attr == "zero_grad":
                scope.zero_grad_receivers.append((scope.zero_grads[-1], self.text(recv)))
                scope.zero_grad_calls[scope.zero_grads[-1]] = node
        if attr == "requires_grad_" and isinstance(recv, ast.Name):
            scope.consts.discard(recv.id)  # a factory tensor that now requires grad
            if self.false_arg(node):
                scope.grad_leaves.discard(recv.id)
            elif recv.id in scope.tensors and recv.id not in scope.graph:
                scope.grad_leaves.add(recv.id)
            elif self.untyped_parameter(recv) and recv.id not in self.modules.name_specs and (
                    not node.args or isinstance(node.args[0], ast.Constant) and node.args[0].value is True):
                # `input_.requires_grad_(True)` in `def visualize(self, input_, ...)`: the
                # caller's tensor, now a leaf that requires grad (a module's
                # `requires_grad_` is seen only with a flag: `net.requires_grad_(flag)`)
                scope.tensors.add(recv.id)
                scope.grad_leaves.add(recv.id)
            if recv.id in scope.parameter_vars:  # `for p in vgg.parameters(): p.requires_grad_(False)`
                self.freeze_module(scope.parameter_var_modules.get(recv.id), self.false_arg(node))
        if attr == "requires_grad_" and (self.called_module(ast.Call(func=recv, args=[], keywords=[]))
                                         is not None):
            self.freeze_module(self.text(recv), self.false_arg(node))  # `vgg.requires_grad_(False)`
        if attr.endswith("_") and not attr.startswith("_") and attr not in N.NOT_WRITING_METHODS:
            named = isinstance(recv, ast.Name) and recv.id in scope.tensors
            self.record_write(recv, node, f"`.{attr}()`", ("method",) if named else ())
            self.record_inplace_output_save(recv, "torch.Tensor." + attr[:-1], node)
            if isinstance(recv, ast.Name) and recv.id in scope.tensors:  # the whole tensor
                for hook in INPLACE_WRITE_HOOKS:
                    hook(self, recv.id, node.args, node)
            elif isinstance(recv, ast.Name) and recv.id in scope.parameters and \
                    recv.id not in ("self", "cls") and not scope.grad_off:
                # `def mish(x): ...; x.mul_(inner)`: writes whatever tensor the caller passes
                scope.parameter_method_writes.append((self.next_seq(), recv.id, node))
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
        elif attr == "step" and N.indexed_element(recv, self.text) is not None and not node.args \
                and "opt" in N.indexed_element(recv, self.text)[0].rsplit(".", 1)[-1].lower():
            # `optimizerDs[i].step()`: one optimizer of a container, by the loop's index
            scope.steps.append((self.next_seq(), node, self.text(recv)))
        elif isinstance(recv, (ast.Name, ast.Attribute)) and \
                attr in self.training.optimizer_methods.get(
                    self.training.optimizer_instances.get(self.text(recv)), ()):
            # `optimizer.first_step()` of a same-file Optimizer subclass whose method
            # writes the parameters in place (SAM's ascent step): a step like `step()` for
            # ADL003 only (it may clear the gradients itself: `first_step(zero_grad=True)`)
            scope.helper_steps.append((self.next_seq(), node, self.text(recv), None))
        elif attr in self.training.update_methods and isinstance(recv, (ast.Name, ast.Attribute)) and \
                self.applies_gradients(node, recv):
            # `self.optimizer.apply(gradients, weights)` of a hand-written optimizer of the
            # file: a step for ADL018 only (what it writes is known no further)
            scope.applied_updates.append((self.next_seq(), node, self.text(recv)))
        elif attr == "load_state_dict" and isinstance(recv, (ast.Name, ast.Attribute)) and node.args:
            # copies into the module's parameters in place (under no_grad: versions go up)
            scope.parameter_loads.append((self.next_seq(), node, self.text(recv)))
        elif attr == "register_buffer" and isinstance(recv, ast.Name) and recv.id == "self" \
                and scope.module_class and node.args and isinstance(node.args[0], ast.Constant):
            self.modules.buffers[scope.module_class].add(node.args[0].value)
        elif attr in ("parameters", "named_parameters") and isinstance(recv, (ast.Name, ast.Attribute)):
            self.training.param_owners.append(self.text(recv))
        elif attr in ("parameters", "named_parameters") and N.keyed_module(recv, self.text) is not None:
            self.training.param_owners.append(N.keyed_module(recv, self.text))  # `self.models["enc"]`
        elif attr in ("parameters", "named_parameters") and N.indexed_element(recv, self.text) is not None:
            self.training.param_owners.append(self.text(recv))  # `discriminators[i]`
        elif attr in ("append", "insert") and isinstance(recv, ast.Name) and node.args \
                and recv.id not in scope.tensors:
            self.record_store(recv.id, node.args[-1], node)
            if attr == "append" and len(node.args) == 1:
                scope.appended[recv.id].append((self.next_seq(), node.args[0]))
        elif self.called_module(node) is not None:
            self.module_call(node, self.called_module(node), f"self.{attr}")
        if attr == "detach_" and isinstance(recv, ast.Name):
            seq = self.next_seq()
            scope.detached_in_place[recv.id].append(seq)  # `hidden.detach_()`
            entry = scope.binding(recv.id, seq)
            source = scope.iterated.get((recv.id, entry[0])) if entry is not None else None
            if isinstance(source, ast.Name):  # `for s in state: s.detach_()` detaches `state`'s tensors
                scope.detached_in_place[source.id].append(seq)
        if attr == "append" and len(node.args) == 1 and scope.name == "__init__" and scope.owner_class \
                and isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
            self.modules.record_append(scope.owner_class, recv.attr, node.args[0])  # `self.layers.append(...)`
        for hook in METHOD_CALL_HOOKS:
            hook(self, node, func)

    def record_appended_neighbours(self, name: str) -> None:
        """`nn.Sequential(*layers)` where `layers.append(A)` is followed by
        `layers.append(B)`: A's output is B's input when B's append is the next
        statement to touch the list (one read of it in between: B's own receiver)
        and both run on the same paths (no `if`, loop or jump boundary between)."""
        scope = self.scope
        reads = scope.uses.get(name, ())
        appended = scope.appended.get(name, ())
        for (a_seq, a_call), (b_seq, b_call) in zip(appended, appended[1:]):
            if sum(a_seq < r < b_seq for r in reads) != 1 or not scope.run_together(a_seq, b_seq):
                continue
            a, b = self.modules.module_spec(a_call), self.modules.module_spec(b_call)
            if a is not None and b is not None:
                self.modules.sequential_neighbours.append((b_call, a, b))

    def module_call(self, node, spec, text):
        """``self.<attr>(x)``: its input layer writes ``x`` (inplace=True) or saves it (a
        same-file module class: the argument its forward keeps, also given as `x=...`)."""
        layer = spec.input_layer
        arg = node.args[0] if node.args else next(
            (k.value for k in node.keywords if spec.in_param and k.arg == spec.in_param), None)
        if self.scope.grad_off or arg is None:
            return
        if layer.inplace:
            rewrite = ("module", layer.inplace_keyword)
            how = f"`{text}` (inplace=True)" if layer.kind in N.INPLACE_MODULES else \
                f"`{text}` (its forward writes its argument in place)"
            self.record_inplace_activation(arg, node, rewrite, module=how)
            self.record_write(arg, node, how, rewrite)
            self.record_write_to_result(arg, node, how, rewrite)
            if layer.saves_output and layer.inplace_key:  # `nn.ReLU(inplace=True)`
                self.record_inplace_output_save(arg, layer.inplace_key, node)
            elif layer.saves_output:  # a same-file module that writes its input
                self.record_inplace_output_save(arg, layer.op or "", node, activation=True)
            if layer.in_op and not layer.returns_input:
                # a same-file module whose forward writes its argument and then keeps it
                # (`x = token; x += pos; x = self.transformer(x)`): the call keeps what it
                # wrote, so a second such call on the same tensor breaks the first (r29)
                op = self.op_entry(layer.in_op)
                if op is not None:
                    self.record_input_saves(op, [arg], node)
            return
        op = self.op_entry(layer.in_op or layer.op)
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

    def visit_Compare(self, node):
        # A comparison's result is bool and carries no graph: an operand used only
        # here feeds no backward (`x[torch.abs(x) < eps] = 0`: what `abs` saved is
        # never read).  ADL001 asks for this mark on the op that saved.
        for operand in (node.left, *node.comparators):
            if operand.__class__ in _SAVING_NODES:  # a call's or an operator's op saves
                operand._adl_compared = True
            self.visit(operand)  # the operators (`<`, `==`) hold nothing to walk

    def add_save(self, name, key, how, node, graph_from=None):
        """``name``'s value is saved for backward; a view (or `.data`) of another
        tensor shares its memory and version counter, so its base is saved too.
        ``graph_from``: the value whose graph the save keeps, when not the op's
        result (a helper's op keeps the argument a call passes it)."""
        seq = self.next_seq()
        source = node if graph_from is None else graph_from
        if self.result_carries_graph(source):
            self.scope.graph_saves.add(seq)
            if self.scope.provisional and not self.is_graph(source):
                self.scope.provisional_saves.add(seq)  # only the parameters' graph
                self.scope.provisional_origins[seq] = self.argument_origins_of(source)
        elif self.scope.untyped_arguments and self.computed_from_untyped_arguments(source):
            self.scope.graph_saves.add(seq)
            self.scope.untyped_saves[seq] = self.untyped_origins(source)  # only the untyped parameters' graph
        self.scope.saves[name].append((seq, key, how, node))
        if name in self.scope.alias_of:
            self.scope.saves[self.scope.alias_of[name][0]].append((seq, key, how, node))

    def record_input_saves(self, op, args, node):
        key, entry = op
        if self.is_const(node):
            return
        for i in entry["inputs"]:
            name = self.view_base(args[i], shares_version=True) if i < len(args) else None
            if name is not None and name in self.scope.tensors:
                # a binary op with a Python number keeps less (`x * 2` keeps nothing of x);
                # `x.gather(0, idx)` / `x.clamp(0, 1)` keep x whatever their numbers
                if i < 2 and _binary(key) and not key.split(":")[0].endswith("pow"):
                    others = [a for j, a in enumerate(args[:2]) if j != i]
                    if any(isinstance(o, ast.Constant) for o in others):
                        continue
                # `mask * grads` keeps `mask` only for the gradient of `grads`
                # (``kept_for``, probed from torch): none when `grads` has no graph
                other = entry.get("kept_for", {}).get(str(i))
                if other is not None and other < len(args) and self.is_const(args[other]):
                    continue
                # a custom Function's output carries a graph when its input does
                self.add_save(name, key, f"input {i}", node, graph_from=args[i] if entry.get("custom") else None)
            elif name is not None and name != "self" and name in self.scope.parameters \
                    and not self.scope.grad_off:
                # `def logadd(x0, x1): m = torch.max(x0, x1)`: keeps whatever tensor the
                # caller passes (summaries.py applies it at each call)
                self.scope.parameter_saves.append((self.next_seq(), name, key, f"input {i}", node))

    def record_argument_writes(self, node) -> None:
        """A call of a same-file function that writes a parameter in place
        (summaries.py): the call writes the argument it passes there."""
        writes = self.summaries.parameter_writes_of(node, self.scope.owner_class)
        if writes is None:
            return
        function, arguments = writes
        for arg, parameter, line, untyped in arguments:
            base = self.view_base(arg)
            if base is None or base not in self.scope.tensors:
                continue  # `p -= t` rebinds a number: only a tensor is written in place
            count = len(self.scope.writes)
            self.record_write(arg, node, f"`{function}()`, which writes its parameter `{parameter}` "
                                         f"in place on line {line}")
            for write in self.scope.writes[count:] if untyped else ():
                write.untyped_helper = True

    def record_argument_saves(self, node) -> None:
        """A call of a same-file function that passes a parameter to an op keeping it
        for backward (summaries.py): the call saves the tensor it passes there, as
        the op would here (`logadd(log_alpha[t - 1], ...)` keeps `log_alpha`)."""
        saves = self.summaries.parameter_saves_of(node, self.scope.owner_class)
        if saves is None:
            return
        for arg, parameter, key, how in saves:
            base = self.view_base(arg, shares_version=True)
            if base is None or base not in self.scope.tensors or self.is_const(arg):
                continue  # a number or a constant tensor: nothing of the caller's is kept
            self.add_save(base, key, how, node, graph_from=arg)

    def record_helper_training(self, node) -> None:
        """A call of a same-class method that backpropagates through some of its
        arguments and/or steps optimizers held on `self` (summaries.py): for ADL003,
        a backward through those arguments, then the steps, at this call."""
        found = self.summaries.training_steps_of(node, self.scope.owner_class)
        if found is None:
            return
        steps, arguments = found
        for arg in arguments:
            self.scope.helper_backward_receivers.append((self.next_seq(), node, arg))
        for backward, attributes, touched in self.summaries.attribute_backwards_of(node, self.scope.owner_class):
            seq = self.next_seq()  # `self.backward_G()`: a backward through `self.fake_B`
            self.scope.helper_attribute_backwards.append((seq, backward, touched))
            for attr in sorted(attributes):
                receiver = ast.copy_location(ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()),
                                                           attr=attr, ctx=ast.Load()), node)
                self.scope.helper_backward_receivers.append((seq, node, receiver))
        for step, optimizer in steps:  # (the call itself when it hands the helper the optimizer)
            self.scope.helper_steps.append((self.next_seq(), step, optimizer, None if step is node else node))

    def record_write(self, target, node, how, rewrite=()):
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
        if leaf == "parameter" and not through_data and name in scope.parameter_var_modules:
            # `p.copy_(q)` for `p in model.parameters()`: the module's parameter, in place
            scope.parameter_loads.append((seq, node, scope.parameter_var_modules[name]))
        scope.writes.append(Write(seq, name, node, how, not (scope.grad_off or scope.default_returned), rewrite, via, via_source,
                                  source if source != name else "", scope.expanded.get(name, 0),
                                  through_data, leaf, scope.split_views.get(name, "")))
        if name in scope.function_views:
            scope.writes[-1].function_view = scope.function_views[name]
        if name in scope.alias_of:  # `s = t.data; s.zero_()` writes t
            base, kind = scope.alias_of[name]
            leaf = "parameter" if base in scope.parameter_vars else \
                "factory" if base in scope.grad_leaves else ""
            scope.writes.append(Write(seq, base, node, f"{how} through `{name}`", not (scope.grad_off or scope.default_returned),
                                      (), "detach" if kind == "detach" else via, "", "", 0,
                                      through_data or kind == "data", leaf))
            scope.writes[-1].alias = name
        row = leading_index_name(target, name) or leading_index_name(_indexed_target(node, target), name)
        for loop in scope.loops:
            loop.written.add(name)
            loop.row_writes.append((name, seq, row))

    def record_write_to_result(self, value, node, how, rewrite):
        """`self.drop(self.act(h))` with `self.drop = nn.Dropout(inplace=True)`: an
        in-place layer writes the unnamed result of an op that keeps its output (a
        ReLU's, a sigmoid's), which that op's backward needs.  The save and the write
        are recorded under the expression's text, which nothing else can rebind."""
        if self.scope.grad_off or not isinstance(value, (ast.Call, ast.BinOp)):
            return
        op = self.saving_op(value)
        key = op[0] if op is not None and op[1]["output"] else None
        layer = self.called_module(value) if isinstance(value, ast.Call) and key is None else None
        if layer is not None and layer.output_layer.saves_output and not layer.output_layer.inplace:
            key = layer.output_layer.op
        if key is None or key not in N.saves_table():
            return
        name = self.text(value)
        self.add_save(name, key, "output", value)
        self.scope.writes.append(Write(self.next_seq(), name, node, how, not self.scope.default_returned, rewrite))

    def record_module_parameter_write(self, probe, node, how, via, through_data):
        """`dense.weight[:, 0] -= v` where this function made `dense = nn.Linear(...)`: the
        write is to a parameter, a leaf that requires grad. Files that mention
        `requires_grad` at all may have frozen it, so they are left alone."""
        owner = probe.value.id
        spec = self.modules.name_specs.get(owner)
        scope = self.scope
        if spec is None or not spec.parameterised or owner not in scope.binds or "requires_grad" in self.source:
            return
        scope.writes.append(Write(self.next_seq(), f"{owner}.{probe.attr}", node, how, not (scope.grad_off or scope.default_returned), (),
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

    def record_inplace_activation(self, arg, node, rewrite, module=None):
        if isinstance(arg, ast.Name) and not self.scope.grad_off:
            self.scope.inplace_calls.append((self.next_seq() + 1, arg.id, node, rewrite, module))

    def record_store(self, container, value, node):
        if not self.scope.loops or container in self.clone_replaced_containers():
            return
        base = None
        if isinstance(value, ast.Name):
            base = value.id
        elif self.is_view_of(value, self.view_base(value) or ""):
            base = self.view_base(value)
        if base is not None and base in self.scope.tensors:
            self.scope.loops[-1].stores.append((base, node, isinstance(value, ast.Name), self.next_seq(),
                                                leading_index_name(value, base)))

    def clone_replaced_containers(self) -> frozenset:
        """Containers whose entries the file replaces by clones of themselves
        (`memories[i] = memories[i].clone()`, "break the reference"): the code keeps
        views in them on purpose, sharing memory with a tensor it goes on writing.
        Read from the text: a walk of the whole syntax tree for it cost more than
        the rest of the check of a store (benchmarks/lint_instructions.py)."""
        found = getattr(self, "_clone_replaced", None)
        if found is None:
            found = self._clone_replaced = frozenset(
                match.group(1) for match in _CLONE_REPLACED.finditer(self.source)
                if match.group(1) == match.group(2)) if "].clone()" in self.source else frozenset()
        return found


def _indexed_target(statement, written):
    """`x[i, 0]` of `x[i, 0] = v` / `x[i] += v` when `written` is its `x`, else None."""
    targets = statement.targets if isinstance(statement, ast.Assign) else \
        [statement.target] if isinstance(statement, ast.AugAssign) else []
    return next((t for t in targets if isinstance(t, ast.Subscript) and t.value is written), None)


def leading_index_name(expr, base: str) -> str:
    """`i` of `x[i]` / `x[i, 0, :]` (an index of `x` itself, `base`, by a bare name first),
    "" for any other expression: the row of `x` that the expression selects."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id == base):
        return ""
    index = expr.slice
    if isinstance(index, ast.Tuple) and index.elts:
        index = index.elts[0]
    return index.id if isinstance(index, ast.Name) else ""


# `name[...] = name[...].clone()` on one line (the two names compared by the caller).
_CLONE_REPLACED = re.compile(r"^[ \t]*([A-Za-z_]\w*)\[[^\]\n]*\][ \t]*=[ \t]*([A-Za-z_]\w*)\[[^\]\n]*\]\.clone\(\)",
                             re.MULTILINE)


def _binary(key) -> bool:
    """An arithmetic op of two operands (``operator.mul``, ``torch.div``, ``torch.Tensor.sub``...)."""
    return key.startswith("operator.") or key.split(":")[0].rsplit(".", 1)[-1] in N.BINARY_OPS


def _landing(call, i: int):
    """Where the ``i``-th value of ``call`` (its arguments, then its keywords' values)
    lands in the callee: its position, its keyword, or None after a `*args`."""
    if i >= len(call.args):
        return call.keywords[i - len(call.args)].arg
    return None if any(isinstance(a, ast.Starred) for a in call.args[:i]) else i


def _reads_grad(expr) -> bool:
    """``expr`` reads a `.grad` (`[w.grad for w in weights]`, `p.grad * lr`); a call
    of a function named `grad` (`torch.autograd.grad(...)`) is not one."""
    called = {id(n.func) for n in ast.walk(expr) if isinstance(n, ast.Call)}
    return any(isinstance(n, ast.Attribute) and n.attr == "grad" and isinstance(n.ctx, ast.Load)
               and id(n) not in called for n in ast.walk(expr))
