"""Module methods that every call in the repository makes without gradients.

Any method of an `nn.Module` was taken to run with gradients, even in a file that
never runs a backward pass.  pytorch-book's Chapter13 detector has a `generate(x)`
method that takes `torch.sigmoid` of a layer's output and then masks it in place
(`cls_pred *= keep`): a hazard only if a backward went through it, but its only
caller, in `main.py`, is decorated `@t.no_grad()`.  The backward link needs
evidence: in a file without backward passes, a module method (not `forward`, not
an entry point a framework calls) whose every mention in the repository is a
call made without gradients (under `with torch.no_grad():`, in a function
decorated with it, or in a function that its own file only calls so: the
``callers.py`` walk of each file) is not checked.  At least one such call must
exist: a method nobody in the repository calls is left as before.  Names are
matched without resolving them (`model.generate(...)` anywhere is a mention of
`generate`), so a call of a same-named method with gradients on, or a mention
that is not a call (a callback), keeps the method checked.

The repository is ``submodules.repository_files``'s; only files whose text
names the method are read, each parsed and walked once (cached).
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.callers import grad_off_callees, mentions
from autograd_doctor.lint.submodules import file_text, repository_files

# Called by frameworks or by nn.Module.__call__, whatever the repository's code says.
_ENTRY_POINTS = frozenset({"forward", "__call__", "training_step", "validation_step",
                           "test_step", "predict_step", "compute_loss", "main"})


def called_only_without_gradients(method: str, filename: str, tree: ast.Module | None = None,
                                  module_level: bool = False) -> bool:
    """Whether every mention of ``method`` in the repository of ``filename`` (and in
    ``tree``, the linted file itself) is a call made without gradients, and there is one.

    ``module_level``: ``method`` is a function defined at the top of ``filename``, not a
    method.  Another file can call it only by importing it, so a file that never names
    the module (its file name's stem) is not read: its `infer(...)` is another function
    of the same name.  Where any file of the repository star-imports from a module of
    that name, every file is read, as for a method."""
    if method in _ENTRY_POINTS or method.startswith("__"):
        return False
    word = re.compile(r"\b%s\b" % re.escape(method))
    walks = [_walk_tree(tree)] if tree is not None else []
    own = None
    if filename and not filename.startswith("<"):
        own = os.path.abspath(filename)
    paths = [p for p in repository_files(filename) if p != own and word.search(file_text(p))]
    if module_level and own is not None:
        stem = os.path.splitext(os.path.basename(own))[0]
        named = re.compile(r"\b%s\b" % re.escape(stem))
        star = re.compile(r"from\s+[\w.]*\b%s\s+import\s+\*" % re.escape(stem))
        files = repository_files(filename)
        if stem != "__init__" and not any(star.search(file_text(p)) for p in files if p != own):
            paths = [p for p in paths if named.search(file_text(p))]
    for path in paths:
        walks.append(_walk_file(path))
    seen = False
    for walk in walks:
        if walk is None:
            return False  # a file that does not parse: unknown
        mention_list, callees = walk
        for called, off, caller in mention_list.get(method, ()):
            if not (called and (off or caller in callees)):
                return False
            seen = True
    return seen


def _walk_tree(tree: ast.Module):
    walk = mentions(tree)
    return walk.mentions, grad_off_callees(walk)


@lru_cache(maxsize=1024)
def _walk_file(path: str):
    try:
        return _walk_tree(ast.parse(file_text(path)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
