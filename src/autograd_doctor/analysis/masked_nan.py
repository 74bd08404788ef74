"""AD220: NaN gradients although the loss is finite: `torch.where` (or `masked_fill`) hides an
inf or NaN of the forward pass, not of the backward.

`torch.where(x > 0, torch.sqrt(x), x)` evaluates sqrt on every element; where's backward sends
a zero gradient to the elements it did not select, and sqrt's backward multiplies that zero by
its infinite derivative there: 0 * inf = NaN. The same for `a / b` with zeros in `b` masked
afterwards, `log`, `rsqrt`, `pow` with a fractional exponent. Nothing fails; the step makes the
weights NaN. The usual change guards the op's input with the same condition (a second `where`),
so the unselected elements compute a harmless value.

Looked at after the first few backward() calls only (their count: CHECKED_BACKWARDS), each
check from what is there at run time: the loss is finite, its graph (the links stay after
backward) holds a `where` / `masked_fill` node, and a leaf it reaches got a gradient with NaN or
inf. Only then is the source read: the files of the frames around backward() and of the classes
of the modules bound there, for a `torch.where(...)` / `.masked_fill(...)` one of whose branches
computes such an op, inline or in the latest assignment to the branch's name. The line named is
the op's; the help guards its input.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import torch

from autograd_doctor.analysis.errors.context import enclosing_function
from autograd_doctor.analysis.live_values import expression_value, frame_lookup
from autograd_doctor.analysis.source_scope import backward_roots, graph_nodes, live_frame, user_files_around
from autograd_doctor.compat import lookup
from autograd_doctor.diagnosis import codes
from autograd_doctor.diagnosis.model import Diagnosis, Suggestion
from autograd_doctor.diagnosis.source import (
    location_of, method_receiver, parse_file, replace_node_text, segment, statement_at, statement_location,
)

CHECKED_BACKWARDS = 4
MASKING_NODES = {"WhereBackward0", "MaskedFillBackward0"}
# Selections by a boolean mask: their backward sends a zero gradient to the rows not selected.
SELECTING_NODES = {"IndexBackward0", "MaskedSelectBackward0"}
# Tests of a value's NaN-ness (a mask of the rows to keep, negated, or of those to drop).
NAN_TESTS = {"isnan", "isfinite"}
# Square roots: finite at 0, with an infinite derivative there.
ROOT_NODES = {"SqrtBackward0", "PowBackward0"}
# Ops whose derivative is infinite at a value the masked elements may hold, and the value that is
# safe to compute them on instead.
SINGULAR_FUNCTIONS = {"sqrt": "ones", "rsqrt": "ones", "log": "ones", "log2": "ones", "log10": "ones",
                      "reciprocal": "ones", "acos": "zeros", "asin": "zeros", "atanh": "zeros"}


@dataclass
class Guard:
    """The op to make safe: its statement, the operand to guard, the safe value's kind."""

    statement: ast.stmt
    operand: ast.AST
    safe: str  # "ones" or "zeros"
    op: str


def nan_gradient_diagnosis(call, args: tuple, kwargs: dict) -> Diagnosis | None:
    """AD220 for the backward() call that just ran, or None (the caller calls it for the first
    CHECKED_BACKWARDS calls only)."""
    roots = backward_roots(args, kwargs)
    if not roots or not all(_plain(root) for root in roots):
        return None  # a sparse gradient or a traced (fake) value cannot be read for NaN
    if not all(bool(torch.isfinite(root.detach()).all()) for root in roots if root.is_floating_point()):
        return None  # a loss that is itself NaN or inf is another problem
    leaves, node_names, half_powers = _graph_facts([root.grad_fn for root in roots if root.grad_fn is not None])
    masked = bool(node_names & MASKING_NODES)
    if not masked and not node_names & (ROOT_NODES | SELECTING_NODES):
        return None  # a selection alone is enough: `L(x, y)[~torch.isnan(y)]` over an elementwise loss
    gradients = [leaf.grad for leaf in leaves if leaf.grad is not None and leaf.grad.is_floating_point()
                 and _plain(leaf.grad)]
    if not gradients or _all_finite(gradients):
        return None
    broken = [leaf for leaf in leaves if leaf.grad is not None and leaf.grad.is_floating_point()
              and _plain(leaf.grad) and not bool(torch.isfinite(leaf.grad).all())]
    if not broken:
        return None
    site = call.site if call is not None else None
    files = user_files_around(call)
    for filename in files if masked else ():
        found = _find_masked_op(filename, node_names)
        if found is not None:
            where_statement, guard, replacement = found
            return _diagnosis(filename, where_statement, guard, replacement, broken, site)
    if node_names & SELECTING_NODES:
        for filename in files:
            found = _nan_selection(filename)
            if found is not None:
                return _selection_diagnosis(filename, *found, broken, site, call)
    roots_found = [(filename, root) for filename in files
                   for root in _square_roots(filename, node_names, half_powers)]
    if len(roots_found) == 1:  # one root in the graph's source: its value at 0 is what gave inf
        filename, (statement, operand) = roots_found[0]
        return _root_diagnosis(filename, statement, operand, broken, site)
    return None


def _square_roots(filename: str, node_names: set, half_powers: bool = False) -> list[tuple[ast.stmt, ast.AST]]:
    """(statement, operand) of each square root in the file whose backward node is in the graph:
    `torch.sqrt(x)`, `x.sqrt()`, `x ** 0.5`, `x.pow(0.5)`. Their derivative is infinite at 0.
    With `half_powers` (the graph holds a pow node whose exponent is 0.5 at run time), a pow whose
    exponent is a name or an attribute (`x.pow(POWER)`, `x ** self.power`) counts too."""
    tree = parse_file(filename)
    if tree is None:
        return []
    found = []
    for node in ast.walk(tree):
        operand, kind = None, None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            is_torch = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
            if node.func.attr == "sqrt":
                operand = node.args[0] if is_torch and len(node.args) == 1 else \
                    (node.func.value if not is_torch and not node.args else None)
                kind = "SqrtBackward0"
            elif node.func.attr == "pow" and not is_torch and len(node.args) == 1 \
                    and _half(node.args[0], half_powers):
                operand, kind = node.func.value, "PowBackward0"
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _half(node.right, half_powers):
            operand, kind = node.left, "PowBackward0"
        if operand is None or kind not in node_names or isinstance(operand, ast.Constant):
            continue
        statement = statement_at(filename, node.lineno)
        if statement is not None:
            found.append((statement, operand))
    return found


def _half(node: ast.AST, named: bool = False) -> bool:
    """The exponent is 0.5, or (`named`: the graph holds a pow by 0.5) a name or attribute."""
    return (isinstance(node, ast.Constant) and node.value == 0.5) or \
        (named and isinstance(node, (ast.Name, ast.Attribute)))


def _root_diagnosis(filename: str, statement: ast.stmt, operand: ast.AST, broken: list, site) -> Diagnosis | None:
    operand_text = segment(filename, operand)
    if operand_text is None:
        return None
    primary = statement_location(filename, statement, role="op",
                                 note=f"the square root of {operand_text}: its derivative is infinite where it is 0")
    backward = location_of(site, role="backward", note="its gradients have NaN or inf")
    shapes = ", ".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in broken[:3])
    notes = [f"after this backward(), {len(broken)} leaf tensor{'s' if len(broken) > 1 else ''} ({shapes}) "
             "hold NaN or inf in .grad, while the loss is finite",
             "where the root's input is exactly 0 (a padded frame, a zero vector), its backward divides by "
             "0: inf, or 0 * inf = NaN once multiplied by a zero gradient"]
    clamped = f"{method_receiver(operand, operand_text)}.clamp(min=1e-30)"
    # 1e-30 is a normal number in float32 and float64 (not in float16): its root, 1e-15, leaves
    # the values as they were for any use, and clamp's backward gives 0 below it.
    wide = all(t.dtype in (torch.float32, torch.float64) for t in broken)
    replacement = replace_node_text(filename, statement, operand, clamped) if wide else None
    helps = []
    if replacement is not None:
        helps.append(Suggestion("clamp the root's input to a tiny positive number: the values change by at most "
                                "1e-15, and the gradient where it is 0 becomes 0 instead of NaN",
                                replacement, statement_location(filename, statement)))
    helps.append(Suggestion(f"{'or ' if helps else ''}add a small epsilon inside the root "
                            "(`(x + 1e-12).sqrt()`), as norms of vectors that can be zero usually do"))
    return Diagnosis(code=codes.MASKED_NAN_GRADIENT, title=codes.title(codes.MASKED_NAN_GRADIENT),
                     severity="warning", primary=primary, related=[r for r in [backward] if r is not None],
                     notes=notes, help=helps)


def _plain(tensor: torch.Tensor) -> bool:
    """A dense tensor with values to read: not sparse, not a subclass (a fake tensor of a
    compiler's trace has no values; isfinite() on it raises), not a torch.func transform's
    wrapper (inside vmap, per-sample gradients by autograd.grad: bool() of a batched tensor
    raises "vmap: ... data-dependent control flow"; its type is still torch.Tensor)."""
    if tensor.layout != torch.strided or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
        return False
    is_wrapped = lookup("torch._C._functorch.is_functorch_wrapped_tensor")
    return is_wrapped is None or not is_wrapped(tensor)


def _all_finite(gradients: list) -> bool:
    """True when every gradient is finite, told from their norms in a few calls instead of two
    per gradient (a NaN or inf element makes the norm NaN or inf); False when some norm is not
    finite (which a norm overflowing on finite values also gives: the caller then looks at
    each gradient) or when the norms cannot be taken together."""
    foreach_norm = getattr(torch, "_foreach_norm", None)
    if foreach_norm is None:
        return False
    try:
        with torch.no_grad():
            norms = foreach_norm(gradients)
            return all(bool(torch.isfinite(torch.stack(group)).all()) for group in _by_kind(norms))
    except Exception:
        return False


def _by_kind(tensors: list) -> list[list]:
    """The tensors grouped by device and dtype (what torch.stack takes together)."""
    groups: dict = {}
    for tensor in tensors:
        groups.setdefault((tensor.device, tensor.dtype), []).append(tensor)
    return list(groups.values())


def _graph_facts(nodes: list) -> tuple[list, set, bool]:
    """(the leaf tensors the graph reaches, the type names of its nodes, whether a pow node's
    exponent is 0.5: a scalar exponent stays readable on the node after backward)."""
    walked, _ = graph_nodes(nodes)
    leaves = [node.variable for node in walked if getattr(node, "variable", None) is not None]
    half_powers = any(type(node).__name__ == "PowBackward0" and _exponent(node) == 0.5 for node in walked)
    return leaves, {type(node).__name__ for node in walked}, half_powers


def _exponent(node) -> float | None:
    try:
        exponent = node._saved_exponent
    except Exception:
        return None
    return exponent if isinstance(exponent, (int, float)) else None


def _find_masked_op(filename: str, node_names: set):
    """(the where/masked_fill statement, the guard, the changed statement's text) of the first
    masking call in the file one of whose branches computes a singular op whose backward node is
    in the graph (`SqrtBackward0` for sqrt, `DivBackward0` for a division)."""
    in_graph = {name.lower() for name in node_names}
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        masking = _masking_call(node)
        if masking is None:
            continue
        condition, branches = masking
        where_statement = statement_at(filename, node.lineno)
        for branch, selected_when_true in branches:
            guard = _singular_in(branch, where_statement) or _singular_assigned(tree, branch, where_statement)
            if guard is None or not any(name.startswith(guard.op[:3]) for name in in_graph):
                continue
            replacement = _guarded(filename, tree, guard, condition, selected_when_true, where_statement)
            return where_statement, guard, replacement
    return None


def _masking_call(node: ast.AST):
    """(condition, [(branch, selected where the condition holds)]) of `torch.where(c, a, b)` or
    `x.masked_fill(mask, value)`, else None."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr == "where" and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" \
            and len(node.args) == 3:
        return node.args[0], [(node.args[1], True), (node.args[2], False)]
    if node.func.attr == "masked_fill" and len(node.args) == 2:
        return node.args[0], [(node.func.value, False)]
    return None


def _singular_op(node: ast.AST) -> tuple[ast.AST, str, str] | None:
    """(operand, safe value, op name) when `node` is an op singular at some input."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return node.right, "ones", "division"
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and isinstance(node.right, ast.Constant) \
            and isinstance(node.right.value, float) and node.right.value < 1:
        return node.left, "ones", "pow"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        name = node.func.attr
        if name in SINGULAR_FUNCTIONS:
            is_torch = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
            if is_torch and node.args:
                return node.args[0], SINGULAR_FUNCTIONS[name], name
            if not is_torch and not node.args:
                return node.func.value, SINGULAR_FUNCTIONS[name], name
        if name == "div" and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch" \
                and len(node.args) == 2:
            return node.args[1], "ones", "division"
    return None


def _singular_in(branch: ast.AST, statement: ast.stmt | None) -> Guard | None:
    if statement is None:
        return None
    for node in ast.walk(branch):
        found = _singular_op(node)
        if found is not None and not isinstance(found[0], ast.Constant):
            return Guard(statement, found[0], found[1], found[2])
    return None


def _singular_assigned(tree: ast.AST, branch: ast.AST, where_statement: ast.stmt | None) -> Guard | None:
    """The branch is a name: the latest assignment to it before the masking line, in the same
    function, when its value computes a singular op."""
    if not isinstance(branch, ast.Name) or where_statement is None:
        return None
    scope = enclosing_function(tree, where_statement.lineno)
    assignments = [node for node in ast.walk(scope) if isinstance(node, ast.Assign)
                   and node.lineno < where_statement.lineno
                   and any(isinstance(t, ast.Name) and t.id == branch.id for t in node.targets)]
    if not assignments:
        return None
    latest = max(assignments, key=lambda node: node.lineno)
    return _singular_in(latest.value, latest)


def _guarded(filename: str, tree: ast.AST, guard: Guard, condition: ast.AST, selected_when_true: bool,
             where_statement: ast.stmt) -> str | None:
    """The op's statement with its operand computed only where the branch is selected."""
    condition_text = segment(filename, condition)
    operand_text = segment(filename, guard.operand)
    if condition_text is None or operand_text is None or "\n" in condition_text:
        return None
    if guard.statement is not where_statement:
        # The op runs on an earlier line: the condition must mean the same there, and must not
        # read the op's own result (`torch.isnan(ratio)`).
        assigned = {t.id for node in ast.walk(enclosing_function(tree, where_statement.lineno))
                    if isinstance(node, ast.Assign) and guard.statement.lineno <= node.lineno < where_statement.lineno
                    for t in node.targets if isinstance(t, ast.Name)}
        read = {node.id for node in ast.walk(condition) if isinstance(node, ast.Name)}
        if read & assigned:
            return None
    safe = f"torch.{guard.safe}_like({operand_text})"
    inner = f"torch.where({condition_text}, {operand_text}, {safe})" if selected_when_true \
        else f"torch.where({condition_text}, {safe}, {operand_text})"
    return replace_node_text(filename, guard.statement, guard.operand, inner)


def _diagnosis(filename: str, where_statement: ast.stmt, guard: Guard, replacement: str | None, broken: list,
               site) -> Diagnosis:
    op = "the division" if guard.op == "division" else f"{guard.op}"
    primary = statement_location(filename, guard.statement, role="op",
                                 note=f"{op} is computed on every element, the masked ones too")
    related = []
    if guard.statement is not where_statement:
        related.append(statement_location(filename, where_statement, role="mask",
                                          note="replaces the bad values in the forward pass only"))
    backward = location_of(site, role="backward", note="its gradients have NaN or inf")
    if backward is not None:
        related.append(backward)
    shapes = ", ".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in broken[:3])
    notes = [f"after this backward(), {len(broken)} leaf tensor{'s' if len(broken) > 1 else ''} ({shapes}) "
             "hold NaN or inf in .grad, while the loss is finite",
             f"the masking's backward sends a zero gradient to the elements it did not select, and {op}'s "
             "backward multiplies that zero by its infinite derivative there: 0 * inf = NaN"]
    operand = segment(filename, guard.operand) or "its input"
    helps = []
    if replacement is not None:
        helps.append(Suggestion(f"compute {op} only where its result is used: give it a harmless "
                                f"{'1' if guard.safe == 'ones' else '0'} in place of {operand} elsewhere "
                                "(the forward values stay the same)", replacement,
                                statement_location(filename, guard.statement)))
    else:
        helps.append(Suggestion(f"replace {operand} by a harmless value where the result is masked, before "
                                f"{op} (`torch.where(mask, torch.ones_like(x), x)`), so its backward stays finite"))
    return Diagnosis(code=codes.MASKED_NAN_GRADIENT, title=codes.title(codes.MASKED_NAN_GRADIENT),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)


def _nan_selection(filename: str):
    """(statement, subscript, the tested tensor's text) of the first `values[mask]` in the file
    whose mask tests NaN-ness (`~torch.isnan(x)`, `torch.isfinite(x)`, `~x.isnan()`), inline or
    in the latest assignment to the mask's name in the same function: rows with NaN dropped
    after `values` was computed from them."""
    tree = parse_file(filename)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript) or not isinstance(node.ctx, ast.Load):
            continue
        statement = statement_at(filename, node.lineno)
        if statement is None or isinstance(node.value, ast.Name) and _assigned_nan_test(tree, node.value, statement):
            continue  # the tested tensor itself indexed (`x[~torch.isnan(x)]`): no NaN enters the graph
        tested = _nan_test(node.slice) or _assigned_nan_test(tree, node.slice, statement)
        if tested is None:
            continue
        tested_text = segment(filename, tested)
        value_text = segment(filename, node.value)
        if tested_text is None or value_text is None or tested_text == value_text:
            continue
        return statement, node, tested_text
    return None


def _nan_test(node: ast.AST) -> ast.AST | None:
    """The tensor tested, when `node` is a mask of the rows without NaN: `~torch.isnan(x)`,
    `~x.isnan()`, `torch.logical_not(torch.isnan(x))`, `x.isnan().logical_not()`,
    `torch.isfinite(x)`, `x.isfinite()`, or `x == x` (False only at NaN); or such a mask and'ed
    with another (`valid & ~torch.isnan(x)`, `torch.logical_and(valid, x == x)`): its rows have
    no NaN of x either."""
    both = _conjunction(node)
    if both is not None:
        return next((tested for tested in map(_nan_test, both) if tested is not None), None)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq) \
            and ast.dump(node.left) == ast.dump(node.comparators[0]):
        return node.left
    negated, call = _negation(node)
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func.attr not in NAN_TESTS:
        return None
    if (call.func.attr == "isnan") != negated:
        return None
    return _tested_tensor(call)


def _conjunction(node: ast.AST) -> tuple[ast.AST, ast.AST] | None:
    """The two masks of `a & b`, `torch.logical_and(a, b)` or `a.logical_and(b)`, else None."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd):
        return node.left, node.right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "logical_and" \
            and not node.keywords:
        is_torch = isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
        if is_torch and len(node.args) == 2:
            return node.args[0], node.args[1]
        if not is_torch and len(node.args) == 1:
            return node.func.value, node.args[0]
    return None


def _negation(node: ast.AST) -> tuple[bool, ast.AST]:
    """(whether `node` negates a mask, the mask): `~m`, `torch.logical_not(m)`, `m.logical_not()`."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return True, node.operand
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "logical_not" \
            and not node.keywords:
        tested = _tested_tensor(node)
        if tested is not None:
            return True, tested
    return False, node


def _tested_tensor(call: ast.Call) -> ast.AST | None:
    """The tensor a one-tensor test reads: `torch.f(x)` or `x.f()`."""
    is_torch = isinstance(call.func.value, ast.Name) and call.func.value.id == "torch"
    if is_torch:
        return call.args[0] if len(call.args) == 1 else None
    return call.func.value if not call.args else None


def _assigned_nan_test(tree: ast.AST, mask: ast.AST, statement: ast.stmt) -> ast.AST | None:
    if not isinstance(mask, ast.Name):
        return None
    scope = enclosing_function(tree, statement.lineno)
    assignments = [node for node in ast.walk(scope) if isinstance(node, ast.Assign)
                   and node.lineno <= statement.lineno and node is not statement
                   and any(isinstance(t, ast.Name) and t.id == mask.id for t in node.targets)]
    if not assignments:
        return None
    return _nan_test(max(assignments, key=lambda node: node.lineno).value)


def _selection_diagnosis(filename: str, statement: ast.stmt, subscript: ast.Subscript, tested: str, broken: list,
                         site, call=None) -> Diagnosis:
    values = segment(filename, subscript.value) or "the values"
    mask = segment(filename, subscript.slice) or "the mask"
    primary = statement_location(filename, statement, role="op",
                                 note=f"drops the rows where {tested} is NaN only after {values} was computed from them")
    related = [r for r in [location_of(site, role="backward", note="its gradients have NaN or inf")] if r is not None]
    shapes = ", ".join(f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}" for t in broken[:3])
    notes = [f"after this backward(), {len(broken)} leaf tensor{'s' if len(broken) > 1 else ''} ({shapes}) "
             "hold NaN or inf in .grad, while the loss is finite",
             f"the selection's backward sends a zero gradient to the rows it dropped, and the ops that made "
             f"{values} multiply it by their partial derivatives there, which hold the NaN of {tested}: "
             "0 * NaN = NaN"]
    selected_first = _selected_before_the_call(filename, statement, subscript, tested, call)
    helps = []
    if selected_first is not None:
        helps.append(Suggestion(f"select the rows before computing on them: the inputs have the shape of {mask} and "
                                "the call works element by element, so indexing each input with it gives the same "
                                "values, and no NaN enters the graph", selected_first,
                                statement_location(filename, statement)))
    helps.append(Suggestion(f"{'or ' if helps else ''}select the rows before computing on them: index the inputs "
                            f"with {mask} ({tested}[{mask}] and the tensors read with it) and drop the selection here, "
                            "so no NaN enters the graph; or replace the NaN first (`torch.nan_to_num`)"))
    return Diagnosis(code=codes.MASKED_NAN_GRADIENT, title=codes.title(codes.MASKED_NAN_GRADIENT),
                     severity="warning", primary=primary, related=related, notes=notes, help=helps)


def _selected_before_the_call(filename: str, statement: ast.stmt, subscript: ast.Subscript, tested: str,
                              call) -> str | None:
    """The statement with `f(a, b)[mask]` rewritten as `f(a[mask], b[mask])`, when the selected
    value is the result of a call whose positional inputs are names, the tested tensor one of
    them, and at run time (in the live frame that runs the statement) the mask is a boolean
    tensor and every input a tensor of its shape. Only then is the rewrite the same values; None
    otherwise. The call is taken to work element by element, which the loss being finite while
    a dropped row's gradient is NaN supports (its forward value at that row was dropped)."""
    value = subscript.value
    if not isinstance(value, ast.Call) or not value.args or \
            not all(isinstance(argument, ast.Name) for argument in value.args) or \
            tested not in {argument.id for argument in value.args}:
        return None
    frame = _frame_running(filename, statement, call)
    if frame is None:
        return None
    lookup = frame_lookup(frame)
    mask = expression_value(lookup, subscript.slice)
    if type(mask) is not torch.Tensor or mask.dtype != torch.bool:
        return None
    for argument in value.args:
        tensor = lookup(argument.id)
        if type(tensor) not in (torch.Tensor, torch.nn.Parameter) or tensor.shape != mask.shape:
            # a subclass's .shape could run its __torch_function__: not read
            return None
    mask_text = segment(filename, subscript.slice)
    function_text = segment(filename, value.func)
    keywords = [segment(filename, keyword) for keyword in value.keywords]
    if mask_text is None or function_text is None or None in keywords or "\n" in mask_text:
        return None
    inputs = [f"{argument.id}[{mask_text}]" for argument in value.args]
    return replace_node_text(filename, statement, subscript, f"{function_text}({', '.join(inputs + keywords)})")


def _frame_running(filename: str, statement: ast.stmt, call):
    """The live frame, among those around backward(), whose code holds `statement`."""
    for site in (call.stack if call is not None else ()):
        if site.filename != filename:
            continue
        lines = {line for _, _, line in site.code.co_lines() if line is not None}
        if statement.lineno in lines:
            return live_frame(site)
    return None
