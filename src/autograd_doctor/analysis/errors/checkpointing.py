"""Activation checkpointing (`torch.utils.checkpoint`): a checkpointed function that does
something different when recomputed, torch.autograd.grad through a reentrant checkpoint, and a
custom Function's backward reading ctx.saved_tensors twice under checkpoint."""

from __future__ import annotations

import ast

from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, text_of
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function, line_location
from autograd_doctor.recording.frames import is_internal_file
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import (
    parse_file, replace_node_text, replace_nodes_text, source_line, statement_at, statement_location,
)


def _checkpointed_function(context: ErrorContext):
    """The user's function given to checkpoint(), read from the checkpoint frame's recompute_fn."""
    for frame, _ in reversed(context.frames):
        holder = frame.f_locals.get("self")
        recompute = getattr(holder, "recompute_fn", None)
        if recompute is None:
            continue
        code = getattr(recompute, "__code__", None)
        closure = getattr(recompute, "__closure__", None) or ()
        if code is None:
            continue
        for name, cell in zip(code.co_freevars, closure):
            if name == "fn":
                try:
                    return cell.cell_contents
                except ValueError:
                    return None
    return None


def recompute_mismatch(context: ErrorContext, already):
    import torch

    function = _checkpointed_function(context)
    module = function if isinstance(function, torch.nn.Module) else getattr(function, "__self__", None)
    if isinstance(function, torch.nn.Module):
        function = type(function).forward  # checkpoint(block, x) runs the module's forward
    code = getattr(function, "__code__", None)
    use = context.raise_location(role="backward", note="backward() recomputed the checkpointed function here")
    notes = ["checkpoint() throws away the function's intermediate tensors and runs it again during "
             "backward; the second run saved different tensors than the first"]
    helps = [Suggestion("make the checkpointed function compute the same thing every time it runs: no "
                        "dependence on counters, global flags, data-dependent Python branches that change "
                        "between the runs, or module state it modifies itself; random ops are replayed only "
                        "with preserve_rng_state=True (the default)")]
    if code is None or is_internal_file(code.co_filename):
        return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, use, notes=notes, help=helps)
    definition = line_location(code.co_filename, code.co_firstlineno, role="function",
                               note=f"{code.co_name}() is checkpointed: it must do the same work when recomputed")
    draws = _unreplayed_random_draws(code)
    if draws:
        # Python's or NumPy's random numbers: checkpoint replays torch's random state only, so the
        # recomputation draws again and may take the other way.
        primary = draws[0]
        notes.append("checkpoint replays torch's random number state when it recomputes, not Python's random "
                     "module or NumPy's: a draw from them inside the function gives another value the second time")
        helps.insert(0, Suggestion("draw the random decision outside the checkpointed function and pass it in (or "
                                   "skip the checkpoint call there), or draw it with torch (torch.rand), whose "
                                   "state checkpoint replays"))
        return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, primary, [definition, use], notes, helps)
    unpreserved = _rng_not_preserved(context) if _draws_torch_random(code, module) else None
    if unpreserved is not None:
        # torch's random draws inside the function, and the checkpoint told not to replay them: the
        # recomputation draws other numbers (another dropout mask, another set of kept tokens).
        filename, statement, keyword = unpreserved
        primary = statement_location(filename, statement, role="checkpoint",
                                     note="preserve_rng_state=False: the recomputation draws other random numbers")
        notes.append(f"{code.co_name}() draws from torch's random number generator; with preserve_rng_state=False "
                     "checkpoint does not restore its state before recomputing, so the second run draws other "
                     "numbers than the first")
        helps.insert(0, statement_change(primary, "let checkpoint replay the random draws (preserve_rng_state=True, "
                                         "the default): the recomputation then draws the same numbers",
                                         replace_node_text(filename, statement, keyword.value, "True")))
        return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, primary, [definition, use], notes, helps)
    cached = _branch_on_state_it_sets(code)
    if cached is not None:
        # `if self.cache is None: self.cache = ...`: the first run sets the attribute, so the
        # recomputation finds it set and skips the work (and the tensors it saved).
        branch, attribute = cached
        primary = statement_location(code.co_filename, branch, role="branch",
                                     note=f"reads self.{attribute}, which this function sets: the recomputation "
                                          "takes the other way")
        notes.append(f"{code.co_name}() sets self.{attribute} under a condition that reads it: when checkpoint runs "
                     "it again during backward, the attribute is already set and the branch is skipped")
        value = getattr(module, attribute, None) if module is not None else None
        unconditional = _unconditional(code.co_filename, branch, attribute)
        if isinstance(value, torch.Tensor) and value.requires_grad and unconditional is not None:
            # The cached value is computed from parameters (it requires grad): kept across calls it
            # would also hold the first step's parameters and graph, so computing it on every call is
            # what the module means, inside and outside checkpoint.
            notes.append(f"self.{attribute} is computed from parameters (it requires grad): a cached copy keeps the "
                         "values, and the graph, of the parameters when it was made, not the trained ones")
            helps.insert(0, statement_change(primary, f"compute self.{attribute} on every call: the same work in "
                                             "the first run and the recomputation, from the current parameters",
                                             unconditional))
        logged = _logging_without_saves(code.co_filename, branch)
        if logged is not None:
            # The branch only turns tensors into Python numbers for a log: under no_grad it saves
            # nothing, in whichever run takes it, and the numbers are the same.
            primary.role, primary.note = "branch", (f"reads self.{attribute}, which this function sets: the "
                                                    "recomputation takes the other way, and this branch saves tensors")
            body = statement_location(code.co_filename, branch.body[0], role="logged",
                                      note="computes a logged number with gradients on: autograd saves tensors for it")
            helps.insert(0, logged)
            return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, body, [primary, definition, use], notes, helps)
        return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, primary, [definition, use], notes, helps)
    filled = _branch_on_argument_it_fills(code)
    if filled is not None:
        # `if key in cache: k = cat([cache[key], k])` then `cache[key] = k`: a container the caller
        # passes in (a key/value cache made for generation) is filled by the first run, so the
        # recomputation reads what the first run stored and computes on longer tensors.
        branch, store, argument = filled
        primary = statement_location(code.co_filename, branch, role="branch",
                                     note=f"reads {argument}, which this function fills: the recomputation finds "
                                          "what the first run stored there")
        stored = statement_location(code.co_filename, store, role="stored",
                                    note=f"stores into {argument} during the first run")
        notes.append(f"{code.co_name}() stores into {argument}, a container its caller passes in, and reads it "
                     "back under a condition: when checkpoint runs it again during backward, the container already "
                     "holds the first run's entries and the function computes with them")
        helps.insert(0, Suggestion(f"pass no {argument} to the checkpointed function while training (a cache "
                                   "made for generation, use_cache=False), or fill it outside the function"))
        return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, primary, [stored, definition, use], notes, helps)
    branches = _branches(code)
    return diagnosis(codes.CHECKPOINT_RECOMPUTE_MISMATCH, definition, [*branches, use], notes, helps)


def _self_attributes(node: ast.AST, stored: bool) -> set[str]:
    """The names `x` of `self.x` read (or, with `stored`, assigned) in `node`."""
    return {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "self" and isinstance(n.ctx, ast.Store) == stored}


def _branch_on_state_it_sets(code):
    """(the `if`, the attribute) of a branch of the checkpointed function whose condition reads
    `self.x` while the function assigns `self.x`; None when there is none."""
    node = _function_node(code)
    if node is None:
        return None
    assigned = _self_attributes(node, stored=True)
    for branch in ast.walk(node):
        if isinstance(branch, ast.If):
            read = sorted(_self_attributes(branch.test, stored=False) & assigned)
            if read:
                return branch, read[0]
    return None


def _branch_on_argument_it_fills(code):
    """(the `if`, the store, the argument's name) when the checkpointed function stores into a
    container it takes as an argument (`cache[key] = value`) and an `if` of the function reads that
    argument (`if key in cache:`, `if cache[key] is not None:`); None otherwise."""
    node = _function_node(code)
    if node is None:
        return None
    arguments = {argument.arg for argument in node.args.args + node.args.kwonlyargs} - {"self"}
    stores = [(statement, target.value.id) for statement in ast.walk(node) if isinstance(statement, ast.Assign)
              for target in statement.targets if isinstance(target, ast.Subscript)
              and isinstance(target.value, ast.Name) and target.value.id in arguments]
    for store, argument in stores:
        for branch in ast.walk(node):
            if isinstance(branch, ast.If) and branch.lineno < store.lineno and _reads_container(branch.test, argument):
                return branch, store, argument
    return None


def _reads_container(test: ast.AST, name: str) -> bool:
    """Whether `test` looks into the container `name`: `key in name`, `name[key]`, `name.get(key)`."""
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) \
                and any(isinstance(c, ast.Name) and c.id == name for c in node.comparators):
            return True
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return True
    return False


def _unconditional(filename: str, branch: ast.If, attribute: str) -> str | None:
    """`if self.x is None: self.x = value` rewritten as `self.x = value` (the branch only makes the
    attribute); None for another shape of branch."""
    test = branch.test
    if branch.orelse or len(branch.body) != 1 or not isinstance(branch.body[0], ast.Assign) \
            or _self_attributes(branch.body[0], stored=True) != {attribute} \
            or not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Is)
                    and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None):
        return None
    return text_of(filename, branch.body[0])


# Calls that turn a tensor into Python numbers: what they read is not kept by autograd's graph.
_TO_PYTHON = ("item", "tolist", "float", "int")


def _logging_without_saves(filename: str, branch: ast.If) -> Suggestion | None:
    """The body of `branch` run under torch.no_grad(), when it is only statements that call something
    (`self.norms.append(h.norm().item())`, `print(...)`) and every tensor value they compute is
    turned into Python numbers (`.item()`, `.tolist()`, `float(...)`): what they log stays the same,
    and they save no tensor for backward in either run. None for any other body."""
    from autograd_doctor.diagnosis.model import Location
    from autograd_doctor.diagnosis.source import display_path, source_line

    if branch.orelse or not branch.body or not all(
            isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) for statement in branch.body):
        return None
    for statement in branch.body:
        converted = [n for n in ast.walk(statement) if isinstance(n, ast.Call) and (
            getattr(n.func, "attr", None) in _TO_PYTHON or getattr(n.func, "id", None) in _TO_PYTHON)]
        if not converted or not all(_inside_any(argument, converted) for argument in statement.value.args):
            return None
    first_line = source_line(filename, branch.body[0].lineno)
    indent = first_line[: len(first_line) - len(first_line.lstrip())]
    lines = [source_line(filename, number).rstrip() for number in range(branch.body[0].lineno, branch.end_lineno + 1)]
    if not all(text.startswith(indent) or not text.strip() for text in lines):
        return None
    replacement = "\n".join(["with torch.no_grad():"] + ["    " + text[len(indent):] if text.strip() else ""
                                                         for text in lines])
    last = source_line(filename, branch.end_lineno).rstrip()
    location = Location(file=display_path(filename), line=branch.body[0].lineno, column=len(indent),
                        end_line=branch.end_lineno, end_column=len(last), source=first_line.strip())
    return Suggestion("compute the logged numbers under torch.no_grad(): they are the same numbers, and the branch "
                      "then saves no tensor for backward, so the recomputation saves what the first run saved "
                      "whichever way it goes", replacement, location)


def _inside_any(node: ast.AST, calls: list) -> bool:
    """Whether `node` is one of `calls` or holds one of them."""
    return any(call is inner for inner in ast.walk(node) for call in calls)


# Random number generators whose state checkpoint does not save and replay.
_UNREPLAYED_RANDOM = ("random.", "np.random.", "numpy.random.")


def _unreplayed_random_draws(code) -> list:
    """Calls of Python's random module or NumPy's random inside the checkpointed function."""
    node = _function_node(code)
    if node is None:
        return []
    return [line_location(code.co_filename, call.lineno, role="random", note="a random draw that checkpoint does not "
                          "replay: the recomputation draws again")
            for call in ast.walk(node) if isinstance(call, ast.Call)
            and (ast.unparse(call.func) + ".").startswith(_UNREPLAYED_RANDOM)][:3]


# torch's functions and methods that draw random numbers (what preserve_rng_state replays).
_TORCH_RANDOM = {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "bernoulli",
                 "multinomial", "normal", "dropout", "uniform_", "normal_", "bernoulli_", "exponential_"}


def _draws_torch_random(code, module) -> bool:
    """Whether the checkpointed function calls one of torch's random functions, or the module
    given to checkpoint holds a dropout layer."""
    import torch

    if isinstance(module, torch.nn.Module) and any(isinstance(m, torch.nn.modules.dropout._DropoutNd)
                                                   for m in module.modules()):
        return True
    node = _function_node(code)
    return node is not None and any(
        isinstance(call, ast.Call) and (getattr(call.func, "attr", None) or getattr(call.func, "id", None))
        in _TORCH_RANDOM for call in ast.walk(node))


def _rng_not_preserved(context: ErrorContext):
    """(file, statement, keyword) of the one checkpoint call in the traceback's user files that
    passes preserve_rng_state=False."""
    found = []
    for filename in dict.fromkeys(frame.f_code.co_filename for frame, _ in context.user_frames()):
        tree = parse_file(filename)
        for call in (c for name in CHECKPOINT_FUNCTIONS for c in find_calls(tree, name)) if tree is not None else ():
            keyword = next((k for k in call.keywords if k.arg == "preserve_rng_state"), None)
            if keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value is False:
                found.append((filename, statement_at(filename, call.lineno), keyword))
    return found[0] if len(found) == 1 else None


def _function_node(code):
    """The def of `code` in its file."""
    tree = parse_file(code.co_filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == code.co_name and \
                code.co_firstlineno <= node.lineno <= code.co_firstlineno + len(node.decorator_list):
            return node
    return None


def _branches(code) -> list:
    """`if` statements inside the checkpointed function: the usual source of a different recomputation."""
    node = _function_node(code)
    if node is None:
        return []
    return [line_location(code.co_filename, branch.lineno, role="branch",
                          note="a branch: does it take the same way both times?")
            for branch in ast.walk(node) if isinstance(branch, ast.If)][:3]


# The functions of torch.utils.checkpoint that take use_reentrant=.
CHECKPOINT_FUNCTIONS = ("checkpoint", "checkpoint_sequential")


def reentrant_with_grad(context: ErrorContext, already):
    use = context.raise_location(role="grad", note="torch.autograd.grad (or backward(inputs=...)) here")
    found = []
    seen_files = []
    for frame, _ in context.user_frames():
        filename = frame.f_code.co_filename
        if filename in seen_files:
            continue
        seen_files.append(filename)
        tree = parse_file(filename)
        if tree is None:
            continue
        calls = [call for name in CHECKPOINT_FUNCTIONS for call in find_calls(tree, name)]
        # `functools.partial(checkpoint, use_reentrant=True)`: the keyword is bound once, in the partial.
        calls += [call for call in find_calls(tree, "partial") if call.args
                  and ast.unparse(call.args[0]).split(".")[-1] in CHECKPOINT_FUNCTIONS]
        for call in sorted(calls, key=lambda call: (call.lineno, call.col_offset)):
            keyword = next((k for k in call.keywords if k.arg == "use_reentrant"), None)
            if keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value is True:
                found.append((filename, call, keyword))
    notes = ["the reentrant checkpoint runs its own backward() inside the outer one, which only works for "
             "a plain .backward() without inputs"]
    if not found:
        return diagnosis(codes.CHECKPOINT_REENTRANT_GRAD, use, notes=notes, help=[Suggestion(
            "pass use_reentrant=False to every torch.utils.checkpoint.checkpoint (and checkpoint_sequential) "
            "call on this path")])
    filename, call, keyword = found[0]
    statement = statement_at(filename, call.lineno)
    location = statement_location(filename, statement, role="checkpoint", note="checkpoint with use_reentrant=True")
    new_statement = replace_node_text(filename, statement, keyword.value, "False")
    helps = [statement_change(location, "use the non-reentrant checkpoint, which supports "
                              "torch.autograd.grad and backward(inputs=...)", new_statement)]
    related = [use] + [statement_location(f, statement_at(f, c.lineno), role="checkpoint",
                                          note="also use_reentrant=True") for f, c, _ in found[1:3]]
    return diagnosis(codes.CHECKPOINT_REENTRANT_GRAD, location, related, notes, helps)


def saved_tensors_twice(context: ErrorContext, already):
    """The traceback's innermost user frame is the second read, inside the Function's backward;
    the first read is the earlier `ctx.saved_tensors` in the same function."""
    found = context.innermost_user()
    if found is None:
        return None
    frame, line = found
    filename = frame.f_code.co_filename
    tree = parse_file(filename)
    statement = statement_at(filename, line)
    if tree is None or statement is None:
        return None
    location = statement_location(filename, statement, role="read", note="reads ctx.saved_tensors a second time")
    function = enclosing_function(tree, line)
    reads = sorted((n for n in ast.walk(function) if isinstance(n, ast.Attribute) and n.attr == "saved_tensors"),
                   key=lambda n: (n.lineno, n.col_offset))
    earlier = [r for r in reads if r.lineno < statement.lineno]
    notes = ["under the non-reentrant checkpoint each saved tensor is recomputed when backward unpacks it, and "
             "can be unpacked only once; without checkpoint a second read works, so the mistake shows only here"]
    advice = Suggestion("read ctx.saved_tensors once, at the top of backward, and use those variables afterwards")
    hoisted = _unpack_before_loop(filename, function, statement, reads)
    if hoisted is not None:
        return diagnosis(codes.CHECKPOINT_SAVED_UNPACKED_TWICE, location, notes=notes, help=[hoisted, advice])
    if not earlier:
        own = [r for r in reads if statement.lineno <= r.lineno <= statement.end_lineno]
        once = _read_once_before(filename, function, statement, location, own) if len(own) > 1 else None
        return diagnosis(codes.CHECKPOINT_SAVED_UNPACKED_TWICE, location, notes=notes,
                         help=[h for h in (once, advice) if h])
    first_statement = statement_at(filename, earlier[0].lineno)
    if first_statement is None:  # read in the header of a loop or an `if`: no simple statement holds it
        first = line_location(filename, earlier[0].lineno, role="read", note="first read of ctx.saved_tensors")
        return diagnosis(codes.CHECKPOINT_SAVED_UNPACKED_TWICE, location, [first] if first else [], notes, [advice])
    first = statement_location(filename, first_statement, role="read", note="first read of ctx.saved_tensors")
    reuse = _reuse_first_read(filename, statement, location, first_statement, reads) or \
        _merge_unpackings(filename, function, reads)
    helps = [reuse, advice]
    return diagnosis(codes.CHECKPOINT_SAVED_UNPACKED_TWICE, location, [first], notes, [h for h in helps if h])


def _unpack_before_loop(filename, function, statement, reads):
    """`h, w = ctx.saved_tensors` in the body of a loop of backward (once per chunk): the second
    iteration unpacks again. The unpacking moves above the loop, and a read in the loop's header
    (`range(ctx.saved_tensors[2].numel())`) uses the name bound to that index: the same tensors,
    unpacked once. The change is the loop statement with the unpacking put before it. None unless
    the unpacking is a one-line statement of the loop's own body (not its only one) whose names are
    bound nowhere else in backward, and every other read is such a header subscript."""
    target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
    if not (target is not None and statement.value in reads and statement.lineno == statement.end_lineno
            and isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(t, ast.Name) for t in target.elts)):
        return None
    loop = next((node for node in ast.walk(function) if isinstance(node, (ast.For, ast.While))
                 and any(child is statement for child in node.body)), None)
    if loop is None or len(loop.body) < 2:
        return None
    names = {position: t.id for position, t in enumerate(target.elts)}
    bound_elsewhere = {t.id for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                       and n is not statement
                       for t in ast.walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
                       if isinstance(t, ast.Name)}
    if bound_elsewhere & set(names.values()):
        return None
    header = loop.iter if isinstance(loop, ast.For) else loop.test
    header_reads = {id(n) for n in ast.walk(header)}
    replacements = []
    for read in reads:
        if read is statement.value:
            continue
        subscript = next((n for n in ast.walk(header) if isinstance(n, ast.Subscript) and n.value is read), None)
        if id(read) not in header_reads or subscript is None or not (
                isinstance(subscript.slice, ast.Constant) and subscript.slice.value in names):
            return None
        replacements.append((subscript, names[subscript.slice.value]))
    loop_text = replace_nodes_text(filename, loop, replacements)
    unpacking = text_of(filename, statement)
    if loop_text is None or unpacking is None:
        return None
    lines = loop_text.split("\n")
    del lines[statement.lineno - loop.lineno]
    location = statement_location(filename, loop, role="read", note="the loop that unpacks ctx.saved_tensors each time")
    return statement_change(location, "unpack ctx.saved_tensors once, before the loop: the same tensors",
                            unpacking + "\n" + "\n".join(lines))


def _merge_unpackings(filename, function, reads):
    """Every read is a whole unpacking, `_, w = ctx.saved_tensors` in one branch and `x, _ =
    ctx.saved_tensors` in another (one per `if ctx.needs_input_grad[i]:`): one unpacking that binds
    every name, `x, w = ctx.saved_tensors`, before the first statement of backward that reads, and
    the other unpackings removed (the same tensors, unpacked once). None when two reads bind
    different names at one position, a name is bound elsewhere in backward, or removing a read
    would leave a block empty."""
    from autograd_doctor.diagnosis.model import Location

    unpackings = []
    for read in reads:
        statement = statement_at(filename, read.lineno)
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and statement.value is read
                and isinstance(statement.targets[0], (ast.Tuple, ast.List)) and statement.lineno == statement.end_lineno
                and all(isinstance(t, ast.Name) for t in statement.targets[0].elts)):
            return None
        unpackings.append(statement)
    sizes = {len(u.targets[0].elts) for u in unpackings}
    if len(unpackings) < 2 or len(sizes) != 1:
        return None
    names = ["_"] * sizes.pop()
    for unpacking in unpackings:
        for position, target in enumerate(unpacking.targets[0].elts):
            if target.id == "_":
                continue
            if names[position] not in ("_", target.id):
                return None
            names[position] = target.id
    bound_elsewhere = {t.id for n in ast.walk(function) if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign))
                       and n not in unpackings
                       for t in ast.walk(n.targets[0] if isinstance(n, ast.Assign) else n.target)
                       if isinstance(t, ast.Name)}
    if bound_elsewhere & set(names) - {"_"}:
        return None
    tops = [next((top for top in function.body if top.lineno <= u.lineno <= (top.end_lineno or top.lineno)), None)
            for u in unpackings]
    if any(top is None for top in tops):
        return None
    for unpacking in unpackings:
        for node in ast.walk(function):
            for field in ("body", "orelse"):
                body = getattr(node, field, None)
                if isinstance(body, list) and unpacking in body and len(body) == 1:
                    return None  # the block would be left empty
    first, last = tops[0], max(tops, key=lambda top: top.end_lineno or top.lineno)
    removed = {u.lineno for u in unpackings}
    indent = first.col_offset
    kept = []
    for number in range(first.lineno, (last.end_lineno or last.lineno) + 1):
        if number in removed:
            continue
        text = source_line(filename, number).rstrip()
        kept.append(text[indent:] if text[:indent].strip() == "" else text.strip())
    receiver = text_of(filename, reads[0])
    location = Location(file=filename, line=first.lineno, column=first.col_offset,
                        end_line=last.end_lineno, end_column=last.end_col_offset, role="read")
    return statement_change(location, f"read {receiver} once, before the first statement that uses it, binding "
                            f"every name the reads bind ({', '.join(n for n in names if n != '_')}), and use those "
                            "names: the same tensors, unpacked once (under checkpoint each read unpacks every "
                            "saved tensor again)", "\n".join([f"{', '.join(names)} = {receiver}"] + kept))


def _read_once_before(filename, function, statement, location, own):
    """Every read in one statement (`return tuple(... ctx.saved_tensors[1] ... for i in range(2))`):
    one read bound to a name just before it, which the statement uses instead (the same tensors,
    unpacked once)."""
    from autograd_doctor.diagnosis.source import replace_nodes_text

    name = "saved"
    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(function)) or \
            len({text_of(filename, r) for r in own}) != 1:
        return None
    new_text = replace_nodes_text(filename, statement, [(r, name) for r in own])
    if new_text is None:
        return None
    return statement_change(location, f"read {text_of(filename, own[0])} once, into {name}, before this statement, "
                            f"and use {name} in it: the same tensors, unpacked once",
                            f"{name} = {text_of(filename, own[0])}\n{new_text}")


def _reuse_first_read(filename, statement, location, first_statement, reads):
    """`ctx.saved_tensors[k]` in the raising statement -> the name the first read bound to index k."""
    names = {}
    if isinstance(first_statement, ast.Assign) and len(first_statement.targets) == 1:
        target, value = first_statement.targets[0], first_statement.value
        if isinstance(value, ast.Attribute) and value.attr == "saved_tensors" and isinstance(target, (ast.Tuple, ast.List)):
            names = {i: t.id for i, t in enumerate(target.elts) if isinstance(t, ast.Name)}
        elif isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute) and \
                isinstance(value.slice, ast.Constant) and isinstance(target, ast.Name):
            names = {value.slice.value: target.id}
    subscripts = [n for n in ast.walk(statement) if isinstance(n, ast.Subscript) and n.value in reads
                  and isinstance(n.slice, ast.Constant) and n.slice.value in names]
    if len(subscripts) != 1:
        return _one_unpacking(filename, statement, first_statement, names) or \
            _one_read_into_name(filename, statement, first_statement, reads)
    name = names[subscripts[0].slice.value]
    return statement_change(location, f"use {name}, which the first read already unpacked",
                            replace_node_text(filename, statement, subscripts[0], name))


def _one_unpacking(filename, statement, first_statement, names: dict):
    """`out = ctx.saved_tensors[0]` then, on the next line, `scale = ctx.saved_tensors[1]`: the two
    reads become one, `out, scale = ctx.saved_tensors[:2]` (one unpacking, the same tensors)."""
    from autograd_doctor.diagnosis.model import Location

    value = statement.value if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
    if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Attribute)
            and value.value.attr == "saved_tensors" and isinstance(value.slice, ast.Constant)
            and isinstance(statement.targets[0], ast.Name) and len(names) == 1):
        return None
    bound = {**names, value.slice.value: statement.targets[0].id}
    if sorted(bound) != list(range(len(bound))) or statement.lineno != first_statement.end_lineno + 1:
        return None
    receiver = text_of(filename, value.value)
    location = Location(file=filename, line=first_statement.lineno, column=first_statement.col_offset,
                        end_line=statement.end_lineno, end_column=statement.end_col_offset, role="read")
    return statement_change(location, f"read {receiver} once: unpack both tensors from one read (under "
                            "checkpoint each read unpacks every saved tensor again)",
                            f"{', '.join(bound[i] for i in sorted(bound))} = {receiver}[:{len(bound)}]")


def _one_read_into_name(filename, statement, first_statement, reads):
    """`has_bias = len(ctx.saved_tensors) == 3` then, on the next line, `x, w, b = ctx.saved_tensors`:
    one read bound to a name first (`saved = ctx.saved_tensors`), which both statements use (the
    same tensors, unpacked once)."""
    from autograd_doctor.diagnosis.model import Location
    from autograd_doctor.diagnosis.source import replace_nodes_text

    name = "saved"
    tree = parse_file(filename)
    function = enclosing_function(tree, statement.lineno) if tree is not None else None
    if function is None or statement.lineno != first_statement.end_lineno + 1 or \
            first_statement.col_offset != statement.col_offset or \
            any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(function)):
        return None
    texts = []
    for each in (first_statement, statement):
        own = [n for n in ast.walk(each) if n in reads]
        new_text = replace_nodes_text(filename, each, [(n, name) for n in own]) if own else None
        if new_text is None:
            return None
        texts.append(new_text)
    receiver = text_of(filename, reads[0])
    location = Location(file=filename, line=first_statement.lineno, column=first_statement.col_offset,
                        end_line=statement.end_lineno, end_column=statement.end_col_offset, role="read")
    return statement_change(location, f"read {receiver} once into a name ({name} = {receiver}) and use it in "
                            "both statements (under checkpoint each read unpacks every saved tensor again)",
                            "\n".join([f"{name} = {receiver}"] + texts))


MATCHERS = [
    (r"torch\.utils\.checkpoint: (A different number of tensors was saved|Recomputed values for the following "
     r"tensors have different metadata)", recompute_mismatch),
    (r"torch\.utils\.checkpoint: Unpack is being triggered for a tensor that was already unpacked once",
     saved_tensors_twice),
    (r"When use_reentrant=True, torch\.utils\.checkpoint is incompatible with \.grad\(\)", reentrant_with_grad),
]
