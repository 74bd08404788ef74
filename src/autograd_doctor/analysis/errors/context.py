"""What a catalogue diagnosis starts from: the user's exception and the frames of its traceback.

The traceback's frames are still alive when the exception is being explained, so their
local variables can be read (the tensor PyTorch complained about, the optimizer's
parameter). Nothing read here is stored: diagnoses keep file names, lines and text only.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from types import FrameType

from autograd_doctor.recording.frames import is_host_file, is_internal_file
from autograd_doctor.recording.own_frames import is_our_code
from autograd_doctor.analysis.live_values import expression_value, frame_lookup
from autograd_doctor.diagnosis.model import Location
from autograd_doctor.diagnosis.source import class_definition, parse_file, source_line, statement_at, statement_location, walk_covering


@dataclass
class ErrorContext:
    error: BaseException
    message: str
    # Every frame of the traceback, outermost first, with the line each was at.
    frames: list[tuple[FrameType, int]]

    @classmethod
    def of(cls, error: BaseException) -> "ErrorContext":
        frames = []
        tb = error.__traceback__
        while tb is not None:
            frames.append((tb.tb_frame, tb.tb_lineno))
            tb = tb.tb_next
        message = str(error.args[0]) if error.args and isinstance(error.args[0], str) else str(error)
        return cls(error=error, message=message.split("\n\nautograd-doctor:")[0], frames=frames)

    def user_frames(self) -> list[tuple[FrameType, int]]:
        """The user's frames, innermost first, up to the tool that ran them (pytest, IPython).
        A stand-in frame through which the doctor called torch (own_frames.call_as_caller) has
        the user's file and line but not the user's local variables: it is not one of them."""
        found = []
        for frame, line in reversed(self.frames):
            filename = frame.f_code.co_filename
            if is_our_code(frame.f_code):
                continue
            if not is_internal_file(filename):
                found.append((frame, line))
            elif found and is_host_file(filename):
                break
        return found

    def files_reached(self) -> list[str]:
        """The traceback's user files, then the user's files their namespaces reach: where the
        functions, classes and modules bound there are defined (a helper imported from another
        file), and the classes of the modules bound there and of their submodules (a model built
        in another file). Not every loaded module: under pytest those are the test files, any of
        which may hold the same pattern for another test."""
        import sys
        import types

        import torch

        from autograd_doctor.recording.frames import in_installed_package

        def file_of_class(cls) -> str | None:
            return getattr(sys.modules.get(cls.__module__), "__file__", None)

        files = [frame.f_code.co_filename for frame, _ in self.user_frames()]
        for frame, _ in self.user_frames():
            for value in list(frame.f_globals.values()) + list(frame.f_locals.values()):
                if isinstance(value, types.ModuleType):
                    files.append(getattr(value, "__file__", None))
                elif isinstance(value, type):
                    files.append(file_of_class(value))
                elif isinstance(value, torch.nn.Module):
                    files += [file_of_class(type(module)) for module in value.modules()]
                else:
                    code = getattr(getattr(value, "func", value), "__code__", None)  # a functools.partial's function
                    files.append(code.co_filename if code is not None else None)
        return list(dict.fromkeys(f for f in files if f and f.endswith(".py") and not is_internal_file(f)
                                  and not in_installed_package(f)))

    def innermost_user(self) -> tuple[FrameType, int] | None:
        found = self.user_frames()
        return found[0] if found else None

    def torch_frame(self, function: str) -> FrameType | None:
        """The innermost traceback frame running a function of that name (e.g. inside torch)."""
        for frame, _ in reversed(self.frames):
            if frame.f_code.co_name == function:
                return frame
        return None

    def raise_location(self, role: str = "raised", note: str = "") -> Location | None:
        """The user's statement that raised (the innermost user frame of the traceback)."""
        found = self.innermost_user()
        if found is None:
            return None
        frame, line = found
        return line_location(frame.f_code.co_filename, line, role, note)


def line_location(filename: str, line: int, role: str = "", note: str = "") -> Location | None:
    statement = statement_at(filename, line)
    if statement is not None and not isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
        return statement_location(filename, statement, role, note)
    text = source_line(filename, line)
    if not text:
        return None
    indent = len(text) - len(text.lstrip())
    return Location(file=filename, line=line, column=indent, end_line=line, end_column=len(text.rstrip()),
                    source=text.strip(), role=role, note=note)


def value_of(frame, node: ast.expr):
    """The value of a side-effect-free expression in `frame`: constants, names, attributes, tuples,
    constant subscripts (analysis.live_values: nothing of the user's runs, so reading it cannot
    change the user's program)."""
    return expression_value(frame_lookup(frame), node)


def local_name_of(frame: FrameType, value) -> str | None:
    """The name of a local (or global) variable of `frame` bound to exactly `value`."""
    scopes = [frame.f_locals]
    if frame.f_globals is not frame.f_locals:
        scopes.append(frame.f_globals)
    for scope in scopes:
        for name, candidate in list(scope.items()):
            if candidate is value and not name.startswith("__"):
                return name
    return None


def enclosing_function(tree: ast.Module, line: int) -> ast.AST:
    """The innermost function (or the module) whose body covers `line`."""
    best: ast.AST = tree
    for node in walk_covering(tree, line):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is tree or node.lineno >= best.lineno:
                    best = node
    return best


def walk_own_scope(scope: ast.AST):
    """The nodes of `scope` outside the functions and classes defined in it (a nested function's
    `x = ...` binds its own x, not the enclosing one's)."""
    pending = [scope]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in ast.iter_child_nodes(node)
                       if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)))


def last_assignment(filename: str, name: str, before_line: int) -> ast.stmt | None:
    """The last statement before `before_line`, in the same function, that binds `name`."""
    tree = parse_file(filename)
    if tree is None:
        return None
    scope = enclosing_function(tree, before_line)
    best = None
    for node in walk_own_scope(scope):
        if not isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) or node.lineno >= before_line:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        if name in names and (best is None or node.lineno > best.lineno):
            best = node
    return best



def statements_feeding(filename: str, statement: ast.stmt | None, depth: int):
    """`statement`, then the last assignments before it of the names it reads, then those of the
    names they read, and so on, `depth` levels in all; each name is followed once."""
    pending, seen = ([statement] if statement is not None else []), set()
    for _ in range(depth):
        next_pending = []
        for node in pending:
            yield node
            for used in {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} - seen:
                seen.add(used)
                assignment = last_assignment(filename, used, node.lineno)
                if assignment is not None:
                    next_pending.append(assignment)
        pending = next_pending

def carrying_assignment(filename: str, name: str, line: int) -> ast.stmt | None:
    """In a loop around `line`: the last statement of the loop body, at `line` or after it, that
    binds `name`. Its value is what the next iteration sees as `name` (a carried tensor)."""
    tree = parse_file(filename)
    if tree is None:
        return None
    scope = enclosing_function(tree, line)
    loops = [node for node in ast.walk(scope) if isinstance(node, (ast.For, ast.While))
             and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if not loops:
        return None
    loop = max(loops, key=lambda node: node.lineno)
    best = None
    for node in ast.walk(loop):
        if isinstance(node, ast.Assign) and node.lineno >= line and any(
                isinstance(t, ast.Name) and t.id == name for t in node.targets):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def uses_between(filename: str, name: str, after: int, before: int) -> list:
    """Statements between two lines that use `name` (where a generator was used up), at most two."""
    found = []
    for number in range(after + 1, before):
        statement = statement_at(filename, number)
        if statement is None or statement.lineno != number:
            continue
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(statement)):
            found.append(statement_location(filename, statement, role="used", note=f"{name} is used up here"))
    return found[:2]


def with_block_around(filename: str, line: int, context_names: tuple[str, ...]) -> ast.With | None:
    """The innermost `with torch.<name>():` statement whose body covers `line`."""
    tree = parse_file(filename)
    if tree is None:
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and node.lineno < line <= (node.end_lineno or node.lineno):
            if any(context_call_name(item.context_expr) in context_names for item in node.items):
                if best is None or node.lineno > best.lineno:
                    best = node
    return best


def context_call_name(expression: ast.expr) -> str | None:
    """`no_grad` for `torch.no_grad()`, `inference_mode` for `torch.inference_mode(True)`."""
    if isinstance(expression, ast.Call):
        expression = expression.func
    if isinstance(expression, ast.Attribute):
        return expression.attr
    if isinstance(expression, ast.Name):
        return expression.id
    return None


def graph_node_named(context: ErrorContext, node_name: str, with_path: bool = False):
    """The autograd node called `node_name` in the graph backward() was running; with_path: also
    the nodes between the root and it (the ops after it in the forward pass)."""
    for node, path in _graph_walk(context):
        if type(node).__name__ == node_name:
            return (node, path) if with_path else node
    return (None, ()) if with_path else None


def graph_nodes_named(context: ErrorContext, node_name: str) -> list:
    """Every autograd node called `node_name` in the graph backward() was running: one per
    application of a custom Function (`ScaleBackward` for each `Scale.apply(...)` in it)."""
    return [node for node, _path in _graph_walk(context) if type(node).__name__ == node_name]


def _graph_walk(context: ErrorContext):
    """(node, the nodes between the root and it) for each node of the graph backward() or
    torch.autograd.grad() was running, each once, at most 10000."""
    roots = []
    for function in ("backward", "grad"):
        frame = context.torch_frame(function)
        if frame is None:
            continue
        for key in ("self", "tensors", "outputs"):
            value = frame.f_locals.get(key)
            values = value if isinstance(value, (tuple, list)) else [value]
            roots.extend(getattr(v, "grad_fn", None) for v in values)
    seen, frontier = set(), [(r, ()) for r in roots if r is not None]
    while frontier and len(seen) < 10000:
        node, path = frontier.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node, path
        frontier.extend((child, path + (node,)) for child, _ in node.next_functions if child is not None)


def module_attribute_assignment(module, attribute: str):
    """(filename, statement) of `self.<attribute> = ...` in the module's class (or a base class
    defined in user code), or (None, None). An assignment of a constant (`self.activations =
    None` in __init__) only clears the attribute: the value read later was made elsewhere."""
    for cls in type(module).__mro__:
        found = class_definition(cls)
        if found is None:
            continue
        filename, definition = found
        for statement in ast.walk(definition):
            if isinstance(statement, ast.Assign) and not isinstance(statement.value, ast.Constant) and any(
                    isinstance(target, ast.Attribute) and target.attr == attribute
                    and isinstance(target.value, ast.Name) and target.value.id == "self"
                    for target in statement.targets):
                return filename, statement
    return None, None


def one_shot_iterator(value) -> bool:
    """A generator, or an iterator such as filter(...) or map(...): iterating it uses it up."""
    try:
        return iter(value) is value
    except TypeError:
        return False


def made_where(frame, filename: str, node: ast.expr, line: int):
    """(file, statement, name) of the assignment that made the value of `node`: the last one of a
    name before `line`, or, for `self.x`, the class's `self.x = ...`; (None, None, None)."""
    if isinstance(node, ast.Name):
        made = last_assignment(filename, node.id, line)
        return (filename, made, node.id) if made is not None else (None, None, None)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        owner = value_of(frame, node.value)
        made_file, made = module_attribute_assignment(owner, node.attr) if owner is not None else (None, None)
        if made is not None and not isinstance(made.value, ast.Constant):
            return made_file, made, ast.unparse(node)
    return None, None, None
