"""A help's code speaks of `torch.` (`with torch.no_grad():`, `torch.zeros_like(x)`); the file it
changes may bind torch under another name (`import torch as th`) or not at all (a helper that
only receives tensors and modules). `bind_torch_names` makes every help of a diagnosis run in the
file it changes: the file's own name for torch, or an `import torch` written with the change."""

from __future__ import annotations

import ast
import os
import re

from autograd_doctor.diagnosis.model import Diagnosis
from autograd_doctor.diagnosis.source import parse_file

# `torch.` as a name of its own: not `x.torch.`, not `my_torch.`.
TORCH_REFERENCE = re.compile(r"(?<![\w.])torch\.")
IMPORT_LINE = "import torch\n"


def torch_name_of(tree: ast.Module) -> str | None:
    """The name the module binds to the torch package at its top level (`torch` for `import torch`
    or `import torch.nn`, `th` for `import torch as th`); None when it binds none (only
    `from torch import nn`, or no import of torch)."""
    found = None
    for node in _top_level_statements(tree.body):
        if not isinstance(node, ast.Import):
            continue
        for alias in node.names:
            if alias.name == "torch":
                found = alias.asname or "torch"
                if found == "torch":
                    return found
            elif alias.name.startswith("torch.") and alias.asname is None:
                return "torch"
    return found


def _top_level_statements(body: list[ast.stmt]):
    """The module's statements, with those inside top-level `if`/`try` blocks (guarded imports)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _top_level_statements(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            yield from _top_level_statements(node.body + node.orelse + node.finalbody
                                             + [s for handler in node.handlers for s in handler.body])


def bind_torch_names(diagnosis: Diagnosis) -> None:
    """Rewrite, in place, each help whose replacement speaks of `torch.` for the file it changes."""
    for suggestion in diagnosis.help:
        if not suggestion.replacement or suggestion.location is None \
                or not TORCH_REFERENCE.search(suggestion.replacement):
            continue
        if not os.path.isfile(suggestion.location.file):
            continue  # a notebook cell or a string run with exec: its names come from earlier cells
        tree = parse_file(suggestion.location.file)
        if tree is None:
            continue
        name = torch_name_of(tree)
        if name == "torch":
            continue
        if name is not None:
            suggestion.replacement = TORCH_REFERENCE.sub(f"{name}.", suggestion.replacement)
        elif not suggestion.replacement.startswith(IMPORT_LINE):  # bound once, also when attached again
            # The changed statement's own block: an import there binds torch for the lines after it.
            suggestion.replacement = IMPORT_LINE + suggestion.replacement
