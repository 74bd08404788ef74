"""Which `nn.Module` classes of a repository are built as another module's part.

A `forward()`'s tensor arguments were taken to carry a graph, whatever its
callers pass.  Time-Series-Library's `models/PAttn.py` normalises `x_enc` in
place at the top of `Model.forward` (`x_enc /= stdev`, after `torch.var(x_enc)`
kept it): a hazard only if `x_enc` carried a graph, but the model is built at
top level by the experiment scripts and fed data batches.  The graph link needs
evidence from the repository: the class is built inside another module's class
(`self.block = Block(...)`, `self.layers.append(Block())`, in any method of a
class that defines `forward` or derives from a `...Module`), or inside
`nn.Sequential` / `nn.ModuleList` / `nn.ModuleDict` anywhere; a subclass with
that evidence counts for its base.  A class only built at top level, or by a
trainer that is no module, has none, and its forward's argument-only hazards
are silent.  Classes are matched by name, like ``callers.py``.

The repository is the nearest folder above the file with `.git`,
`pyproject.toml`, `setup.py` or `setup.cfg`, else the folder above its
outermost package (an installed package: the package itself, not `site-packages`); one
with over 5,000 Python files is not searched.  Files that mention the class are parsed once and
summarised (cached); only a file with such a waiting hazard asks.
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.files import DEFAULT_EXCLUDE

_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})
_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_MAX_FILES = 5000  # past this, a repository is not searched: no evidence


def built_as_part(cls: str, filename: str, tree: ast.Module | None = None) -> bool:
    """Whether the module class ``cls`` (defined in ``filename``) is built as a
    part of another module somewhere in its repository (or in ``tree``, the
    linted file itself, when it is not on disk)."""
    own = summarise(tree) if tree is not None else None
    files = ()
    if filename and not filename.startswith("<"):
        files = _repository_files(_repository(os.path.dirname(os.path.abspath(filename))))
    return _has_evidence(cls, own, files, set())


def repository_files(filename: str) -> tuple:
    """The Python files of the repository that holds ``filename`` (none for a
    source without a file, or a repository too large to search)."""
    if not filename or filename.startswith("<"):
        return ()
    return _repository_files(_repository(os.path.dirname(os.path.abspath(filename))))


def file_text(path: str) -> str:
    return _text(path)


def _has_evidence(cls: str, own, files, seen: set) -> bool:
    """``cls`` is built as a part, or a subclass of it is (its forward may be ``cls``'s)."""
    seen.add(cls)
    word = re.compile(r"\b%s\b" % re.escape(cls))
    found = [s for s in [own] + [_file_summary(p) for p in files if word.search(_text(p))] if s]
    if any(cls in parts for _, parts in found):
        return True
    subclasses = {sub for bases, _ in found for sub, names in bases.items() if cls in names}
    return any(_has_evidence(sub, own, files, seen) for sub in sorted(subclasses - seen))


@lru_cache(maxsize=4096)
def _text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


@lru_cache(maxsize=4096)
def _file_summary(path: str):
    try:
        return summarise(ast.parse(_text(path)))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def summarise(tree: ast.Module):
    """``(class -> its base names, classes built as another module's part)``."""
    bases: dict[str, frozenset] = {}
    parts: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            names = frozenset(_last_name(b) for b in node.bases)
            bases[node.name] = names
            if _is_module_class(node, names):
                parts.update(_called_names(node) - {node.name})
        elif isinstance(node, ast.Call) and _last_name(node.func) in _CONTAINERS:
            for arg in list(node.args) + [k.value for k in node.keywords]:
                parts.update(_called_names(arg))
    return bases, frozenset(parts)


def _is_module_class(node: ast.ClassDef, bases) -> bool:
    return any(b.endswith("Module") for b in bases) or any(
        isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "forward"
        for s in node.body)


def _called_names(node) -> set:
    return {_last_name(n.func) for n in ast.walk(node) if isinstance(n, ast.Call)}


def _last_name(node) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


@lru_cache(maxsize=256)
def _repository(folder: str) -> str:
    parts = folder.split(os.sep)
    for i, part in enumerate(parts[:-1]):
        if part in ("site-packages", "dist-packages"):  # an installed package: itself
            return os.sep.join(parts[: i + 2])
    here = folder
    while True:
        if any(os.path.exists(os.path.join(here, m)) for m in _ROOT_MARKERS):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    while os.path.isfile(os.path.join(folder, "__init__.py")):  # the outermost package
        folder = os.path.dirname(folder)
    return folder


@lru_cache(maxsize=64)
def _repository_files(root: str) -> tuple:
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in DEFAULT_EXCLUDE and not d.startswith(".")]
        out.extend(os.path.join(folder, f) for f in files if f.endswith(".py"))
        if len(out) > _MAX_FILES:
            return ()
    return tuple(sorted(out))
