"""Findings inside a branch that an option, off by default, keeps from running.

A hazard needs evidence that its line runs.  RoseTTAFold's Performer has
`if self.no_projection: ... k.softmax(dim=-2)` (a result thrown away), with
`no_projection=False` in `FastAttention.__init__`, handed on as
`no_projection=no_projection` by `SelfAttention.__init__` (default `False`
too), whose callers never pass it; se3_diffusion keeps each backpropagated
loss in a list under `if return_logs:`, `train_epoch(..., return_logs=False)`
called only from `start_training(return_logs=False)` with the same name handed
on, and `start_training()` called without it.  The line never runs in the
project: the link "the line runs" lacks evidence, and the finding is dropped.

A finding is dropped only when all of this holds:

* it lies in the body of an `if` whose test is the option (`if p:`,
  `if self.p:`, `if p is not None:`, or one of them in an `and`), where `p` is
  a parameter of the enclosing function with a false constant default
  (`False`, `None`, `0`, `""`) that the function never rebinds, or `self.p`
  is bound once in the class's `__init__` from such a parameter;
* the function is not one a framework or `nn.Module.__call__` calls
  (`forward`, `__call__`, `training_step`, ...): its calls are in the
  repository, and at least one call of it exists there;
* no call of the function (or of the class, for `__init__`) in the repository
  passes the option by position (or with `*args`), and the class or function
  is mentioned nowhere except in calls and its definition (a subclass or a
  function handed on as a value could call it in other ways);
* every keyword `p=` anywhere in the repository passes a false constant or
  hands on a parameter `p` of its own function that is off in the same sense
  (checked in turn, through at most four functions);
* the name `p` appears in no string of the repository's Python files (a
  docstring aside: `getattr(cfg, "p")`, a dict key, an argparse flag) and in
  no configuration file (`.yaml`, `.yml`, `.json`, `.toml`, `.cfg`, `.ini`),
  and nothing assigns an attribute `.p` other than that one `self.p = p`.

A `**kwargs` call is therefore taken as not passing `p` only because the last
point finds no other way the name could reach it: a dictionary that names
`p` names it in a string, a keyword or a configuration file.  Anything else
(an unknown spelling, a file outside the repository) keeps the finding.
Names are matched without resolving them: an unrelated function's `p=True`
keeps the finding too (silence is only ever lost, never gained).
"""

from __future__ import annotations

import ast
import os
import re
from functools import lru_cache

from autograd_doctor.lint.clearing import parsed_file
from autograd_doctor.lint.defaults import false_constant, parameter_positions
from autograd_doctor.lint.submodules import file_text, repository_files, repository_root

_ENTRY_POINTS = frozenset({"forward", "__call__", "training_step", "validation_step",
                           "test_step", "predict_step", "compute_loss", "main", "setup"})
_CONFIG_EXTENSIONS = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini")
_MAX_DEPTH = 4


def off_by_default_lines(tree: ast.Module, filename: str, lines: set) -> set:
    """The subset of ``lines`` (finding lines of ``tree``) that lie in a branch
    that an option off by default keeps from running (see the module's docstring)."""
    guards = _guards(tree)
    if not guards:
        return set()
    out = set()
    for line in lines:
        for start, end, owner in guards:
            if start <= line <= end and _never_turned_on(owner, filename, tree):
                out.add(line)
                break
    return out


def _rebinds(function, name: str) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return True
    return False


def _off_parameter(function, name: str, none_only: bool = False) -> bool:
    """``name`` is a parameter of ``function`` with a false constant default that the
    function never rebinds (and the function is not a framework's entry point)."""
    entry = parameter_positions(function).get(name)
    if entry is None or entry[1] is None or not false_constant(entry[1]):
        return False
    if none_only and entry[1].value is not None:
        return False
    return function.name not in _ENTRY_POINTS and not _rebinds(function, name)


def _option_of_test(test):
    """(name, on self?, needs a None default?) of each option the test requires true."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        out = []
        for v in test.values:
            out.extend(_option_of_test(v))
        return out
    if isinstance(test, ast.Name):
        return [(test.id, False, False)]
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name) and test.value.id == "self":
        return [(test.attr, True, False)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot) \
            and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
        inner = _option_of_test(test.left)
        return [(n, s, True) for n, s, _ in inner if not isinstance(test.left, ast.BoolOp)]
    return []


def _guards(tree: ast.Module) -> list:
    """(first line, last line, owner) of each `if` body guarded by an off option;
    owner = (option, class name or None, function name, position)."""
    out = []

    def visit(node, cls, function, cls_node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name, None, child)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, cls if function is None else None, child, cls_node if function is None else None)
            else:
                if isinstance(child, ast.If) and function is not None and child.body:
                    for name, on_self, none_only in _option_of_test(child.test):
                        owner = _owner(name, on_self, none_only, cls, function, cls_node)
                        if owner is not None:
                            out.append((child.body[0].lineno, child.body[-1].end_lineno, owner))
                            break
                visit(child, cls, function, cls_node)

    visit(tree, None, None, None)
    return out


def _owner(name, on_self, none_only, cls, function, cls_node):
    if not on_self:
        if not _off_parameter(function, name, none_only):
            return None
        return (name, cls, function.name, parameter_positions(function)[name][0])
    if cls_node is None:
        return None
    init = next((s for s in cls_node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)
    if init is None:
        return None
    stores = [n for n in ast.walk(cls_node) if isinstance(n, ast.Attribute) and n.attr == name
              and isinstance(n.ctx, (ast.Store, ast.Del))]
    if len(stores) != 1:
        return None
    source = None
    for stmt in ast.walk(init):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is stores[0] \
                and isinstance(stmt.value, ast.Name):
            source = stmt.value.id
    if source != name or not _off_parameter(init, source, none_only):
        return None
    return (name, cls, "__init__", parameter_positions(init)[source][0])


def _never_turned_on(owner, filename: str, tree: ast.Module) -> bool:
    name = owner[0]
    trees = _repository_trees(name, filename, tree)
    if trees is None or _configs_name(name, filename):
        return False
    pending, done, called = [owner], set(), False
    while pending:
        current = pending.pop()
        if current[1:3] in done:
            continue
        done.add(current[1:3])
        if len(done) > _MAX_DEPTH:
            return False
        verdict = _calls_leave_off(current, filename, tree)
        if verdict is None:
            return False
        called = called or (current is owner and verdict)
    if not called:
        return False
    # every keyword `name=` in the repository: a false constant, or handed on off
    for t in trees:
        for result in _keyword_uses(t, name):
            if result is True:
                continue
            if result is None:
                return False
            if result[1:3] not in done:
                if len(done) >= _MAX_DEPTH or _calls_leave_off(result, filename, tree) is not True:
                    return False
                done.add(result[1:3])
    return True


def _trees_naming(name: str, filename: str, tree: ast.Module):
    """The parsed files of the repository whose text names ``name`` (the linted tree in
    place of its file); None when one of them does not parse."""
    word = re.compile(r"\b%s\b" % re.escape(name))
    own = os.path.abspath(filename) if filename and not filename.startswith("<") else None
    trees = [tree]
    for path in repository_files(filename):
        if path == own or not word.search(file_text(path)):
            continue
        parsed = parsed_file(path)
        if parsed is None:
            return None
        trees.append(parsed)
    return trees


def _repository_trees(name: str, filename: str, tree: ast.Module):
    """``_trees_naming(name)``; None when a string or an attribute store could set it."""
    word = re.compile(r"\b%s\b" % re.escape(name))
    trees = _trees_naming(name, filename, tree)
    if trees is None:
        return None
    for t in trees:
        if _named_elsewhere(t, name, word):
            return None
    return trees


def _named_elsewhere(tree: ast.Module, name: str, word) -> bool:
    """A string (not a docstring) names ``name``, or an attribute `.name` is stored other
    than by `self.name = name` in a function whose parameter ``name`` is off."""
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    allowed = set()
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and _off_parameter(function, name):
            for stmt in ast.walk(function):
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
                        and isinstance(stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == name \
                        and isinstance(stmt.targets[0].value, ast.Name) and stmt.targets[0].value.id == "self" \
                        and isinstance(stmt.value, ast.Name) and stmt.value.id == name:
                    allowed.add(id(stmt.targets[0]))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings \
                and word.search(node.value):
            return True
        if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and id(node) not in allowed:
            return True
    return False


def _configs_name(name: str, filename: str) -> bool:
    if not filename or filename.startswith("<"):
        return False
    return name in _config_words(repository_root(os.path.dirname(os.path.abspath(filename))))


@lru_cache(maxsize=16)
def _config_words(root: str) -> frozenset:
    words = set()
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "__pycache__")]
        for f in files:
            if f.endswith(_CONFIG_EXTENSIONS):
                try:
                    with open(os.path.join(folder, f), encoding="utf-8", errors="replace") as handle:
                        words.update(re.findall(r"\w+", handle.read(2_000_000)))
                except OSError:
                    continue
    return frozenset(words)


def _calls_leave_off(owner, filename: str, tree: ast.Module) -> bool | None:
    """True: the owner is called and no call passes the option by position; False: no
    call; None: a call passes it by position, or the owner is mentioned as a value."""
    _, cls, function, position = owner
    target = cls if function == "__init__" else function
    if target is None or function in _ENTRY_POINTS:
        return None
    trees = _trees_naming(target, filename, tree)
    if trees is None:
        return None
    found = False
    for t in trees:
        calls = set()
        for node in ast.walk(t):
            if isinstance(node, ast.Call):
                f = node.func
                last = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
                if last == target:
                    calls.add(id(f))
                    found = True
                    if any(isinstance(a, ast.Starred) for a in node.args):
                        return None
                    if position is not None and len(node.args) > position:
                        return None
        tests = _type_tests(t, target)
        for node in ast.walk(t):
            if isinstance(node, ast.Name) and node.id == target and id(node) not in calls \
                    and id(node) not in tests:
                return None
            if isinstance(node, ast.Attribute) and node.attr == target and id(node) not in calls:
                return None
    return found


def _type_tests(tree: ast.Module, target: str) -> set:
    """Mentions of ``target`` that only test types: `isinstance(m, C)`, `issubclass(k, C)`,
    or an argument of a function of the file whose parameter there is only read as the
    type of an `isinstance` test (`find_modules(self, FastAttention)`)."""
    testers = {}
    for f in tree.body:
        if isinstance(f, ast.FunctionDef):
            params = [a.arg for a in f.args.args]
            for i, name in enumerate(params):
                reads = [n for n in ast.walk(f) if isinstance(n, ast.Name) and n.id == name]
                typed = [c.args[1] for c in ast.walk(f) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                         and c.func.id == "isinstance" and len(c.args) == 2 and isinstance(c.args[1], ast.Name)
                         and c.args[1].id == name]
                if reads and len(reads) == len(typed):
                    testers.setdefault(f.name, set()).add(i)
    out = set()
    for c in ast.walk(tree):
        if not isinstance(c, ast.Call) or not isinstance(c.func, ast.Name):
            continue
        for i, a in enumerate(c.args):
            if isinstance(a, ast.Name) and a.id == target and (
                    (c.func.id in ("isinstance", "issubclass") and i == 1) or i in testers.get(c.func.id, ())):
                out.add(id(a))
    return out


def _keyword_uses(tree: ast.Module, name: str):
    """Per keyword `name=` in ``tree``: True (a false constant), an owner (a parameter
    of the enclosing function handed on, itself off by default), or None (unknown)."""
    def visit(node, cls, cls_node, function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                yield from visit(child, child.name, child, None)
                continue
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from visit(child, cls if function is None else None, cls_node, child)
                continue
            if isinstance(child, ast.keyword) and child.arg == name:
                value = child.value
                if false_constant(value):
                    yield True
                elif isinstance(value, ast.Name) and value.id == name and function is not None \
                        and _off_parameter(function, name):
                    yield (name, cls, function.name, parameter_positions(function)[name][0])
                else:
                    yield None
            yield from visit(child, cls, cls_node, function)

    yield from visit(tree, None, None, None)
