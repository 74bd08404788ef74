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
from dataclasses import dataclass

from autograd_doctor.lint import names as N


@dataclass(frozen=True)
class ModuleSpec:
    kind: str                          # "ReLU", "Linear", "Sequential", a factory's result...
    inplace: bool = False              # writes its input (an inplace activation or dropout)
    inplace_keyword: ast.keyword | None = None  # `inplace=True` written at the call: fixable
    first: ModuleSpec | None = None    # for containers: the layer that sees the input
    last: ModuleSpec | None = None     # and the one that makes the output
    parameterised: bool = False
    out_op: str | None = None          # a same-file module class: the op its forward returns

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
        that writes its input is taken to keep its output (its input is gone)."""
        if self.inplace and self.kind in N.INPLACE_ACTIVATION_FUNCTIONALS:
            entry = N.saves_table().get(self.inplace_key or "")
            return bool(entry and entry["output"])
        entry = N.saves_table().get(self.op or "")
        return bool(entry and entry["output"]) or (self.inplace and "Dropout" not in self.kind)

    @property
    def inplace_key(self) -> str | None:
        """The saves-table key of this in-place activation (`...relu:inplace`)."""
        functional = N.INPLACE_ACTIVATION_FUNCTIONALS.get(self.kind)
        return f"torch.nn.functional.{functional}:inplace" if functional else None


class ModuleKnowledge:
    """Mixed into ``Checker``: reads ``self.factories`` (same-file functions that
    return a module) and ``self.module_specs`` (class -> attribute -> spec)."""

    def module_spec(self, call, defaults=None) -> ModuleSpec | None:
        """What the constructor call ``call`` builds (``defaults``: a factory's
        default arguments, to resolve ``inplace=inplace``)."""
        if not isinstance(call, ast.Call):
            return None
        q = self.qualname(call.func) or ""
        if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
            kind = q.rsplit(".", 1)[-1]
            if kind in ("Sequential",):
                built = [(a, self.module_spec(a, defaults)) for a in call.args]
                # Only neighbours in the call are compared: an element we cannot read
                # (`layer_init(nn.Conv2d(...))`, a name, `*blocks`) stands between its
                # neighbours, and its output, not the layer before it, is what comes next.
                for (_, a), (b_call, b) in zip(built, built[1:]):
                    if a is not None and b is not None and b.input_layer.inplace \
                            and a.output_layer.saves_output:
                        self.layer_conflicts[id(b_call)] = (b_call, a.output_layer, b.input_layer)
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
            inplace, keyword = self.inplace_argument(call, kind, defaults)
            return ModuleSpec(kind, inplace, keyword,
                              parameterised=kind in N.PARAMETERISED_MODULES or kind in ("ModuleList",))
        if isinstance(call.func, ast.Name):
            if call.func.id in self.factories:
                return self.factories[call.func.id]
            if call.func.id in self.module_classes:
                out_op, writes_input = self.class_summaries.get(call.func.id, (None, False))
                return ModuleSpec(call.func.id, inplace=writes_input, parameterised=True, out_op=out_op)
        return None

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

    def called_module(self, call) -> ModuleSpec | None:
        """The spec of ``self.<attr>`` in ``self.<attr>(x)`` inside a module's method,
        or of ``relu`` in ``relu(x)`` after ``relu = nn.ReLU(inplace=True)``."""
        func = call.func if isinstance(call, ast.Call) else None
        if isinstance(func, ast.Name):
            return self.name_specs.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                and func.value.id == "self" and self.scope.module_class:
            return self.module_specs.get(self.scope.module_class, {}).get(func.attr)
        return None

    def record_factory(self, node: ast.FunctionDef) -> None:
        """A top-level function whose every `return` builds a module is a factory."""
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
        spec = self.module_spec(returns[0], defaults)
        if spec is not None:
            self.factories[node.name] = spec
