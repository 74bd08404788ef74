"""Parameters that every call in the file fills with a value without a graph.

tianshou's NPG computes `flat_grads = self._get_flat_grad(...).detach()` and
hands it to `self._conjugate_gradients(flat_grads, ...)`, whose conjugate
gradient loop does `r = minibatch.clone(); rdotr = r.dot(r); ... r -= alpha *
z`.  Seen alone, that is a write to a tensor `dot` saved; but `minibatch` never
carries a graph, so nothing is saved for backward.  A parameter counts as
grad-free when the function is defined once in the file, every mention of its
name is a call, and every call passes, at that parameter, a value that cuts the
graph: `x.detach()`, `x.item()`, `x.data`, a constant, arithmetic of those
(`-loss_grad`), or a name whose every binding in the calling function is one.
Names are matched without resolving them, like ``callers.py``; a call that
passes `*args`/`**kwargs`, or a mention that is not a call, keeps every
parameter as it was.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_left
from collections import defaultdict

from autograd_doctor.lint import names as N
from autograd_doctor.lint.defaults import parameter_defaults
from autograd_doctor.lint.findings import line_numbers
from autograd_doctor.lint.walk import own_nodes, walk_nodes

_ENTRY_POINTS = frozenset({"forward", "__call__", "training_step", "main"})


# Only a parameter annotated `Tensor` is a tensor to the checker (a forward()'s
# arguments are too, but forward is an entry point): the others need no facts.
_SIGNATURE = re.compile(r"def[ \t]+(\w+)[ \t]*\(([^)]*)")
_TENSOR_ANNOTATION = re.compile(r":\s*[\"']?(?:torch\.)?Tensor\b")


def grad_free_parameters(tree: ast.Module, source: str) -> dict:
    """Function name -> the names of its parameters that every call fills grad-free."""
    if ".detach()" not in source and ".data" not in source and ".item()" not in source:
        return {}  # no value in the file is cut from its graph
    wanted = {name for name, params in _SIGNATURE.findall(source)
              if "Tensor" in params and _TENSOR_ANNOTATION.search(params)
              and not name.startswith("__") and name not in _ENTRY_POINTS}
    wanted = _only_called(wanted, source)
    if not wanted:
        return {}  # most files: no walk of the whole tree
    statements = list(nested_statements(tree.body))
    functions = [n for n in statements if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    defs, methods = _definitions(statements, functions)
    defs = {name: found for name, found in defs.items() if name in wanted}
    wanted = {name for name in wanted if len(defs.get(name, ())) == 1}
    if not wanted:
        return {}
    # Walk only the functions that hold a call: found from the calls' lines.
    expected: dict = defaultdict(int)
    holders: dict = {}
    spans = sorted(((f.lineno, f.end_lineno, f) for f in functions),
                   key=lambda t: t[1] - t[0])
    matches = _call_positions(source, wanted)
    for (_, name), line in zip(matches, line_numbers(source, [start for start, _ in matches])):
        expected[name] += 1
        holder = next((f for lo, hi, f in spans if lo <= line <= hi), tree)
        holders[id(holder)] = holder
    calls: dict = defaultdict(list)  # name -> [(call, enclosing function)]
    # In each holder, only the statements whose lines write one of the names (a call's
    # name is written within its statement's lines, on a line of its own or not).
    lines = sorted(set(line_numbers(source, _word_positions(source, sorted(wanted)))))
    for holder in holders.values():
        for node in own_nodes([stmt for stmt in holder.body if _holds_a_line(stmt, lines)],
                              enter_classes=True):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else \
                    func.attr if isinstance(func, ast.Attribute) else None
                if name in wanted:
                    calls[name].append((node, holder if holder is not tree else None))
    bindings: dict = {}  # id(calling function) -> its bindings
    out = {}
    for name in wanted:
        found = calls.get(name, ())
        # every textual call must be one we saw (none hidden in a lambda, say)
        if not found or len(found) != expected[name]:
            continue
        function = defs[name][0]
        method = id(function) in methods
        params = _parameters(function, method)
        free = set(params)
        for call, caller in found:
            # the caller's bindings, read only when a name is passed (_LazyBindings)
            if caller is not None and id(caller) not in bindings:
                bindings[id(caller)] = _LazyBindings(caller)
            known = bindings.get(id(caller), {}) if caller is not None else {}
            free &= _free_at(call, function, method, params, known)
            if not free:
                break
        if free:
            out[name] = frozenset(free)
    return out


def _only_called(names: set, source: str) -> set:
    """Those of ``names`` whose every mention in the text is its `def` or a call
    (`name(`): a callback, a reference, even a comment naming it, keeps it checked."""
    if not names:
        return set()
    out = set(names)
    # str.find per name: a regex alternation behind `\b` tries every position of
    # the text (it was a third of this module's time on torch/nn).
    for name in names:
        start = source.find(name)
        while start >= 0:
            end = start + len(name)
            if not (start and _is_word_char(source[start - 1])) and not (end < len(source) and _is_word_char(source[end])) \
                    and not source.endswith("def ", 0, start) and not _CALL.match(source, end):
                out.discard(name)
                break
            start = source.find(name, end)
    return out


def _call_positions(source: str, names) -> list:
    """(position, name) of each call-like mention `name(` or `name (` of ``names`` in the
    text, in order: a whole word at its start (a word character is what a regular
    expression's ``\\w`` matches), not right after `def `; what the pattern
    `(?<!def )\\b(a|b|...)[ \\t]*\\(` finds, by ``str.find`` (compiling a pattern
    per file cost more than the search)."""
    found = []
    for name in names:
        start = source.find(name)
        while start >= 0:
            end = start + len(name)
            if not (start and _is_word_char(source[start - 1])) and not source.endswith("def ", 0, start) \
                    and _CALL.match(source, end):
                found.append((start, name))
            start = source.find(name, start + 1)
    found.sort()
    return found


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


_CALL = re.compile(r"[ \t]*\(")


def _definitions(statements, functions):
    """Function name -> its definitions, and the ids of the methods (defined in a
    class body, not static)."""
    defs: dict = defaultdict(list)
    for node in functions:
        defs[node.name].append(node)
    methods = {id(b) for node in statements if isinstance(node, ast.ClassDef) for b in node.body
               if isinstance(b, (ast.FunctionDef, ast.AsyncFunctionDef))
               and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in b.decorator_list)}
    return defs, methods


def nested_statements(body):
    """Every statement in ``body``, nested ones included (bodies of functions,
    classes, branches, loops, `with` and `try` blocks)."""
    todo = list(body)
    while todo:
        stmt = todo.pop()
        yield stmt
        blocks = _BLOCKS.get(stmt.__class__)
        if blocks is None:
            blocks = _BLOCKS[stmt.__class__] = _blocks_of(stmt.__class__)
        for name, of_clauses in blocks:  # most statements have none
            inner = getattr(stmt, name)
            if of_clauses:  # `handlers` of a `try`, `cases` of a `match`: each has a body
                for clause in inner:
                    todo.extend(clause.body)
            else:
                todo.extend(inner)


# statement class -> its fields that hold statements, in the order they are pushed:
# (name, True) for a list of clauses that each hold a body
_BLOCKS: dict[type, tuple] = {}


def _blocks_of(cls) -> tuple:
    fields = cls._fields
    # `body` is a list of statements in every statement that has one (a lambda's is an
    # expression, but a lambda is no statement)
    return tuple((name, False) for name in ("body", "orelse", "finalbody") if name in fields) + \
        tuple((name, True) for name in ("handlers", "cases") if name in fields)


def _parameters(function, method: bool) -> list:
    args = function.args.posonlyargs + function.args.args
    if method:
        args = args[1:]  # `self`
    return [a.arg for a in args] + [a.arg for a in function.args.kwonlyargs]


def _free_at(call, function, method: bool, params, known) -> set:
    """The parameters that this call fills with grad-free values."""
    if method != isinstance(call.func, ast.Attribute):
        return set()  # a method called as a plain name (or the reverse): not this function
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return set()
    given = dict(zip(params, call.args))
    given.update((k.arg, k.value) for k in call.keywords)
    defaults = parameter_defaults(function)
    return {p for p in params if _grad_free(given.get(p, defaults.get(p)), known, 0)}


def _grad_free(value, known, depth) -> bool:
    if value is None or depth > 4:
        return False
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        return value.func.attr in N.GRAD_CUTTING_METHODS
    if isinstance(value, ast.Attribute):
        return value.attr == "data"
    if isinstance(value, ast.UnaryOp):
        return _grad_free(value.operand, known, depth + 1)
    if isinstance(value, ast.BinOp):
        return _grad_free(value.left, known, depth + 1) and _grad_free(value.right, known, depth + 1)
    if isinstance(value, ast.Name):
        bound = known.get(value.id)
        return bool(bound) and all(_grad_free(v, known, depth + 1) for v in bound)
    return False


class _LazyBindings:
    """``_bindings(function)``, computed on the first ``get`` (most calls pass no name)."""

    def __init__(self, function):
        self.function, self.found = function, None

    def get(self, name):
        if self.found is None:
            self.found = _bindings(self.function)
        return self.found.get(name)


def _holds_a_line(stmt, lines: list) -> bool:
    """Whether one of the sorted ``lines`` lies in the statement's lines (a class's from
    its first decorator: ``own_nodes`` walks a class's decorators)."""
    start = stmt.lineno
    if stmt.__class__ is ast.ClassDef and stmt.decorator_list:
        start = min(start, *(d.lineno for d in stmt.decorator_list))
    index = bisect_left(lines, start)
    return index < len(lines) and lines[index] <= (stmt.end_lineno or stmt.lineno)


def _word_positions(source: str, words) -> list:
    """The positions of each of ``words`` in ``source`` as a whole word (str.find)."""
    found = []
    for word in words:
        start = source.find(word)
        while start >= 0:
            end = start + len(word)
            if not (start and _is_word_char(source[start - 1])) \
                    and not (end < len(source) and _is_word_char(source[end])):
                found.append(start)
            start = source.find(word, end)
    return found


def _bindings(function) -> dict:
    """Name -> every value bound to it in ``function`` (None: bound some other way)."""
    out: dict = defaultdict(list)
    for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs:
        out[a.arg].append(None)
    for node in walk_nodes(function):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                _bind(out, t, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            _bind(out, node.target, node.value if not isinstance(node, ast.AugAssign) else None)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            _bind(out, node.target, None)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            _bind(out, node.optional_vars, None)
    return out


def paired_display(target, value) -> list | None:
    """The element of ``value`` each element of ``target`` receives, when
    ``target`` unpacks a tuple or list display of its own length (`G, D =
    Generator(), Discriminator()`), neither starred, and no element of the display
    reads a name the target binds (a swap, `a, b = b, a`, stays unknown); else None."""
    if not isinstance(value, (ast.Tuple, ast.List)) or not isinstance(target, (ast.Tuple, ast.List)) \
            or len(value.elts) != len(target.elts) \
            or any(isinstance(e, ast.Starred) for e in value.elts + target.elts):
        return None
    bound = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    if any(isinstance(n, ast.Name) and n.id in bound for e in value.elts for n in ast.walk(e)):
        return None
    return list(value.elts)


def _bind(out, target, value) -> None:
    if isinstance(target, ast.Name):
        out[target.id].append(value)
    elif isinstance(target, (ast.Tuple, ast.List)):
        values = paired_display(target, value)
        for t, v in zip(target.elts, values or [None] * len(target.elts)):
            _bind(out, t, v)  # one element of an unpacking: unknown, unless a display pairs it
    elif isinstance(target, ast.Starred):
        _bind(out, target.value, None)
