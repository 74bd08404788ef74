"""AD301 when the loss was computed through a function that turns gradients off inside itself: a
training step that reuses an evaluation helper whose forward runs under `with torch.no_grad():`
(or `torch.set_grad_enabled(False)` as a block). Nothing in the backward's own function cuts the
path; the cut is in the helper, one or more calls away.

The evidence is the run's: the recorder remembers where the user's code entered no_grad blocks
(`recording.switches`), and the loss's assignments in the backward's function lead, through the
functions they call (followed in the source, a few calls deep), to the function that holds the
block. The line to change is the block; the help runs the helper's body with gradients on.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.live_values import chain_value
from autograd_doctor.analysis.source_scope import Scope, loaded_names
from autograd_doctor.recording.frames import is_internal_file
from autograd_doctor.recording import switches
from autograd_doctor.recording.identity import IdentitySet
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import (
    class_definition, parse_file, source_line, statement_location, walk_covering,
)

# Calls followed from the loss's statements into the functions they call.
MAX_CALL_DEPTH = 3
MAX_STATEMENTS = 200


@dataclass
class GradOffBlock:
    """A block with gradients off, entered by the user's code during the run."""

    filename: str
    line: int
    function: str
    decorator: bool
    text: str  # `torch.no_grad()`


@dataclass
class CalledCut:
    block: GradOffBlock
    call: ast.stmt  # the statement in the backward's function that (indirectly) calls it
    path: list[str]  # the functions from that statement to the block's function


def _blocks() -> list[GradOffBlock]:
    """The `with` blocks (a decorated function is AD307's, which names the decorator)."""
    found = [GradOffBlock(entry.filename, entry.line, entry.function, entry.decorator, f"torch.{entry.kind}()")
             for kind in ("no_grad", "inference_mode") for entry in switches.mode_entries(kind)
             if not entry.decorator]
    for switch in switches.grad_switches():
        if switch.context_manager and not switch.enabled:
            found.append(GradOffBlock(switch.site.filename, switch.site.lineno, switch.site.function, False,
                                      "torch.set_grad_enabled(False)"))
    return found


def _called_names(node: ast.AST) -> set[str]:
    names = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            if isinstance(call.func, ast.Name):
                names.add(call.func.id)
            elif isinstance(call.func, ast.Attribute):
                names.add(call.func.attr)
    return names


def _definitions(filenames: set[str]) -> dict[str, list[tuple[str, ast.AST]]]:
    """Function name -> (file, definition) in the given files."""
    found: dict[str, list[tuple[str, ast.AST]]] = {}
    for filename in filenames:
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(node.name, []).append((filename, node))
    return found


def _resolve(name: str, caller_file: str, definitions, forward_files: set[str] | None = None) -> list[tuple[str, ast.AST]]:
    """The definitions a call of `name` in `caller_file` can run: the file's own function of that
    name if it has one (Python looks there first), else one defined in another file (imported).
    A module called in the loss's statement runs the `forward` of its own classes: only the files
    that define them (`forward_files`) hold it, not any file with a function of that name (an
    earlier program's, whose no_grad block a notebook or a test session still remembers)."""
    candidates = definitions.get(name, [])
    if forward_files is not None:
        return [entry for entry in candidates if entry[0] in forward_files]
    own = [entry for entry in candidates if entry[0] == caller_file]
    return own or candidates


def _holds(entry: tuple[str, ast.AST], block: GradOffBlock) -> bool:
    filename, node = entry
    return filename == block.filename and node.lineno <= block.line <= (node.end_lineno or node.lineno)


def _reaches(start: set[str], caller_file: str, block: GradOffBlock, definitions,
             forward_files: set[str]) -> list[str] | None:
    """The chain of function names from one of `start` (called in `caller_file`) to the function
    that holds `block`, following calls in the source and resolving each name as Python would
    in the calling file: a function of the same name in another program is not the one called."""
    frontier = [([name], caller_file) for name in sorted(start)]
    seen = {(name, caller_file) for name in start}
    for _ in range(MAX_CALL_DEPTH + 1):
        following = []
        for path, calling_file in frontier:
            first_forward = len(path) == 1 and path[0] == "forward"  # run by calling a module
            for entry in _resolve(path[-1], calling_file, definitions, forward_files if first_forward else None):
                if _holds(entry, block):
                    return path
                for name in sorted(_called_names(entry[1])):
                    if (name, entry[0]) not in seen:
                        seen.add((name, entry[0]))
                        following.append((path + [name], entry[0]))
        frontier = following
    return None


def _loss_statements(scope: Scope, names: list[str], line: int) -> list[ast.stmt]:
    """The assignments in the backward's function that the names read at `line` come from."""
    work = [(name, line) for name in names]
    seen: set[tuple[str, int]] = set()
    statements = []
    while work and len(seen) < MAX_STATEMENTS:
        name, before = work.pop(0)
        found = scope.latest_assignment(name, before)
        if found is None or (name, found[0].lineno) in seen:
            continue
        seen.add((name, found[0].lineno))
        statement, value = found
        statements.append(statement)
        work.extend((other, statement.lineno) for other in loaded_names(value))
    return statements


def _result_has_history(statement: ast.stmt, frame_locals: dict | None) -> bool:
    """Whether the statement's result, still held by its variable, requires grad (then the path
    is not cut there)."""
    if frame_locals is None or not isinstance(statement, ast.Assign):
        return False
    for target in statement.targets:
        value = frame_locals.get(target.id) if isinstance(target, ast.Name) else None
        if isinstance(value, torch.Tensor) and value.requires_grad:
            return True
    return False


def find_called_cut(filename: str, backward_statement: ast.stmt, names: list[str],
                    frame_locals: dict | None = None) -> CalledCut | None:
    """The grad-off block, in a function the loss's statements call, that cut the path."""
    blocks = _blocks()
    if not blocks:
        return None
    scope = Scope(filename, backward_statement.lineno)
    if scope.tree is None:
        return None
    own = getattr(scope.node, "name", None)
    statements = [backward_statement, *_loss_statements(scope, names, backward_statement.lineno)]
    definitions = _definitions({filename, *(block.filename for block in blocks)})
    for statement in statements:
        if _result_has_history(statement, frame_locals):
            continue
        forward_files = _module_forward_files(statement, frame_locals)
        called = _called_names(statement) | ({"forward"} if forward_files else set())
        for block in blocks:
            if block.function == own and block.filename == filename:
                continue  # a block in the backward's own function: the statement search sees it
            path = _reaches(called, filename, block, definitions, forward_files)
            if path is not None:
                return CalledCut(block, statement, path)
    return None


def _module_forward_files(statement: ast.stmt, frame_locals: dict | None) -> set[str]:
    """The user's files that hold the forward of the classes of the modules the statement calls (`self.model(x)`,
    `model(x)`) and of their submodules: calling a module runs those classes' forward, which the
    source names nowhere in the statement. Empty when it calls no module of the user's classes."""
    files: set[str] = set()
    if frame_locals is None:
        return files
    for call in ast.walk(statement):
        if isinstance(call, ast.Call):
            value = _attribute_value(call.func, frame_locals)
            if isinstance(value, torch.nn.Module):
                files.update(filter(None, map(_forward_file, value.modules())))
    return files


def _forward_file(module: torch.nn.Module) -> str | None:
    """The user's file that holds the forward of the module's class (a notebook cell's included)."""
    code = getattr(type(module).forward, "__code__", None)
    return code.co_filename if code is not None and not is_internal_file(code.co_filename) else None


def _attribute_value(node: ast.AST, frame_locals: dict):
    """The value of `name` or `name.attr...` from the frame's variables (nothing of the user's runs)."""
    return chain_value(frame_locals.get, node)


def _with_statement(filename: str, line: int) -> ast.With | None:
    tree = parse_file(filename)
    for node in walk_covering(tree, line) if tree is not None else ():
        if isinstance(node, ast.With) and node.lineno == line:
            return node
    return None


def _body_instead(filename: str, block: ast.With) -> str | None:
    """The with statement's body, at the with's indentation (the block without its header). Only
    for a body of one statement, or for a block that runs an iterative update and returns its
    result as the last statement of its function (a sampling or unrolling loop under no_grad):
    there, the loop is the whole computation the function gives back. In any other longer body,
    some lines may be meant to stay unrecorded (a target computed under no_grad next to the
    prediction), which only the user can tell."""
    if len(block.body) != 1 and not returns_iterated_result(filename, block):
        return None
    return block_body_dedented(filename, block)


def returns_iterated_result(filename: str, block: ast.With) -> bool:
    """Whether the with statement is the last statement of the function around it, ends in
    `return name`, and holds a for/while loop that assigns that name: the function's result is
    an iteration computed entirely inside the block."""
    if not block.body or not isinstance(block.body[-1], ast.Return) or not isinstance(block.body[-1].value, ast.Name):
        return False
    returned = block.body[-1].value.id
    iterated = any(isinstance(statement, (ast.For, ast.While)) and any(
        isinstance(node, (ast.Assign, ast.AugAssign)) and any(
            isinstance(target, ast.Name) and target.id == returned
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target]))
        for node in ast.walk(statement)) for statement in block.body)
    if not iterated:
        return False
    tree = parse_file(filename)
    for node in walk_covering(tree, block.lineno) if tree is not None else ():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body and node.body[-1] is block:
            return True
    return False


def block_body_dedented(filename: str, block: ast.With) -> str | None:
    """The with statement's whole body at the with's indentation: the block without its header
    (a header of one context manager that binds no name)."""
    if len(block.items) != 1 or block.items[0].optional_vars is not None:
        return None
    lines = [source_line(filename, n) for n in range(block.body[0].lineno, block.end_lineno + 1)]
    indent = block.body[0].col_offset
    if any(line.strip() and len(line) - len(line.lstrip()) < indent for line in lines):
        return None
    return "\n".join(line[indent:].rstrip() for line in lines)


def called_cut_parts(cut: CalledCut, filename: str, loss_name: str) -> tuple[Location, list[Location], list[str],
                                                                             list[Suggestion]]:
    """(primary, related, notes, helps) for a path cut in a called function's grad-off block."""
    block = cut.block
    function = block.function
    chain = " -> ".join(f"{name}()" for name in cut.path)
    statement = _with_statement(block.filename, block.line) if not block.decorator else None
    if statement is not None:
        primary = statement_location(block.filename, statement, role="cut",
                                     note=f"gradients are off in this block of {function}(), so what it returns has "
                                          "no grad history")
        primary.end_line, primary.end_column = primary.line, None
    else:
        primary = Location(block.filename, block.line, None, role="cut",
                           note=f"{function}() runs with gradients off ({block.text})")
    call = statement_location(filename, cut.call, role="called from",
                              note=f"{loss_name} is computed through {chain} here")
    left_in_eval = _eval_mode_left_on(statement, {filename, block.filename}, filename, cut.call) \
        if statement is not None else None
    if left_in_eval is not None:
        eval_location, help = left_in_eval
        header = segment_of(block.filename, statement.items[0].context_expr)
        block_location = statement_location(block.filename, statement, role="cut",
                                            note=f"gradients follow the module's mode here ({header})")
        block_location.end_line, block_location.end_column = block_location.line, None
        notes = [f"{loss_name} has no grad_fn: it is computed through {chain}, which runs under `with {header}:`; "
                 "the module was put in evaluation mode and never back in training mode, so gradients were off "
                 "in the training step"]
        return eval_location, [block_location, call], notes, [help]
    notes = [f"{loss_name} has no grad_fn: it is computed through {chain}, which ran {block.text}; inside it "
             "autograd records nothing, so the training step gets a result without grad history"]
    stored = _stored_context(statement, block.filename, cut) if statement is not None else None
    if stored is not None:
        made_location, stored_notes, stored_helps = stored
        block_location = statement_location(block.filename, statement, role="with",
                                            note=f"the object is entered here, in {function}(): the values "
                                                 "written in this block carry no grad history")
        block_location.end_line, block_location.end_column = block_location.line, None
        return made_location, [block_location, call], notes + stored_notes, stored_helps
    left_at_default = _flag_left_at_default(statement, block.filename, filename, cut) \
        if statement is not None else None
    if left_at_default is not None:
        call_location, flag_help, flag_note = left_at_default
        return call_location, [primary, call], notes + [flag_note], [flag_help]
    helps = []
    body = _body_instead(block.filename, statement) if statement is not None else None
    if body is not None:
        helps.append(Suggestion(
            f"run {function}() with gradients on: it is part of the training step here (keep {block.text} for "
            "code that only evaluates, in the evaluation loop)", body, statement_location(block.filename, statement)))
    else:
        helps.append(Suggestion(f"run {function}() with gradients on when the training step calls it: remove "
                                f"{block.text} from it and use it only where the code only evaluates"))
    return primary, [call], notes, helps


# Words of a flag's name that say it asks for gradients (`gradients_required`, `requires_grad`,
# `need_grad`, `enable_grad`), and words that say the opposite (`no_grad`, `disable_grad`).
_ASKING_WORDS = {"require", "required", "requires", "need", "needed", "needs", "enable", "enabled", "compute",
                 "with", "keep", "track", "want", "wanted"}
_REFUSING_WORDS = {"no", "not", "without", "disable", "disabled", "skip", "off", "inference", "eval", "freeze",
                   "frozen", "stop", "detach", "detached", "none"}


def _grad_off_call(value: ast.AST) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)` (any prefix)."""
    if not isinstance(value, ast.Call):
        return False
    name = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", None)
    if name in _GRAD_OFF_CONSTRUCTORS and not value.args:
        return True
    return name == "set_grad_enabled" and len(value.args) == 1 and isinstance(value.args[0], ast.Constant) \
        and value.args[0].value is False


_GRAD_OFF_CONSTRUCTORS = ("no_grad", "inference_mode")


def _asks_for_gradients(test: ast.AST) -> bool:
    """Whether an `if` test is a flag whose name says gradients are wanted when it is true."""
    if isinstance(test, ast.Attribute):
        name = test.attr
    elif isinstance(test, ast.Name):
        name = test.id
    else:
        return False
    words = set(name.lower().split("_"))
    return any(word.startswith("grad") for word in words) and bool(words & _ASKING_WORDS) \
        and not words & _REFUSING_WORDS


def _swapped_branches(filename: str, branch: ast.If) -> str | None:
    """The `if`/`else` with its two one-line bodies exchanged, relative to the `if`'s indentation."""
    if len(branch.body) != 1 or len(branch.orelse) != 1 or isinstance(branch.orelse[0], ast.If):
        return None
    first, second = branch.body[0], branch.orelse[0]
    if first.lineno != first.end_lineno or second.lineno != second.end_lineno:
        return None
    lines = [source_line(filename, n) for n in range(branch.lineno, branch.end_lineno + 1)]
    start = branch.lineno
    if len(lines) != 4 or lines[2].strip() != "else:" or first.lineno != start + 1 or second.lineno != start + 3:
        return None
    body_indent = " " * (first.col_offset - branch.col_offset)
    rows = [lines[0][branch.col_offset:], body_indent + lines[3].strip(), lines[2][branch.col_offset:],
            body_indent + lines[1].strip()]
    return "\n".join(row.rstrip() for row in rows)


def _stored_context(block: ast.With, block_file: str, cut: CalledCut):
    """(location of the construction, notes, helps) when the block enters a context object stored
    on the instance (`with self.grad_context:`) that one method of the block's class made as a
    grad-off context (`self.grad_context = torch.no_grad()`, often in `__init__`, chosen by an `if`):
    the line that turned gradients off is that construction, many calls before the block runs.
    The help says to make the object a null context where gradients are needed; it is advice (which
    branch is right is the author's intent), except that an `if FLAG:`/`else:` whose flag's name asks
    for gradients (`gradients_required`) and whose true branch makes the grad-off object is offered
    swapped, as an unverified change. None for any other header."""
    if len(block.items) != 1:
        return None
    header = block.items[0].context_expr
    if not (isinstance(header, ast.Attribute) and isinstance(header.value, ast.Name) and header.value.id == "self"):
        return None
    tree = parse_file(block_file)
    if tree is None:
        return None
    owner = next((node for node in walk_covering(tree, block.lineno) if isinstance(node, ast.ClassDef)), None)
    if owner is None:
        return None
    parents = {child: node for node in ast.walk(owner) for child in ast.iter_child_nodes(node)}
    made = [node for node in ast.walk(owner) if isinstance(node, ast.Assign) and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == header.attr
            and isinstance(node.targets[0].value, ast.Name) and node.targets[0].value.id == "self"]
    grad_off = [node for node in made if _grad_off_call(node.value)]
    if len(grad_off) != 1:
        return None
    construction = grad_off[0]
    attribute = f"self.{header.attr}"
    made_text = segment_of(block_file, construction.value)
    location = statement_location(block_file, construction, role="cut",
                                  note=f"{attribute} is made as {made_text} here: every `with {attribute}:` runs "
                                       "with gradients off")
    notes = [f"the grad-off block is entered through a stored object, `with {attribute}:` (line {block.lineno}); "
             f"the line that chose gradients off is where the object was made (line {construction.lineno})"]
    advice = (f"where the values computed in `with {attribute}:` must be trained, make {attribute} a null context "
              f"(`contextlib.nullcontext()`), not {made_text}; unverified: which case is meant to run without "
              "gradients is the program's intent")
    helps = [Suggestion(advice)]
    branch = parents.get(construction)
    if isinstance(branch, ast.If) and branch.body == [construction] and len(branch.orelse) == 1 and \
            branch.orelse[0] in made:
        test = segment_of(block_file, branch.test)
        notes.append(f"the `if {test}:` at line {branch.lineno} makes {made_text} when {test} is true and "
                     f"`{segment_of(block_file, branch.orelse[0].value)}` otherwise")
        swapped = _swapped_branches(block_file, branch) if _asks_for_gradients(branch.test) else None
        if swapped is not None:
            # The change is the whole if/else: it is the line named, its grad-off branch first.
            location = statement_location(block_file, branch, role="cut",
                                          note=f"makes {attribute} {made_text} when {test} is true: every "
                                               f"`with {attribute}:` then runs with gradients off")
            helps.insert(0, Suggestion(
                f"the two branches look swapped: `{test}` asks for gradients, and its branch turns them off; "
                "exchange the branches (unverified: the original run fails, so no oracle gives the gradients it "
                "meant)", swapped, statement_location(block_file, branch)))
    return location, notes, helps


def _flag_left_at_default(block: ast.With, block_file: str, step_file: str, cut: CalledCut):
    """(location of the call, help, note) when the block's grad-off context is chosen by a parameter
    of its function whose default turns gradients off, and the one call of that function on the path
    to the loss does not pass it: `context = nullcontext if require_grad else torch.no_grad` then
    `with context():` (or the conditional written in the header, or `torch.set_grad_enabled(flag)`),
    `def f(x, require_grad=False)`, and `f(x)` in the method the training step calls. The help passes
    the flag as `<the call's first argument>.requires_grad`: gradients flow when the argument requires
    grad, and an evaluation call with a plain tensor still runs without them. None otherwise."""
    if len(block.items) != 1 or len(cut.path) < 1:
        return None
    tree = parse_file(block_file)
    if tree is None:
        return None
    function = next((node for node in walk_covering(tree, block.lineno)
                     if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == cut.path[-1]), None)
    if function is None:
        return None
    header = block.items[0].context_expr
    chooser = header.func if isinstance(header, ast.Call) and not header.args else header
    if isinstance(chooser, ast.Name):  # `with context():`, the name bound earlier in the function
        bound = [node.value for node in ast.walk(function) if isinstance(node, ast.Assign)
                 and node.lineno < block.lineno and len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name) and node.targets[0].id == chooser.id]
        chooser = bound[-1] if len(bound) == 1 else None
    flag, on_when_true = None, True
    if isinstance(chooser, ast.IfExp):
        test, negated = chooser.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        grad_off_branch = chooser.orelse if not negated else chooser.body
        off_text = ast.unparse(grad_off_branch)
        if isinstance(test, ast.Name) and ("no_grad" in off_text or "inference_mode" in off_text):
            flag = test.id
    elif isinstance(header, ast.Call) and ast.unparse(header.func).endswith("set_grad_enabled") \
            and len(header.args) == 1 and isinstance(header.args[0], ast.Name):
        flag = header.args[0].id
    if flag is None:
        return None
    arguments = function.args
    positional = arguments.posonlyargs + arguments.args
    names = [a.arg for a in positional]
    if flag in names:
        index = names.index(flag)
        defaults = dict(zip(names[len(names) - len(arguments.defaults):], arguments.defaults))
        default = defaults.get(flag)
    else:
        kwonly = [a.arg for a in arguments.kwonlyargs]
        if flag not in kwonly:
            return None
        index, default = None, arguments.kw_defaults[kwonly.index(flag)]
    if not (isinstance(default, ast.Constant) and not default.value):
        return None  # no default, or a default that turns gradients on
    # The calls of the function on the path: in the function before it in the chain, or in the
    # training step's statement itself.
    if len(cut.path) >= 2:
        caller_tree = None
        for filename in dict.fromkeys([block_file, step_file]):
            tree = parse_file(filename)
            caller = next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                           and node.name == cut.path[-2]), None) if tree is not None else None
            if caller is not None:
                caller_tree, caller_file = caller, filename
                break
        if caller_tree is None:
            return None
    else:
        caller_tree, caller_file = cut.call, step_file
    calls = [node for node in ast.walk(caller_tree) if isinstance(node, ast.Call)
             and (getattr(node.func, "id", None) == function.name or getattr(node.func, "attr", None) == function.name)]
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(k.arg == flag or k.arg is None for k in call.keywords) \
            or any(isinstance(a, ast.Starred) for a in call.args) or index is not None and len(call.args) > index:
        return None  # the flag is passed
    if not call.args or not isinstance(call.args[0], ast.Name):
        return None
    statement = next((node for node in ast.walk(caller_tree) if isinstance(node, ast.stmt)
                      and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.If, ast.For, ast.While,
                                                ast.With, ast.Try))
                      and node.lineno <= call.lineno and call.end_lineno <= node.end_lineno), None)
    if statement is None or statement.lineno != statement.end_lineno:
        return None
    text = source_line(caller_file, statement.lineno)
    call_text = text[call.col_offset:call.end_col_offset] if call.lineno == call.end_lineno else None
    if not call_text or not call_text.endswith(")"):
        return None
    argument = call.args[0].id
    new_call = f"{call_text[:-1]}, {flag}={argument}.requires_grad)"
    new_text = (text[:call.col_offset] + new_call + text[call.end_col_offset:]).strip()
    location = statement_location(caller_file, statement, role="call",
                                  note=f"{function.name}() is called without {flag}=, so its default "
                                       f"({ast.unparse(default)}) runs it under {cut.block.text}")
    help = Suggestion(f"pass {flag}={argument}.requires_grad: {function.name}() keeps the graph when {argument} "
                      "requires grad, and still runs without gradients when it does not", new_text,
                      statement_location(caller_file, statement))
    note = (f"{function.name}() turns gradients off unless its argument {flag} is true; the call here leaves it at "
            f"its default ({ast.unparse(default)})")
    return location, help, note


def _eval_mode_left_on(block: ast.With, filenames: set[str], step_file: str, step: ast.stmt):
    """(location of the one `X.eval()` in the files, help) when the block's header reads the module's
    `training` flag (`torch.set_grad_enabled(self.training)`): the function that calls X.eval()
    puts X back in training mode (X.train()) as its last statement, so that the code after it (the
    training step) runs as before the evaluation; an X.eval() at the top level of a script is
    followed by X.train() right before the training step's statement `step`. None when there is
    not exactly one such call."""
    header = block.items[0].context_expr if len(block.items) == 1 else None
    if not (isinstance(header, ast.Call) and any(isinstance(n, ast.Attribute) and n.attr == "training"
                                                 for a in header.args for n in ast.walk(a))):
        return None
    calls = []
    for filename in sorted(filenames):
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
                calls.extend((filename, node, statement) for statement in node.body
                             if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)
                             and isinstance(statement.value.func, ast.Attribute)
                             and statement.value.func.attr == "eval" and not statement.value.args)
    if len(calls) != 1:
        return None
    filename, function, statement = calls[0]
    module = segment_of(filename, statement.value.func.value)
    location = statement_location(filename, statement, role="eval",
                                  note=f"puts {module} in evaluation mode; nothing puts it back in training mode")
    if isinstance(function, ast.Module):
        if filename != step_file or step.lineno < statement.end_lineno or step.lineno != step.end_lineno:
            return None
        help = Suggestion(f"put {module} back in training mode before the training step ({module}.train()): its "
                          "forward turns gradients on only in training mode",
                          f"{module}.train()\n{segment_of(step_file, step)}", statement_location(step_file, step))
        return location, help
    last = function.body[-1]
    if last.lineno != last.end_lineno or isinstance(last, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
        return None
    last_text = segment_of(filename, last)
    new_text = f"{module}.train()\n{last_text}" if isinstance(last, ast.Return) else f"{last_text}\n{module}.train()"
    help = Suggestion(f"put {module} back in training mode when {function.name}() is done ({module}.train()): its "
                      "forward turns gradients on only in training mode", new_text,
                      statement_location(filename, last))
    return location, help


# ---- a grad-off block still running when the gradient is asked for --------------------------

_GRAD_OFF = ("no_grad", "inference_mode")


def grad_off_with_around(filename: str, line: int) -> ast.With | None:
    """The innermost `with` statement around `line` (in its body) that turns gradients off:
    no_grad / inference_mode (whatever its argument: the caller checks the mode at run time) or
    set_grad_enabled(False)."""
    tree = parse_file(filename)
    best = None
    for node in walk_covering(tree, line) if tree is not None else ():
        if not isinstance(node, ast.With) or not node.body or line < node.body[0].lineno:
            continue
        for item in node.items:
            calls = [item.context_expr]
            binding = _context_binding(tree, node, item.context_expr)
            if binding is not None:
                # `with context:` where `context = torch.no_grad() if training else nullcontext()`.
                value = binding.value
                calls = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            if any(_turns_grad_off(call) for call in calls) and (best is None or node.lineno > best.lineno):
                best = node
    return best


def _turns_grad_off(call: ast.AST) -> bool:
    from autograd_doctor.diagnosis.source import call_name

    if not isinstance(call, ast.Call):
        return False
    name = call_name(call)
    off = name in _GRAD_OFF and not (call.args and isinstance(call.args[0], ast.Constant)
                                     and call.args[0].value is False)
    return off or (name == "set_grad_enabled" and bool(call.args) and isinstance(call.args[0], ast.Constant)
                   and call.args[0].value is False)


def _context_binding(tree: ast.Module, block: ast.With, expression: ast.expr) -> ast.Assign | None:
    """The one-line assignment of the name a `with` statement enters (`with context:`), the last one
    before the block in the same function, whose value is a call or a conditional expression."""
    if not isinstance(expression, ast.Name):
        return None
    scope = next((node for node in walk_covering(tree, block.lineno)
                  if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.lineno < block.lineno), tree)
    found = None
    for node in ast.walk(scope):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == expression.id and node.lineno < block.lineno
                and node.lineno == node.end_lineno and isinstance(node.value, (ast.Call, ast.IfExp))
                and (found is None or node.lineno > found.lineno)):
            found = node
    return found


def running_grad_off_block(frame) -> tuple[str, ast.With] | None:
    """(file, with statement) of the innermost grad-off block that a live user frame, from
    `frame` outwards, is running, when gradients are off right now (the run-time fact)."""
    from autograd_doctor.recording.frames import is_internal_file

    if torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not is_internal_file(filename):
            block = grad_off_with_around(filename, frame.f_lineno)
            if block is not None:
                return filename, block
        frame = frame.f_back
    return None


def running_block_parts(found: tuple[str, ast.With], loss_name: str) -> tuple[Location, list[str], list[Suggestion]]:
    """(primary, notes, helps) for a gradient asked for inside a grad-off block still running."""
    filename, block = found
    chosen = _chosen_the_wrong_way(filename, block, loss_name)
    if chosen is not None:
        return chosen
    header = segment_of(filename, block.items[0].context_expr) if len(block.items) == 1 else "torch.no_grad()"
    primary = statement_location(filename, block, role="cut",
                                 note="gradients are off in this block, and the gradient is asked for inside it")
    primary.end_line, primary.end_column = primary.line, None
    notes = [f"{loss_name} is computed and differentiated while `with {header}:` (line {block.lineno}) is running: "
             "autograd records nothing there, so nothing has grad history"]
    body = _body_instead(filename, block)
    helps = []
    if body is not None:
        helps.append(Suggestion(f"run this with gradients on (remove `with {header}:`): the code inside computes "
                                "gradients", body, statement_location(filename, block)))
    else:
        helps.append(Suggestion(f"compute the gradients outside `with {header}:` (line {block.lineno}), or turn "
                                "gradients on around that code (with torch.enable_grad():)"))
    return primary, notes, helps


def _chosen_the_wrong_way(filename: str, block: ast.With, loss_name: str):
    """(primary, notes, helps) when the block enters a name bound by a conditional expression with
    one branch that turns gradients off and one that does not (`context = torch.no_grad() if
    training else nullcontext()`): gradients are off now, while the gradient is asked for inside the
    block, so the condition picked the grad-off branch for the call that trains. The branches
    swapped give this call gradients and the other call the grad-off context; values stay the
    same. None for any other block."""
    if len(block.items) != 1:
        return None
    binding = _context_binding(parse_file(filename), block, block.items[0].context_expr)
    value = binding.value if binding is not None else None
    if not isinstance(value, ast.IfExp) or _turns_grad_off(value.body) == _turns_grad_off(value.orelse):
        return None
    texts = [segment_of(filename, node) for node in (value.test, value.body, value.orelse)]
    name = binding.targets[0].id
    off, on = (texts[1], texts[2]) if _turns_grad_off(value.body) else (texts[2], texts[1])
    primary = statement_location(filename, binding, role="cut",
                                 note=f"{off} is chosen here, for the call that asks for the gradient")
    notes = [f"{loss_name} is computed and differentiated inside `with {name}:` (line {block.lineno}), and "
             f"{name} is {off} for this call: the condition `{texts[0]}` picks the branch that turns gradients off "
             "where they are needed"]
    swapped = f"{name} = {texts[2]} if {texts[0]} else {texts[1]}"
    helps = [Suggestion(f"swap the two branches, so that {on} is used where the gradient is asked for and {off} "
                        "for the other calls", swapped, statement_location(filename, binding))]
    return primary, notes, helps


def segment_of(filename: str, node: ast.AST) -> str:
    from autograd_doctor.diagnosis.source import segment

    return segment(filename, node) or ast.unparse(node)


# ---- a reentrant checkpoint whose inputs do not require grad --------------------------------


@dataclass
class ReentrantCheckpoint:
    """`checkpoint(fn, h, use_reentrant=True)` in a module's code: it runs `fn` under no_grad and
    gives the result grad history only through inputs that require grad, never through the
    parameters `fn` uses. With frozen embeddings in front, nothing inside trains."""

    filename: str
    statement: ast.stmt
    call: ast.Call
    module: str


def _is_reentrant_checkpoint(call: ast.Call) -> bool:
    from autograd_doctor.diagnosis.source import call_name

    if call_name(call) != "checkpoint":
        return False
    for keyword in call.keywords:
        if keyword.arg == "use_reentrant":
            return isinstance(keyword.value, ast.Constant) and keyword.value.value is True
    return True  # PyTorch's default (with a warning) is the reentrant variant


def find_reentrant_checkpoint(statement: ast.stmt, frame_locals: dict | None) -> ReentrantCheckpoint | None:
    """A reentrant checkpoint call in the code of a trainable module that the cut statement uses."""

    if frame_locals is None:
        return None
    for name in loaded_names(statement):
        module = frame_locals.get(name)
        if not isinstance(module, torch.nn.Module):
            continue
        try:
            if not any(p.requires_grad for p in module.parameters()):
                continue
            classes = {type(child) for child in module.modules()}
        except Exception:
            continue
        for cls in classes:
            definition = class_definition(cls)
            if definition is None or is_internal_file(definition[0]):
                continue
            found = _checkpoint_in_class(definition[1])
            if found is not None:
                return ReentrantCheckpoint(definition[0], found[0], found[1], name)
    return None


def _checkpoint_in_class(definition: ast.ClassDef) -> tuple[ast.stmt, ast.Call] | None:
    for statement in ast.walk(definition):
        if isinstance(statement, ast.stmt) and not isinstance(
                statement, (ast.FunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
            for call in ast.walk(statement):
                if isinstance(call, ast.Call) and _is_reentrant_checkpoint(call):
                    return statement, call
    return None


def reentrant_checkpoint_parts(found: ReentrantCheckpoint, loss_name: str) -> tuple[Location, list[str],
                                                                                    list[Suggestion]]:
    """(primary, notes, helps) for a path cut by a reentrant checkpoint."""
    from autograd_doctor.diagnosis.source import replace_node_text, segment

    call = found.call
    primary = statement_location(found.filename, found.statement, role="cut",
                                 note="the reentrant checkpoint gives its result grad history only through inputs "
                                      "that require grad")
    notes = [f"{loss_name} has no grad_fn although {found.module} has parameters that require grad: a reentrant "
             "checkpoint (use_reentrant=True, PyTorch's default) runs its function under no_grad and connects the "
             "result to the graph only through its tensor inputs; when none of them requires grad (frozen "
             "embeddings in front), the parameters inside get no gradient"]
    keywords = [segment(found.filename, k) for k in call.keywords if k.arg != "use_reentrant"]
    arguments = [segment(found.filename, a) for a in call.args] + keywords + ["use_reentrant=False"]
    if None in arguments:
        return primary, notes, [Suggestion("pass use_reentrant=False to checkpoint(), which tracks the parameters "
                                           "the function uses")]
    new_call = f"{segment(found.filename, call.func)}({', '.join(arguments)})"
    replacement = replace_node_text(found.filename, found.statement, call, new_call)
    helps = [Suggestion("use the non-reentrant checkpoint (use_reentrant=False): it records the parameters the "
                        "function uses, whatever its inputs (the reentrant one needs an input that requires "
                        "grad, which model.enable_input_require_grads() gives Hugging Face models)",
                        replacement, statement_location(found.filename, found.statement))]
    return primary, notes, helps


# ---- a reentrant checkpoint, run with gradients on, whose parameters got none ----------------


def _checkpoint_call(filename: str, statement: ast.stmt) -> ast.Call | None:
    from autograd_doctor.diagnosis.source import call_name

    return next((node for node in ast.walk(statement) if isinstance(node, ast.Call)
                 and call_name(node) in ("checkpoint", "checkpoint_sequential")), None)


def unconnected_checkpoint_diagnosis(recorder, call, args: tuple, kwargs: dict):
    """AD301 (a warning) after a backward() that succeeded: a reentrant checkpoint called since
    the previous backward() with gradients on, on inputs none of which requires grad
    (recording/checkpoint_calls.py), and none of its function's parameters was reached by this
    backward(): they got no gradient from it. None otherwise."""
    from autograd_doctor.analysis.source_scope import backward_roots, reached_leaves
    from autograd_doctor.diagnosis import codes
    from autograd_doctor.diagnosis.model import Diagnosis
    from autograd_doctor.diagnosis.source import location_of, segment

    entries = _logged_before(recorder, "unconnected_checkpoints", call)
    if not entries:
        return None
    roots = backward_roots(args, kwargs)
    reached = reached_leaves(roots) if entries and roots else set()
    if not reached:
        return None
    for entry in reversed(entries):
        parameters = [reference() for reference in entry.parameters]
        site = entry.site
        if site is None or not parameters or any(p is None or id(p) in reached for p in parameters):
            continue
        scope = Scope(site.filename, site.lineno)
        statement = scope.statement_at(site.lineno) if scope.tree is not None else None
        checkpoint_call = _checkpoint_call(site.filename, statement) if statement is not None else None
        if checkpoint_call is None:
            continue
        function = segment(site.filename, checkpoint_call.args[0]) if checkpoint_call.args else entry.function
        found = ReentrantCheckpoint(site.filename, statement, checkpoint_call, function)
        primary, _notes, helps = reentrant_checkpoint_parts(found, "the loss")
        primary.note = ("this reentrant checkpoint ran with gradients on, but none of its inputs requires grad: its "
                        "result has no grad history")
        notes = [f"the parameters of {function} ({entry.function}) require grad, but this backward() did not reach "
                 "them: a reentrant checkpoint (use_reentrant=True) runs its function under no_grad and connects "
                 "the result to the graph only through its tensor inputs, so when none of them requires grad "
                 "(the data, frozen embeddings) the function's parameters get no gradient, while the rest of the "
                 "model trains (PyTorch only warns: \"None of the inputs have requires_grad=True\")"]
        related = [location_of(call.site, role="backward", note=f"{function}'s parameters got no gradient from "
                                                                "this backward()")]
        # Explained here: the after-backward check of parameters left without a gradient skips them.
        explained = recorder.state.setdefault("gradient_path_warned", IdentitySet())
        for module in (reference() for reference in entry.modules):
            if module is not None:
                explained.update(module.parameters())
        return Diagnosis(code=codes.GRADIENT_PATH_CUT,
                         title=f"the parameters of {function} got no gradient: the gradient path from the loss was cut",
                         severity="warning", primary=primary, related=[r for r in related if r is not None],
                         notes=notes, help=helps, extra={"cut": "reentrant_checkpoint", "cut_variable": function})
    return None


def _logged_before(recorder, key: str, call) -> list:
    """The checkpoint calls recording/checkpoint_calls.py logged under ``key`` before this
    backward() (each is looked at once: taken out of the log)."""
    log = recorder.state.get(key)
    if not log or call is None:
        return []
    entries = [entry for entry in log if entry.seq < call.seq]
    for entry in entries:
        log.remove(entry)
    return entries


# ---- a checkpoint with preserve_rng_state=False around random numbers -------------------------


def unreplayed_random_checkpoint_diagnosis(recorder, call, args: tuple, kwargs: dict):
    """AD168 (a warning) after a backward() that succeeded: a checkpoint (reentrant or not) called
    since the previous backward() with `preserve_rng_state=False`, whose function drew random numbers in the
    forward (recording/checkpoint_calls.py compares the generators' states around the call). This
    backward() recomputed the function with other random numbers (another dropout mask): the
    gradients are those of a forward that did not run. The help passes preserve_rng_state=True,
    which replays the forward's random numbers: the same forward values, and the gradients of the
    forward that ran. None otherwise."""
    from autograd_doctor.diagnosis import codes
    from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
    from autograd_doctor.diagnosis.source import location_of, replace_node_text, segment

    entries = _logged_before(recorder, "unreplayed_random_checkpoints", call)
    if not entries:
        return None
    reported = recorder.state.setdefault("unreplayed_random_checkpoints_reported", set())
    for entry in entries:
        site = entry.site
        if site is None or (site.filename, site.lineno) in reported:
            continue
        scope = Scope(site.filename, site.lineno)
        statement = scope.statement_at(site.lineno) if scope.tree is not None else None
        checkpoint_call = _checkpoint_call(site.filename, statement) if statement is not None else None
        if checkpoint_call is None:
            continue
        reported.add((site.filename, site.lineno))
        function = segment(site.filename, checkpoint_call.args[0]) if checkpoint_call.args else entry.function
        primary = statement_location(site.filename, statement, role="checkpoint",
                                     note="preserve_rng_state=False: backward() recomputes the function with other "
                                          "random numbers than its forward drew")
        kind = "reentrant checkpoint" if getattr(entry, "reentrant", True) else "checkpoint (use_reentrant=False)"
        notes = [f"{function} ({entry.function}) drew random numbers in the forward (dropout in training mode, "
                 f"torch.rand...): the {kind} keeps none of its activations and runs it again in "
                 "backward(), and without the forward's generator state that run draws other numbers (another "
                 "dropout mask), so the gradients are those of a forward that did not run; nothing fails"]
        related = [location_of(call.site, role="backward", note=f"recomputed {function} with other random numbers")]
        keyword = next((k for k in checkpoint_call.keywords if k.arg == "preserve_rng_state"), None)
        helps = [Suggestion("pass preserve_rng_state=True (checkpoint's default): the recomputation replays the "
                            "forward's random numbers, so the forward values stay the same and the gradients are "
                            "those of the forward that ran")]
        if keyword is not None:
            replacement = replace_node_text(site.filename, statement, keyword.value, "True")
            if replacement is not None:
                helps = [Suggestion(helps[0].message, replacement, statement_location(site.filename, statement))]
        return Diagnosis(code=codes.CHECKPOINT_RANDOM_NOT_REPLAYED,
                         title=f"{function} draws random numbers inside a checkpoint that does not replay them: "
                               "its gradients belong to another forward",
                         severity="warning", primary=primary, related=[r for r in related if r is not None],
                         notes=notes, help=helps)
    return None
