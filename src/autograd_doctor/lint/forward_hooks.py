"""The same-file functions a module runs as forward hooks, found before the walk.

`layer.register_forward_hook(self._hook)` in a method of class `C` makes
`C._hook(self, module, inputs, output)` a forward hook; `register_forward_hook(
save_output)` makes the function `save_output` one.  The hook's last positional
parameter is the hooked module's output, computed in the forward pass that
runs the hook: with gradients on, a tensor that carries that pass's graph
(BYOL's `self.hidden = flatten(output)`, then `copy.deepcopy` of the module).
"""

from __future__ import annotations

import ast
import re

# `layer.register_forward_hook(self._hook)`, `h = m.register_forward_hook(save_output, ...)`
_REGISTRATION = re.compile(r"\.register_forward_hook\(\s*(?:self\.)?\w+\s*[,)]")


def forward_hooks(tree: ast.Module, source: str) -> frozenset:
    """``{(class or None, function name)}`` of the functions registered as forward
    hooks by name: `self.<method>` inside a method of the class, or a plain name."""
    if "register_forward_hook" not in source or not _REGISTRATION.search(source):
        return frozenset()  # most files: no walk
    found = set()

    def visit(node, cls):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
                continue
            if isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) \
                    and child.func.attr == "register_forward_hook":
                hook = child.args[0] if child.args else next(
                    (k.value for k in child.keywords if k.arg == "hook"), None)
                if isinstance(hook, ast.Attribute) and isinstance(hook.value, ast.Name) \
                        and hook.value.id == "self" and cls is not None:
                    found.add((cls, hook.attr))
                elif isinstance(hook, ast.Name):
                    found.add((None, hook.id))
            visit(child, cls)

    visit(tree, None)
    return frozenset(found)


def hook_output_parameter(node, method: bool) -> str | None:
    """The parameter of the hook ``node`` that receives the module's output: the last
    of `(module, inputs, output)` (after `self` for a method), or of `(module, args,
    kwargs, output)` for a hook registered `with_kwargs=True`."""
    positional = [a.arg for a in node.args.posonlyargs + node.args.args]
    if method:
        positional = positional[1:]
    return positional[-1] if len(positional) in (3, 4) and not node.args.vararg else None
