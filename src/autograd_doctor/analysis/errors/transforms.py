"""The tape-based autograd API used inside a `torch.func` transform (`vmap`, `grad`, `vjp`,
`jacrev`...): `loss.backward()`, `torch.autograd.grad`, `x.requires_grad_()`.

Inside a transform, tensors are wrapped per transform level; the tape does not see through
the wrappers, even when the tensor given to the transform requires grad. `torch.func.grad`
computes the gradient the user asked for, so where the loss is one expression of the input
the help writes that call.
"""

from __future__ import annotations

import ast
import os

from autograd_doctor.analysis.live_values import chain_value, frame_lookup
from autograd_doctor.diagnosis import codes
from autograd_doctor.analysis.errors.build import (
    diagnosis, find_calls, statement_change, statement_of, text_of, user_statement,
)
from autograd_doctor.analysis.errors.context import ErrorContext, enclosing_function, last_assignment
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import parse_file, replace_node_text, replace_nodes_text, statement_location

_FUNCTORCH_DIR = os.sep + os.path.join("torch", "_functorch") + os.sep
# The user-facing transforms, by the function torch runs for each (the traceback names them).
TRANSFORM_FUNCTIONS = {"vmap_impl": "vmap", "grad_and_value_impl": "grad", "grad_impl": "grad", "vjp": "vjp",
                       "jacrev": "jacrev", "jacfwd": "jacfwd", "jvp": "jvp"}


def is_functorch_frame(frame) -> bool:
    """Whether the frame runs code of torch's own torch.func implementation."""
    return _FUNCTORCH_DIR in frame.f_code.co_filename


def transform_name(context: ErrorContext) -> str | None:
    """The torch.func transform the error was raised under (from the traceback), else None."""
    names = [TRANSFORM_FUNCTIONS.get(frame.f_code.co_name, "a torch.func transform") for frame, _ in context.frames
             if _FUNCTORCH_DIR in frame.f_code.co_filename]
    specific = [name for name in names if name != "a torch.func transform"]
    return (specific or names or [None])[0]


def tape_api_in_transform(context: ErrorContext, already):
    """backward() or requires_grad_() called by a function being transformed."""
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    transform = transform_name(context) or "a torch.func transform"
    called = "requires_grad_()" if "requires_grad_" in context.message else "backward()"
    location.note = f"{called} inside a function transformed by {transform}"
    helps = [Suggestion(
        "let torch.func compute the gradient: make the function return the loss and transform it with "
        "torch.func.grad (vmap(grad(loss_fn))(x) for per-sample gradients); or call backward() outside the "
        "transform")]
    rewrite = _requires_grad_then_autograd_grad(filename, statement) if called == "requires_grad_()" else None
    if rewrite is not None:
        # `x = x.requires_grad_()` then `torch.autograd.grad(loss, x)` in the function vmap maps:
        # torch.func.grad computes the same gradient inside the transform, with no flag to set.
        helps.insert(0, Suggestion("compute the gradient with torch.func.grad, which works inside "
                                   f"{transform} and needs no requires_grad_() (it evaluates the loss again as a "
                                   "function of the input)", replacement=rewrite[1], location=rewrite[0]))
    functional = _functional_api_rewrite(frame, filename, statement) if called == "requires_grad_()" else None
    if functional is not None:
        # torch.autograd.functional.jacobian / hessian set requires_grad_() on their inputs; the
        # torch.func transform of the same name computes the same matrix inside the transform.
        helps.insert(0, statement_change(location, f"use {functional[0]}, the torch.func transform that computes "
                                         f"the same {functional[1]} and works inside {transform}", functional[2]))
    returned = _backward_of_returned_loss(context, filename, statement) if called == "backward()" else None
    if returned is not None:
        # `loss.backward()` left in a loss function given to torch.func.grad: grad already
        # differentiates the returned loss, and backward() inside it can fill no .grad anyway.
        helps.insert(0, Suggestion(f"delete this {returned}.backward() line: torch.func.grad already computes the "
                                   f"gradient of the {returned} the function returns",
                                   location=statement_location(filename, statement)))
    return diagnosis(codes.AUTOGRAD_INSIDE_TRANSFORM, location, notes=_notes(transform), help=helps)


# torch.autograd.functional's function -> (the torch.func transform computing the same, what it computes).
_FUNCTIONAL_TO_FUNC = {"jacobian": ("torch.func.jacrev", "Jacobian"), "hessian": ("torch.func.hessian", "Hessian")}


def _functional_api_rewrite(frame, filename: str, statement: ast.stmt):
    """(the transform, what it computes, the statement rewritten) for the one call in `statement` of
    torch.autograd.functional.jacobian / hessian as `f(func, x)` (one input, no keyword but
    create_graph, which a transform's result does not need): `torch.func.jacrev(func)(x)`."""
    import torch.autograd.functional as functional

    from autograd_doctor.analysis.errors.context import value_of

    found = []
    for call in (c for c in ast.walk(statement) if isinstance(c, ast.Call)):
        if not isinstance(call.func, (ast.Name, ast.Attribute)):
            continue
        value = value_of(frame, call.func)
        name = next((n for n in _FUNCTIONAL_TO_FUNC if value is getattr(functional, n)), None)
        if name is not None:
            found.append((name, call))
    if len(found) != 1:
        return None
    name, call = found[0]
    if len(call.args) != 2 or isinstance(call.args[1], (ast.Tuple, ast.List, ast.Starred)) \
            or any(k.arg != "create_graph" for k in call.keywords):
        return None
    function, inputs = text_of(filename, call.args[0]), text_of(filename, call.args[1])
    transform, computed = _FUNCTIONAL_TO_FUNC[name]
    rewritten = replace_node_text(filename, statement, call, f"{transform}({function})({inputs})")
    return (transform, computed, rewritten) if rewritten is not None else None


def _requires_grad_then_autograd_grad(filename: str, statement: ast.stmt):
    """(location, replacement) that drops `x = x.requires_grad_()` (or `x.requires_grad_()`) and
    writes the later `torch.autograd.grad(loss, x)` of the same block as torch.func.grad, when the
    statements between them are one line each; None otherwise."""
    call = statement.value if isinstance(statement, (ast.Expr, ast.Assign)) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_"
            and isinstance(call.func.value, ast.Name)):
        return None
    name = call.func.value.id
    if isinstance(statement, ast.Assign) and [ast.unparse(t) for t in statement.targets] != [name]:
        return None
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    block = next((body for node in ast.walk(scope) for body in (getattr(node, "body", None),)
                  if isinstance(body, list) and statement in body), None) if scope is not None else None
    if block is None:
        return None
    following = block[block.index(statement) + 1:]
    for index, later in enumerate(following):
        grads = [c for c in find_calls(later, "grad")
                 if text_of(filename, c.func) in ("torch.autograd.grad", "autograd.grad")]
        if not grads:
            continue
        between = following[:index]
        if len(grads) != 1 or len(grads[0].args) < 2 or ast.unparse(grads[0].args[1]) != name \
                or any(s.lineno != s.end_lineno for s in between):
            return None
        rewritten = _func_grad_rewrite(filename, later, grads[0])
        if rewritten is None:
            return None
        location = statement_location(filename, statement)
        location.end_line, location.end_column = later.end_lineno, later.end_col_offset
        return location, "\n".join([*(text_of(filename, s) for s in between), rewritten])
    return None


def _backward_of_returned_loss(context: ErrorContext, filename: str, statement: ast.stmt) -> str | None:
    """`name` when the statement is `name.backward()` alone, run under torch.func.grad (or
    grad_and_value), in a function whose every return statement returns `name`."""
    if not any(_FUNCTORCH_DIR in frame.f_code.co_filename and frame.f_code.co_name in ("grad_impl",
                                                                                       "grad_and_value_impl")
               for frame, _ in context.frames):
        return None
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "backward"
            and not call.args and not call.keywords and isinstance(call.func.value, ast.Name)):
        return None
    name = call.func.value.id
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    returns = [node for node in ast.walk(scope) if isinstance(node, ast.Return)]
    if not returns or not all(isinstance(r.value, ast.Name) and r.value.id == name for r in returns):
        return None
    return name


def autograd_grad_in_transform(context: ErrorContext, already):
    """torch.autograd.grad(loss, x) inside a transform: "element 0 of tensors does not require grad"."""
    transform = transform_name(context)
    if transform is None:
        return None
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    calls = [c for c in find_calls(statement, "grad") if text_of(filename, c.func) in ("torch.autograd.grad",
                                                                                       "autograd.grad")]
    location.note = f"torch.autograd.grad inside a function transformed by {transform}"
    helps = []
    if len(calls) == 1:
        rewrite = _func_grad_rewrite(filename, statement, calls[0])
        if rewrite is not None:
            helps.append(statement_change(location, "compute the gradient with torch.func.grad, which works inside "
                                          f"{transform} (it evaluates the loss again as a function of the input)",
                                          rewrite))
        rewrite = _func_grad_of_parameter_rewrite(frame, filename, statement, calls[0]) if rewrite is None else None
        if rewrite is not None:
            helps.append(statement_change(location, "compute the gradient with torch.func.grad, which works inside "
                                          f"{transform}: it evaluates the loss again as a function of the parameter, "
                                          "through torch.func.functional_call, with the module's other parameters as "
                                          "they are", rewrite))
    helps.append(Suggestion("or make the transformed function return the loss and transform it with torch.func.grad "
                            "(vmap(grad(loss_fn))(x) for per-sample gradients)"))
    return diagnosis(codes.AUTOGRAD_INSIDE_TRANSFORM, location, notes=_notes(transform), help=helps)


def _notes(transform: str) -> list[str]:
    return [f"inside {transform}, tensors are wrapped for the transform; the tape-based autograd API "
            "(backward(), torch.autograd.grad, requires_grad_()) does not see through them, even when the tensor "
            "given to the transform requires grad"]


def _func_grad_rewrite(filename: str, statement: ast.stmt, call: ast.Call) -> str | None:
    """`torch.func.grad(lambda x: <loss expression>)(x)` for `torch.autograd.grad(loss, x)[0]`,
    where `loss = <expression>` uses `x` and no other name bound in the same function."""
    if len(call.args) < 2 or not all(isinstance(a, ast.Name) for a in call.args[:2]):
        return None
    # torch.func.grad's result is differentiable by the transforms around it and keeps no graph to
    # retain: create_graph=True and retain_graph ask for nothing more. Other keywords change the result.
    for keyword in call.keywords:
        if not (keyword.arg == "retain_graph" or (keyword.arg == "create_graph" and isinstance(
                keyword.value, ast.Constant) and keyword.value.value is True)):
            return None
    output, input_name = call.args[0].id, call.args[1].id
    made = last_assignment(filename, output, statement.lineno)
    if not isinstance(made, ast.Assign) or len(made.targets) != 1:
        return None
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    bound_here = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound_here |= {a.arg for a in scope.args.args + scope.args.kwonlyargs}
    used = {n.id for n in ast.walk(made.value) if isinstance(n, ast.Name)}
    if input_name not in used or (used & bound_here) - {input_name}:
        return None  # the loss depends on other values computed from the input: not one expression
    expression = text_of(filename, made.value)
    new_call = f"torch.func.grad(lambda {input_name}: {expression})({input_name})"
    node = call
    parent = _subscript_zero(statement, call)
    if parent is not None:
        node = parent
    return replace_node_text(filename, statement, node, new_call)


def _func_grad_of_parameter_rewrite(frame, filename: str, statement: ast.stmt, call: ast.Call) -> str | None:
    """`gradient = torch.func.grad(lambda w: <loss with model(...) as functional_call>)(model.w)` for
    `(gradient,) = torch.autograd.grad(loss, model.w, create_graph=True)`, where `model.w` is a
    parameter of the module `model`, `loss = <expression>` calls `model` once, and the expression
    reads no other name the function computes (its arguments are inputs of the transform, constant
    for the gradient). torch.func.grad evaluates the loss again as a function of that parameter,
    the others as they are; its result stays differentiable for an outer backward()."""
    import torch

    if len(call.args) != 2 or not isinstance(call.args[0], ast.Name) or not isinstance(call.args[1], ast.Attribute) \
            or any(k.arg not in ("create_graph", "retain_graph") for k in call.keywords):
        return None
    owner = _value(frame, call.args[1].value)
    parameter = _value(frame, call.args[1])
    if not isinstance(owner, torch.nn.Module) or not isinstance(parameter, torch.nn.Parameter):
        return None
    names = [name for name, p in owner.named_parameters() if p is parameter]
    made = last_assignment(filename, call.args[0].id, statement.lineno)
    tree = parse_file(filename)
    scope = enclosing_function(tree, statement.lineno) if tree is not None else None
    if len(names) != 1 or not isinstance(made, ast.Assign) or len(made.targets) != 1 \
            or not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    computed_here = {n.id for n in ast.walk(scope) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    module_text = text_of(filename, call.args[1].value)
    module_calls = [c for c in ast.walk(made.value) if isinstance(c, ast.Call) and text_of(filename, c.func) == module_text]
    used = {n.id for n in ast.walk(made.value) if isinstance(n, ast.Name)}
    if len(module_calls) != 1 or module_calls[0].keywords or used & computed_here:
        return None
    argument = call.args[1].attr
    if argument in used or not argument.isidentifier():
        return None
    expression, module_call = text_of(filename, made.value), text_of(filename, module_calls[0])
    inputs = [text_of(filename, a) for a in module_calls[0].args]
    if expression is None or module_call is None or None in inputs or expression.count(module_call) != 1:
        return None
    functional = (f"torch.func.functional_call({module_text}, {{**dict({module_text}.named_parameters()), "
                  f"{names[0]!r}: {argument}}}, ({', '.join(inputs)},))")
    new_call = f"torch.func.grad(lambda {argument}: {expression.replace(module_call, functional)})({module_text}.{argument})"
    target = statement.targets[0] if isinstance(statement, ast.Assign) and len(statement.targets) == 1 else None
    if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == 1 and isinstance(target.elts[0], ast.Name) \
            and statement.value is call:
        return f"{target.elts[0].id} = {new_call}"
    parent = _subscript_zero(statement, call)
    return replace_node_text(filename, statement, parent, new_call) if parent is not None else None


def _subscript_zero(statement: ast.stmt, call: ast.Call) -> ast.Subscript | None:
    """`call[0]` around the call, if any (torch.autograd.grad returns a tuple, torch.func.grad a tensor)."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Subscript) and node.value is call and isinstance(node.slice, ast.Constant) \
                and node.slice.value == 0:
            return node
    return None


# ---- vmap: the function sees one example; what it makes itself has no batch dimension ----------

# torch.<factory>(size, ...) -> <input>.<method>(size, ...): the same tensor, made "like" an input, so
# that vmap gives it the input's batch dimension.
_FACTORIES = {"zeros": "new_zeros", "ones": "new_ones", "empty": "new_empty", "full": "new_full"}


def _under_vmap(context: ErrorContext) -> bool:
    return any(_FUNCTORCH_DIR in frame.f_code.co_filename and frame.f_code.co_name == "vmap_impl"
               for frame, _ in context.frames)


def _written_name(statement: ast.stmt) -> tuple[str, ast.expr] | None:
    """(name, written value) of `name[...] = value`, `name += value`, `name.add_(value)`."""
    target = value = None
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.targets[0], ast.Subscript):
        target, value = statement.targets[0].value, statement.value
    elif isinstance(statement, ast.AugAssign):
        target, value = statement.target, statement.value
        while isinstance(target, ast.Subscript):
            target = target.value
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) \
            and isinstance(statement.value.func, ast.Attribute) and statement.value.func.attr.endswith("_"):
        target, value = statement.value.func.value, statement.value
    if isinstance(target, ast.Name):
        return target.id, value
    return None


def _function_parameters(filename: str, line: int) -> list[str]:
    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    return [a.arg for a in function.args.posonlyargs + function.args.args if a.arg not in ("self", "cls")]


def vmap_write_into_unbatched(context: ErrorContext, already):
    """vmap: a batched value written in place into a tensor without the batch dimension (made in
    the function with torch.zeros(size), or outside it)."""
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    written = _written_name(statement)
    name = written[0] if written else None
    transform = "vmap"
    location.note = f"writes a value that has vmap's batch dimension into {name or 'a tensor'}, which has none"
    notes = [f"inside {transform} the function sees one example at a time, but every tensor computed from its inputs "
             f"carries the batch along; {name or 'the written tensor'} was not computed from them (a tensor made "
             "from a size, or one made outside the function), so it holds one example's worth of elements and "
             "cannot take the whole batch's values in place"]
    made = last_assignment(filename, name, line) if name else None
    while isinstance(made, ast.Assign) and all(isinstance(t, ast.Subscript) for t in made.targets):
        # `features[0] = 1.0` writes an item of the tensor; the tensor was made further up.
        made = last_assignment(filename, name, made.lineno)
    call = made.value if isinstance(made, ast.Assign) and len(made.targets) == 1 else None
    factory = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
        and isinstance(call.func.value, ast.Name) and call.func.value.id == "torch" else None
    like = _made_like_an_unbatched_tensor(frame, filename, made, call, factory)
    if like is not None:
        source, other = like
        primary = statement_location(filename, made, role="made", note=f"{name} is made like {other}, which has no "
                                     "batch dimension under vmap")
        location.role = "write"
        helps = [statement_change(primary, f"make {name} like the input {source}: it has the shape and dtype of "
                                  f"{other}, and under vmap it gets {source}'s batch dimension",
                                  replace_node_text(filename, made, call.args[0], source)),
                 Suggestion("or build the result out of place (torch.cat / torch.stack of the pieces), which vmap "
                            "batches like any other operation")]
        return diagnosis(codes.VMAP_WRITE_INTO_UNBATCHED, primary, [location], notes, helps)
    if made is None or factory not in _FACTORIES:
        return diagnosis(codes.VMAP_WRITE_INTO_UNBATCHED, location, notes=notes, help=[Suggestion(
            f"make {name or 'the tensor'} inside the function from one of its inputs (x.new_zeros(size), "
            "torch.zeros_like(x)), so that vmap batches it too, or build the result out of place "
            "(torch.cat / torch.stack of the pieces)")])
    parameters = _function_parameters(filename, made.lineno)
    read = {n.id for n in ast.walk(written[1]) if isinstance(n, ast.Name)} if written and written[1] is not None \
        else set()
    candidates = [p for p in parameters if p in read and _is_tensor(frame.f_locals.get(p))] or \
        [p for p in parameters if _is_tensor(frame.f_locals.get(p))]
    primary = statement_location(filename, made, role="made",
                                 note=f"{name} is made here from a size: it has no batch dimension under vmap")
    location.role = "write"
    helps = []
    if candidates:
        source = candidates[0]
        arguments = [text_of(filename, a) for a in call.args] + [text_of(filename, k) for k in call.keywords]
        new_call = f"{source}.{_FACTORIES[factory]}({', '.join(arguments)})"
        helps.append(statement_change(primary, f"make {name} from the input {source} ({source}.{_FACTORIES[factory]}): "
                                      f"the same values, and under vmap it gets {source}'s batch dimension",
                                      replace_node_text(filename, made, call, new_call)))
    helps.append(Suggestion("or build the result out of place (torch.cat / torch.stack of the pieces), which vmap "
                            "batches like any other operation"))
    return diagnosis(codes.VMAP_WRITE_INTO_UNBATCHED, primary, [location], notes, helps)


# torch.<factory>_like(t): a tensor with t's shape and dtype; made like a tensor the function closes
# over (a parameter, a buffer), it has no batch dimension under vmap.
_LIKE_FACTORIES = ("zeros_like", "ones_like", "empty_like", "full_like")


def _made_like_an_unbatched_tensor(frame, filename: str, made, call, factory: str | None):
    """(input's name, the tensor's text) when `name = torch.zeros_like(other)` copies the shape of a
    tensor that is not one of the function's inputs (`self.gate`) while an input tensor has that
    same shape and dtype for one example: made like that input, the values are the same and vmap
    batches it. None otherwise (two inputs fit, or none)."""
    if made is None or factory not in _LIKE_FACTORIES or not call.args:
        return None
    parameters = _function_parameters(filename, made.lineno)
    other = call.args[0]
    if isinstance(other, ast.Name) and other.id in parameters:
        return None
    value = _value(frame, other)
    if not _is_tensor(value):
        return None
    fitting = [p for p in parameters if _is_tensor(given := frame.f_locals.get(p))
               and given.shape == value.shape and given.dtype == value.dtype]
    other_text = text_of(filename, other)
    return (fitting[0], other_text) if len(fitting) == 1 and other_text else None


def _is_tensor(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _transformed_function_frame(context: ErrorContext):
    """(frame, line) of the user's function that the innermost torch.func transform called."""
    from autograd_doctor.recording.frames import is_internal_file

    found = None
    inside = False
    for frame, line in context.frames:
        filename = frame.f_code.co_filename
        if _FUNCTORCH_DIR in filename and frame.f_code.co_name in TRANSFORM_FUNCTIONS:
            inside, found = True, None  # functional_call, also in _functorch, is not a transform
        elif inside and found is None and not is_internal_file(filename):
            found = (frame, line)
    return found


def _batched_parameters(context: ErrorContext, function_frame) -> list[str] | None:
    """The transformed function's parameters that vmap maps over (in_dims not None), from the
    innermost vmap's own arguments; None when they cannot be told."""
    vmap_frames = [frame for frame, _ in context.frames
                   if _FUNCTORCH_DIR in frame.f_code.co_filename and frame.f_code.co_name == "vmap_impl"]
    if not vmap_frames:
        return None
    in_dims = vmap_frames[-1].f_locals.get("in_dims")
    code = function_frame.f_code
    parameters = list(code.co_varnames[:code.co_argcount])
    if isinstance(in_dims, int):
        return [p for p in parameters if _is_tensor(function_frame.f_locals.get(p))]
    if not isinstance(in_dims, tuple) or len(in_dims) != len(parameters):
        return None
    return [p for p, dim in zip(parameters, in_dims) if dim is not None]


def vmap_batch_dimension_indexed(context: ErrorContext, already):
    """Under vmap, code written for a batch indexes the batch dimension, which the function does
    not see ("too many indices for tensor of dimension 1", "Dimension out of range")."""
    if not _under_vmap(context):
        return None
    found = user_statement(context)
    transformed = _transformed_function_frame(context)
    if found is None or transformed is None:
        return None
    frame, line, filename, statement, location = found
    function_frame, function_line = transformed
    function_file = function_frame.f_code.co_filename
    entry, entry_location = statement_of(function_file, function_line)
    if entry is None:
        return None
    function = function_frame.f_code.co_name
    location.role, location.note = "indexed", "indexes a dimension the example does not have under vmap"
    entry_location.role = "transformed"
    entry_location.note = f"{function}() is the function vmap maps: its inputs are single examples, without the " \
                          "batch dimension"
    notes = [f"vmap calls {function}() with one example at a time: each input lacks the batch dimension that the "
             "code below it indexes (x[:, 0], x.size(1), dim=1 count it)"]
    batched = _batched_parameters(context, function_frame)
    scalar_output = any(_FUNCTORCH_DIR in f.f_code.co_filename and f.f_code.co_name in ("grad_impl",
                                                                                         "grad_and_value_impl")
                        for f, _ in context.frames)
    helps = []
    if batched and scalar_output and all(_is_tensor(function_frame.f_locals.get(p)) for p in batched):
        # A batch of one: the code sees the shape it was written for, and the loss (a mean or sum
        # over the batch of one) is the per-example loss that grad() differentiates.
        unsqueezed = ", ".join(f"{p}.unsqueeze(0)" for p in batched)
        first = _first_body_statement(function_file, function_line)
        if first is not None:
            text = text_of(function_file, first)
            helps.append(statement_change(statement_location(function_file, first),
                                          f"give the code a batch of one ({unsqueezed}): it sees the shape it was "
                                          "written for, and the loss over one example is that example's loss",
                                          f"{', '.join(batched)} = {unsqueezed}\n{text}"))
    leading = _leading_slices_as_ellipsis(frame, filename, statement, location) or \
        _dimension_from_the_end(context.message, filename, statement, location)
    if leading is not None:
        helps.append(leading)
    helps.append(Suggestion(f"{'or ' if helps else ''}write the code for one example (drop the batch dimension: "
                            "x[0] for x[:, 0], dim=0 for dim=1), as vmap sees it"))
    return diagnosis(codes.VMAP_BATCH_DIMENSION_INDEXED, entry_location, [location], notes, helps)


def _dimension_from_the_end(message: str, filename: str, statement: ast.stmt, location):
    """`dim=1` (or `x.size(1)`, `x.shape[1]`) in code written for a batch, out of range for one
    example under vmap ("expected to be in range of [-1, 0], but got 1"): the same dimension counted
    from the end (`dim=-1`), which names it in the batch and in the example alike."""
    import re

    found = re.search(r"expected to be in range of \[-(\d+), (\d+)\], but got (\d+)", message)
    if found is None:
        return None
    dims, given = int(found.group(1)), int(found.group(3))
    if given < dims or given < 1:
        return None
    from_end = given - (dims + 1)

    def literal(node):
        return isinstance(node, ast.Constant) and type(node.value) is int and node.value == given

    nodes = [k.value for k in ast.walk(statement) if isinstance(k, ast.keyword) and k.arg in ("dim", "axis")
             and literal(k.value)]
    nodes += [c.args[0] for c in ast.walk(statement) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
              and c.func.attr == "size" and len(c.args) == 1 and literal(c.args[0])]
    nodes += [n.slice for n in ast.walk(statement) if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Attribute)
              and n.value.attr == "shape" and literal(n.slice)]
    if not nodes:
        return None
    new_statement = replace_nodes_text(filename, statement, [(node, str(from_end)) for node in nodes])
    return statement_change(location, f"count the dimension from the end ({given} -> {from_end}): the same "
                            "dimension of a batch, and of the one example vmap gives the function", new_statement)


def _leading_slices_as_ellipsis(frame, filename: str, statement: ast.stmt, location):
    """`state[:, 0]` on a tensor that has one dimension under vmap (the batch's `:` is not there):
    `state[..., 0]`, which indexes the same elements of a batch and of one example, so the function
    means the same called on a batch and under vmap. Only when every index after the `:` addresses
    one of the example's own dimensions (as many indices as it has dimensions)."""
    changes = []
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
                and isinstance(node.slice, ast.Tuple) and len(node.slice.elts) >= 2):
            continue
        first = node.slice.elts[0]
        if not (isinstance(first, ast.Slice) and first.lower is None and first.upper is None and first.step is None):
            continue
        value = frame.f_locals.get(node.value.id)
        if not _is_tensor(value) or value.dim() != len(node.slice.elts) - 1 or \
                any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in node.slice.elts):
            continue
        rest = [text_of(filename, e) for e in node.slice.elts[1:]]
        if any(part is None for part in rest):
            return None
        changes.append((node, f"{node.value.id}[..., {', '.join(rest)}]"))
    if not changes:
        return None
    new_statement = replace_nodes_text(filename, statement, changes)
    shown = ", ".join(text for _, text in changes)
    return statement_change(location, f"index from the end ({shown}): the same elements of a batch, and of the one "
                            "example vmap gives the function", new_statement)


def _first_body_statement(filename: str, line: int) -> ast.stmt | None:
    """The first statement of the function around `line` (after its docstring), one line long."""
    tree = parse_file(filename)
    function = enclosing_function(tree, line) if tree is not None else None
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or body[0].lineno != body[0].end_lineno or isinstance(body[0], (ast.If, ast.For, ast.While,
                                                                                 ast.With, ast.Try)):
        return None
    return body[0]


def vmap_module_given_one_example(context: ErrorContext, already):
    """Under vmap, a module written for batches (BatchNorm: "expected 4D input (got 3D input)") is
    the transformed function itself (`vmap(jacrev(layers))(x)`): it gets one example without the
    batch dimension. The line to change is the transform's call; the help gives the module a batch
    of one and takes its one output back, which is the per-example function vmap maps."""
    import torch

    if not _under_vmap(context) or _transformed_function_frame(context) is not None:
        return None
    caller = _transform_caller(context)
    if caller is None:
        return None
    frame, line = caller
    filename = frame.f_code.co_filename
    statement, location = statement_of(filename, line)
    if statement is None:
        return None
    wrapped = [call.args[0] for call in ast.walk(statement) if isinstance(call, ast.Call) and call.args
               and _called_name(call) in _TRANSFORM_NAMES and isinstance(call.args[0], (ast.Name, ast.Attribute))]
    modules = [node for node in wrapped if isinstance(_value(frame, node), torch.nn.Module)]
    vmap_frames = [f for f, _ in context.frames
                   if _FUNCTORCH_DIR in f.f_code.co_filename and f.f_code.co_name == "vmap_impl"]
    arguments = vmap_frames[0].f_locals.get("args") if vmap_frames else None
    location.role = "transformed"
    location.note = "vmap maps this module over single examples, without the batch dimension"
    notes = ["vmap calls the function it maps with one example at a time; a module written for batches "
             f"(its layers check the input's rank) then gets an input one dimension short: {context.message}"]
    helps = []
    if len(modules) == 1 and isinstance(arguments, tuple) and len(arguments) == 1:
        module = text_of(filename, modules[0])
        new_statement = replace_node_text(filename, statement, modules[0],
                                          f"lambda sample: {module}(sample[None])[0]")
        helps.append(statement_change(location, f"give {module} a batch of one and take its one output back: that "
                                      "is the per-example function vmap maps (batch norm in training mode then "
                                      "normalizes each example by its own statistics)", new_statement))
    helps.append(Suggestion(f"{'or ' if helps else ''}call the module on a batch of one inside the mapped "
                            "function (module(x[None])[0]); for batch norm with the running statistics, put the "
                            "model in eval() mode, or see torch.func.replace_all_batch_norm_modules_"))
    found = diagnosis(codes.VMAP_BATCH_DIMENSION_INDEXED, location, notes=notes, help=helps)
    found.title = "under vmap, a module written for a batch gets one example without the batch dimension"
    return found


_TRANSFORM_NAMES = {"vmap", "jacrev", "jacfwd", "grad", "grad_and_value", "vjp", "jvp", "hessian"}


def _called_name(call: ast.Call) -> str | None:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _value(frame, node: ast.AST):
    return chain_value(frame_lookup(frame), node)


def _transform_caller(context: ErrorContext):
    """(frame, line) of the user's code that called the outermost torch.func transform."""
    from autograd_doctor.recording.frames import is_internal_file

    caller = None
    for frame, line in context.frames:
        if _FUNCTORCH_DIR in frame.f_code.co_filename:
            return caller
        if not is_internal_file(frame.f_code.co_filename):
            caller = (frame, line)
    return None


MATCHERS = [
    # "inplace arithmetic" for +=, mul_, ...; the op itself for index_add_, scatter_, copy_-like writes.
    (r"vmap: [\w ]+\(self, \*extra_args\) is not possible", vmap_write_into_unbatched),
    (r"too many indices for tensor of dimension \d+|Dimension out of range \(expected to be in range of",
     vmap_batch_dimension_indexed),
    (r"expected \d+D input \(got \d+D input\)", vmap_module_given_one_example),
    (r"backward\(\) called inside a functorch transform", tape_api_in_transform),
    (r"You are attempting to call Tensor\.requires_grad_\(\) \(or perhaps using torch\.autograd\.functional\.\* "
     r"APIs\) inside of a function being transformed", tape_api_in_transform),
]
