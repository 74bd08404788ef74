"""Reading the user's source: lines, statements and expressions at a position."""

from __future__ import annotations

import ast
import linecache
import os
import threading
import warnings
from collections import deque
from functools import lru_cache

from autograd_doctor.diagnosis.model import Location
from autograd_doctor.recording.frames import Site


def source_line(filename: str, line: int) -> str:
    return linecache.getline(filename, line).rstrip("\n")


def source_text(filename: str) -> str:
    return "".join(linecache.getlines(filename))


def forget_changed_sources() -> None:
    """Drop the cached lines of files changed on disk since they were read. `linecache` never
    looks again by itself: a program file rewritten and run again in the same process (a test
    looping over programs, `%run` after an edit) was read as its old text (lines, statements and
    helps of another program), or as the new one if something had happened to call `checkcache`
    (a traceback printed) in between."""
    linecache.checkcache()


_QUIET_PARSE = threading.RLock()  # one swap of warnings' display function at a time, so each restores the one it found


def parse_quietly(text: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    """`ast.parse(text, filename, mode)` without the warnings the parser itself gives: an invalid
    escape sequence in a string (`"\\h"` in a docstring) warns at each parse (DeprecationWarning,
    SyntaxWarning from Python 3.12), and the user's file was already compiled, with its warning,
    when it was imported; a second one from our reading of it was a line the program without the
    doctor never prints (pytest lists it under the test that ran). Not `catch_warnings()`: changing
    the filters resets Python's record of warnings already shown, so the program's own warnings
    would show again. Only the parser's warnings about `filename`, on this thread, are dropped;
    any other warning meanwhile goes to the display function in force."""
    show = getattr(warnings, "_showwarnmsg", None)  # what the interpreter calls to show a warning
    if show is None:
        return ast.parse(text, filename, mode)
    parsing_thread = threading.get_ident()

    def show_all_but_the_parsers(message):
        if not (threading.get_ident() == parsing_thread and message.filename == filename
                and issubclass(message.category, (SyntaxWarning, DeprecationWarning))):
            show(message)

    with _QUIET_PARSE:
        warnings._showwarnmsg = show_all_but_the_parsers
        try:
            return ast.parse(text, filename, mode)
        finally:
            warnings._showwarnmsg = show


@lru_cache(maxsize=64)
def _parsed(filename: str, version: tuple[int, int]) -> ast.Module | None:
    text = source_text(filename)
    if not text:
        return None
    try:
        return parse_quietly(text, filename)
    except (SyntaxError, ValueError):
        return None


def parse_file(filename: str) -> ast.Module | None:
    try:
        status = os.stat(filename)
        version = (status.st_mtime_ns, status.st_size)  # a rewrite within a clock tick changes the size
    except OSError:
        version = (0, 0)
    linecache.checkcache(filename)  # the text parsed is the file's now, not the one read before
    return _parsed(filename, version)


_STATEMENT_LISTS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})


def walk_covering(tree: ast.AST, line: int):
    """The statements of `ast.walk(tree)` (with their except handlers and match cases), in the same
    order, less the subtrees of nodes whose lines do not cover `line`: a statement, function or
    class that covers it lies only inside statements that cover it, and never inside an
    expression. Looking up one line then visits a path, not the whole file (a first backward()
    looks up its line: a whole-file walk cost tens of milliseconds)."""
    todo = deque([tree])
    while todo:
        node = todo.popleft()
        for field in node._fields:
            if field not in _STATEMENT_LISTS:
                continue
            for child in getattr(node, field, None) or ():
                start = getattr(child, "lineno", None)
                if start is None:  # a match case: its lines are its pattern's to its body's end
                    start, end = child.pattern.lineno, child.body[-1].end_lineno
                else:
                    end = getattr(child, "end_lineno", None) or start
                if start <= line <= end:
                    todo.append(child)
        yield node


def statement_at(filename: str, line: int) -> ast.stmt | None:
    """The innermost simple statement that covers `line`."""
    tree = parse_file(filename)
    if tree is None:
        return None
    best = None
    for node in walk_covering(tree, line):
        if isinstance(node, ast.stmt) and not isinstance(
            node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor,
                   ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try)
        ):
            end = getattr(node, "end_lineno", node.lineno) or node.lineno
            if node.lineno <= line <= end:
                if best is None or node.lineno >= best.lineno:
                    best = node
    return best


def location_of(site: Site | None, role: str = "", note: str = "") -> Location | None:
    if site is None:
        return None
    filename = site.filename
    positions = site.columns()
    if positions is not None:
        line, end_line, col, end_col = positions
    else:
        line, end_line, col, end_col = site.lineno, site.lineno, None, None
    text = source_line(filename, line)
    statement = statement_at(filename, line) if col is not None else None
    if isinstance(statement, (ast.Assign, ast.AugAssign)) and statement.lineno == statement.end_lineno == line:
        target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
        if target.col_offset <= col and end_col is not None and end_col <= target.end_col_offset:
            # The store instruction covers only the target (`y[1]`); mark the whole write.
            col, end_col = statement.col_offset, statement.end_col_offset
    if col is None:
        col = len(text) - len(text.lstrip())
        end_col = len(text)
    return Location(
        file=display_path(filename), line=line, column=col, end_line=end_line, end_column=end_col,
        source=text.strip(), role=role, note=note,
    )


def display_path(filename: str) -> str:
    """Paths as Python recorded them: as the user gave them on the command line, or absolute."""
    return filename


def shown_path(filename: str) -> str:
    """How the text report shows a file: relative to the current directory when it is under
    it (python records the main script's path as absolute), else as recorded."""
    if not os.path.isabs(filename):
        return filename
    try:
        here = os.getcwd() + os.sep
    except OSError:
        return filename
    return filename[len(here):] if filename.startswith(here) else filename


def statement_location(filename: str, statement: ast.stmt, role: str = "", note: str = "") -> Location:
    text = source_line(filename, statement.lineno)
    return Location(
        file=display_path(filename), line=statement.lineno, column=statement.col_offset,
        end_line=statement.end_lineno, end_column=statement.end_col_offset,
        source=text.strip(), role=role, note=note,
    )


def segment(filename: str, node: ast.AST) -> str | None:
    """`node`'s source text. Over several lines, in the convention of every help's replacement
    text: its first line from the node's first column, the later lines relative to the first
    column of the statement that holds the node (`apply_replacement` and the report add the
    statement's indentation to every line); see `relative_to_statement`."""
    lines = [source_line(filename, n) for n in range(node.lineno, node.end_lineno + 1)]
    if not lines:
        return None
    if len(lines) == 1:
        return lines[0][node.col_offset:node.end_col_offset]
    lines[0] = lines[0][node.col_offset:]
    lines[-1] = lines[-1][:node.end_col_offset]
    column = node.col_offset if isinstance(node, ast.stmt) else statement_column(filename, node.lineno)
    return "\n".join([lines[0], *(relative_to_statement(line, column) for line in lines[1:])])


def relative_to_statement(line: str, column: int) -> str:
    """A continuation line of a statement whose first column is `column`, made relative to it:
    the line less `column` columns of indentation (less all of it when it has fewer, a closing
    bracket written to the left of the statement). Replacement texts are relative so that the one
    place that writes them into the file (`analysis.fixes.apply_replacement`, and the report when
    it prints them) adds the statement's indentation once: text kept with the file's own
    indentation got it twice."""
    indentation = len(line) - len(line.lstrip())
    return line[min(column, indentation):]


def statement_column(filename: str, line: int) -> int:
    """The first column of the innermost statement whose lines (decorators included) hold `line`;
    the line's own indentation when the file cannot be parsed or no statement holds it."""
    tree = parse_file(filename)
    column = _statement_columns(tree).get(line) if tree is not None else None
    if column is None:
        text = source_line(filename, line)
        column = len(text) - len(text.lstrip())
    return column


@lru_cache(maxsize=64)
def _statement_columns(tree: ast.Module) -> dict:
    """{line: first column of the innermost statement holding it}, for every line of a statement."""
    columns = {}
    for statement in statements_in(tree):  # outer statements before the ones they hold
        decorators = getattr(statement, "decorator_list", None) or ()
        first = min([statement.lineno] + [decorator.lineno for decorator in decorators])
        for number in range(first, (statement.end_lineno or statement.lineno) + 1):
            columns[number] = statement.col_offset
    return columns


def statement_children(node: ast.AST) -> list:
    """The statements (and except handlers, match cases) directly in `node`'s statement lists, in
    the order of its fields: what a walk that looks only for statements descends into."""
    return [child for field in node._fields if field in _STATEMENT_LISTS for child in getattr(node, field, None) or ()]


def statements_in(node: ast.AST):
    """Every statement inside `node` (nested functions' and classes' included), without visiting
    expressions: a walk of a function's statements only, several times cheaper than `ast.walk`."""
    todo = [node]
    while todo:
        current = todo.pop()
        if current is not node and isinstance(current, ast.stmt):  # not an except handler or a match case
            yield current
        todo.extend(reversed(statement_children(current)))


@lru_cache(maxsize=64)
def _functions(tree: ast.Module) -> tuple:
    """(first line: the first decorator's or the def's, the def node) of every function in the file:
    the checks after a first backward() look functions up by a code object's first line."""
    return tuple((min([node.lineno] + [d.lineno for d in node.decorator_list]), node)
                 for node in statements_in(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


@lru_cache(maxsize=64)
def _calls(tree: ast.Module) -> tuple:
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.Call) and node.args)


def calls_with_arguments(filename: str) -> tuple:
    """Every call in the file with a positional argument, in `ast.walk` order (read once a file)."""
    tree = parse_file(filename)
    return _calls(tree) if tree is not None else ()


def function_starting_at(filename: str, first_line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The `def` whose first line (its first decorator's, or the def's own) is `first_line`: a code
    object's `co_firstlineno`."""
    tree = parse_file(filename)
    if tree is None:
        return None
    return next((node for start, node in _functions(tree) if start == first_line or node.lineno == first_line), None)


def function_definition(code) -> ast.FunctionDef | None:
    """The `def` of a code object in its file (its first line is the def's, or a decorator's)."""
    tree = parse_file(code.co_filename)
    if tree is None:
        return None
    return next((node for start, node in _functions(tree)
                 if node.name == code.co_name and start <= code.co_firstlineno <= node.body[0].lineno), None)


def class_definition(cls: type) -> tuple[str, ast.ClassDef] | None:
    """(file, statement) of the `class` statement that made `cls`, or None.

    Found through the code objects of the class's own functions, which carry the file they were
    compiled from. `inspect.getsourcefile(cls)` looks the class up through
    `sys.modules[cls.__module__]` instead, and a class made in a notebook cell, or in a script
    that another program runs, has `__main__` as its module while `sys.modules["__main__"]` is the
    kernel's or the runner's: it answered the wrong file (or raised), and every help that reads
    the class (a state to reset, an attribute's assignment) was lost there. A class without a
    function of its own written in a file (a dataclass of fields, whose `__init__` is generated)
    falls back to `inspect.getsourcefile`."""
    import inspect

    name = getattr(cls, "__name__", None)
    if not isinstance(name, str):
        return None
    candidates = []  # (file, a line inside the class statement)
    for value in list(vars(cls).values()):
        # Only functions and the descriptors that wrap them are read: a class attribute of any
        # other type is the user's object, and reading an attribute of it could run its code.
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        while inspect.isfunction(value) and inspect.isfunction(vars(value).get("__wrapped__")):
            value = vars(value)["__wrapped__"]  # a decorated method: the user's own def, not the decorator's
        if inspect.isfunction(value) and value.__qualname__.startswith(f"{cls.__qualname__}."):
            candidates.append((value.__code__.co_filename, value.__code__.co_firstlineno))
    for filename, line in candidates:
        found = _class_statement(filename, name, line)
        if found is not None:
            return filename, found
    try:
        filename = inspect.getsourcefile(cls)
    except (TypeError, OSError):
        return None
    found = _class_statement(filename, name, None) if filename else None
    return (filename, found) if found is not None else None


def _class_statement(filename: str, name: str, line: int | None) -> ast.ClassDef | None:
    """The `class <name>` statement of the file (the one covering `line` when given)."""
    tree = parse_file(filename)
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.ClassDef) and node.name == name and (
                line is None or node.lineno <= line <= node.end_lineno):
            return node
    return None


def call_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    if isinstance(call.func, ast.Name):
        return call.func.id
    return None


def replace_node_text(filename: str, statement: ast.stmt, node: ast.AST, new_text: str) -> str | None:
    """The statement's source with `node`'s text replaced by `new_text`."""
    return replace_nodes_text(filename, statement, [(node, new_text)])


def replace_nodes_text(filename: str, statement: ast.AST, replacements: list) -> str | None:
    """The statement's source with each (node, new text) of `replacements` applied (the nodes
    do not overlap), in the convention of replacement texts: its first line from the statement's
    first column, the later lines relative to it (see `relative_to_statement`). A new text over
    several lines is in that convention too (as `segment` gives it). `statement` may also be an
    expression: its text as `segment` gives it, with the replacements."""
    lines = [source_line(filename, n) for n in range(statement.lineno, statement.end_lineno + 1)]
    lines[-1] = lines[-1][:statement.end_col_offset]  # drop a trailing comment
    column = statement.col_offset if isinstance(statement, ast.stmt) else statement_column(filename, statement.lineno)
    # Each line made relative first; how many columns each lost moves its nodes' positions.
    removed = [statement.col_offset]
    for row in range(1, len(lines)):
        relative = relative_to_statement(lines[row], column)
        removed.append(len(lines[row]) - len(relative))
        lines[row] = relative
    lines[0] = lines[0][statement.col_offset:]
    first = statement.lineno
    # The last node first, so that the positions of the earlier ones still hold.
    for node, new_text in sorted(replacements, key=lambda item: (item[0].lineno, item[0].col_offset), reverse=True):
        start_row, end_row = node.lineno - first, node.end_lineno - first
        if not (0 <= start_row < len(lines) and 0 <= end_row < len(lines)):
            return None
        before = lines[start_row][:max(node.col_offset - removed[start_row], 0)]
        after = lines[end_row][max(node.end_col_offset - removed[end_row], 0):]
        lines = lines[:start_row] + [before + new_text + after] + lines[end_row + 1:]
        removed = removed[:start_row + 1] + removed[end_row + 1:]
    return "\n".join(lines)


def call_argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    """The argument at `position`, or given as `keyword=`; None when absent or when a `*args`
    leaves positions unknown."""
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        return None
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def method_receiver(node: ast.AST, text: str) -> str:
    """`text` ready to take a method call: parenthesised unless it is a name, attribute, call or subscript."""
    return text if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"
