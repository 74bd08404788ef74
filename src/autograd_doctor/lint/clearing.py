"""Same-file functions and methods that clear gradients.

yunjey/stargan's solver clears both optimizers in a method, `def
reset_grad(self): self.g_optimizer.zero_grad(); self.d_optimizer.zero_grad()`,
and its training loop calls `self.reset_grad()` before each backward pass.
ADL018 must count that call as clearing, wherever the method is defined (before
or after the loop that calls it).  A function clears when its body calls
`zero_grad()`, sets `.grad = None`, or calls `.grad.zero_()` / `.grad.detach_()`
/ `.grad.fill_()` / `.grad.requires_grad_()`, or calls another such function.
Names are matched without resolving them: `f()` and `self.f()` are calls of
any same-file `f`; `obj.f()` is not (`model.train()` is not the file's own
`def train` that clears).  A function imported from the same project
(`pyro.infer.util.zero_grads(params)`) is looked up in its file, found from
the linted file's folders, only when ADL018 is about to report
(`clears_in_project`, cached per file).  So is a method a class inherits from
a base class of another project file (`class WATrainer(Trainer)`, `from
core.utils import Trainer`, whose `standard_loss()` starts with
`self.optimizer.zero_grad()`): the base is found the same way, through the
package's own re-exports (`from .train import Trainer`), and its file's
clearing functions are read (`inherited_method_clears`).
"""

from __future__ import annotations

import ast
import os
import re
from bisect import bisect_left
from functools import lru_cache

from autograd_doctor.lint.arguments import nested_statements
from autograd_doctor.lint.findings import line_numbers
from autograd_doctor.lint.submodules import repository_root
from autograd_doctor.lint.walk import own_nodes
from autograd_doctor.lint.names import last_name

_GRAD_METHODS = frozenset({"zero_", "detach_", "fill_", "requires_grad_"})


# Text that a clearing function must contain; most files have none and are not walked.
_CLEARING_TEXT = re.compile(r"zero_grad|\.grad\s*=\s*(?:None|\S*zeros)|\.grad\.(?:zero_|detach_|fill_|requires_grad_)")


def clearing_functions(tree: ast.Module, source: str, needs_backward: bool = True) -> frozenset:
    """Names of the functions defined in ``tree`` that clear gradients."""
    if (needs_backward and "backward(" not in source) or ("zero_grad" not in source and ".grad" not in source) \
            or not _CLEARING_TEXT.search(source):  # (the regex's every branch holds one of the two words)
        return frozenset()  # no training loop (ADL018 needs one) or nothing clears
    # Definitions are statements: walking statements only, not every expression.  A
    # function clears only where its lines hold the word "grad" (`zero_grad`, `.grad`),
    # and only those are walked; its callers are found from the text (spread_in_text).
    functions = [node for node in nested_statements(tree.body)
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    lines = sorted(set(line_numbers(source, word_positions(source, ("grad",), whole_word=False))))
    clears = {node.name for node in functions if holds_a_line(node, lines) and _clears(own_nodes(node.body))}
    return spread_in_text(clears, functions, source)


def word_positions(source: str, words, whole_word: bool = True) -> list:
    """The positions in ``source`` of each of ``words`` (as a whole word: no letter, digit
    or `_` on either side), found with str.find."""
    found = []
    for word in words:
        start = source.find(word)
        while start >= 0:
            end = start + len(word)
            if not whole_word or not ((start and _word_char(source[start - 1]))
                                      or (end < len(source) and _word_char(source[end]))):
                found.append(start)
            start = source.find(word, end)
    return found


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def holds_a_line(node: ast.AST, lines: list) -> bool:
    """Whether one of the sorted ``lines`` lies in ``node``'s lines."""
    index = bisect_left(lines, node.lineno)
    return index < len(lines) and lines[index] <= (node.end_lineno or node.lineno)


def spread_in_text(names, functions, source: str) -> frozenset:
    """``spread_to_callers(names, calls)`` for ``functions`` (the file's definitions), the
    calls read only from the functions whose lines mention a name found so far as a
    word: a call `f(...)` or `self.f(...)` writes the name ``f`` within the caller's lines
    (most functions of a file call none of them and are not walked)."""
    found = set(names)
    todo = set(names)
    own_calls: dict = {}  # id(function) -> the same-file names its own body calls
    while todo:
        lines = sorted(set(line_numbers(source, word_positions(source, sorted(todo)))))
        todo = set()
        for node in functions:
            if node.name in found or not holds_a_line(node, lines):
                continue
            calls = own_calls.get(id(node))
            if calls is None:
                calls = own_calls[id(node)] = same_file_calls(own_nodes(node.body))
            if calls & found:
                found.add(node.name)
                todo.add(node.name)
    return frozenset(found)


def spread_to_callers(names: set, calls: dict) -> frozenset:
    """``names`` and every function that calls one of them, directly or through others;
    ``calls``: function name -> the same-file names its own body calls.  (A helper that
    calls a clearing helper clears too; one that calls a backward helper runs backward.)"""
    found = set(names)
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in found and called & found:
                found.add(name)
                changed = True
    return frozenset(found)


def _clears(nodes) -> bool:
    for node in nodes:
        kind = node.__class__  # (`is`, not isinstance: every node of every function passes here)
        if kind is ast.Call and node.func.__class__ is ast.Attribute:
            attr, recv = node.func.attr, node.func.value
            if attr == "zero_grad":
                return True
            if attr in _GRAD_METHODS and isinstance(recv, ast.Attribute) and recv.attr == "grad":
                return True
        elif kind is ast.Assign and _empty_gradient(node.value) \
                and any(isinstance(t, ast.Attribute) and t.attr == "grad" for t in node.targets):
            return True  # `p.grad = None`, `p.grad = torch.zeros_like(p.grad)`
    return False


def _empty_gradient(value) -> bool:
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.Call):
        func = value.func
        name = last_name(func)
        return name in ("zeros_like", "zeros", "new_zeros")
    return False


def clears_in_project(qualname: str, filename: str) -> bool:
    """Whether the function ``qualname`` (`pyro.infer.util.zero_grads`, as the file
    imports it) is defined in a file of the same project that shows it clearing
    gradients.  The project file is found from the linted file's folders
    (`<ancestor>/pyro/infer/util.py`); its clearing functions are cached."""
    module, _, function = qualname.rpartition(".")
    path = module_file_in_project(module, filename) if module else None
    return path is not None and function in _project_file_clearing(path)


def inherited_method_clears(base: str, method: str, filename: str) -> bool:
    """Whether ``method``, not defined in the linted class, is defined by its base
    class ``base`` (`core.utils.Trainer`, as the file imports it) or by that
    class's own project bases, in a project file, and clears gradients there."""
    found = _project_class(base, filename)
    seen = set()
    while found is not None and found not in seen:
        seen.add(found)
        path, cls = found
        methods = {b.name for b in cls.body if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if method in methods:
            return method in _project_file_clearing(path)
        found = next((c for c in (_project_class(q, path) for q in _base_names(cls, path)) if c), None)
    return False


def project_class(qualname: str, filename: str):
    """``(path, ClassDef)`` of the class ``qualname`` (`utils.AverageMeter`, as the
    linted file ``filename`` imports it) in a file of the same project, or None."""
    return _project_class(qualname, filename)


def _project_class(qualname: str, filename: str, depth: int = 0):
    """``(path, ClassDef)`` of the class ``qualname`` in a project file found from
    ``filename``'s folders, following `from .train import Trainer` re-exports of a
    package's `__init__.py` (at most three hops); None when not found."""
    module, _, name = qualname.rpartition(".")
    path = module_file_in_project(module, filename) if module else None
    if path is None or depth > 3:
        return None
    tree = parsed_file(path)
    if tree is None:
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return path, node
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            source = next(a.name for a in node.names if (a.asname or a.name) == name)
            target = absolute_module(node, path)
            return _project_class(f"{target}.{source}", path, depth + 1) if target else None
    return None


def star_imported_project_class(name: str, tree: ast.Module, filename: str):
    """``(qualname, (path, ClassDef))`` of the class ``name`` when the module ``tree``
    (of ``filename``) binds it only through its top-level `from <module> import *`
    statements and exactly one of those project modules defines (or re-exports by
    name) such a class (`from rnn_crf import *`, then `model = rnn_crf(...)`); None
    when the file binds ``name`` itself, or none or several modules give one."""
    if bound_otherwise(name, tree) or any(
            isinstance(node, ast.ClassDef) and node.name == name for node in tree.body):
        return None
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            module = absolute_module(node, filename)
            cls = project_class(f"{module}.{name}", filename) if module else None
            if cls is not None:
                found.append((f"{module}.{name}", cls))
    return found[0] if len(found) == 1 else None


def bound_otherwise(name: str, tree: ast.Module) -> bool:
    """The module binds ``name`` other than by a class statement or an import (an
    assignment, a function, a loop target, `import name`), anywhere at its top level."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return True
        if isinstance(node, ast.Import) and any((a.asname or a.name.split(".")[0]) == name for a in node.names):
            return True
    return False


def _base_names(cls: ast.ClassDef, path: str) -> list:
    """The bases of ``cls`` (in the file ``path``) as dotted names to look up:
    a same-file base as `<module>.Name`, an imported one as its file imports it."""
    tree = parsed_file(path)
    aliases = {}
    for node in (tree.body if tree is not None else ()):
        if isinstance(node, ast.ImportFrom):
            target = absolute_module(node, path)
            for a in node.names:
                if target:
                    aliases[a.asname or a.name] = f"{target}.{a.name}"
    own = os.path.splitext(os.path.basename(path))[0]
    out = []
    for b in cls.bases:
        if isinstance(b, ast.Name):
            out.append(aliases.get(b.id, f"{own}.{b.id}"))
    return out


def absolute_module(node: ast.ImportFrom, path: str) -> str | None:
    """The module an import names, relative imports made absolute from ``path``'s
    package folders (`from .train import X` in `core/utils/__init__.py`: `core.utils.train`)."""
    if not node.level:
        return node.module
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(node.level - 1):
        folder = os.path.dirname(folder)
    parts = []
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if node.module:
        parts.append(node.module)
    return ".".join(parts) or None


def module_file_in_project(module: str, filename: str) -> str | None:
    """The file of ``module`` found from ``filename``'s folders upwards
    (`<ancestor>/core/utils.py` or `<ancestor>/core/utils/__init__.py`)."""
    if not filename or filename.startswith("<"):
        return None
    return _module_file(module, os.path.dirname(os.path.abspath(filename)))


@lru_cache(maxsize=4096)
def _module_file(module: str, folder: str) -> str | None:
    """In an installed package only its own files count (``submodules.repository_root``):
    its neighbours in `site-packages` (`typing_extensions.py`) are not its project.  A
    checkout is searched up to the file system's root, as a snapshot without `.git` or
    `setup.py` has no other bound.  Cached: every imported call a file binds asks,
    `numpy.zeros` included."""
    installed = any(part in ("site-packages", "dist-packages") for part in folder.split(os.sep))
    root = repository_root(folder) if installed else None
    parts = module.split(".")
    if root is not None and parts[0] != os.path.basename(root):
        return None  # `types.FunctionType` in torch is the standard library's, not torch/types.py
    while True:
        for candidate in (os.path.join(folder, *parts) + ".py",
                          os.path.join(folder, *parts, "__init__.py")):
            if os.path.isfile(candidate) and (root is None or _inside(candidate, root)):
                return candidate
        parent = os.path.dirname(folder)
        if parent == folder or (root is not None and folder == os.path.dirname(root)):
            return None
        folder = parent


def _inside(path: str, root: str) -> bool:
    return path.startswith(root.rstrip(os.sep) + os.sep)


def parsed_file(path: str):
    """The tree of the project file ``path`` (another file than the one linted), None when
    it cannot be read as UTF-8 or does not parse.  Kept per path while the file is
    unchanged: the rules that look into project files (option_defaults.py, ADL031,
    project_factories.py, the classes above) read the same files again and again.
    The trees are shared: a reader must not change them."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _parsed_file(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=512)
def _parsed_file(path: str, mtime_ns: int, size: int):
    try:
        with open(path, encoding="utf-8") as f:
            return ast.parse(f.read())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@lru_cache(maxsize=256)
def _project_file_clearing(path: str) -> frozenset:
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return frozenset()
    return clearing_functions(tree, source, needs_backward=False)


def same_file_calls(nodes) -> set:
    """The names called as `f(...)` or `self.f(...)` among ``nodes``."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif is_self_call(node):
                out.add(func.attr)
    return out


def is_self_call(call: ast.Call) -> bool:
    """`self.f(...)`: a call of the class's own method ``f``."""
    func = call.func
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
        and func.value.id == "self"
