"""One pass over a module's AST, pyflakes-style: a handler per node type.

The walk only collects facts, in source order: this module walks statements
and scopes and keeps the dataflow facts about names (which are tensors,
constants, graph tensors, leaves that require grad); facts are joined at the
end of `if`/`else` and conditional expressions (``flow.py``), narrowed by
`isinstance` tests, and dropped when a name is re-bound (``statements.py``).
Expressions (``expressions.py``) turn calls and operators into events on the
function's ``Scope`` (``events.py``).  What the file says lives in named
objects: ``file`` (``facts.FileFacts``), ``training`` (``facts.TrainingFacts``)
and ``modules`` (``modules.ModuleFacts``).  The rules (``rules/``) own their
checks and fixes: the walk calls their hooks where a fact arises and, when it
leaves a function, their ``check_scope``.  Nothing is imported or run.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict

from autograd_doctor.lint import names as N
from autograd_doctor.lint.configured_modules import ConstructorValues
from autograd_doctor.lint.custom_functions import returns_an_input
from autograd_doctor.lint.defaults import parameter_defaults
from autograd_doctor.lint.facts import FileFacts, TrainingFacts
from autograd_doctor.lint.events import Scope
from autograd_doctor.lint.expressions import ExpressionEvents
from autograd_doctor.lint.flow import ControlFlow
from autograd_doctor.lint.forward_hooks import hook_output_parameter
from autograd_doctor.lint.findings import Finding, split_lines
from autograd_doctor.lint.graph_callers import GraphCallers
from autograd_doctor.lint.index_arguments import index_parameters, index_spellings
from autograd_doctor.lint.knowledge import TensorKnowledge
from autograd_doctor.lint.modules import ModuleFacts
from autograd_doctor.lint.none_paths import none_path_raises
from autograd_doctor.lint.class_leaves import attribute_leaves
from autograd_doctor.lint.rules import RULES_BY_CODE, check_file, check_scope
from autograd_doctor.lint.source import SourceText
from autograd_doctor.lint.statements import AssignmentEvents
from autograd_doctor.lint.summaries import FunctionSummaries
from autograd_doctor.lint.walk import FastVisitor


# methods whose result is their receiver's values, rearranged: the receiver's graph
_SHAPE_METHODS = (N.VIEW_METHODS - {"detach", "indices", "values", "real", "imag"}) | {
    "reshape", "reshape_as", "flatten", "contiguous"}
# copies to another device or floating dtype keep the argument's graph (`ToCopyBackward0`,
# `CloneBackward0`): `def allreduce_average(t): return t.cpu()` gives back the caller's graph
_GRAPH_COPY_METHODS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "clone"})


class Checker(FastVisitor, SourceText, AssignmentEvents, ControlFlow, ExpressionEvents, TensorKnowledge):
    """Lint one parsed module; ``findings`` holds the result."""

    def __init__(self, tree: ast.Module, source: str, filename: str,
                 skipped_codes: frozenset = frozenset()):
        """``skipped_codes``: opt-in rules nobody selected, whose whole-file checks need not run."""
        self.source = source
        self.filename = filename
        self.list_results = {}  # (id(scope), name) -> the binding that gave it a module's list
        self.tree = tree  # its classes: evidence that a forward() is fed a graph (submodules.py)
        self._feature_flags = None  # fallbacks.feature_flags, computed on first need
        # what each class's constructor parameters take across the file (configured_modules.py)
        self.constructor_values = ConstructorValues(tree)
        self.lines = split_lines(source)
        self.findings: list[Finding] = []
        self.aliases: dict[str, str] = {}  # imported name -> what it names (`F` -> torch.nn.functional)
        # What the file says, in named objects the rules read:
        self.file = FileFacts.read(tree, source)          # before the walk
        self.training = TrainingFacts.read(tree, source)  # optimizers, gradient clearing
        self.modules = ModuleFacts(self.qualname, filename)         # nn.Module classes, layers, factories
        # what a rule keeps for its check_file: rule code -> items (ADL001's helper
        # functions, ADL003's steps)
        self.notes: dict[str, list] = defaultdict(list)
        self.graph_callers = GraphCallers()  # same-file calls that pass graph tensors
        # the same for the calls of the modules' helpers in a file that runs no backward
        self.module_callee_callers = GraphCallers()
        # (receiver, method) -> the method surely uses no layer of it (held_methods.py)
        self.layer_free_methods: dict[tuple, bool] = {}
        self.summaries = FunctionSummaries()  # what same-file functions return (summaries.py)
        self.enclosing_class: list = []       # per level: the class being walked, None in a function
        self.return_summaries: list = []      # per `return` of the function being walked
        # The walk's position: the function being walked (its facts and events), the
        # sequence number of the last event, the enclosing classes and guards.
        self.scope = Scope("<module>", grad_off=False)
        self.seq = 0
        self.class_stack: list[str | None] = []  # enclosing nn.Module class per level, else None
        # per enclosing class: (its bases, a Distribution subclass); None inside a function
        self.class_bases: list = []
        self.class_methods: list = []  # per level: the enclosing class's method names, else None
        self.guard_depth = 0            # inside `if <debug flag>:`
        self.error_expected_depth = 0   # inside `try:` or `with pytest.raises(...):`
        # inside `if flag:` false at the default of the function's parameter `flag`
        self.opt_in_depth = 0
        self.unskippable_ifs: set[int] = set()
        self.function_defaults: dict = {}
        self.index_spellings = False  # index_arguments.index_spellings(source), on first need
        self.class_nodes: list = []  # every class statement of the file, nested ones too, as walked
        self.function_nodes: list = []  # every def of the file, nested ones too, as walked
        self.with_nodes: list = []  # every with statement of the file, as walked
        self.returns: list = []     # values returned by the function being walked
        self.return_ops: list = []  # per `return` of a forward(): the op that saved the value
        FastVisitor.__init__(self)  # the handler cache
        self.visit_body(tree.body)
        check_scope(self, self.scope)
        check_file(self, skipped_codes)
        if self.training.defines_optimizer:  # Optimizer.step() runs under no_grad
            kept = set(self.notes["ADL003 optimizer method steps"])  # `sam.first_step()` outside the class
            self.findings = [f for f in self.findings if not RULES_BY_CODE[f.code].needs_gradients
                             or (f.code == "ADL003" and f.line in kept)]
        if self.file.other_autodiff:  # another framework's gradients: no claim about them
            self.findings = []

    # ----- traversal (visit and generic_visit: walk.FastVisitor) -----
    def visit_body(self, body):
        for stmt in body:
            if stmt.__class__ is ast.If and not stmt.orelse and none_path_raises(body, stmt):
                self.unskippable_ifs.add(id(stmt))  # its skipping path raises further on (none_paths.py)
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
        if node.ctx.__class__ is ast.Load:
            if not getattr(node, "_adl_metadata", False):  # `x.size(0)` sees no values
                self.seq += 1  # (next_seq(), written out: the walk's most frequent node)
                self.scope.uses[node.id].append(self.seq)
        else:
            self.bind(node.id, None)

    def bind(self, name: str, value, tensor: bool | None = None, source=None):
        """Bind ``name`` to ``value`` (``source``: the whole right-hand side when
        ``name`` is one element of an unpacking)."""
        scope = self.scope
        if value is None:  # most bindings: a parameter, a loop variable, a `def`, a store the walk cannot see
            self._bind_unseen(scope, name, bool(tensor), source)
            return
        # Facts about the new value are computed before the name changes meaning:
        # in `x = torch.tensor([x])` the element is the *old* x.
        if tensor is None:
            tensor = self.is_tensor(value)
        const = tensor and (scope.grad_off or self.is_const(value))
        graph = tensor and not const and self.is_graph(value)
        leaf = self.is_grad_leaf(value)
        # `(e == 0).unsqueeze(1).expand(n, k)`: an expanded mask with no graph (ADL012)
        grad_free_expansion = const or (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                                        and value.func.attr in ("expand", "expand_as")
                                        and self.is_const(value.func.value))
        if self.list_module_call(value):
            # `encoded_layers = self.encoder(x)` of a forward that returns a list: a later
            # `encoded_layers[-1] = ...` replaces an item (list_forwards.py)
            self.list_results[(id(scope), name)] = len(scope.binds.get(name, ())) + 1
        spec = self.modules.module_spec(value) if isinstance(value, ast.Call) else None
        if spec is not None:
            self.modules.name_specs[name] = spec
        else:
            self.modules.name_specs.pop(name, None)
        split_view = self._split_view_named(scope, value) if scope.split_views and tensor else None
        self._new_binding(scope, name, source if source is not None else value, tensor, const, graph, leaf)
        if split_view is not None:
            # `g_ = g_h`, `q = q.view(b, n, h, d).transpose(1, 2)`: the same memory as one
            # output of `chunk`/`split`, and still a view of it, which autograd cannot rebase
            # either: a write in place through the new binding raises as one through the old
            scope.split_views[name], provisional = split_view
            if provisional is not None:
                scope.provisional_splits[name] = provisional
        # in a forward(): computed from its tensor arguments (knowledge.result_carries_graph)
        if scope.graph_arguments and tensor and not const and not graph and \
                self.result_carries_graph(value):
            scope.graph_arguments.add(name)
            self.note_origins(name, value)
        else:
            scope.graph_arguments.discard(name)
        if scope.untyped_arguments:
            if not const and not graph and self.computed_from_untyped_arguments(value):
                scope.untyped_arguments[name] = self.untyped_origins(value)  # `centred = src - src_max`
            else:
                scope.untyped_arguments.pop(name, None)
        if scope.alias_of:
            self._forget_aliases(scope, name)
        if isinstance(value, ast.Call) and self.modules.as_is_functions:
            made_by = self.function_view_call(value)
            if made_by is not None:
                scope.function_views[name] = made_by
        alias = self.alias_base(value) if tensor else None
        if alias is not None and alias[0] != name:
            scope.alias_of[name] = alias
        elif alias is not None and alias[1] == "view":
            # `x = x.view(n, -1)`: the new x is the old one's memory, so a later write
            # to it still changes what an op saved of the old x (ADL001)
            scope.view_rebinds.add(scope.binds[name][-1])
        for loop in scope.loops:
            loop.bound.add(name)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            receiver = value.func.value
            if value.func.attr == "detach" and value.args and self.qualname(value.func) == "torch.detach":
                receiver = value.args[0]  # `torch.detach(x)`, the function form, detaches `x`, not `torch`
            source = self.view_base(receiver)
            if value.func.attr == "detach" and source:
                scope.detached[name] = (source, scope.binds[name][-1])
            elif value.func.attr in ("expand", "expand_as") and tensor:
                # `.expand()` is a tensor's method: its result is a tensor whatever the walk
                # knows of the receiver (`p_i_j.sum(1).view(k, 1).expand(k, k)` of a parameter)
                scope.expanded[name] = scope.binds[name][-1]
                if grad_free_expansion:
                    scope.grad_free_expansions.add(scope.binds[name][-1])

    def _split_view_named(self, scope, value):
        """``(split_from, provisional parameter)`` when ``value`` is one output of
        `chunk`/`split`/`unbind` under its name, or a view of it (basic indexing, the view
        methods; never a copy, `.data` or `.detach()`), as ``Scope.split_views`` records it."""
        alias = self.alias_base(value)
        if alias is None or alias[1] != "view" or alias[0] not in scope.split_views:
            return None
        return scope.split_views[alias[0]], scope.provisional_splits.get(alias[0])

    def _bind_unseen(self, scope, name: str, tensor: bool, source) -> None:
        """``bind`` of a value the walk does not see: what the old binding said is
        forgotten, and the name is a tensor only when ``tensor`` says so (an annotation)."""
        self.modules.name_specs.pop(name, None)
        self._new_binding(scope, name, source, tensor, False, False, False)
        scope.graph_arguments.discard(name)
        if scope.untyped_arguments:
            scope.untyped_arguments.pop(name, None)
        if scope.alias_of:
            self._forget_aliases(scope, name)
        for loop in scope.loops:
            loop.bound.add(name)

    def _new_binding(self, scope, name: str, value, tensor: bool, const: bool, graph: bool,
                     leaf: bool) -> None:
        """Record the binding and its facts; drop the facts that belonged to the old value."""
        seq = self.next_seq()
        scope.binds[name].append(seq)
        scope.bind_values[name].append((seq, value, scope.grad_off))
        # (written out, not a loop over the four: most names are bound with every fact false)
        if tensor:
            scope.tensors.add(name)
        else:
            scope.tensors.discard(name)
        if const:
            scope.consts.add(name)
        elif scope.consts:
            scope.consts.discard(name)
        if graph:
            scope.graph.add(name)
        elif scope.graph:
            scope.graph.discard(name)
        if leaf:
            scope.grad_leaves.add(name)
        elif scope.grad_leaves:
            scope.grad_leaves.discard(name)
        if scope.detached:
            scope.detached.pop(name, None)
        if scope.expanded:
            scope.expanded.pop(name, None)
        if scope.split_views:
            scope.split_views.pop(name, None)
        if scope.function_views:
            scope.function_views.pop(name, None)
        if scope.provisional_splits:
            scope.provisional_splits.pop(name, None)
        if scope.parameter_vars:
            scope.parameter_vars.discard(name)

    @staticmethod
    def _forget_aliases(scope, name: str) -> None:
        scope.alias_of.pop(name, None)
        for alias in [a for a, (b, _) in scope.alias_of.items() if b == name]:
            del scope.alias_of[alias]  # the alias keeps the old tensor, not the new name


    # ----- scopes -------------------------------------------------------
    def visit_FunctionDef(self, node):
        self.function_nodes.append(node)
        for d in node.decorator_list:
            self.visit(d)
        self.visit(node.args)  # defaults and annotations run in the outer scope
        if node.returns:
            self.visit(node.returns)
        self.bind(node.name, None)
        grad_off = self.scope.grad_off or N.is_init_function(node.name) or \
            node.name in self.file.grad_off_callees or any(
            self.qualname(d.func if isinstance(d, ast.Call) else d) in N.GRAD_OFF_CONTEXTS
            for d in node.decorator_list)
        module_class = self.class_stack[-1] if self.class_stack else None
        bases, distribution = (self.class_bases[-1] or ((), False)) if self.class_bases else ((), False)
        methods = (self.class_methods[-1] or frozenset()) if self.class_methods else frozenset()
        outer, outer_guard = self.scope, self.guard_depth
        outer_defaults, outer_opt_in = self.function_defaults, self.opt_in_depth
        self.function_defaults, self.opt_in_depth = parameter_defaults(node), 0
        outer_layer_classes, self.modules.layer_class_parameters = \
            self.modules.layer_class_parameters, self.layer_class_parameters(self.function_defaults)
        self.scope = Scope(node.name, grad_off, module_class)
        self.scope.owner_class = self.enclosing_class[-1] if self.enclosing_class else None
        self.scope.function_node = node
        # a loss the framework backpropagates; a result that callers differentiate
        self.scope.framework_backward = self.framework_loss_method(bases, node.name)
        self.scope.returns_to_callers = distribution and node.name in N.DIFFERENTIABLE_DISTRIBUTION_METHODS
        self.scope.top_level = outer.name == "<module>"
        self.scope.optimizer_parameters = self.optimizer_parameters(node.args)
        value_argument = distribution and node.name in N.DISTRIBUTION_VALUE_METHODS
        self.guard_depth = outer_guard if "debug" not in node.name.lower() else outer_guard + 1
        self.scope.class_methods = methods
        self.scope.class_bases = tuple(q for q in map(self.qualname, bases) if q)
        # a base the file's imports do not name (a class of this file, `object` aside)
        self.scope.unnamed_bases = any(not self.qualname(b) and not (isinstance(b, ast.Name) and b.id == "object")
                                       for b in bases)
        self.class_stack.append(None)
        self.class_bases.append(None)
        self.class_methods.append(None)
        self.enclosing_class.append(None)
        outer_summaries, self.return_summaries = self.return_summaries, []
        outer_returns, self.returns = self.returns, []
        outer_ops, self.return_ops = self.return_ops, []
        args = node.args
        all_args = args.posonlyargs + args.args + args.kwonlyargs
        for i, a in enumerate(all_args):
            assumed = module_class is not None and node.name == "forward" and i > 0 and a.annotation is None
            tensor = self.is_tensor_annotation(a.annotation) or assumed or (
                value_argument and i == 1)  # `Distribution.log_prob(self, value)`
            self.bind(a.arg, None, tensor=tensor)
            if assumed:
                self.scope.assumed_tensor_arguments[a.arg] = None
        # a forward hook's `output`: the hooked module's output, with this pass's graph
        # (forward_hooks.py)
        if (self.scope.owner_class, node.name) in self.file.forward_hooks and not grad_off:
            output = hook_output_parameter(node, method=self.scope.owner_class is not None)
            if output is not None:
                self.scope.tensors.add(output)
                self.scope.graph.add(output)
        # every call in the file passes one module here (argument_modules.py): `model(x)`
        # in `def train(model, ...)` calls that network
        for param, ctor in self.file.module_parameters.get((self.scope.owner_class, node.name), {}).items():
            spec = self.modules.module_spec(ctor)
            if spec is not None:
                self.modules.name_specs[param] = spec
        # every call in the file passes a value without a graph here (arguments.py)
        grad_free = self.file.grad_free_parameters.get(node.name, ())
        # parameters used as a tensor index: integer or bool tensors (index_arguments.py)
        names = [a.arg for a in all_args]
        if self.index_spellings is False:
            self.index_spellings = index_spellings(self.source)
        spelled = self.index_spellings
        indices = frozenset() if spelled is not None and not any(
            n in spelled and n not in ("self", "cls") for n in names) \
            else index_parameters(node, names, self.text(node))
        if indices:
            grad_free = frozenset(grad_free) | indices
        self.scope.consts.update(grad_free)
        # Tensor arguments that may carry a graph in: a Distribution's `log_prob(value)`
        # and the like and a loss the framework backpropagates (callers differentiate
        # the result); a forward()'s, and, in a file that runs backward passes, those
        # annotated `Tensor` that some call fills with a value not cut from its graph.
        # The last two need evidence, the rules' reports wait for the whole file:
        # a forward's class built as another module's part (submodules.py), a
        # helper's call in the file that passes a graph tensor (graph_callers.py).
        is_forward = module_class is not None and node.name == "forward"
        called_with_graph = self.scope.returns_to_callers or self.scope.framework_backward
        if called_with_graph or is_forward or self.file.trains:
            self.scope.graph_arguments.update(
                a.arg for a in all_args if a.arg in self.scope.tensors and a.arg not in grad_free)
        self.scope.provisional = not called_with_graph and bool(self.scope.graph_arguments)
        if self.scope.provisional:
            self.note_parameter_origins(args, method=module_class is not None
                                        or self.scope.owner_class is not None)
        if self.file.trains and not grad_off and not called_with_graph and not is_forward:
            self.note_untyped_arguments(all_args, grad_free, method=module_class is not None
                                        or self.scope.owner_class is not None)
        self.scope.evidence_key = f"{module_class}.forward" if is_forward else node.name
        self.scope.parameters = frozenset(a.arg for a in all_args)
        self.scope.arguments = args  # the positions of its parameters (ADL001's untyped ones)
        self.scope.function = node
        for a in (args.vararg, args.kwarg):
            if a:
                self.bind(a.arg, None)
        self.visit_body(node.body)
        self.class_stack.pop()
        self.class_bases.pop()
        self.class_methods.pop()
        self.enclosing_class.pop()
        if not self.scope.grad_off:
            self.summaries.record((self.scope.owner_class, node.name), self.return_summaries)
            self.summaries.record_parameter_writes((self.scope.owner_class, node.name), node, self.scope,
                                                   method=self.scope.owner_class is not None)
            self.summaries.record_training_steps((self.scope.owner_class, node.name), node, self.scope,
                                                 method=self.scope.owner_class is not None)
            self.summaries.record_parameter_saves((self.scope.owner_class, node.name), node, self.scope,
                                                  method=self.scope.owner_class is not None)
            if self.scope.owner_class is not None:
                self.summaries.record_parameter_accumulations((self.scope.owner_class, node.name), node,
                                                              self.scope)
            if self.scope.return_values:
                self.summaries.record_output_saves((self.scope.owner_class, node.name), node, self.scope,
                                                   method=self.scope.owner_class is not None)
                self.summaries.record_parameter_views((self.scope.owner_class, node.name), node, self.scope,
                                                      self.view_base, method=self.scope.owner_class is not None)
        self.return_summaries = outer_summaries
        if module_class is not None and node.name == "forward":
            self.summarise_forward(module_class, node, self.scope)
        check_scope(self, self.scope)
        inner = self.scope
        self.scope, self.guard_depth = outer, outer_guard
        self.function_defaults, self.opt_in_depth = outer_defaults, outer_opt_in
        self.modules.layer_class_parameters = outer_layer_classes
        if inner.owner_class is not None and outer.name == inner.owner_class:
            self.modules.record_factory(node, method_of=inner.owner_class)
        if outer.name == "<module>":
            self.modules.record_factory(node)
            if self.returns and all(self.cuts_graph(r, node.name) for r in self.returns):
                self.training.grad_free_functions.add(node.name)
        if inner.zero_grads:  # `def reset_grad(): d_opt.zero_grad(); g_opt.zero_grad()`
            self.training.zero_grad_functions.add(node.name)
        self.returns = outer_returns
        self.return_ops = outer_ops

    visit_AsyncFunctionDef = visit_FunctionDef

    def note_parameter_origins(self, args, method: bool) -> None:
        """Each graph argument's origin: its name and its call position (after `self`
        for a method); a keyword-only one by name only."""
        positional = args.posonlyargs + args.args
        origins = {}
        for i, a in enumerate(positional):
            if a.arg in self.scope.graph_arguments and not (method and i == 0):
                origins[a.arg] = frozenset((a.arg, i - 1 if method else i))
        for a in args.kwonlyargs:
            if a.arg in self.scope.graph_arguments:
                origins[a.arg] = frozenset((a.arg,))
        self.scope.argument_origins = origins
        self.scope.all_argument_origins = frozenset().union(*origins.values())

    def note_origins(self, name: str, value) -> None:
        """``name`` now holds a value computed from the function's graph arguments."""
        if self.scope.provisional and value is not None:
            self.scope.argument_origins[name] = self.argument_origins_of(value)

    def argument_origins_of(self, node) -> frozenset:
        """The parameters (names and positions) whose graph ``node`` may carry; a graph
        argument whose origin the walk did not record counts as any of them."""
        origins = frozenset()
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in self.scope.graph_arguments:
                origins |= self.scope.argument_origins.get(n.id, self.scope.all_argument_origins)
        return origins

    def note_untyped_arguments(self, all_args, grad_free, method: bool) -> None:
        """`def scatter_softmax(src, index)`: parameters without an annotation that the
        walk does not take for tensors; what the function computes from them carries a
        graph where some call of the file passes one at their position (ADL001 waits
        for it, ``Scope.untyped_saves``)."""
        names = [a.arg for a in all_args]
        positions = {}
        for i, name in enumerate(names):
            if (method and i == 0) or name in ("self", "cls") or name in self.scope.tensors \
                    or name in grad_free or name in self.modules.name_specs:
                continue
            positions[name] = i - 1 if method else i
        for name, position in positions.items():
            self.scope.untyped_arguments[name] = frozenset((name, position))

    def visit_Return(self, node):
        if node.value is not None:
            self.visit(node.value)
            self.returns.append(node.value)
            self.scope.return_values.append((self.next_seq(), node.value))
            self.return_summaries.append(self.return_summary(node.value))
            if self.scope.name == "forward" and self.scope.module_class:
                self.return_ops.append(self.returned_op(node.value))

    def return_summary(self, value) -> tuple[tuple, object]:
        """What one `return` gives back (summaries.py): per position of a returned
        tuple, "graph", "args" (a graph when the arguments have one), "views" (a
        multi-view output), "dict" (a dict of graph tensors) or None; ``"split"`` for `x.chunk(n)`'s views."""
        if self.splits_tensor(value):
            source = self.split_source(value)
            if self.is_graph(source) or (self.scope.graph_arguments and self.result_carries_graph(source)):
                return ("views",), "split"
            return (None,), "split"
        elts, is_tuple = (value.elts, True) if isinstance(value, ast.Tuple) else ([value], False)
        return tuple(self.value_summary(e) for e in elts), is_tuple

    def value_summary(self, value) -> str | None:
        if isinstance(value, ast.Starred):
            return None
        if not self.is_tensor(value):
            if self.graph_dict(value):
                return "dict"
            # `def flatten(t): return t.reshape(t.shape[0], -1)`: a tensor argument's graph
            return "through" if self.scope.top_level and self.reshapes_parameter(value) else None
        if self.is_const(value):
            return None
        if self.is_graph(value):
            return "graph"
        if self.scope.graph_arguments and self.result_carries_graph(value):
            return "args"
        return "tensor"

    def graph_dict(self, value) -> bool:
        """``value`` is a name bound to a dict literal one of whose values carries a
        graph (`outputs = {"topview": self.models["decoder"](features)}; return outputs,
        losses`): a "dict" entry of the summary, which only ADL003 reads (the modules the
        dict's tensors were computed from); the dict is no tensor."""
        if not isinstance(value, ast.Name) or len(self.scope.binds.get(value.id, ())) != 1:
            return False
        entry = self.scope.binding(value.id, self.seq + 1)
        return entry is not None and isinstance(entry[1], ast.Dict) and not entry[2] \
            and any(v is not None and self.is_graph(v) for v in entry[1].values)

    def function_view_call(self, call) -> str | None:
        """The text of ``call`` when it runs a custom autograd Function that returns its
        input as is (`Reduce.apply(h)`), directly or as a same-file module whose
        `forward` returns that (`self.grl(h)`), on an argument that carries a graph (so
        that autograd records the Function): its output may not be written in place."""
        if self.runs_as_is_function(call) and any(
                self.is_graph(a) or (self.scope.graph_arguments and self.result_carries_graph(a))
                for a in call.args if not isinstance(a, ast.Starred)):
            return self.text(call.func)
        return None

    def runs_as_is_function(self, call) -> bool:
        """``call`` is `F.apply(...)` of a custom Function returning its input as is, or a
        call of a same-file module whose `forward` returns such an output."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "apply" and \
                isinstance(func.value, (ast.Name, ast.Attribute)):
            return (func.value.id if isinstance(func.value, ast.Name) else func.value.attr) \
                in self.modules.as_is_functions
        spec = self.called_module(call)
        return spec is not None and spec.kind in self.modules.function_view_classes

    def reshapes_parameter(self, value) -> bool:
        """``value`` is a parameter of the function, as the caller passed it, through
        views, reshapes and copies only (`t.reshape(n, -1)`, `x.flatten(1).t()`,
        `t.cpu()`): a tensor with the argument's graph when the argument is a tensor."""
        while True:
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and (value.func.attr in _SHAPE_METHODS or value.func.attr in _GRAPH_COPY_METHODS):
                value = value.func.value
            elif isinstance(value, ast.Subscript):
                value = value.value
            else:
                break
        return isinstance(value, ast.Name) and value.id in self.scope.parameters \
            and len(self.scope.binds.get(value.id, ())) == 1

    def returned_op(self, value) -> str | None:
        """The op whose saved output ``value`` is (a forward's summary)."""
        scope = self.scope
        if isinstance(value, ast.Name):
            for seq, key, how, _ in reversed(scope.saves.get(value.id, ())):
                # `g = torch.sigmoid(h); g = g.permute(0, 2, 1); return g`: a re-binding
                # to a view of itself keeps the saved output's memory (r646)
                if how == "output" and not any(seq < b <= self.seq and b not in scope.view_rebinds
                                               for b in scope.binds.get(value.id, ())):
                    return key
                return None
            return None
        spec = self.called_module(value)
        if spec is not None:
            return spec.output_layer.op if spec.output_layer.saves_output else None
        op = self.saving_op(value)
        return op[0] if op is not None and op[1]["output"] else None

    def summarise_forward(self, module_class: str, node, scope) -> None:
        """What calling this class does: the op whose output every `return` gives
        back (a caller writing it breaks backward), and whether it writes its input."""
        ops = set(self.return_ops)
        out_op = ops.pop() if len(ops) == 1 else None
        if out_op is not None and _returns_of_several_bindings(node):
            # `if first: x = act(x); x = conv(x)` / `else: x = act(conv(x))`, then `return x`:
            # the op that saved the returned value depends on the branch taken
            out_op = None
        params = [a.arg for a in node.args.posonlyargs + node.args.args][1:2]
        writes_input = False
        in_op = None
        if params and scope.binds.get(params[0]):
            start = scope.binds[params[0]][0]  # the argument's own binding
            writes_input = any(w.name == params[0] and w.grad_on and not w.through_data
                               and not scope.bound_between(params[0], start, w.seq)
                               for w in scope.writes)
            # an op that keeps the argument itself (`self.norm(x)`), so a caller that
            # writes it afterwards breaks this forward's backward
            in_op = next((key for seq, key, how, _ in scope.saves.get(params[0], ())
                          if how == "input 0" and seq in scope.graph_saves
                          and not scope.bound_between(params[0], start, seq)), None)
        # what a caller gets back is the argument it passed (`x.mul_(...); return x`):
        # only then does a write of the input make the output what the write kept
        # and no statement binds the argument's name to anything else on the way
        # (`x = self.act(x); x = self.conv(x); return x` returns the convolution's output)
        returns_input = bool(params) and bool(self.returns) and all(
            _names(value, params[0]) for value in self.returns) \
            and all(self.keeps_argument(value, params[0]) for value in _rebindings(node, params[0]))
        if self.modules.as_is_functions and self.returns and all(
                (isinstance(v, ast.Call) and self.runs_as_is_function(v))
                or (isinstance(v, ast.Name) and v.id in scope.function_views) for v in self.returns):
            # `return GradReverse.apply(x)`, or a layer of such a class's output
            self.modules.function_view_classes.add(module_class)
        self.modules.class_summaries[module_class] = (out_op, writes_input, in_op,
                                                      params[0] if params else None, returns_input)

    def keeps_argument(self, value, name: str) -> bool:
        """``name = value`` leaves ``name`` the tensor it was: an in-place method of
        it (`x = x.relu_()`) or a layer that writes its input and returns it
        (`x = self.act(x)` with `self.act = nn.LeakyReLU(inplace=True)`)."""
        if _names(value, name):
            return True
        if not (isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Name)
                and value.args[0].id == name):
            return False
        spec = self.called_module(value)
        return spec is not None and spec.input_layer.inplace and spec.input_layer.returns_input \
            and spec.input_layer is spec.output_layer

    def cuts_graph(self, value, function: str) -> bool:
        """A returned value with no graph: `h.detach()`, None, or containers of those
        (`tuple(repackage(v) for v in h)` in the function ``function`` itself)."""
        if isinstance(value, ast.Constant):
            return True
        if isinstance(value, (ast.Tuple, ast.List)):
            return all(self.cuts_graph(e, function) for e in value.elts)
        if isinstance(value, (ast.GeneratorExp, ast.ListComp)):
            return self.cuts_graph(value.elt, function)
        if isinstance(value, ast.IfExp):
            return self.cuts_graph(value.body, function) and self.cuts_graph(value.orelse, function)
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute):
                return func.attr in N.GRAD_CUTTING_METHODS
            if isinstance(func, ast.Name):
                if func.id in (function, *self.training.grad_free_functions):
                    return True
                if func.id in ("tuple", "list") and len(value.args) == 1:
                    return self.cuts_graph(value.args[0], function)
        return False

    def optimizer_parameters(self, args) -> frozenset:
        """Parameters whose default is a torch optimizer class: `optimizer_class=optim.Adam`
        (rlkit's trainers), called later to build the optimizers."""
        positional = args.posonlyargs + args.args
        pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults)) + \
            [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        return frozenset(a.arg for a, d in pairs if (self.qualname(d) or "").startswith("torch.optim.")
                         and (self.qualname(d) or "").rsplit(".", 1)[-1] in N.OPTIMIZER_CLASSES)

    def layer_class_parameters(self, defaults: dict) -> dict:
        """Parameters whose default is a torch.nn layer class (`activation=nn.LeakyReLU`),
        called in the body to build the layer: parameter -> the class's qualified name."""
        found = {}
        for name, default in defaults.items():
            q = self.qualname(default) if isinstance(default, (ast.Name, ast.Attribute)) else None
            if q and q.startswith("torch.nn.") and q.count(".") == 2 and q.rsplit(".", 1)[-1][:1].isupper():
                found[name] = q
        return found

    def visit_arguments(self, node):
        for d in node.defaults + [d for d in node.kw_defaults if d is not None]:
            self.visit(d)

    def visit_Lambda(self, node):
        self.visit(node.args)

    def called_module(self, call):
        """The spec of the module ``call`` calls, if the file built it (modules.py)."""
        return self.modules.called_module(call, self.scope.owner_class)

    def visit_ClassDef(self, node):
        self.class_nodes.append(node)
        for d in node.decorator_list:
            self.visit(d)
        for b in node.bases:
            self.visit(b)
        is_module = any(self.is_module_base(b) for b in node.bases)
        distribution = any(self.is_distribution_base(b) for b in node.bases)
        if distribution:
            self.modules.distribution_classes.add(node.name)
        if any(self.framework_loss_method(node.bases, m) for m in N.FRAMEWORK_LOSS_METHODS):
            self.modules.framework_classes.add(node.name)
        # torch.autograd.Function: forward()/backward() run with gradients off
        is_function = any(self.qualname(b) in N.AUTOGRAD_FUNCTIONS for b in node.bases)
        if is_function and returns_an_input(node):
            self.modules.as_is_functions.add(node.name)
        if any((self.qualname(b) or "").startswith("torch.optim.") or
               (isinstance(b, ast.Name) and b.id == "Optimizer") for b in node.bases):
            self.training.defines_optimizer = True
        if is_module:
            self.modules.module_classes.add(node.name)
            self.modules.module_class_nodes[node.name] = node
            self.modules._data_only_methods.pop(node.name, None)
        if not is_module and not is_function and "requires_grad=True" in self.source:
            # a plain class's `self.w = torch.zeros(n, requires_grad=True)`: a leaf in its methods
            self.modules.parameter_attributes[node.name] |= attribute_leaves(self, node)
        self.class_stack.append(node.name if is_module else None)
        self.class_bases.append((node.bases, distribution))
        self.class_methods.append(frozenset(
            b.name for b in node.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))))
        self.summaries.class_shapes[node.name] = (
            tuple(b.id for b in node.bases if isinstance(b, ast.Name)), self.class_methods[-1])
        outer = self.scope
        self.scope = Scope(node.name, outer.grad_off or is_function)  # class body: names only
        self.enclosing_class.append(node.name)
        self.visit_body(callees_first(node.body, self.lines))
        self.enclosing_class.pop()
        self.scope = outer
        self.class_stack.pop()
        self.class_bases.pop()
        self.class_methods.pop()
        self.bind(node.name, None)

    @staticmethod
    def false_arg(call) -> bool:
        return bool(call.args) and isinstance(call.args[0], ast.Constant) and call.args[0].value is False


def callees_first(body: list, lines: list) -> list:
    """A class body in walking order: its statements and `__init__` as written, then
    the methods that other methods call as `self.method(...)` (each after the called
    methods it calls itself: `forward` -> `in_proj_qkv` -> `_in_proj`), then the rest,
    in source order, so that the summaries (summaries.py) of called methods are known
    at their calls.  A text search of the source (``lines``), not a walk of every
    method: this runs for every class of every file."""
    defs = [s for s in body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    names = {s.name for s in defs}
    if len(names) < 2 or len(names) != len(defs):  # a property's setter: keep the order
        return body

    def text(node):
        return "\n".join(lines[node.lineno - 1:node.end_lineno or node.lineno])

    class_source = "\n".join(text(d) for d in defs)
    called = [d for d in defs if d.name != "__init__" and f"self.{d.name}(" in class_source]
    if not called:
        return body
    builders = _layer_builders(defs, called, class_source, text)
    order, placed = [], set()

    def place(method):
        if method.name in placed:
            return
        placed.add(method.name)
        source = text(method)
        for callee in called:
            if callee.name != method.name and f"self.{callee.name}(" in source:
                place(callee)
        order.append(method)

    for method in builders + called:
        place(method)
    init = [d for d in defs if d.name == "__init__"]
    rest = [d for d in defs if d.name != "__init__" and d.name not in placed]
    others = [s for s in body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    return others + init + order + rest


# `self.netG = ...`, `self.enc, self.dec = build(...)`: the attributes a line binds
_SELF_BINDING = re.compile(r"^\s*((?:self\.\w+\s*,\s*)*self\.\w+)\s*=[^=]", re.MULTILINE)


def _layer_builders(defs: list, called: list, class_source: str, text) -> list:
    """The methods, other than `__init__` and those the class calls itself, that bind
    a layer the class calls (`self.netG = define_G(opt)` in an `initialize(opt)` the
    caller runs after construction, pix2pix's `BaseModel` way; a Lightning `setup`):
    walked before the called methods, so that a summary of `backward_G` knows
    `self.netG` is a layer, as it knows one `__init__` built.  A text search, like
    ``callees_first``."""
    called_names = {d.name for d in called}
    used = set(re.findall(r"self\.(\w+)\(", class_source))
    builders = []
    for d in defs:
        if d.name == "__init__" or d.name in called_names:
            continue
        bound = {name for targets in _SELF_BINDING.findall(text(d))
                 for name in re.findall(r"self\.(\w+)", targets)}
        if bound & used:
            builders.append(d)
    return builders


def _returns_of_several_bindings(function) -> bool:
    """Some `return name` of ``function`` can be reached by more than one binding
    of ``name`` (bindings in the two branches of an `if`, or before and inside a
    loop): a structural walk of the body, `try` and `with` bodies taken as run."""
    found = False

    def bound_names(stmt):
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}

    def walk(stmts, reaching):
        nonlocal found
        reaching = {k: set(v) for k, v in reaching.items()}
        for stmt in stmts:
            if isinstance(stmt, ast.Return):
                if isinstance(stmt.value, ast.Name) and len(reaching.get(stmt.value.id, ())) > 1:
                    found = True
                continue
            if isinstance(stmt, ast.If):
                reaching = _merged(walk(stmt.body, reaching), walk(stmt.orelse, reaching))
                continue
            if isinstance(stmt, (ast.For, ast.While)):
                once = walk(stmt.body, reaching)
                body = walk(stmt.body, _merged(reaching, once))  # the second iteration sees the first's
                reaching = walk(stmt.orelse, _merged(reaching, body))
                continue
            if isinstance(stmt, (ast.With, ast.AsyncWith)):
                reaching = walk(stmt.body, reaching)
                continue
            if isinstance(stmt, ast.Try):
                reaching = walk(stmt.body + stmt.orelse + stmt.finalbody, reaching)
                continue
            for name in bound_names(stmt):
                reaching[name] = {id(stmt)}
        return reaching

    walk(function.body, {})
    return found


def _merged(a: dict, b: dict) -> dict:
    """name -> the bindings that reach from either of two paths."""
    return {k: a.get(k, set()) | b.get(k, set()) for k in set(a) | set(b)}


def _rebindings(function, name: str) -> list:
    """The values ``function``'s own body binds to ``name`` (`name = ...`, `name += ...`)."""
    found = []
    for node in ast.walk(function):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and node is not function:
            continue
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            found.append(node.value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
                and node.target.id == name and node.value is not None:
            found.append(node.value if isinstance(node, ast.AnnAssign) else node)
        elif isinstance(node, (ast.For, ast.With, ast.NamedExpr)):
            targets = [node.target] if isinstance(node, (ast.For, ast.NamedExpr)) else \
                [i.optional_vars for i in node.items if i.optional_vars is not None]
            if any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t)):
                found.append(node)
    return found


def _names(value, name: str) -> bool:
    """``value`` is ``name`` itself, or an in-place method of it (`x.mul_(y)`)."""
    if isinstance(value, ast.Name):
        return value.id == name
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr.endswith("_") and not value.func.attr.endswith("__") \
        and _names(value.func.value, name)

