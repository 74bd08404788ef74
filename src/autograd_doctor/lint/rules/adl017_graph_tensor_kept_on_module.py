"""ADL017: a tensor with a graph kept on a module (a buffer, or an attribute
that a later `copy.deepcopy` of the module copies)."""

from __future__ import annotations

import ast

from autograd_doctor.lint.rules.base import Rule

RULE = Rule(
    code="ADL017", name="graph-tensor-kept-on-module",
    summary="A module keeps a tensor that carries a graph: a buffer updated without `detach()`, or an attribute a later `deepcopy` of the module copies.",
    what_it_does="""In a method of an `nn.Module` subclass, with gradients on, finds
`self.<name> = <graph tensor>` (computed from a parameterised layer of the
module or from a leaf that requires grad), and reports it when

* `<name>` is a buffer of the class (`self.register_buffer("<name>", ...)`):
  running statistics updated from activations, or
* the same file deep-copies an instance of the class (`copy.deepcopy(model)`,
  as EMA and "best model" snapshots do); the finding is at the `deepcopy`.""",
    why_bad="""The module now holds the graph of the forward pass that made the tensor.
A buffer used in the next forward links the new graph to the old, freed one:
`RuntimeError: Trying to backward through the graph a second time`.  And
`copy.deepcopy` of the module raises `Only Tensors created explicitly by the
user (graph leaves) support the deepcopy protocol`.""",
    example="""class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("running", torch.zeros(3))

    def forward(self, x):
        h = self.fc(x)
        self.running = 0.9 * self.running + 0.1 * h.mean(0)
        return h - self.running""",
    use_instead="""class Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.register_buffer("running", torch.zeros(3))

    def forward(self, x):
        h = self.fc(x)
        self.running = 0.9 * self.running + 0.1 * h.mean(0).detach()
        return h - self.running""",
    fix_safety="No automatic fix: whether the statistic should carry gradients is a choice.",
    known_problems="""Only assignments to `self.<name>` in the class's own methods are
seen, and only deep copies of names bound to the class in the same file.  A
store inside `if flag:` that is false at the default of the method's
parameter `flag` (`if use_cache:` with `use_cache=False`: a key/value cache
that generation switches on under `no_grad`) is not reported: nothing shows
that it runs with gradients.""",
)


def on_call(checker, node, q) -> None:
    """`copy.deepcopy(model)` of a same-file module whose methods store graph tensors."""
    if q != "copy.deepcopy" or not node.args or not isinstance(node.args[0], ast.Name):
        return
    spec = checker.modules.name_specs.get(node.args[0].id)
    if spec is not None and checker.modules.graph_attributes.get(spec.kind):
        checker.scope.note("ADL017", ("deepcopy", node, node.args[0].id, spec.kind))


def on_attribute_assign(checker, target, value, stmt) -> None:
    """`self.<buffer> = value` where the value carries this forward's graph."""
    cls = checker.scope.module_class
    if cls and target.attr in checker.modules.buffers.get(cls, ()) and checker.keeps_graph_on_module(target, value):
        checker.scope.note("ADL017", ("buffer", stmt, target.attr, cls))


def check_scope(checker, scope) -> None:
    for kind, node, name, cls in scope.noted("ADL017"):
        if kind == "deepcopy":
            attr, line = checker.modules.graph_attributes[cls][0]
            checker.report("ADL017", node,
                           f"`copy.deepcopy({name})` copies a `{cls}` whose method stores `self.{attr}`, "
                           f"a tensor with a grad_fn (line {line}): after a forward pass deepcopy raises "
                           f"'Only Tensors created explicitly by the user (graph leaves) support the "
                           f"deepcopy protocol'; store `.detach()` instead")
        else:
            checker.report("ADL017", node,
                           f"buffer `self.{name}` is given a tensor that carries this forward's graph; the "
                           f"next forward links to it and backward() fails ('Trying to backward through "
                           f"the graph a second time'); store `.detach()`ed values")
