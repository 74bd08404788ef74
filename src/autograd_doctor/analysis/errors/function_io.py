"""What `torch.func` and `torch.autograd.functional` refuse in what the user's function returns or
is given: `grad(f, has_aux=True)` of a function that does not return the pair (output, aux)
(AD234), `jacobian`/`vjp`/`hessian(..., strict=True)` of a function whose output does not depend
on its input (AD235), a forward-mode tangent of another size than its primal (`jvp`,
`make_dual`, AD236) or of an integer dtype (AD239), and `make_dual` outside `dual_level()` (AD238).

The function is found through the transform's frame (its `func` local); the change is written in
the user's file only.
"""

from __future__ import annotations

import ast
import re

from autograd_doctor.analysis.errors.build import diagnosis, find_calls, statement_change, text_of, user_statement
from autograd_doctor.analysis.errors.context import ErrorContext, last_assignment
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Suggestion
from autograd_doctor.diagnosis.source import (
    parse_file, replace_node_text, replace_nodes_text, source_line, statement_location,
)


def _user_function(context: ErrorContext, torch_functions: tuple[str, ...]):
    """(file, def statement) of the function a transform was given (the `func` local of the
    innermost torch frame among `torch_functions`), when the user wrote it; else None."""
    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name not in torch_functions:
            continue
        function = frame.f_locals.get("func")
        function = getattr(function, "func", function)  # a functools.partial's function
        code = getattr(function, "__code__", None)
        wrapped = getattr(getattr(function, "__func__", function), "__wrapped__", None)
        if code is not None and wrapped is not None and getattr(wrapped, "__code__", None) is not None \
                and (is_internal_file(code.co_filename) or in_installed_package(code.co_filename)):
            # A library's decorator on the user's def (`@torch.no_grad()` on a method): the def is the
            # user's function, its decorators stay in view (AD235 reads them).
            code = wrapped.__code__
        if code is None and function is not None and not isinstance(function, type):
            # An object called as the function: its class's __call__ (a module's forward).
            import torch

            method = getattr(type(function), "forward" if isinstance(function, torch.nn.Module) else "__call__", None)
            code = getattr(method, "__code__", None)
        if code is None or is_internal_file(code.co_filename) or in_installed_package(code.co_filename):
            return None
        tree = parse_file(code.co_filename)
        defined = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and (
            n.lineno == code.co_firstlineno or any(d.lineno == code.co_firstlineno for d in n.decorator_list))] \
            if tree is not None else []
        return (code.co_filename, defined[0]) if len(defined) == 1 else None
    return None


def _only_return(function: ast.FunctionDef) -> ast.Return | None:
    """The function's one `return value` statement (nested functions' returns are not its own)."""
    returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
    nested = [n for n in ast.walk(function) if isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not function]
    if nested or len(returns) != 1 or returns[0].value is None:
        return None
    return returns[0]


def _transformed_function_globals(context: ErrorContext, torch_functions: tuple[str, ...]) -> dict | None:
    """The module globals of the function a transform was given (the `func` local of the innermost
    torch frame among `torch_functions`)."""
    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name in torch_functions:
            function = frame.f_locals.get("func")
            function = getattr(function, "func", function)
            function = getattr(function, "__func__", function)
            found = getattr(function, "__globals__", None)
            return found if isinstance(found, dict) else None
    return None


def _named_tuple_fields(context: ErrorContext, value: ast.expr) -> tuple[str, list[ast.expr]] | None:
    """(class name, the values in field order) for `return Name(a, b, c)` where Name, in the
    transformed function's module, is a named tuple class (a tuple subclass with `_fields`) and the
    call gives every field, positionally or by name; None otherwise."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name) \
            or any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
        return None
    scope = _transformed_function_globals(context, ("grad_and_value_impl", "_vjp_with_argnums", "wrapper_fn"))
    kind = scope.get(value.func.id) if scope is not None else None
    fields = getattr(kind, "_fields", None)
    if not (isinstance(kind, type) and issubclass(kind, tuple) and isinstance(fields, tuple)):
        return None
    if len(value.args) + len(value.keywords) != len(fields):
        return None
    by_name = {keyword.arg: keyword.value for keyword in value.keywords}
    if any(name not in fields[len(value.args):] for name in by_name):
        return None
    return kind.__name__, list(value.args) + [by_name[name] for name in fields[len(value.args):]]


def _dataclass_output(context: ErrorContext, filename: str, function: ast.FunctionDef, value: ast.expr):
    """(class name, the scalar field, the other fields) when the function returned (the transform's
    `output` local, seen at run time) an instance of a dataclass built by the return statement itself
    (`return StepResult(...)`), and exactly one of its fields holds a floating-point tensor of one
    element (the value to differentiate); None otherwise."""
    import dataclasses

    import torch

    if not isinstance(value, ast.Call):
        return None
    output = None
    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name == "grad_and_value_impl" and "output" in frame.f_locals:
            output = frame.f_locals["output"]
            break
    if output is None or not dataclasses.is_dataclass(output) or isinstance(output, type):
        return None
    class_name = type(output).__name__
    called = value.func.attr if isinstance(value.func, ast.Attribute) else getattr(value.func, "id", None)
    if called != class_name:
        return None
    scalars = [field.name for field in dataclasses.fields(output)
               if isinstance(getattr(output, field.name, None), torch.Tensor)
               and getattr(output, field.name).numel() == 1 and getattr(output, field.name).is_floating_point()]
    if len(scalars) != 1:
        return None
    return class_name, scalars[0], [field.name for field in dataclasses.fields(output) if field.name != scalars[0]]


# ---- AD234: grad(f, has_aux=True) of a function that does not return (output, aux) ------------

_AUX_TRANSFORM_FRAMES = ("grad_and_value_impl", "_vjp_with_argnums", "wrapper_fn", "_jvp_with_argnums")


def _lambda_callee(context: ErrorContext, torch_functions: tuple[str, ...]):
    """(file, def statement) when the function a transform was given is a lambda whose body is one call
    of a function or method the user wrote (`lambda p: self.log_probs(p, obs)`), found through the
    lambda's closure and globals (never by calling anything); else None."""
    import inspect

    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    for frame, _ in reversed(context.frames):
        if frame.f_code.co_name not in torch_functions:
            continue
        function = frame.f_locals.get("func")
        code = getattr(function, "__code__", None)
        if code is None or code.co_name != "<lambda>" or is_internal_file(code.co_filename) \
                or in_installed_package(code.co_filename):
            return None
        tree = parse_file(code.co_filename)
        lambdas = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno] \
            if tree is not None else []
        if len(lambdas) != 1 or not isinstance(lambdas[0].body, ast.Call):
            return None
        callee = lambdas[0].body.func
        try:
            variables = inspect.getclosurevars(function)
        except (TypeError, ValueError):
            return None
        scope = {**variables.builtins, **variables.globals, **variables.nonlocals}
        if isinstance(callee, ast.Name):
            target = scope.get(callee.id)
        elif isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) and callee.value.id in scope:
            target = inspect.getattr_static(scope[callee.value.id], callee.attr, None)
            if target is None:
                target = inspect.getattr_static(type(scope[callee.value.id]), callee.attr, None)
        else:
            return None
        target = getattr(target, "__func__", target)
        target_code = getattr(target, "__code__", None)
        if target_code is None or is_internal_file(target_code.co_filename) \
                or in_installed_package(target_code.co_filename):
            return None
        target_tree = parse_file(target_code.co_filename)
        defined = [n for n in ast.walk(target_tree) if isinstance(n, ast.FunctionDef)
                   and n.lineno == target_code.co_firstlineno] if target_tree is not None else []
        return (target_code.co_filename, defined[0]) if len(defined) == 1 else None
    return None


_CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Tuple)


def _one_value(function: ast.FunctionDef, value: ast.expr) -> bool:
    """Whether the returned expression is one value, not a container written out (a list, a dict) nor a
    name the function binds to one: the output alone, which the transform differentiates without has_aux."""
    if isinstance(value, _CONTAINERS + (ast.Starred, ast.Constant)):
        return False
    if isinstance(value, ast.Name):
        for node in ast.walk(function):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and any(
                    isinstance(t, ast.Name) and t.id == value.id
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])) \
                    and isinstance(node.value, _CONTAINERS):
                return False
    return True


def _aux_dropped_at_call(context: ErrorContext, returned_location):
    """(the call's location, the help) for a transform called with has_aux=True whose function returns one
    value: where the call's result is unpacked into names whose last one (the aux) is not read later in
    the caller's function, the call without has_aux=True and without that name computes the same output
    (the transform then returns one value less). None otherwise."""
    from autograd_doctor.analysis.errors.context import enclosing_function

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Tuple) and len(statement.targets[0].elts) >= 2
            and all(isinstance(e, ast.Name) for e in statement.targets[0].elts)):
        return None
    calls = [call for call in ast.walk(statement.value) if isinstance(call, ast.Call) and any(
        k.arg == "has_aux" and isinstance(k.value, ast.Constant) and k.value.value is True for k in call.keywords)]
    if len(calls) != 1 or any(isinstance(a, ast.Starred) for a in calls[0].args) \
            or any(k.arg is None for k in calls[0].keywords):
        return None
    call = calls[0]
    name = (text_of(filename, call.func) or "").split(".")[-1]
    if name not in ("jvp", "vjp", "grad", "jacrev", "jacfwd"):
        return None
    targets = statement.targets[0].elts
    if name in ("jvp", "vjp") and len(targets) != 3 or name not in ("jvp", "vjp") and len(targets) != 2:
        return None
    aux = targets[-1].id
    tree = parse_file(filename)
    scope = enclosing_function(tree, line) if tree is not None else None
    if scope is None or any(isinstance(node, ast.Name) and node.id == aux and isinstance(node.ctx, ast.Load)
                            for node in ast.walk(scope)):
        return None  # the aux is read somewhere: what it should become is the user's choice
    parts = [text_of(filename, a) for a in call.args] + \
        [f"{k.arg}={text_of(filename, k.value)}" for k in call.keywords if k.arg != "has_aux"]
    if None in parts or any(p is None for p in parts):
        return None
    new_call = f"{text_of(filename, call.func)}({', '.join(parts)})"
    kept = ", ".join(text_of(filename, e) for e in targets[:-1])
    new_statement = replace_nodes_text(filename, statement, [(statement.targets[0], kept), (call, new_call)])
    if new_statement is None:
        return None
    location.note = f"asks for an auxiliary value ({aux}) that the function does not return"
    return location, statement_change(
        location, f"drop has_aux=True and {aux}: the function returns its output alone, {aux} is not read "
        f"afterwards, and {name}() then returns the same values without it", new_statement)


def aux_not_a_pair(context: ErrorContext, already):
    found = _user_function(context, _AUX_TRANSFORM_FRAMES) or _lambda_callee(context, _AUX_TRANSFORM_FRAMES)
    if found is None:
        return None
    filename, function = found
    returned = _only_return(function)
    if returned is None:
        return None
    location = statement_location(filename, returned, note="returns something other than the pair (output, aux)")
    notes = ["with has_aux=True, the function must return exactly two things: the output to differentiate "
             "and one auxiliary value (any tuple, dict or tensor), which is handed back as it is, without a gradient"]
    helps = []
    value = returned.value
    named = _named_tuple_fields(context, value)
    if named is not None:
        # `return StepOutput(loss, logits, correct)`: a named tuple is a tuple of its fields.
        class_name, elements = named
        value = ast.Tuple(elts=elements, ctx=ast.Load())
    if isinstance(value, ast.Tuple) and len(value.elts) > 2 and not any(isinstance(e, ast.Starred) for e in value.elts):
        first = text_of(filename, value.elts[0])
        rest = [text_of(filename, e) for e in value.elts[1:]]
        if first is not None and None not in rest:
            location.note = f"returns {len(value.elts)} values side by side" if named is None else \
                f"returns a {named[0]}, a named tuple: {len(value.elts)} values side by side"
            helps.append(statement_change(
                location, f"return the output and the {len(rest)} auxiliary values as one tuple: the caller then "
                f"receives (gradient, ({', '.join(rest)}))", f"return {first}, ({', '.join(rest)})"))
    elif isinstance(value, ast.Tuple) and len(value.elts) == 1 and isinstance(inner := value.elts[0], ast.Tuple) \
            and len(inner.elts) == 2 and not any(isinstance(e, ast.Starred) for e in inner.elts) and \
            None not in (pair := [text_of(filename, e) for e in inner.elts]):
        # `return (loss, accuracy),`: a trailing comma wraps the pair in a tuple of one element; the
        # element is exactly the (output, aux) the transform wants.
        location.note = "returns a tuple of one element, the pair (output, aux): a trailing comma wraps it"
        helps.append(statement_change(
            location, f"return the pair itself, without the trailing comma: {pair[0]} is the output differentiated, "
            f"{pair[1]} the auxiliary value handed back as it is", f"return {pair[0]}, {pair[1]}"))
    elif isinstance(value, ast.List) and len(value.elts) == 2 and \
            not any(isinstance(e, ast.Starred) for e in value.elts) and \
            None not in (pair := [text_of(filename, e) for e in value.elts]):
        # `return [z, z.norm()]`: the pair, as a list; the transforms take only a tuple.
        location.note = "returns the pair (output, aux) as a list: the transform needs a tuple"
        helps.append(statement_change(
            location, f"return the same two values as a tuple: {pair[0]} is the output differentiated, "
            f"{pair[1]} the auxiliary value handed back as it is", f"return {pair[0]}, {pair[1]}"))
    elif (kept := _dataclass_output(context, filename, function, value)) is not None:
        # `return StepResult(loss, logits)`, a dataclass: not a pytree, so it cannot be the aux either
        # (the transform hands back only tensors in tuples, lists and dicts); the caller reads its
        # fields, so the change spans two places: advice naming the fields.
        class_name, field, others = kept
        location.note = f"returns a {class_name}, a dataclass: one object, not the pair (output, aux)"
        aux = "{" + ", ".join(f'"{name}": ...' for name in others) + "}" if others else "()"
        helps.append(Suggestion(
            f"return the pair ({field}, aux): {field} is the {class_name}'s one scalar tensor, the value differentiated; "
            f"a dataclass cannot be the aux either (the transform hands back only tensors in tuples, lists and dicts), "
            f"so return the other fields as a dict or tuple ({aux}) and read them from the aux where the transform is "
            "called"))
    elif named is not None:
        helps.append(Suggestion(f"return exactly (output, aux): {named[0]} is a named tuple of {len(value.elts)} "
                                "values; gather the auxiliary values into one tuple or dict"))
    elif not isinstance(value, ast.Tuple):
        location.note = "returns one value: there is no auxiliary value"
        dropped = _aux_dropped_at_call(context, location) if _one_value(function, value) else None
        if dropped is not None:
            call_location, change = dropped
            return diagnosis(codes.AUX_NOT_A_PAIR, call_location, [location], notes, [change, Suggestion(
                "or return (output, aux) from the function if it should hand back an auxiliary value")])
        helps.append(Suggestion("return (output, aux) if the function has an auxiliary value to hand back, or "
                                "drop has_aux=True (the transform then returns the gradient alone)"))
    else:
        helps.append(Suggestion("return exactly (output, aux): gather the auxiliary values into one tuple or dict"))
    return diagnosis(codes.AUX_NOT_A_PAIR, location, notes=notes, help=helps)


# ---- AD235: strict=True and an output independent of the input -------------------------------

_FUNCTIONAL_FUNCTIONS = ("jacobian", "hessian", "vjp", "jvp", "vhp", "hvp")


def _copies_values(filename: str, call: ast.Call) -> bool:
    """`torch.tensor(...)`, `torch.as_tensor(...)`, `x.new_tensor(...)`: calls that build a tensor from
    the values of the elements of a list, without their graph."""
    spelled = text_of(filename, call.func) or ""
    return spelled in ("torch.tensor", "torch.as_tensor") + tuple(_LEGACY_CONSTRUCTORS) or (
        isinstance(call.func, ast.Attribute) and call.func.attr == "new_tensor")


# The legacy constructors copy the values too, into their own dtype (torch.Tensor: the default one):
# the stacked elements are cast to it, which autograd records.
_LEGACY_CONSTRUCTORS = {"torch.Tensor": "", "torch.FloatTensor": ".float()", "torch.DoubleTensor": ".double()"}


def _torch_tensor_of_a_list(filename: str, node: ast.AST) -> ast.Call | None:
    """`torch.tensor([a, b, ...])` (or `torch.as_tensor`, `x.new_tensor`; a list or tuple of computed
    values, no other argument) in `node`."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and _copies_values(filename, call) \
                and len(call.args) == 1 and not call.keywords and isinstance(call.args[0], (ast.List, ast.Tuple)) \
                and call.args[0].elts and not all(isinstance(e, ast.Constant) for e in call.args[0].elts):
            return call
    return None


def _number_conversion_inside(node: ast.AST) -> ast.AST | None:
    """The tensor inside a conversion to Python numbers that keeps the value and drops the graph:
    `float(e)`, `e.item()` (an element of a list given to torch.tensor); None otherwise."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" \
            and len(node.args) == 1 and not node.keywords:
        return node.args[0]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item" \
            and not node.args and not node.keywords:
        return node.func.value
    return None


def _round_trip_inside(node: ast.AST) -> ast.AST | None:
    """The tensor inside `e.tolist()`, `e.numpy()`, `e.detach().numpy()`, `e.detach().cpu().numpy()`
    (the argument of torch.tensor(...)): its values leave autograd and come back as a new tensor."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("tolist", "numpy") and not node.args and not node.keywords):
        return None
    inner = node.func.value
    while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
            and inner.func.attr in ("detach", "cpu") and not inner.args and not inner.keywords:
        inner = inner.func.value
    return inner


def _torch_tensor_of_a_round_trip(filename: str, node: ast.AST) -> ast.Call | None:
    """`torch.tensor(e.tolist())` (or `as_tensor`, `new_tensor`, `e.numpy()`, with `.detach()` and
    `.cpu()` on the way) in `node`."""
    for call in ast.walk(node):
        if isinstance(call, ast.Call) and _copies_values(filename, call) and len(call.args) == 1 \
                and not call.keywords and _round_trip_inside(call.args[0]) is not None:
            return call
    return None


def _stacked_elements(filename: str, elements: ast.AST) -> str:
    """The text of the list given to torch.stack: each `float(e)` or `e.item()` element written `e`."""
    parts = []
    for element in elements.elts:
        inner = _number_conversion_inside(element)
        parts.append(text_of(filename, inner if inner is not None else element))
    opening, closing = ("[", "]") if isinstance(elements, ast.List) else ("(", ")")
    return opening + ", ".join(parts) + ("," if len(parts) == 1 and closing == ")" else "") + closing


def _grad_off_decorator(function: ast.FunctionDef) -> ast.expr | None:
    """The `@torch.no_grad()` (`@torch.inference_mode()`, `@torch.set_grad_enabled(False)`) on the def."""
    for decorator in function.decorator_list:
        if not isinstance(decorator, ast.Call):
            continue
        name = getattr(decorator.func, "attr", getattr(decorator.func, "id", None))
        arguments = [*decorator.args, *(keyword.value for keyword in decorator.keywords)]
        if name in ("no_grad", "inference_mode") and not arguments or name == "set_grad_enabled" and \
                len(arguments) == 1 and isinstance(arguments[0], ast.Constant) and arguments[0].value is False:
            return decorator
    return None


def _grad_off_block_making(filename: str, function: ast.FunctionDef, returned: ast.Return) -> ast.With | None:
    """The `with torch.no_grad():` (inference_mode, set_grad_enabled(False)) block of the function, of
    one item and no `as`, that holds the last assignment of the name it returns (`return h`): what
    is computed there has no graph, whatever it reads."""
    from autograd_doctor.analysis.grad_off_blocks import _turns_grad_off

    if not isinstance(returned.value, ast.Name):
        return None
    made = last_assignment(filename, returned.value.id, returned.lineno)
    if made is None or not function.lineno <= made.lineno <= function.end_lineno:
        return None
    blocks = [node for node in ast.walk(function) if isinstance(node, ast.With) and len(node.items) == 1
              and node.items[0].optional_vars is None and _turns_grad_off(node.items[0].context_expr)
              and any(made is statement for statement in node.body)]
    return blocks[0] if len(blocks) == 1 else None


def _grad_off_block_diagnosis(filename: str, function: ast.FunctionDef, returned: ast.Return, block: ast.With,
                              notes: list[str]):
    """AD235 at the grad-off block that computed what the function returns; the help runs its body
    with gradients on (the block's lines dedented): the same values, now with their graph."""
    name = returned.value.id
    spelled = text_of(filename, block.items[0].context_expr)
    location = statement_location(filename, block, role="cut",
                                  note=f"{name}, which {function.name}() returns, is computed inside `with {spelled}:`, "
                                       "so it has no graph")
    location.end_line, location.end_column = location.line, None
    body = []
    for line in range(block.body[0].lineno, block.end_lineno + 1):
        text = source_line(filename, line)
        indent = len(text) - len(text.lstrip())
        if text.strip() and indent < block.body[0].col_offset:
            return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes,
                             help=[Suggestion(f"compute {name} outside the `with {spelled}:` block")])
        body.append(text[block.body[0].col_offset:].rstrip() if text.strip() else "")
    change = statement_change(statement_location(filename, block),
                              f"compute {name} with gradients on (drop the `with {spelled}:` line): the same values, "
                              "with the graph the transform differentiates", "\n".join(body))
    return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=[change])


def strict_output_without_grad(context: ErrorContext, already):
    found = _user_function(context, _FUNCTIONAL_FUNCTIONS)
    if found is None:
        return None
    filename, function = found
    notes = ["in strict mode the transform refuses an output that autograd cannot trace back to the input "
             "(without strict=True its derivative would be returned as zeros)"]
    decorator = _grad_off_decorator(function)
    if decorator is not None:
        # The whole function runs with gradients off: nothing it returns has a graph.
        from autograd_doctor.analysis.errors.context import line_location
        from autograd_doctor.analysis.errors.grad_api import _decorator_deletion

        spelled = text_of(filename, decorator)
        location = line_location(filename, decorator.lineno, note=f"@{spelled} turns gradients off for the whole of "
                                 f"{function.name}(), so what it returns has no graph")
        message = (f"remove @{spelled} so that {function.name}() records its graph (its values stay the same; "
                   "where it must stay gradient-free elsewhere, give the transform an undecorated function instead)")
        helps = [_decorator_deletion(filename, decorator.lineno, message) or Suggestion(message)]
        return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)
    returned = _only_return(function)
    if returned is None:
        return None
    statement = returned
    call = _torch_tensor_of_a_list(filename, returned.value) or _torch_tensor_of_a_round_trip(filename, returned.value)
    if call is None and isinstance(returned.value, ast.Name):
        # `return out` where out = torch.tensor([...]) a few lines up.
        made = last_assignment(filename, returned.value.id, returned.lineno)
        if made is not None and function.lineno <= made.lineno:
            call = _torch_tensor_of_a_list(filename, made) or _torch_tensor_of_a_round_trip(filename, made)
            statement = made if call is not None else statement
    if call is not None and not isinstance(call.args[0], (ast.List, ast.Tuple)):
        # torch.tensor(e.tolist()): the values of e, copied through Python (or NumPy) and back.
        spelled = text_of(filename, call.func)
        inner = _round_trip_inside(call.args[0])
        trip = text_of(filename, call.args[0])[len(text_of(filename, inner)):]
        location = statement_location(filename, statement, note=f"{spelled}({text_of(filename, inner)}{trip}) copies the values of "
                                      f"{text_of(filename, inner)} through Python, without their graph")
        new = replace_node_text(filename, statement, call, f"{text_of(filename, inner)}.clone()")
        helps = [statement_change(location, f"copy {text_of(filename, inner)} with clone(), which autograd records "
                                  "(the same values, and a new tensor as before)", new)]
        return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)
    if call is not None:
        spelled = "torch.tensor" if text_of(filename, call.func) == "torch.tensor" else text_of(filename, call.func)
        location = statement_location(filename, statement, note=f"{spelled}([...]) copies the values of the "
                                      "elements into a new tensor, without their graph")
        cast = _LEGACY_CONSTRUCTORS.get(text_of(filename, call.func) or "", "")
        new = replace_node_text(filename, statement, call, f"torch.stack({_stacked_elements(filename, call.args[0])}){cast}")
        helps = [statement_change(location, "build the vector with torch.stack, which keeps each element's graph "
                                  "(the same values when the elements are single numbers)", new)]
        return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)
    block = _grad_off_block_making(filename, function, returned)
    if block is not None:
        return _grad_off_block_diagnosis(filename, function, returned, block, notes)
    drawn = _sample_of_reparameterisable(filename, function, returned,
                                         _transformed_function_globals(context, _FUNCTIONAL_FUNCTIONS) or {})
    if drawn is not None:
        statement, call, class_name = drawn
        location = statement_location(filename, statement, note=f"{class_name}.sample() draws without a graph: the "
                                      "value does not depend on the distribution's parameters through autograd")
        new = replace_node_text(filename, statement, call.func, f"{text_of(filename, call.func.value)}.rsample")
        helps = [statement_change(location, f"draw with rsample(), the reparameterised sample {class_name} has: the "
                                  "same kind of draw, written as a function of the parameters, so its derivative "
                                  "exists", new)]
        return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)
    cut = _argument_read_without_graph(context, filename, function, returned,
                                       _transformed_function_globals(context, _FUNCTIONAL_FUNCTIONS) or {})
    if cut is not None:
        cut_file, cut_return, reads = cut
        spelled = ", ".join(dict.fromkeys(text_of(cut_file, read) for read in reads))
        location = statement_location(cut_file, cut_return, role="cut", note=f"{spelled} reads the values without "
                                      "their graph, so what is returned does not depend on the input through autograd")
        new = replace_nodes_text(cut_file, cut_return, [(read, text_of(cut_file, _read_tensor(read))) for read in reads])
        helps = [statement_change(location, f"read the tensor itself instead of {spelled}: the same values, with the "
                                  "graph the transform differentiates", new)]
        return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)
    location = statement_location(filename, returned, note="what the function returns does not depend on its input "
                                  "through operations autograd records")
    helps = [Suggestion("look for what cuts the path between the input and this value: torch.tensor(...) of "
                        "computed values (use torch.stack), .detach(), .item() or .tolist(), NumPy, a torch.no_grad() "
                        "block, integer ops (argmax, round); an output that is constant on purpose needs strict=False")]
    return diagnosis(codes.STRICT_OUTPUT_WITHOUT_GRAD, location, notes=notes, help=helps)


def _read_tensor(read: ast.expr) -> ast.expr:
    """`v` of `v.data` or `v.detach()`."""
    return read.func.value if isinstance(read, ast.Call) else read.value


def _argument_read_without_graph(context: ErrorContext, filename: str, function: ast.FunctionDef,
                                 returned: ast.Return, scope: dict):
    """(file, return statement, reads) where the value returned is computed from `p.data` or
    `p.detach()` of a parameter p of the function whose one return it is: the transformed function
    itself, or a function of the user's files it returns the result of (`return unit(v)`), called
    once in those files (removing the cut there changes no other caller). None otherwise, and where
    the return also leaves torch (`.numpy()`, `.tolist()`, `.item()`), which needs the cut."""
    from autograd_doctor.diagnosis.source import parse_file

    def cut_reads(definition: ast.FunctionDef, statement: ast.Return) -> list:
        parameters = {a.arg for a in definition.args.posonlyargs + definition.args.args + definition.args.kwonlyargs}
        if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr in ("numpy", "tolist", "item") for node in ast.walk(statement.value)):
            return []  # the values leave torch (x.detach().numpy()): the detach is needed there, the cut is elsewhere
        reads = []
        for node in ast.walk(statement.value):
            if isinstance(node, ast.Attribute) and node.attr == "data" and isinstance(node.value, ast.Name) \
                    and node.value.id in parameters:
                reads.append(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "detach" \
                    and not node.args and isinstance(node.func.value, ast.Name) and node.func.value.id in parameters:
                reads.append(node)
        return reads

    own = cut_reads(function, returned)
    if own:
        return filename, returned, own
    call = returned.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    callee = scope.get(call.func.id)
    code = getattr(callee, "__code__", None)
    files = context.files_reached()
    if code is None or code.co_filename not in files + [filename]:
        return None
    tree = parse_file(code.co_filename)
    definition = next((node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
                       and node.name == code.co_name and node.lineno <= code.co_firstlineno <= node.body[0].lineno),
                      None) if tree is not None else None
    inner = _only_return(definition) if definition is not None else None
    if inner is None:
        return None
    calls = 0
    for other_file in dict.fromkeys(files + [filename]):
        other = parse_file(other_file)
        calls += sum(1 for node in ast.walk(other) if isinstance(node, ast.Call)
                     and getattr(node.func, "id", getattr(node.func, "attr", None)) == code.co_name) \
            if other is not None else 0
    reads = cut_reads(definition, inner)
    return (code.co_filename, inner, reads) if reads and calls == 1 else None


def _distribution_class(node: ast.expr, scope: dict):
    """The torch.distributions class a constructor call's function names (`Normal`, `D.Normal`,
    `torch.distributions.Normal`), read from the function's module globals; None otherwise."""
    import torch

    from autograd_doctor.analysis.live_values import expression_value

    value = expression_value(scope.get, node) if isinstance(node, (ast.Name, ast.Attribute)) else None
    if isinstance(value, type) and issubclass(value, torch.distributions.Distribution):
        return value
    return None


def _sample_of_reparameterisable(filename: str, function: ast.FunctionDef, returned: ast.Return, scope: dict):
    """(statement, call, class name) for `Normal(loc, scale).sample(...)` returned (or assigned to the
    returned name in the function), where the class has a reparameterised sample (`has_rsample` is
    True on the class): sample() draws under no_grad, rsample() the same kind of draw as a function of
    the parameters (set 24). A distribution held by a name, or a class whose rsample depends on its
    instance (Independent), is not read: None."""
    from autograd_doctor.analysis.distribution_samples import reparameterisable_class

    candidates = [(returned, returned.value)]
    if isinstance(returned.value, ast.Name):
        made = last_assignment(filename, returned.value.id, returned.lineno)
        if made is not None and function.lineno <= made.lineno and isinstance(made, ast.Assign):
            candidates.append((made, made.value))
    for statement, value in candidates:
        calls = [node for node in ast.walk(value) if isinstance(node, ast.Call)
                 and isinstance(node.func, ast.Attribute) and node.func.attr == "sample"
                 and isinstance(node.func.value, ast.Call)]
        if len(calls) != 1:
            continue
        found = _distribution_class(calls[0].func.value.func, scope)
        if found is not None and reparameterisable_class(found):
            return statement, calls[0], found.__name__
    return None


# ---- AD236: a tangent of another size than its primal -----------------------------------------

_SIZES = re.compile(r"Tensor is of size \[([\d, ]*)\] while the given forward gradient is of size \[([\d, ]*)\]")


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(int(s) for s in text.split(",") if s.strip())


def _primal_tangent_pairs(filename: str, statement: ast.stmt):
    """(primal node, tangent node) pairs of the jvp(f, (p, ...), (t, ...)) or make_dual(p, t) calls
    in the statement."""
    for call in ast.walk(statement):
        if not isinstance(call, ast.Call):
            continue
        name = (text_of(filename, call.func) or "").split(".")[-1]
        if name == "make_dual" and len(call.args) >= 2:
            yield call.args[0], call.args[1]
        elif name == "jvp" and len(call.args) >= 3 and isinstance(call.args[1], ast.Tuple) \
                and isinstance(call.args[2], ast.Tuple) and len(call.args[1].elts) == len(call.args[2].elts):
            yield from zip(call.args[1].elts, call.args[2].elts)


_RANDOM_DRAWS = {"torch.randn": False, "torch.rand": False, "torch.randn_like": True, "torch.rand_like": True}


def _random_draw_of_another_shape(frame, filename: str, tangent: str, primal: str, line: int):
    """(assignment, its new text, the draw's name) when the tangent is a name bound, in the function of
    the jvp call, to one random draw (torch.randn / rand, or their _like forms, possibly scaled by
    numbers) whose shape is the only thing that ties it to another tensor, and the primal's name can be
    read at that line: the draw then gets the primal's shape (a random direction of the same kind)."""
    made = last_assignment(filename, tangent, line)
    if not isinstance(made, ast.Assign) or len(made.targets) != 1 or not isinstance(made.targets[0], ast.Name) \
            or made.targets[0].id != tangent:
        return None
    draws = [call for call in ast.walk(made.value) if isinstance(call, ast.Call)
             and text_of(filename, call.func) in _RANDOM_DRAWS]
    if len(draws) != 1:
        return None
    draw = draws[0]
    inside = {id(node) for node in ast.walk(draw)}
    outside = [node for node in ast.walk(made.value) if id(node) not in inside]
    if not all(isinstance(node, (ast.BinOp, ast.UnaryOp, ast.Constant, ast.operator, ast.unaryop)) for node in outside):
        return None  # something else than numbers shapes the value
    code = frame.f_code
    parameters = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    readable = primal in parameters or last_assignment(filename, primal, made.lineno) is not None \
        or (primal not in code.co_varnames and primal in frame.f_globals)
    if not readable:
        return None
    spelled = text_of(filename, draw.func)
    if _RANDOM_DRAWS[spelled]:
        if not draw.args:
            return None
        args = [primal] + [text_of(filename, a) for a in draw.args[1:]]
    else:
        if any(k.arg == "size" for k in draw.keywords) or not draw.args \
                or any(isinstance(a, ast.Starred) for a in draw.args):
            return None
        args = [f"{primal}.shape"]
    keywords = [f"{k.arg}={text_of(filename, k.value)}" for k in draw.keywords if k.arg is not None]
    if len(keywords) != len(draw.keywords):
        return None
    new_call = f"{spelled}({', '.join(args + keywords)})"
    return made, replace_node_text(filename, made, draw, new_call), spelled


def _reordered_tangent(filename, statement, location, tangent, tangent_text: str, primal_text: str,
                       tangent_size: tuple, primal_size: tuple) -> list:
    """The helps for a tangent whose size is the primal's with its dimensions in another order
    ([batch, steps, dim] for [steps, batch, dim]): the tangent was built in another layout, and
    view_as would keep its memory order, so each element would move another element of the primal.
    Where the sizes are all different the order is known, and the tangent's dimensions are reordered
    (transpose for a swap of two, permute otherwise); where two sizes are equal it is not, and the
    help only says so."""
    if len(set(primal_size)) != len(primal_size):
        return [Suggestion(f"{tangent_text} has {primal_text}'s sizes in another order, and two of them are equal: "
                           f"reorder its dimensions to {primal_text}'s layout (transpose/permute) if it was built in "
                           f"another layout, or view_as({primal_text}) if its elements are in {primal_text}'s order; "
                           "which one depends on how it was made")]
    order = [tangent_size.index(size) for size in primal_size]
    moved = [dimension for dimension, source in enumerate(order) if dimension != source]
    if len(moved) == 2 and len(primal_size) == 2:
        reordered = f"{tangent_text}.t()"
    elif len(moved) == 2:
        reordered = f"{tangent_text}.transpose({moved[0]}, {moved[1]})"
    else:
        reordered = f"{tangent_text}.permute({', '.join(str(source) for source in order)})"
    return [statement_change(
        location, f"put {tangent_text}'s dimensions in {primal_text}'s order: its size {list(tangent_size)} is "
        f"{list(primal_size)} with the dimensions in another order (another layout); view_as would keep its memory "
        f"order and move other elements than the ones each entry was drawn for",
        replace_node_text(filename, statement, tangent, reordered))]


def tangent_of_another_size(context: ErrorContext, already):
    import torch

    sizes = _SIZES.search(context.message)
    found = user_statement(context)
    if sizes is None or found is None:
        return None
    frame, line, filename, statement, location = found
    primal_size, tangent_size = _sizes(sizes.group(1)), _sizes(sizes.group(2))
    location.note = f"the tangent has size {list(tangent_size)}, its primal {list(primal_size)}"
    notes = ["forward-mode AD carries one tangent per primal, of exactly the primal's size: it is the direction "
             "in which the primal moves, element by element (no broadcasting)"]
    helps = []
    scope = {**frame.f_globals, **frame.f_locals}
    for primal, tangent in _primal_tangent_pairs(filename, statement):
        primal_text, tangent_text = text_of(filename, primal), text_of(filename, tangent)
        # Only names are looked up (never evaluated): the tensors the call was given.
        primal_value = scope.get(primal_text) if isinstance(primal, ast.Name) else None
        tangent_value = scope.get(tangent_text) if isinstance(tangent, ast.Name) else None
        if not (isinstance(primal_value, torch.Tensor) and isinstance(tangent_value, torch.Tensor)) \
                or tuple(primal_value.shape) != primal_size or tuple(tangent_value.shape) != tangent_size:
            continue
        location.note = f"{tangent_text} has size {list(tangent_size)}, {primal_text} {list(primal_size)}"
        try:
            broadcasts = torch.broadcast_shapes(tangent_size, primal_size) == torch.Size(primal_size)
        except RuntimeError:
            broadcasts = False
        if broadcasts:
            helps.append(statement_change(
                location, f"expand {tangent_text} to {primal_text}'s size: every example (row) moves in the same "
                "direction, the directional derivative you asked for at each of them",
                replace_node_text(filename, statement, tangent, f"{tangent_text}.expand_as({primal_text})")))
        elif len(tangent_size) == len(primal_size) and sorted(tangent_size) == sorted(primal_size):
            helps.extend(_reordered_tangent(filename, statement, location, tangent, tangent_text, primal_text,
                                            tangent_size, primal_size))
        elif tangent_value.numel() == primal_value.numel():
            helps.append(statement_change(
                location, f"give {tangent_text} {primal_text}'s shape: it has the same number of elements, in the "
                "same order", replace_node_text(filename, statement, tangent, f"{tangent_text}.view_as({primal_text})")))
        elif tangent_value.dtype == primal_value.dtype and tangent_value.device == primal_value.device:
            drawn = _random_draw_of_another_shape(frame, filename, tangent_text, primal_text, line)
            if drawn is not None:
                made, new_text, spelled = drawn
                location = statement_location(
                    filename, made, note=f"{tangent_text} is drawn here with size {list(tangent_size)}; "
                    f"{primal_text}, its primal, has size {list(primal_size)}")
                helps.append(statement_change(
                    location, f"draw {tangent_text} with {primal_text}'s shape: a random direction of the same kind "
                    f"({spelled}), one number per element of {primal_text}", new_text))
        break
    helps.append(Suggestion("make each tangent with its primal's shape (torch.randn_like(x), a direction expanded "
                            "with .expand_as(x)); for one direction per example, use vmap over jvp"))
    return diagnosis(codes.TANGENT_OF_ANOTHER_SIZE, location, notes=notes, help=helps)


# ---- AD238: make_dual outside `with dual_level():` ----------------------------------------------

def _enclosing_block(tree: ast.AST, statement: ast.stmt) -> list[ast.stmt] | None:
    """The list of statements (a body, an orelse, ...) that holds `statement`."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is statement for s in block):
                return block
    return None


def _dual_level_name(filename: str, call: ast.Call, scope: dict) -> str | None:
    """How the user's file names forward_ad.dual_level: `fwAD.dual_level` for `fwAD.make_dual(...)`,
    `dual_level` when it was imported by that name; None otherwise."""
    import torch.autograd.forward_ad as forward_ad

    called = text_of(filename, call.func) or ""
    if called.endswith(".make_dual"):
        return called[:-len("make_dual")] + "dual_level"
    if scope.get("dual_level") is forward_ad.dual_level:
        return "dual_level"
    return None


def _exits_level(tree: ast.AST, statement: ast.stmt) -> bool:
    """The statement calls exit_dual_level(), or a function or method of the same file whose body does."""
    if find_calls(statement, "exit_dual_level"):
        return True
    called = {getattr(c.func, "attr", getattr(c.func, "id", None)) for c in ast.walk(statement) if isinstance(c, ast.Call)}
    return any(isinstance(d, ast.FunctionDef) and d.name in called and find_calls(d, "exit_dual_level")
               for d in ast.walk(tree))


def _level_exited_inside_a_loop(context: ErrorContext):
    """(filename, loop, exit statement) when a user's frame of the traceback runs in a `for`/`while` loop
    whose body, after that frame's statement, exits the program's own forward-AD level (an
    `exit_dual_level()` call, or a call of a function of the file that makes it) that was entered with
    `enter_dual_level()` before the loop, not in it: the loop's second pass finds no level."""
    from autograd_doctor.recording.frames import in_installed_package, is_internal_file

    for frame, line in context.frames:
        filename = frame.f_code.co_filename
        if is_internal_file(filename) or in_installed_package(filename):
            continue
        tree = parse_file(filename)
        if tree is None:
            continue
        loops = [n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))
                 and n.body[0].lineno <= line <= n.body[-1].end_lineno]
        if not loops:
            continue
        loop = max(loops, key=lambda n: n.lineno)  # the innermost
        if find_calls(loop, "enter_dual_level") or any(
                isinstance(d, ast.FunctionDef) and d.name in {getattr(c.func, "attr", getattr(c.func, "id", None))
                                                             for c in ast.walk(loop) if isinstance(c, ast.Call)}
                and find_calls(d, "enter_dual_level") for d in ast.walk(tree)):
            continue  # entered again in each pass
        after = [s for s in loop.body if s.lineno > line]
        exits = [s for s in after if isinstance(s, ast.Expr) and _exits_level(tree, s)]
        entered = [c for c in find_calls(tree, "enter_dual_level") if c.lineno < loop.lineno] or any(
            isinstance(s, ast.Expr) and s.lineno < loop.lineno and _calls_entering(tree, s)
            for s in ast.walk(tree) if isinstance(s, ast.stmt))
        if len(exits) == 1 and entered and not loop.orelse:
            return filename, loop, exits[0]
    return None


def _calls_entering(tree: ast.AST, statement: ast.stmt) -> bool:
    called = {getattr(c.func, "attr", getattr(c.func, "id", None)) for c in ast.walk(statement) if isinstance(c, ast.Call)}
    return any(isinstance(d, ast.FunctionDef) and d.name in called and find_calls(d, "enter_dual_level")
               for d in ast.walk(tree))


def _exit_moved_after_loop(filename: str, loop: ast.stmt, exit_statement: ast.stmt) -> str:
    """The loop's text without `exit_statement`, which follows the loop at the loop's indentation."""
    indent = loop.col_offset
    lines = []
    for number in range(loop.lineno, loop.end_lineno + 1):
        if exit_statement.lineno <= number <= exit_statement.end_lineno:
            continue
        text = source_line(filename, number)
        lines.append(text[indent:].rstrip() if text.strip() else "")
    moved = [source_line(filename, n)[exit_statement.col_offset:].rstrip()
             for n in range(exit_statement.lineno, exit_statement.end_lineno + 1)]
    return "\n".join(lines + moved)


def dual_tensor_without_level(context: ErrorContext, already):
    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    location.note = "make_dual() outside a `with dual_level():` block"
    notes = ["a dual tensor's tangent belongs to a forward-AD level, which exists only inside "
             "`with torch.autograd.forward_ad.dual_level():`; when the block exits, every tangent is dropped, so "
             "unpack_dual() must run inside it too"]
    advice = Suggestion("run make_dual(), the computation and the unpack_dual() that reads the tangent inside one "
                        "`with torch.autograd.forward_ad.dual_level():` block")
    exited = _level_exited_inside_a_loop(context)
    if exited is not None:
        # The program enters its level itself (enter_dual_level() before the loop) and leaves it in the
        # loop's first pass: a `with` block here would nest in that level.
        loop_file, loop, exit_statement = exited
        related = [location]
        location = statement_location(loop_file, exit_statement, note="leaves the forward-AD level in the loop's "
                                      "first pass; the level was entered once, before the loop")
        notes.append("the program enters its level with enter_dual_level() before the loop; the next pass's "
                     "make_dual() finds none")
        change = statement_location(loop_file, loop)
        help = Suggestion("leave the level after the loop, once, as it was entered: move this call after the loop",
                          replacement=_exit_moved_after_loop(loop_file, loop, exit_statement), location=change)
        return diagnosis(codes.DUAL_TENSOR_WITHOUT_LEVEL, location, related, notes=notes, help=[help])
    before = _called_just_before_level(context)
    if before is not None:
        caller_file, caller, block_with, level_text, replacement = before
        related = [location]
        location = statement_location(caller_file, caller, note=f"make_dual() runs in this call, one line before "
                                      f"`with {level_text}:` enters the level")
        notes.append(f"the level is entered by the `with` statement on line {block_with.lineno}, right after this "
                     "call: the dual tensor was made before it")
        change = statement_location(caller_file, caller)
        change.end_line, change.end_column = block_with.end_lineno, block_with.end_col_offset
        help = Suggestion(f"make this call the first statement of the `with {level_text}:` block, so make_dual() "
                          "runs inside the level", replacement=replacement, location=change)
        return diagnosis(codes.DUAL_TENSOR_WITHOUT_LEVEL, location, related, notes=notes, help=[help, advice])
    tree = parse_file(filename)
    if tree is not None and (find_calls(tree, "enter_dual_level") or find_calls(tree, "exit_dual_level")):
        # The program manages its levels itself: a `with` block here would nest in a level it enters.
        notes.append("this file enters or exits forward-AD levels itself (enter_dual_level(), exit_dual_level())")
        return diagnosis(codes.DUAL_TENSOR_WITHOUT_LEVEL, location, notes=notes, help=[Suggestion(
            "make sure a level entered with enter_dual_level() is still open (not yet exit_dual_level()) where "
            "make_dual() runs, or use `with torch.autograd.forward_ad.dual_level():` in place of both calls")])
    calls = find_calls(statement, "make_dual")
    tree = parse_file(filename)
    block = _enclosing_block(tree, statement) if tree is not None else None
    level = _dual_level_name(filename, calls[0], {**frame.f_globals, **frame.f_locals}) if calls else None
    if block is None or level is None:
        return diagnosis(codes.DUAL_TENSOR_WITHOUT_LEVEL, location, notes=notes, help=[advice])
    following = block[block.index(statement):]
    unpacks = [s for s in following if find_calls(s, "unpack_dual")]
    if not unpacks:
        return diagnosis(codes.DUAL_TENSOR_WITHOUT_LEVEL, location, notes=notes, help=[advice])
    last = unpacks[-1]
    dropped = _level_made_and_dropped(filename, block, statement, level)
    lines = [source_line(filename, number) for number in range(statement.lineno, last.end_lineno + 1)]
    indent = len(lines[0]) - len(lines[0].lstrip())
    body = [text[indent:].rstrip() if text.strip() else "" for text in lines]
    change = statement_location(filename, dropped if dropped is not None else statement)
    change.end_line, change.end_column = last.end_lineno, last.end_col_offset
    with_block = "\n".join([f"with {level}():", *(f"    {text}" if text else "" for text in body)])
    related = []
    if dropped is not None:
        # `fwAD.dual_level()` as a statement: the level object is made and dropped, never entered.
        related = [location]
        location = statement_location(filename, dropped, note=f"{level}() makes the level's context manager and "
                                      "drops it: without `with`, no level is entered")
        notes.append(f"{level}() does nothing on its own: the level exists only while a `with` block runs")
    help = Suggestion(f"make, use and unpack the dual tensor inside `with {level}():` (lines {change.line}-"
                      f"{last.end_lineno}): the tangent then exists until unpack_dual() has read it",
                      replacement=with_block, location=change)
    return diagnosis(codes.DUAL_TENSOR_WITHOUT_LEVEL, location, related, notes=notes, help=[help, advice])


def _called_just_before_level(context: ErrorContext):
    """(file, the caller's statement, the `with` statement, its level's text, the two rewritten) when
    make_dual() ran inside a call made by a statement of the user's (an outer frame: a constructor, a
    helper) that is directly followed, in the same block, by `with <forward_ad.dual_level>():` (the
    callee looked up by name, nothing evaluated); the rewrite makes the statement the first of the
    block's body. None otherwise."""
    import torch.autograd.forward_ad as forward_ad

    from autograd_doctor.analysis.errors.context import value_of
    from autograd_doctor.diagnosis.source import statement_at

    for frame, line in context.user_frames()[1:]:
        filename = frame.f_code.co_filename
        statement = statement_at(filename, line)
        tree = parse_file(filename)
        if statement is None or tree is None or not isinstance(statement, (ast.Assign, ast.Expr, ast.AnnAssign)):
            continue
        block = _enclosing_block(tree, statement)
        if block is None or block.index(statement) + 1 >= len(block):
            continue
        following = block[block.index(statement) + 1]
        if not isinstance(following, ast.With) or len(following.items) != 1 or not following.body:
            continue
        call = following.items[0].context_expr
        if not (isinstance(call, ast.Call) and not call.args and not call.keywords
                and value_of(frame, call.func) is forward_ad.dual_level):
            continue
        first = following.body[0]
        if first.lineno <= following.lineno or statement.end_lineno >= following.lineno:
            continue
        header = [source_line(filename, n)[following.col_offset:].rstrip()
                  for n in range(following.lineno, first.lineno)]
        indent = " " * (first.col_offset - following.col_offset)
        moved = [indent + source_line(filename, n)[statement.col_offset:].rstrip()
                 for n in range(statement.lineno, statement.end_lineno + 1)]
        body = [source_line(filename, n)[following.col_offset:].rstrip()
                if source_line(filename, n)[:following.col_offset].strip() == "" else source_line(filename, n).rstrip()
                for n in range(first.lineno, following.end_lineno + 1)]
        if statement.col_offset != following.col_offset:
            continue
        return filename, statement, following, text_of(filename, call), "\n".join(header + moved + body)
    return None


def _level_made_and_dropped(filename: str, block: list, statement: ast.stmt, level: str):
    """The statement `level()` (`fwAD.dual_level()`) just before `statement` in its block: a context
    manager called as an expression, which enters nothing; None when there is none."""
    index = block.index(statement)
    if index == 0:
        return None
    before = block[index - 1]
    if isinstance(before, ast.Expr) and isinstance(before.value, ast.Call) and not before.value.args \
            and not before.value.keywords and text_of(filename, before.value.func) == level:
        return before
    return None


# ---- AD239: an integer tangent ------------------------------------------------------------------

_FLOAT_METHODS = ("float", "double", "half", "bfloat16")
_FLOAT_DTYPES = ("float16", "float32", "float64", "bfloat16", "float", "double", "half")


def _float_conversion(filename: str, primal: ast.expr) -> str | None:
    """`.float()` for a primal written `x.float()` (also `.double()`, `.half()`, `.bfloat16()`,
    `.to(torch.float32)`, `.to(dtype=torch.float64)`): the conversion to a floating-point dtype that
    the call applies to the primal, as text to append to the tangent; None otherwise."""
    if not (isinstance(primal, ast.Call) and isinstance(primal.func, ast.Attribute)):
        return None
    method = primal.func.attr
    if method in _FLOAT_METHODS and not primal.args and not primal.keywords:
        return f".{method}()"
    if method == "to" and len(primal.args) + len(primal.keywords) == 1:
        dtype = primal.args[0] if primal.args else primal.keywords[0].value
        if primal.keywords and primal.keywords[0].arg != "dtype":
            return None
        text = text_of(filename, dtype)
        if isinstance(dtype, ast.Attribute) and text in {f"torch.{name}" for name in _FLOAT_DTYPES}:
            return f".to({text})"
    return None


def integer_tangent(context: ErrorContext, already):
    import torch

    found = user_statement(context)
    if found is None:
        return None
    frame, line, filename, statement, location = found
    location.note = "the tangent given here is not floating point"
    notes = ["a tangent is the direction in which its primal moves: forward-mode AD takes it only floating point "
             "or complex"]
    helps = []
    scope = {**frame.f_globals, **frame.f_locals}
    for primal, tangent in _primal_tangent_pairs(filename, statement):
        converted = _float_conversion(filename, primal)
        if converted is not None and isinstance(tangent, ast.Name):
            # `jvp(f, (counts.float(),), (direction,))`: the primal is converted on the call itself; the
            # tangent gets the same conversion (nothing is evaluated to find it).
            tangent_value = scope.get(tangent.id)
            if not isinstance(tangent_value, torch.Tensor) or tangent_value.is_floating_point() \
                    or tangent_value.is_complex():
                continue
            location.note = f"{tangent.id} is {str(tangent_value.dtype).replace('torch.', '')}"
            helps.append(statement_change(
                location, f"convert {tangent.id} as the primal is converted ({converted}): the same direction, "
                "in the primal's floating-point numbers",
                replace_node_text(filename, statement, tangent, f"{tangent.id}{converted}")))
            break
        if not (isinstance(primal, ast.Name) and isinstance(tangent, ast.Name)):
            continue
        # Only names are looked up (never evaluated): the tensors the call was given.
        primal_value, tangent_value = scope.get(primal.id), scope.get(tangent.id)
        if not (isinstance(primal_value, torch.Tensor) and isinstance(tangent_value, torch.Tensor)) \
                or tangent_value.is_floating_point() or tangent_value.is_complex() \
                or not (primal_value.is_floating_point() or primal_value.is_complex()):
            continue
        location.note = f"{tangent.id} is {str(tangent_value.dtype).replace('torch.', '')}"
        helps.append(statement_change(
            location, f"give {tangent.id} the dtype of {primal.id}: the same direction, as {primal.id}'s numbers",
            replace_node_text(filename, statement, tangent, f"{tangent.id}.to({primal.id}.dtype)")))
        break
    helps.append(Suggestion("make the direction floating point where it is built (F.one_hot(...).float(), "
                            "torch.tensor([1.0, 0.0]))"))
    return diagnosis(codes.INTEGER_TANGENT, location, notes=notes, help=helps)


MATCHERS = [
    (r"output of function f should be a tuple: \(output, aux\) if has_aux is True", aux_not_a_pair),
    (r"Output \d+ of the user-provided function does not require gradients\. The outputs must be computed in a "
     r"differentiable manner from the input when running in strict mode", strict_output_without_grad),
    (r"Trying to set a forward gradient that has a different size than that of the original Tensor",
     tangent_of_another_size),
    (r"Trying to create a dual Tensor for forward AD but no level exists", dual_tensor_without_level),
    (r"Expected tangent to be floating point or complex", integer_tangent),
]
