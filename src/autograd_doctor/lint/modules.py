"""Module composition: what calling ``self.<attr>(x)`` does to ``x`` and to its
result, from how ``self.<attr>`` was built in ``__init__``.

* ``nn.ReLU(inplace=True)``: writes its input, and keeps its output for backward.
* ``nn.Sequential(a, ..., z)``: its first layer decides what happens to the
  input (``a`` writes it, or saves it); its last layer what is saved of the output.
* A same-file factory function (``def conv_relu(c, inplace=True): return
  nn.Sequential(...)``) builds what its ``return`` builds, with the default
  arguments filled in.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, replace

from autograd_doctor.lint import names as N
from autograd_doctor.lint.methods import argument_only_methods, data_only_methods
from autograd_doctor.lint.project_factories import imported_factory

CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
# nn.Module methods that return the module itself: `nn.Sequential(...).apply(init)`,
# `build_mlp(...).to(device)` build what their receiver builds (not `requires_grad_`,
# which may freeze the parameters)
RETURN_THE_MODULE = frozenset({"apply", "to", "cuda", "cpu", "float", "double", "half",
                               "bfloat16", "train", "eval", "type", "to_empty", "share_memory"})
# classes of torch.nn that build tensors, not modules
NOT_MODULES = frozenset({"Parameter", "UninitializedParameter", "Buffer", "UninitializedBuffer"})


@dataclass(frozen=True)
class ModuleSpec:
    kind: str                          # "ReLU", "Linear", "Sequential", a factory's result...
    inplace: bool = False              # writes its input (an inplace activation or dropout)
    inplace_keyword: ast.keyword | None = None  # `inplace=True` written at the call: fixable
    first: ModuleSpec | None = None    # for containers: the layer that sees the input
    last: ModuleSpec | None = None     # and the one that makes the output
    parameterised: bool = False
    out_op: str | None = None          # a same-file module class: the op its forward returns
    in_op: str | None = None           # a same-file module class: an op its forward keeps its input for
    in_param: str | None = None        # ... and the name of that input (`x=` at a call)
    element: ModuleSpec | None = None  # a container (ModuleList...): what each of its layers is
    # a same-file module class whose forward returns the argument it writes (`x.mul_(y);
    # return x`); torch.nn's in-place layers return what they wrote
    returns_input: bool = True

    @property
    def element_spec(self) -> ModuleSpec:
        """What calling one of a container's layers (`self.layers[i](x)`, `for layer in
        self.layers: layer(x)`) does: the layers' common spec when the container was built
        from one constructor, else a layer with weights when the container has any."""
        return self.element or ModuleSpec("layer", parameterised=self.parameterised)

    @property
    def input_layer(self) -> ModuleSpec:
        return self.first or self

    @property
    def output_layer(self) -> ModuleSpec:
        return self.last or self

    @property
    def op(self) -> str | None:
        """The functional op (a key of the saves table) this layer computes."""
        return N.MODULE_OPS.get(self.kind) or self.out_op

    @property
    def saves_output(self) -> bool:
        """Backward needs this layer's output: `relu`, `sigmoid`, `tanh`... keep it.
        An in-place activation keeps what it wrote when the saves table's
        `:inplace` entry says so (`nn.ReLU(inplace=True)`, not `nn.Hardswish`, which
        keeps a copy of its input); dropout keeps its mask.  A same-file module
        that writes its input and returns it is taken to keep its output (its input
        is gone); one that returns something else (`return out + x`) keeps nothing known."""
        if self.inplace and self.kind in N.INPLACE_ACTIVATION_FUNCTIONALS:
            entry = N.saves_table().get(self.inplace_key or "")
            return bool(entry and entry["output"])
        entry = N.saves_table().get(self.op or "")
        return bool(entry and entry["output"]) or (self.inplace and "Dropout" not in self.kind
                                                   and self.returns_input)

    @property
    def inplace_key(self) -> str | None:
        """The saves-table key of this in-place activation (`...relu:inplace`)."""
        functional = N.INPLACE_ACTIVATION_FUNCTIONALS.get(self.kind)
        return f"torch.nn.functional.{functional}:inplace" if functional else None


class ModuleFacts:
    """What the file says about its `nn.Module`s, filled in as the walk goes:
    same-file module classes, the layers their `__init__` builds, factories,
    names bound to modules, buffers and graph tensors kept on them."""

    def __init__(self, qualname, filename: str | None = None):
        self.qualname = qualname  # the checker's import-aware name of an expression
        self.filename = filename  # the linted file: where project factories are looked up from
        self.module_classes: set[str] = set()
        self.distribution_classes: set[str] = set()  # same-file Distribution subclasses
        self.framework_classes: set[str] = set()     # same-file LightningModule / Trainer subclasses
        # functions called by name from the methods of same-file nn.Module classes, with
        # gradients on: as much gradient code as the methods (`def attention(q, k, v)`
        # called from a forward); ADL001 checks them once the file is read
        self.module_callees: set[str] = set()
        self.module_specs: dict[str, dict] = defaultdict(dict)  # class -> attribute -> ModuleSpec
        self.factories: dict = {}   # same-file function name -> the ModuleSpec it returns
        # same-file function name -> the ModuleSpecs of the tuple it returns
        # (`encoder = nn.Sequential(...); decoder = ...; return encoder, decoder`)
        self.tuple_factories: dict = {}
        # (class, method) -> the ModuleSpec a factory method returns (`self.create_NN(...)`)
        self.method_factories: dict = {}
        self.name_specs: dict = {}  # name bound to a module (`relu = nn.ReLU(inplace=True)`)
        # modules whose parameters the file freezes (`for p in vgg.parameters():
        # p.requires_grad_(False)`, `vgg.requires_grad_(False)`): their text, `vgg`, or
        # `class C` for a class that freezes `self` in its own methods (every instance)
        self.frozen: set = set()
        # the walked function's parameters whose default is a torch.nn layer class
        # (`activation=nn.LeakyReLU`): `activation(inplace=True)` builds one
        self.layer_class_parameters: dict = {}
        self.buffers: dict[str, set] = defaultdict(set)  # class -> register_buffer names
        # class -> attributes its `__init__` binds to an `nn.Parameter` (leaves that require grad)
        self.parameter_attributes: dict[str, set] = defaultdict(set)
        self.graph_attributes: dict[str, list] = defaultdict(list)  # class -> [(attr, line)]
        # custom autograd Functions whose forward returns an input as is (custom_functions.py),
        # and same-file module classes whose forward returns such a Function's output
        self.as_is_functions: set[str] = set()
        self.function_view_classes: set[str] = set()
        # neighbours inside `nn.Sequential(...)`, both understood: (call of the second,
        # spec of the first, spec of the second), every time a Sequential is read
        self.sequential_neighbours: list = []
        # same-file nn.Module class -> (op whose output its forward returns, writes its input)
        self.class_summaries: dict = {}
        # same-file nn.Module class -> its methods that use none of its layers (methods.py)
        # (computed only when ADL003 asks: most files never step an optimizer, and
        # walking every module class was a fifth of the time on pytorch-image-models)
        self.module_class_nodes: dict[str, ast.ClassDef] = {}
        self._data_only_methods: dict[str, frozenset] = {}
        self._appended: dict[tuple, list] = {}  # (class, container) -> specs of its appended layers

    def data_only_methods_of(self, cls: str | None) -> frozenset:
        """The methods of the same-file module class ``cls`` that use none of its
        layers (methods.py): those that read only plain data kept on the module, and
        those that return what they build from their own arguments alone."""
        if cls not in self._data_only_methods:
            node = self.module_class_nodes.get(cls)
            self._data_only_methods[cls] = data_only_methods(node) | argument_only_methods(node, self.qualname) \
                if node is not None else frozenset()
        return self._data_only_methods[cls]

    def module_spec(self, call, defaults=None) -> ModuleSpec | None:
        """What the constructor call ``call`` builds (``defaults``: a factory's
        default arguments, to resolve ``inplace=inplace``)."""
        if not isinstance(call, ast.Call):
            return None
        if isinstance(call.func, ast.Attribute) and call.func.attr in RETURN_THE_MODULE:
            return self.module_spec(call.func.value, defaults)
        q = self.qualname(call.func) or (self.layer_class_parameters.get(call.func.id, "")
                                         if isinstance(call.func, ast.Name) else "")
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper() and \
                q.rsplit(".", 1)[-1] not in NOT_MODULES:
            kind = q.rsplit(".", 1)[-1]
            if kind in ("Sequential",):
                return self.sequential_spec(kind, call.args, defaults)
            if kind in CONTAINERS:
                return self.container_spec(kind, call, defaults)
            inplace, keyword = self.inplace_argument(call, kind, defaults)
            return ModuleSpec(kind, inplace, keyword, parameterised=kind in N.PARAMETERISED_MODULES)
        if isinstance(call.func, ast.Name):
            if call.func.id in self.factories:
                return self.factories[call.func.id]
            if call.func.id in self.module_classes:
                layers = self.sequential_subclass_layers(call.func.id)
                if layers is not None:  # `class ABN(nn.Sequential)` built by `super().__init__(...)`
                    return self.sequential_spec("Sequential", layers, None)
                out_op, writes_input, in_op, in_param, returns_input = self.class_summaries.get(
                    call.func.id, (None, False, None, None, False))
                return ModuleSpec(call.func.id, inplace=writes_input, parameterised=True, out_op=out_op,
                                  in_op=in_op, in_param=in_param, returns_input=returns_input)
        if q and not q.startswith("torch.") and "." in q and self.filename:
            kind = imported_factory(q, self.filename)  # `build_mlp(...)` of another project file
            if kind is not None:
                unknown = ModuleSpec("unknown")
                return ModuleSpec(kind, first=unknown, last=unknown, parameterised=True)
        return None

    def sequential_subclass_layers(self, cls: str):
        """The layers a same-file `nn.Sequential` subclass with no `forward` of its own
        passes to `super().__init__(a, ..., z)` (one such call in `__init__`, no starred
        argument); None for any other class."""
        node = self.module_class_nodes.get(cls)
        if node is None or not any(self.qualname(b) == "torch.nn.Sequential" for b in node.bases):
            return None
        methods = {f.name: f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
        init = methods.get("__init__")
        if "forward" in methods or init is None:
            return None
        calls = [c for c in ast.walk(init) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                 and c.func.attr == "__init__" and isinstance(c.func.value, ast.Call)
                 and isinstance(c.func.value.func, ast.Name) and c.func.value.func.id == "super"]
        if len(calls) != 1 or not calls[0].args or calls[0].keywords \
                or any(isinstance(a, ast.Starred) for a in calls[0].args):
            return None
        return calls[0].args

    def sequential_spec(self, kind, args, defaults) -> ModuleSpec:
        """`nn.Sequential(a, ..., z)`: its first layer sees the input, its last makes the output."""
        built = [(a, self.module_spec(a, defaults)) for a in args]
        # Only neighbours in the call are compared: an element we cannot read
        # (`layer_init(nn.Conv2d(...))`, a name, `*blocks`) stands between its
        # neighbours, and its output, not the layer before it, is what comes next.
        for (_, a), (b_call, b) in zip(built, built[1:]):
            if a is not None and b is not None:
                self.sequential_neighbours.append((b_call, a, b))
        layers = [layer for _, layer in built if layer is not None]
        if not layers:  # `nn.Sequential(*layers)`: unknown layers, surely some with weights
            return ModuleSpec(kind, parameterised=True)
        # An unknown first (last) element: what happens to the input (is kept
        # of the output) is unknown too, so nothing is claimed about it.
        first, last = built[0][1], built[-1][1]
        unknown = ModuleSpec("unknown")
        return ModuleSpec(kind, first=first.input_layer if first else unknown,
                          last=last.output_layer if last else unknown,
                          parameterised=any(layer.parameterised for layer in layers))

    def container_spec(self, kind, call, defaults) -> ModuleSpec:
        """`nn.ModuleList([Block(d) for _ in range(n)])`: a container whose layers all come
        from one constructor has that layer as its element; one built empty (filled by
        `append`) or from layers of several kinds has none (``element_spec``)."""
        source = call.args[0] if len(call.args) == 1 else None
        if isinstance(source, ast.Starred):
            source = source.value
        if isinstance(source, (ast.ListComp, ast.GeneratorExp)):
            elements = [source.elt]
        elif isinstance(source, (ast.List, ast.Tuple)):
            elements = list(source.elts)
        else:
            return ModuleSpec(kind, parameterised=True)  # filled later or from a name: unknown layers
        specs = [self.module_spec(e, defaults) for e in elements]
        if not specs:
            return ModuleSpec(kind, parameterised=True)  # `nn.ModuleList([])`, then `append`
        element = specs[0] if len(set(specs)) == 1 else None
        return ModuleSpec(kind, parameterised=any(s is None or s.parameterised for s in specs),
                          element=element)

    def inplace_argument(self, call, kind, defaults):
        """``(writes its input, the keyword to fix)`` for an ``nn.X(..., inplace=...)`` call."""
        if kind not in N.INPLACE_MODULES:
            return False, None
        for k in call.keywords:
            if k.arg != "inplace":
                continue
            if isinstance(k.value, ast.Constant):
                return k.value.value is True, (k if k.value.value is True else None)
            if isinstance(k.value, ast.Name) and defaults and k.value.id in defaults:
                return defaults[k.value.id] is True, None
        return False, None

    def called_module(self, call, module_class: str | None) -> ModuleSpec | None:
        """The spec of ``self.<attr>`` in ``self.<attr>(x)`` inside a method of
        ``module_class``, or of ``relu`` in ``relu(x)`` after ``relu = nn.ReLU(inplace=True)``,
        or of a container's layer, ``self.layers[i](x)``."""
        func = call.func if isinstance(call, ast.Call) else None
        if isinstance(func, ast.Name):
            return self.name_specs.get(func.id)
        if isinstance(func, ast.Subscript):
            keyed = self.keyed_self_attribute_spec(func, module_class)
            if keyed is not None:  # `self.models["decoder"](x)`
                return keyed
            container = self.self_attribute_spec(func.value, module_class)
            return container.element_spec if container is not None and container.kind in CONTAINERS else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id != "self":
            # `model.embedding(tokens)` after `model = SlotReader()`: a layer that the
            # same-file class's `__init__` built
            holder = self.name_specs.get(func.value.id)
            if holder is not None and holder.kind in self.module_classes:
                return self.module_specs.get(holder.kind, {}).get(func.attr)
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Attribute):
            # `self.critic.Q1(s)`: a layer that the held same-file module's class built
            holder = self.self_attribute_spec(func.value, module_class)
            if holder is not None and holder.kind in self.module_classes:
                return self.module_specs.get(holder.kind, {}).get(func.attr)
            return None
        return self.self_attribute_spec(func, module_class)

    def self_attribute_spec(self, node, module_class: str | None) -> ModuleSpec | None:
        """The spec of the layer ``self.<attr>`` that ``module_class``'s `__init__` built."""
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "self" and module_class:
            return self.module_specs.get(module_class, {}).get(node.attr)
        return None

    def keyed_self_attribute_spec(self, node, module_class: str | None) -> ModuleSpec | None:
        """The spec of the layer ``self.<attr>["<key>"]`` kept in a dict under a constant
        key (statements.py's ``record_keyed_layers``)."""
        if module_class and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                and isinstance(node.value.value, ast.Name) and node.value.value.id == "self" \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return self.module_specs.get(module_class, {}).get(f'{node.value.attr}["{node.slice.value}"]')
        return None

    def container_layers(self, iterable, module_class: str | None) -> ModuleSpec | None:
        """What each item of ``for layer in self.layers:`` is, when ``self.layers`` is a
        container this class built (also through `enumerate(...)`)."""
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) \
                and iterable.func.id == "enumerate" and len(iterable.args) == 1:
            iterable = iterable.args[0]
        container = self.self_attribute_spec(iterable, module_class)
        return container.element_spec if container is not None and container.kind in CONTAINERS else None

    def record_append(self, module_class: str, attr: str, call) -> None:
        """`self.layers.append(Block(d))` in `__init__`: the container's layers so far
        all come from one constructor, or not."""
        container = self.module_specs.get(module_class, {}).get(attr)
        # `adapter = nn.ParameterDict(...)`, then `self.adapters.append(adapter)`: the name
        # holds what its constructor built a line before
        spec = self.name_specs.get(call.id) if isinstance(call, ast.Name) else self.module_spec(call)
        if container is None or container.kind not in CONTAINERS:
            return
        appended = self._appended.setdefault((module_class, attr), [])
        appended.append(spec)
        element = appended[0] if len(set(appended)) == 1 else None
        self.module_specs[module_class][attr] = replace(
            container, element=element,
            parameterised=container.parameterised or spec is None or spec.parameterised)

    def appended_layer_call(self, call, module_class: str | None) -> bool:
        """``self.layers[i](x)`` of a container filled by `append` in `__init__` with
        layers of several kinds (so it has no ``element``), every one of them a known
        layer with parameters (`SpatioTemporalLSTMCell(...)` first, `MIMBlock(...)` after):
        whichever item is called, its outputs carry its graph."""
        func = call.func if isinstance(call, ast.Call) else None
        if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Attribute)
                and isinstance(func.value.value, ast.Name) and func.value.value.id == "self" and module_class):
            return False
        appended = self._appended.get((module_class, func.value.attr))
        return bool(appended) and all(spec is not None and spec.parameterised for spec in appended)

    def method_factory(self, call, owner_class: str | None, class_shapes: dict) -> ModuleSpec | None:
        """What `self.create_NN(...)` builds in a method of ``owner_class``: the spec of
        a factory method of the class or of a same-file base class that defines it
        (``class_shapes``: class -> (base names, method names))."""
        if not (owner_class and isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"):
            return None
        work, seen = [owner_class], set()
        while work:
            cls = work.pop(0)
            if cls in seen:
                continue
            seen.add(cls)
            if (cls, call.func.attr) in self.method_factories:
                return self.method_factories[(cls, call.func.attr)]
            bases, methods = class_shapes.get(cls, ((), frozenset()))
            if call.func.attr in methods:
                return None
            work += list(bases)
        return None

    def _returned_spec(self, node, value, defaults) -> ModuleSpec | None:
        """What a returned value builds: a constructor call, or a name that the function's
        own body binds once, at its top level and to a constructor call (`encoder =
        nn.Sequential(...)`, then `return encoder, decoder`)."""
        if isinstance(value, ast.Name):
            bindings = [s for s in node.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                        and isinstance(s.targets[0], ast.Name) and s.targets[0].id == value.id]
            stores = sum(1 for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == value.id
                         and isinstance(n.ctx, ast.Store))
            if len(bindings) != 1 or stores != 1 or bindings[0].lineno > value.lineno:
                return None
            value = bindings[0].value
        return self.module_spec(value, defaults)

    def tuple_factory_specs(self, call, width: int):
        """The specs of the tuple a same-file tuple factory's call returns, for a target of
        ``width`` names; None for any other call."""
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            specs = self.tuple_factories.get(call.func.id)
            if specs is not None and len(specs) == width:
                return specs
        return None

    def record_factory(self, node: ast.FunctionDef, method_of: str | None = None) -> None:
        """A top-level function whose every `return` builds a module is a factory; so is
        a method (``method_of``: its class) that way, for `self.net = self.create_NN(...)`."""
        returns = [s.value for s in node.body if isinstance(s, ast.Return) and s.value is not None]
        if len(returns) != 1:
            return
        args = node.args.posonlyargs + node.args.args
        defaults = {}
        for a, d in zip(args[len(args) - len(node.args.defaults):], node.args.defaults):
            if isinstance(d, ast.Constant):
                defaults[a.arg] = d.value
        for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults):
            if isinstance(d, ast.Constant):
                defaults[a.arg] = d.value
        if isinstance(returns[0], ast.Tuple):
            specs = tuple(self._returned_spec(node, e, defaults) for e in returns[0].elts)
            if method_of is None and specs and all(s is not None for s in specs):
                self.tuple_factories[node.name] = specs
            return
        spec = self._returned_spec(node, returns[0], defaults)
        if spec is not None and method_of is not None:
            self.method_factories[(method_of, node.name)] = spec
        elif spec is not None:
            self.factories[node.name] = spec
