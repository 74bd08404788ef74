"""Module factories imported from another file of the same project.

A same-file factory (`def build_mlp(...): ...; return nn.Sequential(*layers)`)
tells the walk what `self.net = build_mlp(...)` holds (``modules.py``).  SLAC's
policy imports it instead (`from slac.utils import build_mlp`), and
`torch.chunk(self.net(x), 2, dim=-1)` was not known to carry a graph, so the
`log_std.clamp_(-20, 2)` on one of the views (which raises as soon as the
actor's loss is backpropagated) went unreported (set K, docs/lint.md).

A function imported from the project (found from the linted file's folders,
as ``clearing.clears_in_project`` finds a clearing helper) is a factory when
every `return` of its body gives a call of a `torch.nn` container
(`nn.Sequential`, `nn.ModuleList`, `nn.ModuleDict`) or of a `torch.nn` layer
class with parameters (`nn.Linear`...), read with that file's own imports.
Its layers are not read: what the container's first layer does to its input
and what its last keeps of its output are unknown, so the only claim is that a
call of it computes from parameters.  One parse per project file (cached).
"""

from __future__ import annotations

import ast
from functools import lru_cache

from autograd_doctor.lint import names as N
from autograd_doctor.lint.clearing import module_file_in_project, parsed_file

_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def imported_factory(qualname: str, filename: str) -> str | None:
    """The `torch.nn` class (`"Sequential"`, `"Linear"`) that the project function
    ``qualname`` (as the linted file ``filename`` imports it) returns on every
    path, or None."""
    module, _, function = qualname.rpartition(".")
    path = module_file_in_project(module, filename) if module else None
    return _factory_kind(path, function) if path else None


@lru_cache(maxsize=1024)
def _factory_kind(path: str, function: str) -> str | None:
    tree = parsed_file(path)
    if tree is None:
        return None
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if node is None:
        return None
    returns = [r.value for r in own_returns(node)]
    if not returns or any(r is None for r in returns):
        return None
    aliases = _torch_aliases(tree)
    kinds = {_nn_class(r, aliases) for r in returns}
    if len(kinds) != 1:
        return None
    kind, = kinds
    if kind in _CONTAINERS or kind in N.PARAMETERISED_MODULES:
        return kind
    return None


def own_returns(function: ast.FunctionDef):
    """The `return` statements of ``function``, not of functions nested in it."""
    todo = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            yield node
        todo.extend(ast.iter_child_nodes(node))


def _torch_aliases(tree: ast.Module) -> dict:
    """Names of the file bound to `torch` modules: `nn` -> `torch.nn`, `torch` -> `torch`."""
    aliases = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "torch" or a.name.startswith("torch."):
                    aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and (node.module == "torch" or node.module.startswith("torch.")):
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _nn_class(value, aliases: dict) -> str | None:
    """`nn.Sequential(...)` -> "Sequential" when ``value`` calls a `torch.nn` class."""
    if not isinstance(value, ast.Call):
        return None
    q = N.qualified_name(value.func, aliases) or ""
    if q.startswith("torch.nn.") and q.count(".") == 2 and q.rsplit(".", 1)[-1][:1].isupper():
        return q.rsplit(".", 1)[-1]
    return None
