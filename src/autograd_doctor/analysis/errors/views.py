"""Views and in-place writes: views made under no_grad / inference_mode then written (or
their base written), views returned by custom Functions written in place, detach_() of views."""

from __future__ import annotations

import ast

from autograd_doctor.analysis.live_values import readable_grad_fn
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.describe import written_name
from autograd_doctor.recording import switches
from autograd_doctor.analysis.errors.build import (
    diagnosis, find_calls, statement_change, text_of, user_statement,
)
from autograd_doctor.analysis.errors.requires_grad import read_after
from autograd_doctor.analysis.errors.context import (
    ErrorContext, last_assignment, line_location, local_name_of, module_attribute_assignment, value_of,
    with_block_around,
)
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import function_definition, location_of, replace_node_text, statement_at, statement_location


# The context managers that turn gradients off, by the name PyTorch's message uses.
MODE_CONTEXTS = {"no_grad": ("no_grad", "set_grad_enabled"), "inference_mode": ("inference_mode",)}


def _mode_block(filename: str, line: int, kind: str, note: str):
    """The `with torch.<kind>()` block around `line`, else where `kind` was last entered."""
    block = with_block_around(filename, line, MODE_CONTEXTS[kind])
    if block is not None:
        return line_location(filename, block.lineno, role=kind, note=note)
    recorded = [(entry.filename, entry.line) for entry in switches.mode_entries(kind)]
    if kind == "no_grad":
        switch = switches.last_switch_off()
        if switch is not None:
            recorded.insert(0, (switch.site.filename, switch.site.lineno))
    # Prefer the switch in the same file just above the view; else the most recent one.
    above = [(f, n) for f, n in recorded if f == filename and n <= line]
    chosen = max(above, key=lambda site: site[1]) if above else (recorded[0] if recorded else None)
    return line_location(chosen[0], chosen[1], role=kind, note=note) if chosen else None


def view_made_in_mode_written(context: ErrorContext, already):
    """A view created under no_grad / inference_mode, then written with grad mode on."""
    kind = "inference_mode" if "inference mode" in context.message else "no_grad"
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    write = context.raise_location(role="write", note="in-place write with grad mode on")
    name = written_name(filename, line)
    made = last_assignment(filename, name, line) if name and name.isidentifier() else None
    view = statement_location(filename, made, role="view", note=f"{name} is made here, a view, under {kind}") \
        if made is not None else None
    decorated = _decorated_function_called(filename, made, kind) if made is not None else None
    if decorated is not None:
        # No block around the view: a function decorated with @torch.no_grad() returned it.
        block = line_location(decorated.filename, decorated.line, role=kind,
                              note=f"{decorated.function}() runs under @torch.{kind}() and returns the view")
        helps = [Suggestion(
            f"decide whether the write should be recorded: if yes, remove @torch.{kind}() from "
            f"{decorated.function}(), which only makes the view; if not, do the write inside a {kind} block too")]
        recorded = _decorator_of_view_helper_removed(frame, name, decorated, kind)
        if recorded is not None:
            helps.insert(0, recorded)
        return diagnosis(codes.VIEW_MODE_INPLACE, write, [view, block], [
            f"{name} is a view made inside {decorated.function}(), which runs with gradients off; the write "
            "happens with them on: PyTorch cannot tell whether the write should be part of the graph"], helps)
    block = _mode_block(filename, made.lineno if made is not None else line, kind, f"{kind} starts here")
    helps = [Suggestion(
        f"decide whether the write should be recorded: if yes, make the view outside the {kind} block "
        f"(move `{text_of(filename, made) if made is not None else 'the view'}` after it); if not, do the write inside the same "
        f"{kind} block as the view")]
    notes = ["the view was made while gradients were off, the write happens while they are on: PyTorch "
             "cannot tell whether the write should be part of the graph"]
    move = _write_into_leaf_moved_into_block(frame, filename, line, name, made, kind) if made is not None else None
    if move is None and made is not None:
        move = _view_of_graph_tensor_made_before_block(frame, filename, name, made, kind)
    if move is not None:
        helps.insert(0, move)
    return diagnosis(codes.VIEW_MODE_INPLACE, write, [view, block], notes, helps)


def _write_into_leaf_moved_into_block(frame, filename: str, line: int, name: str | None, made: ast.stmt, kind: str):
    """The write moved into the `with` block that made the view, when the view's base is a leaf that
    requires grad (a parameter): grad mode can never write into it in place ("a leaf Variable that
    requires grad is being used in an in-place operation"), so the write is not meant to be recorded.
    Only for a one-line write that is the statement right after that block, at the block's own
    indentation; else None."""
    import torch

    tensor = frame.f_locals.get(name) if name else None
    base = getattr(tensor, "_base", None) if isinstance(tensor, torch.Tensor) else None
    if not (isinstance(base, torch.Tensor) and base.is_leaf and base.requires_grad):
        return None
    block = with_block_around(filename, made.lineno, MODE_CONTEXTS[kind])
    statement = statement_at(filename, line)
    if block is None or statement is None or statement.lineno != statement.end_lineno:
        return None
    if statement.col_offset != block.col_offset or not block.body:
        return None
    from autograd_doctor.diagnosis.source import source_line
    between = [source_line(filename, n).strip() for n in range(block.end_lineno + 1, statement.lineno)]
    if any(text and not text.startswith("#") for text in between):
        return None
    text = text_of(filename, statement)
    if not text:
        return None
    body_indent = " " * (block.body[0].col_offset - block.col_offset)
    return Suggestion(
        f"do the write inside the {kind} block, with the view: {name}'s base is a leaf that requires grad (a "
        "parameter), which cannot be written in place with grad mode on, so the write is not meant to be "
        "recorded", replacement=body_indent + text, location=statement_location(filename, statement))


def _base_in_graph(frame, name: str | None):
    """The base of the view `name` holds in `frame` when that base is a tensor of the graph (computed
    with gradients: it requires grad and is not a leaf); else None. Whichever way the user decides,
    the view's write goes into that base's memory and later readers of the base see it; only a
    recorded write keeps the gradient consistent with those values. A leaf base (a parameter) or a
    base without gradient leaves the question open: there the write reaching the base is in doubt."""
    import torch

    tensor = frame.f_locals.get(name) if name else None
    base = getattr(tensor, "_base", None) if isinstance(tensor, torch.Tensor) else None
    if isinstance(base, torch.Tensor) and base.requires_grad and base.grad_fn is not None:
        return base
    return None


def _view_of_graph_tensor_made_before_block(frame, filename: str, name: str | None, made: ast.stmt, kind: str):
    """The view's statement moved above the `with` block that made it with gradients off, when the
    view's base is a tensor of the graph (`_base_in_graph`). A view reads its base's memory, so where
    it is made changes no value, only whether autograd records it. Only for a statement of the block's
    own body, on lines of its own, that reads no name the block assigned before it and whose names no
    earlier statement of the block reads; the replacement is the whole `with` statement (the block
    dropped when the view was its only statement). None otherwise."""
    from autograd_doctor.diagnosis.source import source_line
    from autograd_doctor.recording.frames import in_installed_package

    if in_installed_package(filename) or _base_in_graph(frame, name) is None:
        return None
    block = with_block_around(filename, made.lineno, MODE_CONTEXTS[kind])
    if block is None or not any(statement is made for statement in block.body):
        return None
    if block.body[0].lineno == block.lineno:
        return None
    body = block.body
    index = next(i for i, statement in enumerate(body) if statement is made)
    if (index > 0 and body[index - 1].end_lineno >= made.lineno) or \
            (index + 1 < len(body) and body[index + 1].lineno <= made.end_lineno):
        return None
    targets = {node.id for node in ast.walk(made) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    reads = {node.id for node in ast.walk(made) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    for earlier in body[:index]:
        names = {node.id: node.ctx for node in ast.walk(earlier) if isinstance(node, ast.Name)}
        if any(isinstance(names.get(n), ast.Store) for n in reads) or targets & set(names):
            return None
    lines = [source_line(filename, n) for n in range(block.lineno, block.end_lineno + 1)]
    outer = block.col_offset
    if any(text.strip() and len(text) - len(text.lstrip()) < outer for text in lines):
        return None
    relative = [text[outer:] for text in lines]
    first, last = made.lineno - block.lineno, made.end_lineno - block.lineno
    shift = made.col_offset - outer
    view_lines = [text[shift:] if text[:shift].strip() == "" else text.lstrip() for text in relative[first:last + 1]]
    rest = relative[:first] + relative[last + 1:]
    replacement = view_lines + (rest if len(body) > 1 else [])
    while replacement and not replacement[-1].strip():
        replacement.pop()
    view_text = (text_of(filename, made) or "").strip()
    described = _base_name(frame, name) or "its base"
    where = "above the" if len(body) > 1 else "out of the"
    return Suggestion(
        f"make the view with gradients on: move `{view_text}` {where} {kind} block; {described} is computed "
        "with gradients, and the write goes into its memory whichever way the view is made, so only a recorded "
        "write keeps its gradient right (a view reads its base's memory: moving it changes no value)",
        replacement="\n".join(replacement), location=statement_location(filename, block))


_VIEW_METHODS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "permute", "transpose", "swapaxes", "swapdims", "t", "T", "mT",
    "narrow", "select", "unflatten", "flatten", "unfold", "expand", "expand_as", "squeeze", "unsqueeze",
    "diagonal", "movedim", "moveaxis", "as_strided", "real", "imag", "contiguous"})
# What a view's arguments may read of a tensor: its sizes.
_SIZE_READS = frozenset({"shape", "ndim", "size", "dim"})


def _returns_view_of_argument(function: ast.FunctionDef) -> bool:
    """Whether the function's whole body (a docstring aside) is `return <arg>.<view op>(...)...`,
    built only from its arguments, constants and view methods or indexing."""
    body = list(function.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    arguments = {a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}

    def plain(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in arguments
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Attribute):
            return plain(node.value) and (node.attr in _VIEW_METHODS or node.attr in _SIZE_READS)
        if isinstance(node, ast.Call):
            return isinstance(node.func, ast.Attribute) and plain(node.func) and \
                all(plain(a) for a in node.args) and all(plain(k.value) for k in node.keywords)
        if isinstance(node, ast.Subscript):
            return plain(node.value) and plain(node.slice)
        if isinstance(node, (ast.Tuple, ast.List)):
            return all(plain(e) for e in node.elts)
        if isinstance(node, ast.Slice):
            return all(part is None or plain(part) for part in (node.lower, node.upper, node.step))
        if isinstance(node, ast.UnaryOp):
            return plain(node.operand)
        if isinstance(node, ast.BinOp):
            return plain(node.left) and plain(node.right)
        return False

    root = body[0].value
    return plain(root) and any(isinstance(n, ast.Name) and n.id in arguments for n in ast.walk(root))


def _decorator_of_view_helper_removed(frame, name: str | None, decorated, kind: str):
    """@torch.<kind>() removed from a helper whose whole body returns a view of its argument, when the
    view written is of a tensor of the graph (`_base_in_graph`): the helper's values stay the same, its
    view is recorded. None otherwise (a helper that also computes or writes something keeps the advice)."""
    from autograd_doctor.diagnosis.source import parse_file
    from autograd_doctor.analysis.errors.grad_api import _decorator_deletion

    if _base_in_graph(frame, name) is None:
        return None
    tree = parse_file(decorated.filename)
    if tree is None:
        return None
    function = next((node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and node.name == decorated.function
                     and any(d.lineno == decorated.line for d in node.decorator_list)), None)
    if function is None or not _returns_view_of_argument(function):
        return None
    return _decorator_deletion(
        decorated.filename, decorated.line,
        f"make the view with gradients on: remove @torch.{kind}() from {decorated.function}(), whose whole body "
        f"returns a view of its argument (the same values, now recorded); the view written is of a tensor computed "
        "with gradients, whose memory the write changes either way, so only a recorded write keeps its gradient right")


def _decorated_function_called(filename: str, made: ast.stmt, kind: str):
    """The recorded @torch.<kind>() entry of a function that `made` calls, when `made` is not
    inside a `with` block of that kind; else None."""
    if with_block_around(filename, made.lineno, MODE_CONTEXTS[kind]) is not None:
        return None
    called = {call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", None)
              for call in ast.walk(made) if isinstance(call, ast.Call)}
    return next((entry for entry in switches.mode_entries(kind) if entry.decorator and entry.function in called), None)


def view_used_after_base_written(context: ErrorContext, already):
    """A view made under no_grad, whose base was then written with grad mode on, is used."""
    kind = "inference_mode" if "inference mode" in context.message else "no_grad"
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    use = context.raise_location(role="use", note="the view is used here")
    statement = statement_at(filename, line)
    names = sorted({n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}) if statement else []
    view_name, made = None, None
    for name in names:
        assignment = last_assignment(filename, name, line)
        if assignment is not None and with_block_around(filename, assignment.lineno, MODE_CONTEXTS[kind]) is not None:
            view_name, made = name, assignment
            break
    if made is None:
        return diagnosis(codes.VIEW_MODE_BASE_MODIFIED, use, notes=[
            f"a view used on this line was made under {kind}, and its base was written in place afterwards"],
            help=[Suggestion(f"make the view after the write, outside the {kind} block")])
    view = statement_location(filename, made, role="view", note=f"{view_name} is made here, a view, under {kind}")
    block = _mode_block(filename, made.lineno, kind, f"{kind} starts here")
    base_name = _base_name(frame, view_name)
    write = None
    if base_name:
        for number in range(made.end_lineno + 1, line):
            if written_name(filename, number) == base_name:
                write = line_location(filename, number, role="write", note=f"{base_name}, the view's base, is "
                                      "written in place here, with grad mode on")
    primary = write or use
    helps = [Suggestion(f"make the view after the write and outside the {kind} block (move `{text_of(filename, made)}` "
                        f"below line {write.line if write else 'the write'}), so it sees the new values with "
                        "their gradient history")]
    notes = [f"{view_name} shares memory with {base_name or 'its base'}; the write changed it while autograd "
             f"cannot tell whether it should be recorded for a view made under {kind}"]
    return diagnosis(codes.VIEW_MODE_BASE_MODIFIED, primary, [view, block, use], notes, helps)


def multi_output_base_modified(context: ErrorContext, already):
    """An output of split/chunk/unbind is used after its base (or a sibling) was written in place."""
    import torch

    from autograd_doctor.analysis.fixes import WriteFacts, write_fixes

    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    use = context.raise_location(role="use", note="a piece is used here; its base was written in place above")
    statement = statement_at(filename, line)
    names = [n.id for n in ast.walk(statement) if isinstance(n, ast.Name)] if statement is not None else []
    for name in dict.fromkeys(names):
        view = frame.f_locals.get(name, frame.f_globals.get(name))
        base = getattr(view, "_base", None) if isinstance(view, torch.Tensor) else None
        made = last_assignment(filename, name, line) if base is not None else None
        if made is None:
            continue
        base_name = local_name_of(frame, base)
        written = _write_into(filename, frame, base, base_name, made.end_lineno + 1, line)
        if written is None:
            continue
        write_line, written_text = written
        pieces = statement_location(filename, made, role="pieces", note=f"{name} is one of several views of "
                                    f"{base_name or 'one tensor'}, made here")
        write_statement = statement_at(filename, write_line)
        write = statement_location(filename, write_statement, role="write",
                                   note=f"writes {written_text} in place after the pieces were made")
        inside = _write_inside_called_function(frame, write_statement, base)
        if inside is not None:
            # `scores = add_bias(scores, b)` where the function writes its parameter in place (`scores += b`)
            # and returns it: the write is that line, and out of place there the caller still gets the sum.
            helper_file, helper_statement, returned = inside
            write = statement_location(helper_file, helper_statement, role="write",
                                       note=f"writes {written_text} in place (in the function called at line "
                                            f"{write_line}) after the pieces were made")
            helps = [s for s in write_fixes(helper_file, helper_statement, helper_statement.lineno, None, WriteFacts())
                     if s.replacement and s.location is not None][:1] if returned else []
        else:
            helps = [s for s in write_fixes(filename, write_statement, write_line, None, WriteFacts())
                     if s.replacement and s.location is not None][:1]
        for suggestion in helps:
            suggestion.message = (f"write out of place: {written_text} then refers to a new tensor, and the pieces "
                                  "keep the values they were made with")
        if not helps and inside is None:
            helps = [s for s in [_out_of_place_module(frame, filename, write_statement)] if s is not None]
        helps.append(Suggestion(f"or, if the pieces should see the write, make them after it (move "
                                f"`{text_of(filename, made)}` below line {write_line})"))
        notes = [f"{name} shares one graph node with the other outputs of the same call; after an in-place write "
                 f"into {written_text}, autograd cannot rebuild that node, so it refuses to use {name}"]
        return diagnosis(codes.MULTI_OUTPUT_BASE_MODIFIED, write, [pieces, use], notes, helps)
    return diagnosis(codes.MULTI_OUTPUT_BASE_MODIFIED, use, notes=[
        "a view used on this line is an output of split/chunk/unbind whose base was written in place after it "
        "was made"], help=[Suggestion("write the base out of place (h = h.mul(3) instead of h.mul_(3)), or "
                                      "split after the write")])


def saved_piece_base_written(write, node_name: str, slot: str, backward_stack) -> object | None:
    """AD138 raised inside backward(): a piece of split/chunk/unbind (`a, b = t`, iterating a
    tensor) that a node saved, whose base the user's `write` (the newest logged write into that
    memory, so one after the pieces were made) modified in place. The write is the line named;
    its out-of-place form leaves the pieces' base as it was."""
    from autograd_doctor.analysis.fixes import WriteFacts, write_fixes

    site = write.stack[0] if getattr(write, "stack", None) else None
    if site is None:
        return None
    filename, line = site.filename, site.lineno
    write_statement = statement_at(filename, line)
    if write_statement is None:
        return None
    written = text_of(filename, write_statement)
    primary = statement_location(filename, write_statement, role="write", note="writes in place into a tensor "
                                 "whose pieces (split/chunk/unbind outputs) autograd saved")
    use = location_of(backward_stack[0], role="backward", note=f"{node_name} needs its saved {slot}, one of those "
                      "pieces") if backward_stack else None
    facts = WriteFacts(value_is_scalar=getattr(write, "value_is_scalar", None),
                       index_is_bool_mask=bool(getattr(write, "index_is_bool_mask", False)))
    facts.index_kinds = getattr(write, "index_kinds", None)
    facts.mask_missing_dims = getattr(write, "mask_missing_dims", None)
    helps = [h for h in write_fixes(filename, write_statement, line, None, facts)
             if h.replacement and h.location is not None and not h.keeps_write][:1]
    for suggestion in helps:
        suggestion.message = ("write out of place: the name then refers to a new tensor, and the pieces autograd "
                              "saved keep the base they were made from")
    helps.append(Suggestion("or take the pieces from a copy (`a, b, c = t.clone()`), so that later writes into t "
                            "do not reach them"))
    notes = [f"{node_name} saved {slot}, an output of a function that returns several views (split, chunk, unbind, "
             "or unpacking a tensor: `a, b = t`); autograd cannot rebuild such a view once its base is written in "
             "place, so backward() refuses to use it",
             f"`{written}` is the newest write into that memory: it happened after the pieces were made"]
    return diagnosis(codes.MULTI_OUTPUT_BASE_MODIFIED, primary, [use], notes, helps)


def _out_of_place_module(frame, filename: str, statement: ast.stmt) -> Suggestion | None:
    """For a write made by a module built with inplace=True (`h = self.act(h)`, `self.act =
    nn.ReLU(inplace=True)`): the module built without it, where it is built. It computes the same
    values into a new tensor, so the tensor it was given keeps its own."""
    import torch

    for call in (node for node in ast.walk(statement) if isinstance(node, ast.Call)):
        module = value_of(frame, call.func)
        if not isinstance(module, torch.nn.Module) or getattr(module, "inplace", False) is not True:
            continue
        if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name):
            owner = value_of(frame, call.func.value)
            made_file, made = module_attribute_assignment(owner, call.func.attr)
        elif isinstance(call.func, ast.Name):
            made_file, made = filename, last_assignment(filename, call.func.id, statement.lineno)
        else:
            continue
        built = [c for c in ast.walk(made) if isinstance(c, ast.Call) and any(
            k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True for k in c.keywords)] \
            if made is not None else []
        if len(built) != 1:
            return None
        plain = ast.Call(func=built[0].func, args=built[0].args,
                         keywords=[k for k in built[0].keywords if k.arg != "inplace"])
        class_name = type(module).__name__
        return Suggestion(f"make the {class_name} out of place (drop inplace=True): it computes the same values into "
                          "a new tensor, and the pieces keep the values they were made with",
                          replace_node_text(made_file, made, built[0], ast.unparse(plain)),
                          statement_location(made_file, made))
    return None


def _write_inside_called_function(frame, statement: ast.stmt | None, base):
    """(file, statement, returned) of the one in-place write (`x += b`, `x[i] = v`, `x.mul_(s)`) into its
    parameter by a function of the user's that `statement` calls with `base` (or a piece of it) as that
    argument; `returned` when the function ends with `return <parameter>` and the statement binds the
    result to the name it passed (`scores = add_bias(scores, b)`), so that the write can be made out
    of place there. None when the call is not the user's function or it has no such single write."""
    import inspect

    import torch

    from autograd_doctor.recording.frames import is_internal_file

    value = statement.value if isinstance(statement, (ast.Assign, ast.Expr)) else None
    if not isinstance(value, ast.Call):
        return None
    function = value_of(frame, value.func)
    code = getattr(function, "__code__", None)
    if code is None or is_internal_file(code.co_filename):
        return None
    positions = [i for i, argument in enumerate(value.args)
                 if isinstance(t := value_of(frame, argument), torch.Tensor) and (t is base or t._base is base)]
    if len(positions) != 1:
        return None
    offset = 1 if inspect.ismethod(function) else 0
    parameters = code.co_varnames[:code.co_argcount]
    if positions[0] + offset >= len(parameters):
        return None
    parameter = parameters[positions[0] + offset]
    definition = function_definition(code)
    if definition is None:
        return None

    def root(node):
        while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    writes, rebound = [], False
    for node in ast.walk(definition):
        if isinstance(node, ast.AugAssign) and isinstance(node.target, (ast.Name, ast.Subscript)) \
                and root(node.target) == parameter:
            writes.append(node)
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == parameter for t in node.targets):
                rebound = True
            elif any(isinstance(t, ast.Subscript) and root(t) == parameter for t in node.targets):
                writes.append(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr.endswith("_") \
                and not node.value.func.attr.startswith("_") and root(node.value.func.value) == parameter:
            writes.append(node)
    if len(writes) != 1 or rebound:
        return None
    last = definition.body[-1]
    passed = value.args[positions[0]]
    returned = (isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == parameter
                and isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(passed, ast.Name) and isinstance(statement.targets[0], ast.Name)
                and statement.targets[0].id == passed.id)
    return code.co_filename, writes[0], returned


def _write_into(filename: str, frame, base, base_name: str | None, first: int, last: int):
    """(line, written text) of the last in-place write, between two lines, into `base` or a
    tensor sharing its memory (a sibling piece)."""
    import torch

    found = None
    for number in range(first, last):
        name = written_name(filename, number)
        keyword_write = _inplace_keyword_call(filename, number)
        if keyword_write is not None:
            # `gate = F.relu(h, inplace=True)`: the assignment binds gate, the call writes h.
            name = text_of(filename, keyword_write.args[0])
        if not name:
            continue
        root = name.split("[")[0].split(".")[0]
        value = frame.f_locals.get(root, frame.f_globals.get(root))
        if root == base_name or (isinstance(value, torch.Tensor) and value._base is base):
            found = (number, name)
    return found


def _inplace_keyword_call(filename: str, line: int):
    """The one call on the statement at `line` that writes its first argument because of
    `inplace=True` (`F.relu(h, inplace=True)`), or None."""
    statement = statement_at(filename, line)
    calls = [node for node in ast.walk(statement) if isinstance(node, ast.Call) and node.args
             and isinstance(node.args[0], (ast.Name, ast.Attribute)) and any(
                 k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                 for k in node.keywords)] if statement is not None else []
    return calls[0] if len(calls) == 1 else None


def _base_name(frame, view_name: str | None) -> str | None:
    view = frame.f_locals.get(view_name) if view_name else None
    base = getattr(view, "_base", None)
    return local_name_of(frame, base) if base is not None else None


def custom_function_view_written(context: ErrorContext, already):
    """A custom Function returned a view (or its input as-is); the result is written in place."""
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    write = context.raise_location(role="write", note="in-place write into the custom Function's output")
    function_name = context.message.split("Output 0 of ")[-1].split(" is a view")[0] if "Output" in context.message else None
    if function_name == "BackwardHookFunction":
        hooked = _full_backward_hook_written(context, filename, write)
        if hooked is not None:
            return hooked
    temporary = _inplace_call_on_temporary(filename, line)
    if temporary is not None:
        statement, call, out_of_place = temporary
        notes = [f"{function_name}.forward returned a view of its input (or the input itself); writing into it "
                 "would bypass its backward, so PyTorch forbids it"]
        return diagnosis(codes.CUSTOM_FUNCTION_VIEW_INPLACE, write, [], notes, [statement_change(
            write, f"write out of place: {out_of_place} computes the same values into a new tensor, and the output "
                   f"of {function_name}, which nothing else refers to, stays unwritten",
            replace_node_text(filename, statement, call.func, out_of_place))])
    name = written_name(filename, line) or _name_of_written_output(context, frame, function_name)
    made = last_assignment(filename, name, line) if name and name.isidentifier() else None
    related = []
    helps = []
    forward_return = _forward_return(frame, function_name)
    if forward_return is not None:
        related.append(forward_return)
    out_of_place = _out_of_place_rebinding(filename, statement_at(filename, line), name) \
        if written_name(filename, line) == name else None
    if out_of_place is not None and not _memory_shared_with_another_local(frame, name):
        # `out += identity`, `embeddings.masked_fill_(mask, 0)` on the Function's output, which no
        # other local shares memory with (a view of a tensor made inside the Function): the name
        # then refers to a new tensor with the values the write meant, and the Function's output
        # stays unwritten. This needs no guess at which assignment made the output (one in an
        # `if` branch that did not run, a checkpointed call in the other one).
        notes = [f"{function_name}.forward returned a view (of its input or of a tensor made inside it); "
                 "writing into it would bypass the backward of the custom Function, so PyTorch forbids it"]
        helps = [statement_change(write, f"write out of place: {name} then refers to a new tensor with the "
                                         f"values the write meant, and the output of {function_name} stays unwritten",
                                  out_of_place)]
        if made is not None and _single_binding_reaches(filename, name, made, line):
            related.append(statement_location(filename, made, role="call",
                                              note=f"{name} is the output of {function_name}"))
        return diagnosis(codes.CUSTOM_FUNCTION_VIEW_INPLACE, write, related, notes, helps)
    if made is not None and not _single_binding_reaches(filename, name, made, line):
        made = None
    if made is not None and isinstance(made, ast.Assign) and len(made.targets) == 1:
        call_location = statement_location(filename, made, role="call", note=f"{name} is the output of {function_name}")
        value = text_of(filename, made.value)
        helps.append(statement_change(call_location, f"clone the output of {function_name} before writing into it",
                                      f"{ast.unparse(made.targets[0])} = {value}.clone()"))
        primary = call_location
        related.append(write)
    else:
        primary = write
        helps.append(Suggestion(f"clone the output of {function_name} before writing into it, or return a new "
                                "tensor from its forward (e.g. x.clone() instead of x or a view of x)"))
    notes = [f"{function_name}.forward returned a view of its input (or the input itself); writing into it "
             "would bypass the backward you wrote, so PyTorch forbids it"]
    return diagnosis(codes.CUSTOM_FUNCTION_VIEW_INPLACE, primary, related, notes, helps)


def _single_binding_reaches(filename: str, name: str, made: ast.stmt, line: int) -> bool:
    """False when `made` (the textually last binding of `name` before `line`) sits in one branch of
    an `if` that does not contain `line` and the other branch binds `name` too: which of them ran
    is not known from the text, and naming the wrong one would put the help on a line that never
    runs."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    if tree is None:
        return False
    for node in ast.walk(enclosing_function(tree, line)):
        if not isinstance(node, ast.If) or node.lineno > made.lineno or (node.end_lineno or 0) < made.lineno:
            continue
        if node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        for branch, other in ((node.body, node.orelse), (node.orelse, node.body)):
            inside = any(s.lineno <= made.lineno <= (s.end_lineno or s.lineno) for s in branch)
            if inside and any(isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                    isinstance(t, ast.Name) and t.id == name
                    for target in (n.targets if isinstance(n, ast.Assign) else [n.target])
                    for t in ast.walk(target)) for s in other for n in ast.walk(s)):
                return False
    return True


def _inplace_call_on_temporary(filename: str, line: int):
    """(statement, call, the out-of-place callee's text) when the statement at `line` writes in place,
    with one call of a function or method named with a trailing underscore (`torch.relu_(...)`,
    `F.relu_(...)`, `(...).mul_(m)`), into a tensor that is itself a call's result (a temporary no
    other name refers to), and PyTorch has the same name without the underscore: out of place, the
    call computes the same values. None otherwise."""
    import torch

    statement = statement_at(filename, line)
    if statement is None:
        return None
    found = []
    for call in (node for node in ast.walk(statement) if isinstance(node, ast.Call)):
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr.endswith("_") and not func.attr.startswith("_")):
            continue
        plain = func.attr[:-1]
        owner = text_of(filename, func.value) or ""
        if owner in ("torch", "F", "torch.nn.functional", "nn.functional"):
            namespace = torch if owner == "torch" else torch.nn.functional
            written = call.args[0] if call.args else None
        else:
            namespace, written = torch.Tensor, func.value
        if isinstance(written, ast.Call) and hasattr(namespace, plain):
            found.append((call, f"{owner}.{plain}"))
    if len(found) != 1:
        return None
    call, out_of_place = found[0]
    return statement, call, out_of_place


def _name_of_written_output(context: ErrorContext, user_frame, function_name: str | None) -> str | None:
    """The user's name for the Function's output when the write is not on the user's line but in
    code it called (an nn.ReLU(inplace=True) applied to the output): the tensor, found in the
    traceback's frames by its grad_fn (<function_name>Backward), named in the user's frame."""
    import torch

    if not function_name:
        return None
    node_name = f"{function_name}Backward"
    for frame, _ in reversed(context.frames):
        for value in list(frame.f_locals.values()):
            if isinstance(value, torch.Tensor) and type(readable_grad_fn(value)).__name__ == node_name:
                return local_name_of(user_frame, value)
    return None


def _module_writing_in_place(context: ErrorContext):
    """The innermost nn.Module whose forward was running when the write was refused."""
    import torch

    for frame, _ in reversed(context.frames):
        module = frame.f_locals.get("self")
        if isinstance(module, torch.nn.Module) and frame.f_code.co_name == "forward":
            return module
    return None


def _calls_in(filename: str, predicate) -> list[tuple[ast.stmt, ast.Call]]:
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    found = []
    for statement in ast.walk(tree) if tree is not None else ():
        if isinstance(statement, ast.stmt) and not isinstance(statement, (
                ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.While, ast.If, ast.With, ast.Try)):
            found += [(statement, call) for call in ast.walk(statement) if isinstance(call, ast.Call) and predicate(call)]
    return found


def _full_backward_hook_written(context: ErrorContext, filename: str, write):
    """AD107 where the custom Function is the wrapper a full backward hook puts around a module's
    output (BackwardHookFunction) and the next module writes that output in place
    (ReLU(inplace=True)): the line to change is the hook's registration or the in-place module."""
    from autograd_doctor.diagnosis.source import call_name

    # The hook is registered on one module, or on every module (register_module_full_backward_hook),
    # often by a monitoring helper in another file: the files that define the hooks in force are
    # searched, with the traceback's, the failing one first (not every loaded module: under pytest
    # those are the test files, any of which may register such a hook for another test).
    files = list(dict.fromkeys([filename] + context.files_reached()))
    registrations = [(found, statement, call) for found in files for statement, call in _calls_in(
        found, lambda call: call_name(call) in ("register_full_backward_hook", "register_module_full_backward_hook",
                                                "register_full_backward_pre_hook",
                                                "register_module_full_backward_pre_hook"))]
    module = _module_writing_in_place(context)
    if len(registrations) != 1 or module is None or not getattr(module, "inplace", False):
        return None
    class_name = type(module).__name__
    hook_file, statement, registration = registrations[0]
    primary = statement_location(hook_file, statement, role="hook",
                                 note="a full backward hook wraps this module's output in BackwardHookFunction")
    write.note = f"{class_name}(inplace=True) writes that output in place here"
    notes = [f"{call_name(registration)} makes the module's output a view returned by BackwardHookFunction, so that "
             f"the hook sees grad_output; the {class_name}(inplace=True) that follows writes into that output, which "
             "PyTorch forbids"]
    helps = []
    built = [(found, made, call) for found in files for made, call in _calls_in(
        found, lambda call: call_name(call) == class_name and any(
            k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords))]
    related = [write]
    if len(built) == 1:
        built_file, made, call = built[0]
        plain = ast.Call(func=call.func, args=call.args, keywords=[k for k in call.keywords if k.arg != "inplace"])
        location = line_location(built_file, call.lineno, role="in place",
                                 note=f"the {class_name} is made in place here")
        related.insert(0, location)
        helps.append(Suggestion(f"make the {class_name} out of place (drop inplace=True): it computes the same values "
                                "and gradients, and leaves the hooked output unwritten",
                                replace_node_text(built_file, made, call, ast.unparse(plain)),
                                statement_location(built_file, made)))
    helps.append(Suggestion(f"{'or ' if helps else ''}get the gradient of the module's output with a forward hook "
                            "that registers a tensor hook on it (output.register_hook(...)): the same gradient as "
                            "grad_output[0], without the wrapper"))
    return diagnosis(codes.CUSTOM_FUNCTION_VIEW_INPLACE, primary, related, notes, helps)


def _forward_return(frame, function_name: str | None):
    """The return statement of `function_name.forward`, found through the frame's names."""
    if not function_name:
        return None
    candidate = frame.f_locals.get(function_name, frame.f_globals.get(function_name))
    forward = getattr(candidate, "forward", None)
    code = getattr(forward, "__code__", None)
    if code is None:
        return None
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.lineno <= code.co_firstlineno + 1 and \
                node.name == "forward" and node.lineno >= code.co_firstlineno:
            returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
            if returns:
                return statement_location(code.co_filename, returns[-1], role="forward",
                                          note="forward returns a view of its input here")
    return None


def detach_view_in_place(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    location.note = "detach_() on a view"
    calls = find_calls(statement, "detach_")
    receiver = calls[0].func.value if len(calls) == 1 and isinstance(calls[0].func, ast.Attribute) else None
    name = text_of(filename, receiver) if receiver is not None else None
    made = last_assignment(filename, name, line) if name and name.isidentifier() else None
    related = [statement_location(filename, made, role="view", note=f"{name} is made here, a view of another tensor")
               if made is not None else None]
    helps = []
    if name and isinstance(receiver, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(statement, ast.Expr) \
            and statement.value is calls[0]:
        # Only a name, an attribute or an item can be rebound (`h.t() = ...` is no statement).
        helps.append(statement_change(location, f"detach out of place: {name} then refers to a detached copy "
                                      "of the view, and the base keeps its graph", f"{name} = {name}.detach()"))
    elif isinstance(receiver, (ast.Call, ast.Subscript)) and not (
            isinstance(statement, ast.Expr) and statement.value is calls[0]):
        # `queue[:, i] = keys.t().detach_()`, `bank.append(z.unsqueeze(0).detach_())`: the view is a
        # temporary that nothing else refers to, so the detached copy detach() returns is the same
        # value, and the base keeps its graph (a bare `h.t().detach_()` statement keeps the advice).
        call = calls[0]
        helps.append(statement_change(location, f"detach out of place: {name}.detach() is the same values, and "
                                      "the tensor the view was taken from keeps its graph",
                                      replace_node_text(filename, statement, call, f"{name}.detach()")))
    elif isinstance(receiver, ast.Name) and _local_name(filename, receiver.id, line) \
            and not read_after(filename, receiver.id, statement):
        # `memory.append(row.detach_())` with `row` a function's local not read again: the value
        # detach() returns is the one the call was meant to give, and no later line sees `row`
        # itself (a module's global could be read by any function, so it keeps the advice).
        helps.append(statement_change(location, f"detach out of place: {name}.detach() gives the same values "
                                      "without grad history, and the tensor the view was taken from keeps its graph",
                                      replace_node_text(filename, statement, calls[0], f"{name}.detach()")))
    else:
        helps.append(Suggestion("use .detach() (out of place) instead of .detach_() on a view"))
    notes = ["a view shares its base's graph; detaching it in place would cut the base's graph too"]
    return diagnosis(codes.DETACH_VIEW_INPLACE, location, related, notes, helps)


def _local_name(filename: str, name: str, line: int) -> bool:
    """Whether `name`, used at `line`, is a local variable of the function around that line (not
    a module's global, nor declared global or nonlocal there)."""
    from autograd_doctor.analysis.errors.context import enclosing_function
    from autograd_doctor.diagnosis.source import parse_file

    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return not any(isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names for node in ast.walk(function))


def write_into_expanded(context: ErrorContext, already):
    """An in-place write into a tensor whose elements share memory (expand, broadcast_to)."""
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    write = context.raise_location(role="write", note="writes into a tensor whose elements share memory")
    name = written_name(filename, line)
    made = last_assignment(filename, name, line) if name and name.isidentifier() else None
    expands = [c for method in ("expand", "expand_as", "broadcast_to") for c in find_calls(made, method)] \
        if made is not None else []
    notes = ["expand() and broadcast_to() make views where many elements are one memory cell; a write "
             "into one of them would write all of them"]
    if made is not None and not expands and find_calls(made, "broadcast_tensors"):
        return _broadcast_tensors_written(filename, made, name, write, notes,
                                          shared=_memory_shared_with_another_local(frame, name))
    if not expands or not isinstance(made, ast.Assign) or len(made.targets) != 1:
        helps = [Suggestion(f"clone {name or 'the tensor'} before writing into it ({name or 't'} = "
                            f"{name or 't'}.clone()), or write out of place")]
        out_of_place = _out_of_place_rebinding(filename, statement_at(filename, line), name)
        if out_of_place is not None and not _memory_shared_with_another_local(frame, name):
            # `rows += offset` on a grid from torch.meshgrid (expanded views): the name then refers to
            # a new tensor with the values the write meant, which is all a write into shared memory
            # could have meant for it.
            helps.insert(0, statement_change(write, f"write out of place: {name} then refers to a new tensor with "
                                             "its own memory for every element", out_of_place))
        return diagnosis(codes.EXPANDED_INPLACE, write, notes=notes, help=helps)
    view = statement_location(filename, made, role="expand", note=f"{name} is an expanded view: its rows share memory")
    value = text_of(filename, made.value)
    helps = [statement_change(view, f"make {name} a real tensor with its own memory for every element",
                              f"{ast.unparse(made.targets[0])} = {value}.clone()")]
    return diagnosis(codes.EXPANDED_INPLACE, view, [write], notes, helps)


def _broadcast_tensors_written(filename: str, made: ast.stmt, name: str, write, notes: list, shared: bool):
    """`a, b = torch.broadcast_tensors(a, b)` then an in-place write into `b`: broadcast_tensors
    returns expanded views; a copy of `b` right after it gives the write its own memory and the
    same values. Advice when another local variable holds the memory `b` was expanded from (a
    write meant for it would not reach it through the copy)."""
    notes = notes + ["torch.broadcast_tensors returns expanded views of its inputs, without copying them"]
    unpacked = isinstance(made, ast.Assign) and len(made.targets) == 1 and isinstance(made.targets[0], ast.Tuple) \
        and name in [ast.unparse(t) for t in made.targets[0].elts]
    text = text_of(filename, made)
    if shared or not unpacked or text is None or "\n" in text:
        return diagnosis(codes.EXPANDED_INPLACE, write, notes=notes, help=[Suggestion(
            f"clone {name or 'the tensor'} after torch.broadcast_tensors, before writing into it")])
    view = statement_location(filename, made, role="expand", note=f"{name} is an expanded view made by "
                              "torch.broadcast_tensors: its rows share memory")
    helps = [statement_change(view, f"copy {name} right after broadcasting: the same values, each element "
                              "with its own memory", f"{text}\n{name} = {name}.clone()")]
    return diagnosis(codes.EXPANDED_INPLACE, view, [write], notes, helps)


def _memory_shared_with_another_local(frame, name: str) -> bool:
    """Whether another local variable of the frame holds a tensor on the memory of `name`'s (the
    tensor it was expanded from, a stacked grid): a write meant for it would not reach it
    through a rebound name."""
    import torch

    value = frame.f_locals.get(name)
    if not isinstance(value, torch.Tensor):
        return True
    memory = value.untyped_storage().data_ptr()
    return any(isinstance(other, torch.Tensor) and other.untyped_storage().data_ptr() == memory
               for key, other in frame.f_locals.items() if key != name)


# Augmented assignments and their out-of-place operators.
OUT_OF_PLACE_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


def _out_of_place_rebinding(filename: str, statement, name: str | None) -> str | None:
    """`name = name + value` for `name += value`, `name = name.add(value)` for `name.add_(value)`:
    the write of a statement into the tensor a plain name holds, rebound out of place. None for
    another statement (an indexed write, a write into an attribute)."""
    import torch

    if not name or not name.isidentifier():
        return None
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name) \
            and statement.target.id == name and type(statement.op) in OUT_OF_PLACE_OPERATORS:
        value = text_of(filename, statement.value)
        if value is None:
            return None
        if not isinstance(statement.value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)):
            value = f"({value})"
        return f"{name} = {name} {OUT_OF_PLACE_OPERATORS[type(statement.op)]} {value}"
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and isinstance(statement.value.func.value, ast.Name) \
            and statement.value.func.value.id == name:
        method = statement.value.func.attr
        if not method.endswith("_") or method.endswith("__") or not hasattr(torch.Tensor, method[:-1]):
            return None
        call = text_of(filename, statement.value)
        return f"{name} = {call.replace(f'.{method}(', f'.{method[:-1]}(', 1)}" if call else None
    return None


MATCHERS = [
    (r"more than one element of the written-to tensor refers to a single memory location", write_into_expanded),
    (r"A view was created in (no_grad|inference) mode and is being modified inplace", view_made_in_mode_written),
    (r"A view was created in (no_grad|inference) mode and its base or another view of its base has been modified",
     view_used_after_base_written),
    (r"is a view and is being modified inplace\. This view was created inside a custom Function",
     custom_function_view_written),
    (r"Can't detach views in-place", detach_view_in_place),
    (r"is a view and its base or another view of its base has been modified inplace\. This view is the output "
     r"of a function that returns multiple views", multi_output_base_modified),
]
