"""What `torch.func` transforms refuse to run: a custom autograd.Function written with
`forward(ctx, ...)` (AD231) or without a vmap rule (AD232), activation checkpointing under
`grad`/`vjp`/`jacrev` (AD233), a batch norm's running statistics updated in place under those
transforms (AD178), a Function without `jvp` under forward-mode AD (AD237), and an in-place write
under `vmap` into an argument it does not map (AD144, raised by the write's own broadcasting check).

The Function is found in the traceback (torch's `Function.apply` frame holds its class); the
change is written in the class's own file, and only when the user wrote that file.
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.errors import transforms
from autograd_doctor.analysis.errors.build import diagnosis, statement_change, statement_of, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Location, Suggestion
from autograd_doctor.diagnosis.source import display_path, parse_file, replace_node_text, source_line, statement_location


def _function_class(context: ErrorContext):
    """The custom autograd.Function class whose apply() the error left, else None."""
    import torch

    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name == "apply" and frame.f_code.co_filename.endswith("function.py"):
            cls = frame.f_locals.get("cls")
            if isinstance(cls, type) and issubclass(cls, torch.autograd.Function):
                return cls
    return None


def _user_class_definition(cls) -> tuple[str, ast.ClassDef] | None:
    """(file, class statement) of `cls` when it is defined in a file of the user's. Found through
    the code of its own staticmethods: a class of a program run as `__main__` by a runner has no
    module to look its file up in."""
    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    methods = [cls.__dict__[name] for name in ("forward", "setup_context", "backward") if name in cls.__dict__]
    code = next((getattr(getattr(m, "__func__", m), "__code__", None) for m in methods), None)
    if code is None:
        return None
    filename = code.co_filename
    if is_internal_file(filename) or in_installed_package(filename):
        return None
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__ \
                and node.lineno <= code.co_firstlineno <= node.end_lineno:
            return filename, node
    return None


def _method(class_node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in class_node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _line_location(filename: str, line: int, note: str = "", end_line: int | None = None) -> Location:
    text = source_line(filename, line)
    return Location(file=display_path(filename), line=line, column=len(text) - len(text.lstrip()),
                    end_line=end_line or line, end_column=len(source_line(filename, end_line or line)),
                    source=text.strip(), note=note)


# ---- AD231: forward(ctx, ...) under a transform ----------------------------------------------

def function_without_setup_context(context: ErrorContext, already):
    import torch

    cls = _function_class(context)
    transform = transforms.transform_name(context) or "a torch.func transform"
    found = _user_class_definition(cls) if cls is not None else None
    forward = _method(found[1], "forward") if found is not None else None
    advice = Suggestion("move what forward does with ctx into @staticmethod setup_context(ctx, inputs, output) and "
                        "drop ctx from forward's arguments; an intermediate that backward needs is returned by "
                        "forward as an extra output (marked non-differentiable) so that setup_context can save it")
    notes = [f"{transform} runs a custom Function only when its forward takes no ctx: the transforms call "
             "setup_context(ctx, inputs, output) themselves, at each of their levels"]
    if forward is None:
        location = context.raise_location("raised", f"{cls.__name__ if cls else 'a custom Function'}.apply under "
                                                    f"{transform}")
        return diagnosis(codes.FUNCTION_WITHOUT_SETUP_CONTEXT, location, notes=notes, help=[advice])
    filename = found[0]
    location = _line_location(filename, forward.lineno, f"forward of {cls.__name__} takes ctx; {transform} needs it "
                                                        "in setup_context")
    helps = [advice]
    split = _split_forward(filename, forward)
    if split is not None:
        first = forward.decorator_list[0].lineno if forward.decorator_list else forward.lineno
        message = ("split forward: it computes the output without ctx, and the ctx lines move to setup_context, "
                   "which reads forward's arguments from inputs and its result from output (the same tensors, "
                   "saved the same way)")
        if first != forward.lineno:
            # Replaced from its first decorator on, so that a class attribute can go before it.
            decorators = [source_line(filename, n)[forward.col_offset:] for n in range(first, forward.lineno)]
            split = "\n".join(decorators + [split])
        if _needs_a_vmap_rule(context, cls, filename, found[1]):
            # Under vmap the split Function would fail next for want of a vmap rule (AD232).
            split = "generate_vmap_rule = True\n\n" + split
            message += "; and, as it runs under vmap, generate_vmap_rule = True (its staticmethods compute with " \
                       "PyTorch operations only)"
        change = Location(file=location.file, line=first, column=forward.col_offset,
                          end_line=forward.end_lineno, end_column=forward.end_col_offset, source=location.source)
        if _under_forward_mode(context) and cls.jvp is torch.autograd.Function.jvp:
            # Under jvp/jacfwd (hessian is jacfwd(jacrev)) the split Function would fail next for want
            # of a jvp staticmethod (AD237), whose Jacobian is the Function author's: advice only.
            helps.insert(0, Suggestion(
                f"{message}; and, as it runs under forward mode (jvp, jacfwd, or hessian, which is "
                "jacfwd(jacrev)), add a @staticmethod jvp(ctx, *tangents) (saving what it needs with ctx.save_for_forward in setup_context); or, "
                "for a Hessian, use jacrev(jacrev(f)), which needs backward only"))
        else:
            helps.insert(0, Suggestion(message, replacement=split, location=change))
    return diagnosis(codes.FUNCTION_WITHOUT_SETUP_CONTEXT, location, notes=notes, help=helps)


_FORWARD_MODE_FRAMES = ("push_jvp", "_jvp_with_argnums", "jacfwd")


def _under_forward_mode(context: ErrorContext) -> bool:
    """Whether the Function ran under a forward-mode transform (jvp, jacfwd, hessian)."""
    return any(frame.f_code.co_name in _FORWARD_MODE_FRAMES and transforms.is_functorch_frame(frame)
               for frame, _ in context.frames)


def _needs_a_vmap_rule(context: ErrorContext, cls, filename: str, class_node: ast.ClassDef) -> bool:
    """Whether the Function runs under vmap without a vmap rule, and one can be generated for it."""
    import torch

    under_vmap = any(transforms.TRANSFORM_FUNCTIONS.get(frame.f_code.co_name) == "vmap"
                     and transforms.is_functorch_frame(frame) for frame, _ in context.frames)
    has_rule = getattr(cls, "generate_vmap_rule", False) or cls.vmap is not torch.autograd.Function.vmap
    return under_vmap and not has_rule and not _LEAVES_TORCH.search(_class_text(filename, class_node))


def _class_text(filename: str, class_node: ast.ClassDef) -> str:
    return "\n".join(source_line(filename, n) for n in range(class_node.lineno, class_node.end_lineno + 1))


def _split_forward(filename: str, forward: ast.FunctionDef) -> str | None:
    """forward without ctx, then setup_context with forward's ctx statements, as source text
    relative to the def's indentation; None unless every ctx statement is a statement of
    forward's own body that reads only ctx, forward's arguments (never rebound), the names
    forward returns (`return out` or `return a, b`) and names from outside forward, and no
    other statement reads ctx."""
    arguments = forward.args
    if arguments.vararg or arguments.kwarg or arguments.kwonlyargs or arguments.posonlyargs or arguments.defaults \
            or len(arguments.args) < 2 or forward.body[-1:] == [] or not isinstance(forward.body[-1], ast.Return):
        return None
    ctx, inputs = arguments.args[0].arg, [a.arg for a in arguments.args[1:]]
    returned = forward.body[-1].value
    if isinstance(returned, ast.Name):
        outputs = [returned.id]
    elif isinstance(returned, ast.Tuple) and all(isinstance(e, ast.Name) for e in returned.elts):
        outputs = [e.id for e in returned.elts]
    else:
        outputs = []
    if sum(isinstance(n, ast.Return) for n in ast.walk(forward)) != 1:
        return None
    bound = {n.id for n in ast.walk(forward) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if bound & set(inputs) or ctx in bound:
        return None
    ctx_statements, kept = [], []
    for statement in forward.body:
        reads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
        (ctx_statements if ctx in reads else kept).append(statement)
    if not ctx_statements:
        return None
    for statement in ctx_statements:
        if not isinstance(statement, (ast.Expr, ast.Assign)):
            return None
        if isinstance(statement, ast.Assign) and not all(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == ctx
                for t in statement.targets):
            return None
        reads = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        if (reads & bound) - set(outputs):
            return None  # reads an intermediate of forward: setup_context cannot see it
    body_indent = _indent_of(filename, forward.body[0].lineno) - forward.col_offset
    if body_indent <= 0:
        return None
    pad = " " * body_indent

    def text(statements) -> list[str]:
        lines = []
        for statement in statements:
            for number in range(statement.lineno, statement.end_lineno + 1):
                line = source_line(filename, number)
                lines.append(line[forward.col_offset:] if line.strip() else "")
        return lines

    setup = [f"{pad}{', '.join(inputs)}{',' if len(inputs) == 1 else ''} = inputs"]
    if any(isinstance(n, ast.Name) and n.id in outputs for s in ctx_statements for n in ast.walk(s)):
        setup.append(f"{pad}{', '.join(outputs)} = output")
    header = source_line(filename, forward.lineno)[forward.col_offset:]
    if header.count("(") < 1 or not header.rstrip().split("#")[0].rstrip().endswith(":"):
        return None
    new_header = f"def forward({', '.join(inputs)}):"
    decorators = "".join(f"@{text_of(filename, d)}\n" for d in forward.decorator_list) or "@staticmethod\n"
    lines = [new_header, *text(kept), "", *decorators.rstrip("\n").split("\n"),
             "def setup_context(ctx, inputs, output):", *setup, *text(ctx_statements)]
    if ctx != "ctx":
        lines[-len(ctx_statements):] = [re.sub(rf"\b{ctx}\b", "ctx", line) for line in lines[-len(ctx_statements):]]
    return "\n".join(lines)


def _indent_of(filename: str, line: int) -> int:
    text = source_line(filename, line)
    return len(text) - len(text.lstrip())


# ---- AD232: no vmap rule under vmap ----------------------------------------------------------

# Calls that leave PyTorch: a Function that makes them cannot be batched by running it under vmap.
_LEAVES_TORCH = re.compile(r"\.(numpy|item|tolist)\(|\bnp\.|\bnumpy\.")


def function_without_vmap_rule(context: ErrorContext, already):
    cls = _function_class(context)
    found = _user_class_definition(cls) if cls is not None else None
    notes = ["vmap batches a custom Function only when it says how: a vmap staticmethod, or "
             "generate_vmap_rule = True, which runs forward, setup_context and backward under vmap as any PyTorch code"]
    advice = Suggestion("write a @staticmethod vmap(info, in_dims, *args) that computes the batched result and "
                        "returns (output, out_dims); needed when the Function leaves PyTorch (NumPy, .item())")
    if found is None:
        location = context.raise_location("raised", "a custom Function without a vmap rule, under vmap")
        return diagnosis(codes.FUNCTION_WITHOUT_VMAP_RULE, location, notes=notes, help=[advice])
    filename, class_node = found
    location = _line_location(filename, class_node.lineno, f"{cls.__name__} has no vmap staticmethod and no "
                                                          "generate_vmap_rule = True")
    helps = [advice]
    forward = _method(class_node, "forward")
    takes_ctx = not _method(class_node, "setup_context")
    class_text = _class_text(filename, class_node)
    if forward is not None and not takes_ctx and not _LEAVES_TORCH.search(class_text) \
            and class_node.body and class_node.body[0].lineno > class_node.lineno:
        header = source_line(filename, class_node.lineno)
        code_part = header.split("#")[0].rstrip()
        if code_part.endswith(":"):
            pad = " " * (_indent_of(filename, class_node.body[0].lineno) - _indent_of(filename, class_node.lineno))
            change = Location(file=location.file, line=class_node.lineno, column=class_node.col_offset,
                              end_line=class_node.lineno, end_column=len(code_part), source=location.source)
            helps.insert(0, Suggestion(f"let PyTorch generate the vmap rule: {cls.__name__}'s staticmethods compute "
                                       "with PyTorch operations only, so running them under vmap batches them "
                                       "(the same values for each example)",
                                       replacement=f"{code_part.strip()}\n{pad}generate_vmap_rule = True",
                                       location=change))
    elif takes_ctx:
        helps.append(Suggestion("generate_vmap_rule needs forward without ctx: move the ctx lines to setup_context "
                                "first (AD231)"))
    return diagnosis(codes.FUNCTION_WITHOUT_VMAP_RULE, location, notes=notes, help=helps)


# ---- AD237: a Function without jvp under forward-mode AD ------------------------------------

def function_without_jvp(context: ErrorContext, already):
    cls = _function_class(context)
    found = _user_class_definition(cls) if cls is not None else None
    notes = ["forward-mode AD (torch.func.jvp, jacfwd, forward_ad dual tensors) calls a custom Function's own jvp "
             "staticmethod to push the tangent through it; PyTorch cannot derive it from backward"]
    name = cls.__name__ if cls is not None else "the Function"
    helps = [Suggestion(
        f"add a @staticmethod jvp(ctx, *tangents) to {name} that returns the output's tangent, the Jacobian times the "
        "inputs' tangents (for an elementwise function: the tangent times the derivative backward multiplies "
        "grad_output by), and save the tensors it reads with ctx.save_for_forward(...) in setup_context"),
        Suggestion("or, if reverse mode is enough, use torch.func.jacrev / vjp, which call backward")]
    if found is None:
        location = context.raise_location("raised", "a custom Function without jvp, under forward-mode AD")
        return diagnosis(codes.FUNCTION_WITHOUT_JVP, location, notes=notes, help=helps)
    filename, class_node = found
    location = _line_location(filename, class_node.lineno, f"{name} has no jvp staticmethod")
    reverse = _transform_call_in_reverse_mode(context, cls, filename, class_node) or \
        _functional_call_in_reverse_mode(context, cls, filename, class_node)
    if reverse is not None:
        helps.insert(0, reverse)
    return diagnosis(codes.FUNCTION_WITHOUT_JVP, location, notes=notes, help=helps)


# Forward-mode transforms whose value reverse mode computes too: the Jacobian (jacfwd) and the Hessian
# (hessian, which is jacfwd(jacrev)). jvp, linearize and dual tensors ask for forward mode by name.
_REVERSE_FORMS = {"jacfwd": 1, "hessian": 2}


def _transform_call_in_reverse_mode(context: ErrorContext, cls, filename: str, class_node: ast.ClassDef):
    """`jacrev(f, ...)` for `jacfwd(f, ...)` and `jacrev(jacrev(f, ...), ...)` for `hessian(f, ...)` in the
    user's statement that called the outermost torch.func transform: the same Jacobian, computed from the
    Function's own backward (the one a jvp written from backward gives). Only where the Function can run
    under the transforms (setup_context, and a vmap rule: jacrev maps its vjp with vmap) and, for the
    Hessian, its backward can be differentiated again (not @once_differentiable, PyTorch operations only);
    the call written `name(f[, argnums])` with torch or jacrev reachable by name. None otherwise."""
    import torch

    if "setup_context" not in cls.__dict__ or "backward" not in cls.__dict__:
        return None
    if not (getattr(cls, "generate_vmap_rule", False) or "vmap" in cls.__dict__):
        return None
    caller = None
    for frame, line in context.frames:  # outermost first: the user's frame that entered torch.func
        if transforms.is_functorch_frame(frame):
            break
        caller = (frame, line)
    if caller is None:
        return None
    found = _user_statement(*caller)
    if found is None:
        return None
    caller_file, statement = found
    named = [(call, (text_of(caller_file, call.func) or "").split(".")[-1]) for call in ast.walk(statement)
             if isinstance(call, ast.Call)]
    if any(word in ("jvp", "linearize", "make_dual") for _, word in named):
        return None
    chosen = [(call, word) for call, word in named if word in _REVERSE_FORMS]
    if len(chosen) != 1:
        return None
    call, word = chosen[0]
    if not 1 <= len(call.args) <= 2 or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg != "argnums" for k in call.keywords):
        return None
    if word == "hessian":
        backward = _method(class_node, "backward")
        if backward is None or _LEAVES_TORCH.search(text_of(filename, backward) or "") or any(
                "once_differentiable" in (text_of(filename, d) or "") for d in backward.decorator_list):
            return None
    spelled = text_of(caller_file, call.func) or ""
    names = frame.f_globals
    if spelled.endswith("." + word) and \
            getattr(_value_of_dotted(names, spelled.rsplit(".", 1)[0]), "jacrev", None) is torch.func.jacrev:
        jacrev = spelled.rsplit(".", 1)[0] + ".jacrev"
    elif names.get("torch") is torch:
        jacrev = "torch.func.jacrev"
    elif names.get("jacrev") is torch.func.jacrev:
        jacrev = "jacrev"
    else:
        return None
    arguments = ", ".join(text_of(caller_file, node) or "" for node in [*call.args, *call.keywords])
    argnums = ", ".join(text_of(caller_file, node) or "" for node in [*call.args[1:], *call.keywords])
    rewritten = f"{jacrev}({arguments})"
    if word == "hessian":
        rewritten = f"{jacrev}({rewritten}{', ' + argnums if argnums else ''})"
    replacement = replace_node_text(caller_file, statement, call, rewritten)
    if replacement is None:
        return None
    what = "the Jacobian" if word == "jacfwd" else "the Hessian (jacrev of jacrev)"
    return Suggestion(
        f"compute {what} in reverse mode, which calls {cls.__name__}'s backward: `{rewritten}` gives the same values "
        f"as {word} with a jvp written from that backward, and needs none",
        replacement=replacement, location=statement_location(caller_file, statement))


# torch.autograd.functional's spelling of the same choice: forward mode asked for by a keyword of
# jacobian / hessian, whose default (reverse mode) computes the same values from backward.
_FORWARD_MODE_KEYWORDS = {"jacobian": "strategy", "hessian": "outer_jacobian_strategy"}


def _backward_differentiable_again(filename: str, class_node: ast.ClassDef) -> bool:
    """Whether the Function's backward can itself be differentiated: written with PyTorch operations
    only and not @once_differentiable (a Hessian in reverse mode differentiates backward)."""
    backward = _method(class_node, "backward")
    return backward is not None and not _LEAVES_TORCH.search(text_of(filename, backward) or "") and not any(
        "once_differentiable" in (text_of(filename, d) or "") for d in backward.decorator_list)


def _user_statement(frame, line: int) -> tuple[str, ast.stmt] | None:
    """(file, statement) of the user's line that called into torch, or None when the frame is a
    library's (its statement is not a line the user can change)."""
    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    filename = frame.f_code.co_filename
    if is_internal_file(filename) or in_installed_package(filename):
        return None
    statement, _ = statement_of(filename, line)
    return (filename, statement) if statement is not None else None


def _functional_call_in_reverse_mode(context: ErrorContext, cls, filename: str, class_node: ast.ClassDef):
    """`torch.autograd.functional.jacobian(..., strategy="forward-mode")` or `hessian(...,
    outer_jacobian_strategy="forward-mode")` in the user's statement that called torch.autograd.functional:
    the same call without that keyword computes the same values in reverse mode, from the Function's own
    backward. Only where the Function can run there (setup_context and backward; a vmap rule when the call
    vectorizes) and, for the Hessian, its backward can be differentiated again. None otherwise."""
    import os

    if "setup_context" not in cls.__dict__ or "backward" not in cls.__dict__:
        return None
    functional_file = os.path.join("torch", "autograd", "functional.py")
    caller = None
    for (frame, line), (inner, _) in zip(context.frames, context.frames[1:]):
        if inner.f_code.co_filename.endswith(functional_file):
            caller = (frame, line)
            break
    if caller is None:
        return None
    found = _user_statement(*caller)
    if found is None:
        return None
    caller_file, statement = found
    chosen = []
    for call in ast.walk(statement):
        word = (text_of(caller_file, call.func) or "").split(".")[-1] if isinstance(call, ast.Call) else ""
        keyword = _FORWARD_MODE_KEYWORDS.get(word)
        if keyword and any(k.arg == keyword and isinstance(k.value, ast.Constant) and k.value.value == "forward-mode"
                           for k in call.keywords):
            chosen.append((call, word, keyword))
    if len(chosen) != 1:
        return None
    call, word, keyword = chosen[0]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    vectorized = any(k.arg == "vectorize" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
                     for k in call.keywords)
    if vectorized and not (getattr(cls, "generate_vmap_rule", False) or "vmap" in cls.__dict__):
        return None
    if word == "hessian" and not _backward_differentiable_again(filename, class_node):
        return None
    kept = [text_of(caller_file, node) for node in [*call.args, *(k for k in call.keywords if k.arg != keyword)]]
    if None in kept:
        return None
    rewritten = f"{text_of(caller_file, call.func)}({', '.join(kept)})"
    replacement = replace_node_text(caller_file, statement, call, rewritten)
    if replacement is None:
        return None
    what = "the Jacobian" if word == "jacobian" else "the Hessian"
    return Suggestion(
        f"compute {what} in reverse mode, {word}'s default, which calls {cls.__name__}'s backward: without "
        f"{keyword}=\"forward-mode\" the call gives the same values as forward mode with a jvp written from that "
        "backward, and needs none",
        replacement=replacement, location=statement_location(caller_file, statement))


def _value_of_dotted(names: dict, dotted: str):
    """The object a dotted name (`torch.func`) refers to in a module's globals, else None."""
    parts = dotted.split(".")
    value = names.get(parts[0])
    for part in parts[1:]:
        value = getattr(value, part, None)
    return value


# ---- AD233: checkpoint under torch.func.grad -------------------------------------------------

# checkpoint's own keywords: the rest go to the checkpointed function.
_CHECKPOINT_KEYWORDS = {"use_reentrant", "preserve_rng_state", "determinism_check", "debug", "context_fn"}


def checkpoint_under_transform(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    transform = transforms.transform_name(context) or "a torch.func transform"
    calls = [c for c in ast.walk(statement) if isinstance(c, ast.Call) and (text_of(filename, c.func) or "").split(
        ".")[-1] == "checkpoint"]
    location.note = f"checkpoint inside a function that {transform} differentiates"
    notes = [f"the non-reentrant checkpoint works through saved-tensor hooks, which {transform} does not support"]
    helps = [Suggestion("or, to keep the memory checkpointing saves, compute the gradients with backward() or "
                        "torch.autograd.grad outside the torch.func transform")]
    if len(calls) == 1 and calls[0].args and not any(isinstance(a, ast.Starred) for a in calls[0].args):
        call = calls[0]
        passed = [k for k in call.keywords if k.arg not in _CHECKPOINT_KEYWORDS]
        arguments = [text_of(filename, a) for a in call.args[1:]] + [text_of(filename, k) for k in passed]
        direct = f"{text_of(filename, call.args[0])}({', '.join(arguments)})"
        from autograd_doctor.diagnosis.source import replace_node_text

        helps.insert(0, statement_change(location, "call the function directly: the same values and gradients, "
                                         "without the memory checkpointing saves",
                                         replace_node_text(filename, statement, call, direct)))
    direct_sequential = _sequential_called_directly(frame, filename, statement) if not calls else None
    if direct_sequential is not None:
        helps.insert(0, statement_change(location, "run the modules directly: checkpoint_sequential runs them in "
                                         "order on the input, the same values and gradients, without the memory "
                                         "checkpointing saves", direct_sequential))
    hooks_block = _saved_tensor_hooks_block(context) if not calls and direct_sequential is None else None
    if hooks_block is not None:
        return _transform_inside_hooks_block(context, location, transform, hooks_block)
    rebound = _forward_rebound_to_checkpoint(context, frame) if not calls and direct_sequential is None else None
    if rebound is not None:
        rebound_file, rebinding = rebound
        location.role, location.note = "", f"{transform} differentiates a module whose forward runs under checkpoint"
        primary = statement_location(rebound_file, rebinding, role="checkpoint",
                                     note="forward is re-bound to run under the non-reentrant checkpoint")
        helps.insert(0, Suggestion("delete this line: forward then runs directly, the same values and gradients, "
                                   "without the memory checkpointing saves", None, primary, deletes_statement=True))
        return diagnosis(codes.CHECKPOINT_UNDER_FUNC_TRANSFORM, primary, [location], notes=notes, help=helps)
    return diagnosis(codes.CHECKPOINT_UNDER_FUNC_TRANSFORM, location, notes=notes, help=helps)


def _forward_rebound_to_checkpoint(context: ErrorContext, frame):
    """(file, statement) of the one `X.forward = functools.partial(checkpoint, ...)` in the user's files
    reachable from the failing frame, when a module bound in the user's frames has such a forward of its
    own (its `__dict__`, read without running code): a helper that re-binds modules' forwards to run
    under checkpoint (activation checkpointing applied from outside), which the traceback does not show.
    None otherwise."""
    import functools

    import torch.utils.checkpoint

    from autograd_doctor.analysis.errors.grad_api import _user_files_reachable
    from autograd_doctor.analysis.errors.hook_returns import _modules_reached

    from autograd_doctor.recording.frames import frame_locals

    # The function the failing checkpoint call ran: a module's own forward, bound before the re-binding.
    checkpointed = [frame_locals(f).get("function") for f, _ in context.frames
                    if f.f_code.co_name == "checkpoint" and f.f_globals.get("__name__") == "torch.utils.checkpoint"]

    def rebound(module) -> bool:
        forward = object.__getattribute__(module, "__dict__").get("forward")
        return isinstance(forward, functools.partial) and forward.func is torch.utils.checkpoint.checkpoint \
            and bool(forward.args) and any(forward.args[0] is function for function in checkpointed)

    if not any(rebound(module) for module in _modules_reached(context)):
        return None
    found = []
    for filename in _user_files_reachable(frame)[:16]:
        tree = parse_file(filename)
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                    and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "forward" \
                    and isinstance(node.value, ast.Call) and node.value.args \
                    and (text_of(filename, node.value.func) or "").split(".")[-1] == "partial" \
                    and (text_of(filename, node.value.args[0]) or "").split(".")[-1] == "checkpoint":
                found.append((filename, node))
    return found[0] if len(found) == 1 else None


_HOOK_CONTEXTS = ("save_on_cpu", "saved_tensors_hooks")


def _saved_tensor_hooks_block(context: ErrorContext):
    """(frame's file, the `with` statement, its kinds of hooks, whether it is in the innermost user
    frame) for the innermost `with torch.autograd.graph.save_on_cpu():` or `saved_tensors_hooks(...)`
    block of the user's frames whose body holds the line that frame was running: saved-tensor
    hooks the user turned on around the transform, not a checkpoint. None when there is none."""
    for depth, (frame, line) in enumerate(context.user_frames()):
        filename = frame.f_code.co_filename
        tree = parse_file(filename)
        if tree is None:
            continue
        scope = enclosing_function(tree, line)
        blocks = [node for node in ast.walk(scope) if isinstance(node, (ast.With, ast.AsyncWith)) and node.body
                  and node.body[0].lineno <= line <= (node.end_lineno or node.lineno)]
        for block in sorted(blocks, key=lambda node: node.lineno, reverse=True):
            kinds = [(text_of(filename, item.context_expr.func) or "").split(".")[-1] for item in block.items
                     if isinstance(item.context_expr, ast.Call)]
            if kinds and len(kinds) == len(block.items) and all(kind in _HOOK_CONTEXTS for kind in kinds):
                return filename, block, kinds, depth == 0
    return None


def _transform_inside_hooks_block(context: ErrorContext, location: Location, transform: str, found):
    filename, block, kinds, same_frame = found
    header = source_line(filename, block.lineno).strip()
    location.note = f"{transform} is called inside the `{header.rstrip(':')}` block"
    related = [_line_location(filename, block.lineno, "saved-tensor hooks are on for everything this block runs")]
    notes = [f"{' and '.join(sorted(set(kinds)))} installs saved-tensor hooks for every operation run inside the "
             f"block; {transform} does not support saved-tensor hooks, so it refuses to run there (no checkpoint is "
             "involved)"]
    helps = [Suggestion(f"call {transform} outside the `with` block: the hooks only change where the tensors "
                        "autograd saves are kept, not their values")]
    statement = next((node for node in block.body if node.lineno <= location.line <= (node.end_lineno or node.lineno)),
                     None)
    if same_frame and statement is not None and set(kinds) == {"save_on_cpu"} \
            and block.body[0].lineno == block.lineno + 1:
        # save_on_cpu keeps the same values on the CPU: running the block's first statements, up to
        # the transform's, before the block computes the same values.
        prefix = block.body[:block.body.index(statement) + 1]
        outer = _indent_of(filename, block.lineno)
        inner = _indent_of(filename, block.body[0].lineno)
        moved = []
        for node in prefix:
            for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                text = source_line(filename, number).rstrip()
                cut = min(inner - outer, len(text) - len(text.lstrip()) - outer) if text.strip() else 0
                moved.append(text[outer + max(cut, 0):] if text.strip() else "")
        if len(block.body) > len(prefix):
            replacement = "\n".join(moved + [header])
            change = Location(file=display_path(filename), line=block.lineno, column=block.col_offset,
                              end_line=statement.end_lineno, end_column=statement.end_col_offset,
                              source=header)
            helps.insert(0, Suggestion(f"run the block's statements up to the {transform} call before the `with` "
                                       "block: save_on_cpu only keeps saved tensors on the CPU, so the values are "
                                       "the same, and the transform then runs without saved-tensor hooks",
                                       replacement=replacement, location=change))
    return diagnosis(codes.CHECKPOINT_UNDER_FUNC_TRANSFORM, location, related=related, notes=notes, help=helps)


def _sequential_called_directly(frame, filename: str, statement: ast.stmt) -> str | None:
    """The statement with `checkpoint_sequential(layers, segments, x, ...)` replaced by `layers(x)`
    when `layers` is an nn.Sequential (the one call in the statement; its keywords are all
    checkpoint's own), else None."""
    import torch

    from autograd_doctor.analysis.errors.context import value_of
    from autograd_doctor.diagnosis.source import replace_node_text

    calls = [c for c in ast.walk(statement) if isinstance(c, ast.Call) and (text_of(filename, c.func) or "").split(
        ".")[-1] == "checkpoint_sequential"]
    if len(calls) != 1:
        return None
    call = calls[0]
    if len(call.args) != 3 or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg not in _CHECKPOINT_KEYWORDS for k in call.keywords):
        return None
    layers = call.args[0]
    if not isinstance(layers, (ast.Name, ast.Attribute)) or not isinstance(value_of(frame, layers), torch.nn.Sequential):
        return None
    return replace_node_text(filename, statement, call,
                             f"{text_of(filename, layers)}({text_of(filename, call.args[2])})")


# ---- AD178: a module's buffer updated in place under torch.func.grad -----------------------

def _batch_norm_in_traceback(context: ErrorContext):
    """The batch norm module whose forward the error left (a traceback frame whose `self` is
    one), else None."""
    import torch

    for frame, _ in reversed(context.frames):
        module = frame.f_locals.get("self")
        if isinstance(module, torch.nn.modules.batchnorm._BatchNorm):
            return module
    return None


def _constructions(filenames: list[str], class_name: str) -> list[tuple[str, ast.stmt, ast.Call]]:
    """Every call `...<class_name>(...)` in the given files, with its statement."""
    found = []
    for filename in filenames:
        tree = parse_file(filename)
        if tree is None:
            continue
        for statement in ast.walk(tree):
            if not isinstance(statement, ast.stmt) or isinstance(
                    statement, (ast.FunctionDef, ast.ClassDef, ast.Module, ast.If, ast.For, ast.While, ast.With)):
                continue
            for call in ast.walk(statement):
                if isinstance(call, ast.Call) and (text_of(filename, call.func) or "").split(".")[-1] == class_name:
                    found.append((filename, statement, call))
    return found


def buffer_mutated_under_transform(context: ErrorContext, already):
    """An in-place write into a captured tensor under torch.func.grad/vjp/jacrev. For a batch norm
    layer that tracks running statistics in training mode (its buffers are what is written), the
    layer's construction is named, and where the user's files build that class once the change
    adds `track_running_stats=False`: in training mode the layer normalises with the batch's
    statistics either way."""
    from autograd_doctor.diagnosis.source import replace_node_text

    transform = transforms.transform_name(context) or "a torch.func transform"
    module = _batch_norm_in_traceback(context)
    raised = context.raise_location("raised")
    if module is None or not module.track_running_stats or not module.training:
        if raised is None:
            return None
        raised.note = f"{transform} runs this, and something in it writes in place into a tensor it did not receive"
        return diagnosis(codes.BUFFER_MUTATED_UNDER_FUNC_TRANSFORM, raised, notes=[
            f"{transform} allows in-place writes only into tensors the transformed function receives as inputs "
            "or creates itself"], help=[Suggestion(
                "write out of place, or pass the tensor to the transformed function as an input")])
    class_name = type(module).__name__
    found = _constructions(context.files_reached(), class_name)
    notes = [f"{class_name} in training mode updates running_mean, running_var and num_batches_tracked in place at "
             f"each forward; under {transform} these buffers are captured from outside the function, which "
             f"{transform} does not allow to change"]
    helps = [Suggestion("or, if the running statistics are needed (eval mode), pass the buffers to the transformed "
                        "function with functional_call(net, (params, buffers), ...) and keep them out of its "
                        "gradient, or update them outside the transform")]
    if len(found) != 1:
        if raised is None:
            return None
        raised.note = f"{class_name} updates its running statistics in place under {transform}"
        helps.insert(0, Suggestion(f"build the {class_name} layers with track_running_stats=False: in training mode "
                                   "they normalise with the batch's statistics either way"))
        return diagnosis(codes.BUFFER_MUTATED_UNDER_FUNC_TRANSFORM, raised, related=[raised], notes=notes, help=helps)
    filename, statement, call = found[0]
    location = statement_location(filename, statement)
    location.note = f"this {class_name} tracks running statistics, which its forward updates in place"
    if raised is not None:
        raised.note = f"{transform} runs the layer from here"
    related = [raised] if raised is not None else []
    change = None
    keywords = {k.arg: k for k in call.keywords}
    call_text = text_of(filename, call)
    if "track_running_stats" not in keywords and call_text is not None and call_text.endswith(")") \
            and not any(isinstance(a, ast.Starred) for a in call.args) and None not in keywords:
        separator = ", " if call.args or call.keywords else ""
        change = replace_node_text(filename, statement, call, f"{call_text[:-1]}{separator}track_running_stats=False)")
    notes.append("with track_running_stats=False the layer keeps no running statistics: in eval() mode it also "
                 "normalises with the batch's statistics")
    helps.insert(0, statement_change(location if change else None,
                                     "keep no running statistics: in training mode the layer normalises with the "
                                     "batch's statistics either way, so the values and gradients are the same",
                                     change))
    return diagnosis(codes.BUFFER_MUTATED_UNDER_FUNC_TRANSFORM, location, related=related, notes=notes, help=helps)


# ---- AD112: torch.func.grad of a function that returns several numbers -----------------------

def func_grad_of_non_scalar(context: ErrorContext, already):
    """grad(f)(x) where f returns a tensor with several elements: the function's return, advice only
    (which reduction is meant decides the gradient's scale, as for torch.autograd.grad)."""
    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    frame = context.torch_frame("grad_and_value_impl")
    function = frame.f_locals.get("func") if frame is not None else None
    output = frame.f_locals.get("output") if frame is not None else None
    code = getattr(getattr(function, "func", function), "__code__", None)  # a functools.partial's function
    location = None
    if code is not None and not is_internal_file(code.co_filename) and not in_installed_package(code.co_filename):
        tree = parse_file(code.co_filename)
        defined = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.Lambda))
                   and (n.lineno == code.co_firstlineno or any(
                       d.lineno == code.co_firstlineno for d in getattr(n, "decorator_list", [])))] if tree else []
        if len(defined) == 1 and isinstance(defined[0], ast.FunctionDef):
            returns = [n for n in ast.walk(defined[0]) if isinstance(n, ast.Return)]
            if len(returns) == 1:
                location = _line_location(code.co_filename, returns[0].lineno, end_line=returns[0].end_lineno)
    if location is None:
        location = context.raise_location("raised")
    if location is None:
        return None
    shape = list(output.shape) if output is not None and hasattr(output, "shape") else None
    location.note = f"returns a tensor of shape {shape}, not a single number" if shape else \
        "returns a tensor with several elements, not a single number"
    notes = ["torch.func.grad differentiates a function that returns one number (a loss); the gradient of a "
             "tensor with several elements is a Jacobian"]
    helps = [Suggestion("reduce what the function returns to the number whose gradient you want: .sum() (or .mean(), "
                        "whose gradient is 1/N of it); autograd-doctor does not choose, as the scale of the gradient "
                        "returned is the result. For one gradient per element use torch.func.jacrev; for one per "
                        "example, make the function compute one example's loss and use vmap(grad(f))")]
    return diagnosis(codes.BACKWARD_NON_SCALAR, location, notes=notes, help=helps)


# ---- AD144: an in-place write into an argument vmap does not map ------------------------------

_SHAPES = re.compile(r"output with shape \[([\d, ]*)\] doesn't match the broadcast shape \[([\d, ]*)\]")
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.MatMult: "@"}


def vmap_write_into_unmapped_argument(context: ErrorContext, already):
    """`name += value` under vmap into `name`, an argument vmap does not map (in_dims=None): the
    write's broadcasting check fails first, with the batch size in front of the target's shape."""
    shapes = _SHAPES.search(context.message)
    if shapes is None or transforms.transform_name(context) != "vmap":
        return None
    target_shape = [s.strip() for s in shapes.group(1).split(",") if s.strip()]
    broadcast = [s.strip() for s in shapes.group(2).split(",") if s.strip()]
    if broadcast[1:] != target_shape:
        return None  # not only the batch dimension is extra: a shape mistake of the example itself
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    parameters = [a.arg for a in function.args.args] if isinstance(function, ast.FunctionDef) else []
    if not (isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name)
            and statement.target.id in parameters):
        # A tensor made inside the function from a size: the catalogue's vmap write (AD144).
        return transforms.vmap_write_into_unbatched(context, already)
    name = statement.target.id
    location.note = f"writes a value with vmap's batch dimension into {name}, an argument vmap does not map"
    notes = [f"{name} is passed with in_dims=None: every example sees the same tensor, without a batch "
             "dimension, so it cannot hold each example's result in place"]
    value = text_of(filename, statement.value)
    operator = _OPERATORS.get(type(statement.op))
    helps = []
    if operator is not None and value is not None:
        if _needs_parentheses(statement.value, statement.op):
            value = f"({value})"
        helps.append(statement_change(location, f"write out of place: {name} then refers to a new, batched tensor "
                                      "for each example, and the caller's tensor keeps its values",
                                      f"{name} = {name} {operator} {value}"))
    helps.append(Suggestion(f"or map {name} too (in_dims=0, with one row per example), if each example has its own"))
    return diagnosis(codes.VMAP_WRITE_INTO_UNBATCHED, location, notes=notes, help=helps)


# Binding strength of the binary operators an augmented assignment can use.
_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Mod: 2, ast.MatMult: 2,
               ast.Pow: 3}


def _needs_parentheses(value: ast.expr, operator: ast.operator) -> bool:
    """Whether `name op value` needs `value` in parentheses to mean `name op= value`."""
    if isinstance(value, ast.BinOp):
        return _PRECEDENCE.get(type(value.op), 0) <= _PRECEDENCE.get(type(operator), 0)
    if isinstance(value, ast.UnaryOp):
        return isinstance(operator, ast.Pow)
    return isinstance(value, (ast.BoolOp, ast.Compare, ast.IfExp, ast.Lambda, ast.NamedExpr))


MATCHERS = [
    (r"You must implement the jvp function for custom autograd\.Function to use it with forward mode AD",
     function_without_jvp),
    (r"During a grad \(vjp, jvp, grad, etc\) transform, the function provided attempted to call in-place "
     r"operation \([\w:.]+\) that would mutate a captured Tensor", buffer_mutated_under_transform),
    (r"grad_and_value\(f\)\(\*args\): Expected f\(\*args\) to return a scalar Tensor", func_grad_of_non_scalar),
    (r"In order to use an autograd\.Function with functorch transforms .* it must override the setup_context "
     r"staticmethod", function_without_setup_context),
    (r"You tried to vmap over \w+, but it does not have vmap support", function_without_vmap_rule),
    (r"torch\.func(\.\{[\w, ]+\})? (transforms )?don't yet support saved tensor hooks", checkpoint_under_transform),
    (r"output with shape \[[\d, ]*\] doesn't match the broadcast shape \[[\d, ]*\]",
     vmap_write_into_unmapped_argument),
]
